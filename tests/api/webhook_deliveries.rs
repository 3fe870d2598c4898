//! Webhook deliveries: a job's end reaches each endpoint of its tenant that
//! asked for it, once, signed as Standard Webhooks specifies; an endpoint
//! that fails is tried again with backoff, and a delivery out of attempts fails.

use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use errand::config::Settings;
use hmac::{Hmac, KeyInit, Mac};
use reqwest::StatusCode;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::*;

const WITHIN: Duration = Duration::from_secs(30);

/// Local endpoints allowed, retries within moments, and sleep jobs that fail at once.
fn quick_webhooks(s: &mut Settings) {
    s.webhooks.allow_hosts = vec!["127.0.0.1".into()];
    s.webhooks.poll_interval = Duration::from_millis(50);
    s.webhooks.backoff_base = Duration::from_millis(50);
    s.webhooks.backoff_max = Duration::from_millis(200);
    s.job_types.get_mut("sleep").unwrap().max_attempts = nonzero(1);
}

/// Registers `url` for `events` as acme's admin; answers its secret.
async fn register(app: &TestApp, url: &str, events: Value) -> String {
    register_endpoint(app, url, events).await["secret"].as_str().expect("a secret").to_owned()
}

/// Registers `url` for `events` as acme's admin; answers the endpoint.
async fn register_endpoint(app: &TestApp, url: &str, events: Value) -> Value {
    app.post_json(&admin("acme"), "/webhooks", json!({"url": url, "events": events})).await.json().await.unwrap()
}

fn admin(tenant: &str) -> String {
    tenant_admin_token(tenant, "ada")
}

/// The delivery of `job`: its state and attempts.
async fn delivery(app: &TestApp, job: &str) -> Option<(String, i32)> {
    let row = app
        .db
        .client()
        .await
        .query_opt(
            "SELECT state::text, attempts FROM webhook_deliveries WHERE job_id = $1",
            &[&Uuid::parse_str(job).unwrap()],
        )
        .await
        .unwrap();
    row.map(|row| (row.get(0), row.get(1)))
}

/// Checks a request's Standard Webhooks signature with `secret`, computed here on its own.
fn verify(secret: &str, received: &Received) {
    let key = STANDARD.decode(secret.strip_prefix("whsec_").unwrap()).unwrap();
    let (id, timestamp) = (&received.headers["webhook-id"], &received.headers["webhook-timestamp"]);
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(&key).unwrap();
    mac.update(format!("{id}.{timestamp}.").as_bytes());
    mac.update(&received.body);
    let expected = format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()));
    assert_eq!(received.headers["webhook-signature"], expected);
    let sent_at: u64 = timestamp.parse().unwrap();
    assert!(sent_at.abs_diff(now_secs()) < 60, "a timestamp of now: {sent_at}");
}

#[actix_web::test]
async fn a_job_end_is_delivered_once_to_each_endpoint_that_asked_signed_as_standard_webhooks_specifies() {
    let app = TestApp::builder().configure(quick_webhooks).spawn().await;
    let receiver = Receiver::start([]);
    let secret = register(&app, &receiver.url, json!(["job.completed"])).await;
    let alice = token("acme", "alice");
    let job = app.create(&alice, "noop", json!({"n": 1})).await;
    app.wait_until_finished(&alice, &job, WITHIN).await;
    eventually(WITHIN, "the delivery", || async { delivery(&app, &job).await == Some(("delivered".into(), 1)) }).await;

    let received = receiver.received();
    assert_eq!(received.len(), 1, "once");
    verify(&secret, &received[0]);
    let body: Value = serde_json::from_slice(&received[0].body).unwrap();
    assert_eq!(body["type"], "job.completed");
    assert_eq!((body["data"]["id"].as_str(), body["data"]["status"].as_str()), (Some(job.as_str()), Some("completed")));
    assert_eq!(body["data"]["params"], json!({"n": 1}), "the job as the API shows it");
    assert_eq!(received[0].headers["content-type"], "application/json");

    // An end the endpoint did not ask for, and another tenant's, make no delivery.
    let failed = app.create(&alice, "sleep", json!({"ms": 1, "fail_times": 100})).await;
    let other = app.create(&token("globex", "gil"), "noop", json!({})).await;
    app.wait_until_finished(&alice, &failed, WITHIN).await;
    app.wait_until_finished(&token("globex", "gil"), &other, WITHIN).await;
    assert_eq!(delivery(&app, &failed).await, None);
    assert_eq!(delivery(&app, &other).await, None);
}

#[actix_web::test]
async fn an_endpoint_that_fails_three_times_gets_the_event_once_more_after_it_recovers() {
    let app = TestApp::builder().configure(quick_webhooks).spawn().await;
    let receiver = Receiver::start([500, 500, 500]);
    let secret = register(&app, &receiver.url, json!(["job.completed"])).await;
    let alice = token("acme", "alice");
    let job = app.create(&alice, "noop", json!({})).await;
    eventually(WITHIN, "the delivery, at the fourth attempt", || async {
        delivery(&app, &job).await == Some(("delivered".into(), 4))
    })
    .await;
    // Delivered: no attempt can follow, so these are all there will be.
    let received = receiver.received();
    assert_eq!(received.len(), 4);
    let ids: std::collections::HashSet<&str> = received.iter().map(|r| r.headers["webhook-id"].as_str()).collect();
    assert_eq!(ids.len(), 1, "every attempt is the same message: {ids:?}");
    received.iter().for_each(|r| verify(&secret, r));
}

#[actix_web::test]
async fn a_delivery_out_of_attempts_fails_with_the_endpoints_last_answer() {
    let app = TestApp::builder()
        .configure(quick_webhooks)
        .configure(|s| s.webhooks.max_attempts = std::num::NonZeroU32::new(2).unwrap())
        .spawn()
        .await;
    let receiver = Receiver::start([503, 503, 503]);
    register(&app, &receiver.url, json!(["job.completed"])).await;
    let alice = token("acme", "alice");
    let job = app.create(&alice, "noop", json!({})).await;
    eventually(WITHIN, "the delivery to fail", || async { delivery(&app, &job).await == Some(("failed".into(), 2)) })
        .await;
    let id = Uuid::parse_str(&job).unwrap();
    let last: i32 = app.db.scalar("SELECT last_status FROM webhook_deliveries WHERE job_id = $1", &[&id]).await;
    assert_eq!(last, 503);
    assert_eq!(receiver.received().len(), 2);
}

#[actix_web::test]
async fn the_delivery_log_shows_each_delivery_and_a_failed_one_can_be_sent_again() {
    let app = TestApp::builder()
        .configure(quick_webhooks)
        .configure(|s| s.webhooks.max_attempts = std::num::NonZeroU32::new(2).unwrap())
        .spawn()
        .await;
    let receiver = Receiver::start([503, 503]);
    let endpoint = register_endpoint(&app, &receiver.url, json!(["job.completed"])).await;
    let log = format!("/webhooks/{}/deliveries", endpoint["id"].as_str().unwrap());
    let alice = token("acme", "alice");
    let job = app.create(&alice, "noop", json!({})).await;
    eventually(WITHIN, "the delivery to fail", || async { delivery(&app, &job).await == Some(("failed".into(), 2)) })
        .await;

    let page: Value = app.get(&admin("acme"), &log).await.json().await.unwrap();
    let entry = &page["deliveries"][0];
    assert_eq!((entry["job_id"].as_str(), entry["state"].as_str()), (Some(job.as_str()), Some("failed")));
    assert_eq!((entry["attempts"].as_i64(), entry["last_status"].as_i64()), (Some(2), Some(503)));
    assert!(entry["last_latency_ms"].is_i64(), "{entry}");
    let again = format!("{log}/{}/redeliver", entry["id"].as_str().unwrap());
    assert_problem(app.post(&admin("globex"), &again).await, StatusCode::NOT_FOUND, "not_found").await;
    let empty: Value = app.get(&admin("globex"), &log).await.json().await.unwrap();
    assert_eq!(empty["deliveries"], json!([]), "another tenant sees none of it");

    assert_eq!(app.post(&admin("acme"), &again).await.status(), StatusCode::ACCEPTED);
    eventually(WITHIN, "the delivery sent again", || async {
        delivery(&app, &job).await == Some(("delivered".into(), 1))
    })
    .await;
    let received = receiver.received();
    assert_eq!(received.len(), 3);
    assert!(received.iter().all(|r| r.headers["webhook-id"] == received[0].headers["webhook-id"]), "one message");

    // Once per webhooks.redeliver_cooldown (a minute): not a loop to aim at an address.
    let too_soon = app.post(&admin("acme"), &again).await;
    let wait: u64 = too_soon.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=60).contains(&wait), "{wait}");
    assert_problem(too_soon, StatusCode::TOO_MANY_REQUESTS, "redelivered_too_soon").await;
    assert_eq!(delivery(&app, &job).await, Some(("delivered".into(), 1)), "it was not made due again");
}

#[actix_web::test]
async fn an_endpoint_whose_deliveries_keep_failing_is_disabled_and_gets_nothing_more() {
    let app = TestApp::builder()
        .configure(quick_webhooks)
        .configure(|s| {
            s.webhooks.max_attempts = std::num::NonZeroU32::new(1).unwrap();
            s.webhooks.disable_after = std::num::NonZeroU32::new(2).unwrap();
        })
        .spawn()
        .await;
    let receiver = Receiver::start([500; 10]);
    register(&app, &receiver.url, json!(["job.completed"])).await;
    let alice = token("acme", "alice");
    let first = app.create(&alice, "noop", json!({"n": 1})).await;
    eventually(WITHIN, "the first to fail", || async { delivery(&app, &first).await == Some(("failed".into(), 1)) })
        .await;
    let listed: Value = app.get(&admin("acme"), "/webhooks").await.json().await.unwrap();
    assert_eq!(listed["webhooks"][0]["enabled"], true, "one failure is not enough");

    let second = app.create(&alice, "noop", json!({"n": 2})).await;
    eventually(WITHIN, "the endpoint to be disabled", || async {
        let listed: Value = app.get(&admin("acme"), "/webhooks").await.json().await.unwrap();
        listed["webhooks"][0]["enabled"] == false
    })
    .await;
    assert_eq!(delivery(&app, &second).await, Some(("failed".into(), 1)));
    let listed: Value = app.get(&admin("acme"), "/webhooks").await.json().await.unwrap();
    assert_eq!(listed["webhooks"][0]["disabled_reason"], "its last 2 deliveries failed");
    // Its admin hears of it in their feed, once; other users do not.
    let notices = app.notifications_of(&admin("acme"), "webhook_disabled").await;
    assert_eq!(notices.len(), 1);
    assert_eq!(notices[0]["webhook_id"], listed["webhooks"][0]["id"]);
    assert!(notices[0]["body"].as_str().unwrap().contains(&receiver.url), "{}", notices[0]);
    assert!(app.notifications_of(&alice, "webhook_disabled").await.is_empty());

    // A later end is recorded for it, and no sender will take it.
    let third = app.create(&alice, "noop", json!({"n": 3})).await;
    app.wait_until_finished(&alice, &third, WITHIN).await;
    assert_eq!(delivery(&app, &third).await, None, "a disabled endpoint is not written to");
    let store = errand::store::Store::connect(&app.db.url, 1).unwrap();
    assert!(
        store.webhook_outbox().claim_due(10, Duration::from_secs(90), &Default::default(), 8).await.unwrap().is_empty()
    );
    assert_eq!(receiver.received().len(), 2);
}

#[actix_web::test]
async fn a_waiting_job_cancelled_by_its_owner_is_delivered_as_job_cancelled() {
    // An API-only process: the job waits, and its cancel ends it at once.
    let app = TestApp::builder().configure(quick_webhooks).configure(|s| s.workers.global_limit = 0).spawn().await;
    let receiver = Receiver::start([]);
    register(&app, &receiver.url, json!(["job.cancelled"])).await;
    let alice = token("acme", "alice");
    let job = app.create(&alice, "noop", json!({})).await;
    assert_eq!(app.post(&alice, &format!("/jobs/{job}/cancel")).await.status(), StatusCode::OK);
    eventually(WITHIN, "the delivery", || async { delivery(&app, &job).await == Some(("delivered".into(), 1)) }).await;
    let body: Value = serde_json::from_slice(&receiver.received()[0].body).unwrap();
    assert_eq!((body["type"].as_str(), body["data"]["status"].as_str()), (Some("job.cancelled"), Some("cancelled")));
}

#[actix_web::test]
async fn a_tenant_admin_turns_the_webhook_channel_off_per_category_from_the_next_job_end_on() {
    let app = TestApp::builder()
        .configure(quick_webhooks)
        .configure(|s| s.notifications.preferences.required = vec!["sleep".into()])
        .spawn()
        .await;
    let receiver = Receiver::start([]);
    register(&app, &receiver.url, json!(["job.completed"])).await;
    let grid: Value = app.get(&admin("acme"), "/webhooks/preferences").await.json().await.unwrap();
    let noop = grid["categories"].as_array().unwrap().iter().find(|c| c["category"] == "noop").cloned().unwrap();
    assert_eq!(noop, json!({"category": "noop", "required": false, "webhook": true}));

    let off = app.put_json(&admin("acme"), "/webhooks/preferences/noop", json!({"webhook": false})).await;
    assert_eq!(off.status(), StatusCode::OK);
    assert_eq!(off.json::<Value>().await.unwrap()["webhook"], false);
    let alice = token("acme", "alice");
    let quiet = app.create(&alice, "noop", json!({})).await;
    let heard = app.create(&alice, "sleep", json!({"ms": 0})).await;
    eventually(WITHIN, "the sleep job's delivery", || async {
        delivery(&app, &heard).await.is_some_and(|(s, _)| s == "delivered")
    })
    .await;
    app.wait_until_finished(&alice, &quiet, WITHIN).await;
    assert_eq!(delivery(&app, &quiet).await, None, "noop is off for acme's endpoints");

    app.put_json(&admin("acme"), "/webhooks/preferences/noop", json!({"webhook": true})).await;
    let again = app.create(&alice, "noop", json!({})).await;
    eventually(WITHIN, "the delivery once on again", || async { delivery(&app, &again).await.is_some() }).await;

    // Only admins choose, only known categories and the one channel, never a required one off.
    let not_admin = app.put_json(&alice, "/webhooks/preferences/noop", json!({"webhook": false})).await;
    assert_problem(not_admin, StatusCode::FORBIDDEN, "forbidden").await;
    for (path, body) in [
        ("/webhooks/preferences/nope", json!({"webhook": false})),
        ("/webhooks/preferences/noop", json!({"email": false})),
        ("/webhooks/preferences/noop", json!({"webhook": "no"})),
        ("/webhooks/preferences/sleep", json!({"webhook": false})),
    ] {
        let refused = app.put_json(&admin("acme"), path, body).await;
        assert_problem(refused, StatusCode::UNPROCESSABLE_ENTITY, "invalid_preference").await;
    }
}

#[actix_web::test]
async fn an_endpoint_that_never_answers_holds_up_only_its_own_deliveries_and_a_few_slots() {
    // Attempts wait a minute for an answer: a round-by-round sender would hold everyone up that long.
    let app = TestApp::builder()
        .configure(quick_webhooks)
        .configure(|s| s.webhooks.timeout = Duration::from_secs(60))
        .spawn()
        .await;
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_url = format!("http://{}/hooks", silent.local_addr().unwrap());
    // Accepts every connection and never answers.
    std::thread::spawn(move || {
        let held: Vec<_> = silent.incoming().collect();
        drop(held);
    });
    app.post_json(&admin("slowco"), "/webhooks", json!({"url": silent_url, "events": ["job.completed"]})).await;
    let receiver = Receiver::start([]);
    register(&app, &receiver.url, json!(["job.completed"])).await;

    // More of slowco's deliveries due than the sender has slots: 8 are in flight, the rest wait.
    let slow = token("slowco", "sam");
    let mut stuck = Vec::new();
    for n in 0..100 {
        stuck.push(app.create(&slow, "noop", json!({"n": n})).await);
    }
    for job in &stuck {
        app.wait_until_finished(&slow, job, WITHIN).await;
    }
    let in_flight = "SELECT count(*) FROM webhook_deliveries WHERE state = 'sending'";
    eventually(WITHIN, "slowco's deliveries in flight", || async { app.db.scalar::<i64>(in_flight, &[]).await == 8 })
        .await;
    let alice = token("acme", "alice");
    let job = app.create(&alice, "noop", json!({})).await;
    eventually(Duration::from_secs(15), "acme's delivery while slowco's hang", || async {
        delivery(&app, &job).await == Some(("delivered".into(), 1))
    })
    .await;
    assert_eq!(receiver.received().len(), 1);
    assert_eq!(app.db.scalar::<i64>(in_flight, &[]).await, 8, "slowco's cap held");
}

/// Registers `url` for `events` as `tenant`'s admin.
async fn register_for(app: &TestApp, tenant: &str, url: &str, events: Value) -> String {
    let endpoint: Value =
        app.post_json(&admin(tenant), "/webhooks", json!({"url": url, "events": events})).await.json().await.unwrap();
    endpoint["secret"].as_str().expect("a secret").to_owned()
}

/// Waits for `receiver` to have `n` requests; answers their bodies.
async fn bodies(receiver: &Receiver, n: usize) -> Vec<Value> {
    eventually(WITHIN, "the deliveries", || async { receiver.received().len() >= n }).await;
    receiver.received().iter().map(|r| serde_json::from_slice(&r.body).unwrap()).collect()
}

#[actix_web::test]
async fn a_breaker_tells_every_tenants_endpoints_that_asked_for_type_paused_without_the_reason() {
    let app = TestApp::builder()
        .configure(quick_webhooks)
        .configure(|s| {
            let mut flaky = job_type("sleep");
            flaky.breaker_after = Some(nonzero(2));
            s.job_types.insert("flaky".into(), flaky);
        })
        .spawn()
        .await;
    let (acme, globex, uninterested) = (Receiver::start([]), Receiver::start([]), Receiver::start([]));
    let secret = register_for(&app, "acme", &acme.url, json!(["type.paused"])).await;
    register_for(&app, "globex", &globex.url, json!(["type.paused", "job.failed"])).await;
    register_for(&app, "initech", &uninterested.url, json!(["job.completed"])).await;
    let alice = token("acme", "alice");
    app.create(&alice, "flaky", json!({"ms": 1, "fail_times": 100})).await;

    for receiver in [&acme, &globex] {
        let body = &bodies(receiver, 1).await[0];
        assert_eq!(body["type"], "type.paused");
        let data = &body["data"];
        assert_eq!(
            (&data["job_type"], &data["tenant"], &data["paused_by"]),
            (&json!("flaky"), &Value::Null, &json!("breaker"))
        );
        assert!(data.get("reason").is_none() && !body.to_string().contains("planned failure"), "{body}");
    }
    verify(&secret, &acme.received()[0]);
    let pauses: i64 = app.db.scalar("SELECT count(*) FROM webhook_deliveries WHERE event = 'type.paused'", &[]).await;
    assert_eq!(pauses, 2, "none to the endpoint that did not ask");
    assert!(uninterested.received().is_empty());
}

#[actix_web::test]
async fn an_operators_pause_of_a_type_in_one_tenant_tells_that_tenants_endpoints_once() {
    let app = TestApp::builder().configure(quick_webhooks).configure(|s| s.workers.global_limit = 0).spawn().await;
    let (acme, globex) = (Receiver::start([]), Receiver::start([]));
    register_for(&app, "acme", &acme.url, json!(["type.paused"])).await;
    register_for(&app, "globex", &globex.url, json!(["type.paused"])).await;
    let olga = operator_token("olga");
    for reason in ["replica lag", "still lagging"] {
        let body = json!({"type": "noop", "tenant": "globex", "reason": reason, "until": "2099-01-01T00:00:00Z"});
        assert!(app.post_json(&olga, "/admin/pauses", body).await.status().is_success());
    }
    let body = &bodies(&globex, 1).await[0];
    let data = &body["data"];
    assert_eq!(
        (&data["job_type"], &data["tenant"], &data["paused_by"]),
        (&json!("noop"), &json!("globex"), &json!("operator"))
    );
    assert_eq!(data["until"], "2099-01-01T00:00:00+00:00");
    // A pause of the whole tenant names no type: nothing to tell.
    let whole = json!({"tenant": "globex", "reason": "migration"});
    assert_eq!(app.post_json(&olga, "/admin/pauses", whole).await.status(), StatusCode::CREATED);
    let endpoint: Value = app.get(&admin("globex"), "/webhooks").await.json().await.unwrap();
    let id = endpoint["webhooks"][0]["id"].as_str().unwrap();
    let log: Value = app.get(&admin("globex"), &format!("/webhooks/{id}/deliveries")).await.json().await.unwrap();
    let log = log["deliveries"].as_array().unwrap();
    assert_eq!(log.len(), 1, "one delivery for the pause (its update is not a new one): {log:?}");
    assert!(log[0].get("job_id").is_none() && log[0]["event"] == "type.paused", "{log:?}");
    assert!(acme.received().is_empty(), "another tenant's pause is not acme's business");
    // Having no job to go with, it is pruned by its age (its id: UUID v7).
    let aged = "UPDATE webhook_deliveries SET id = '00000000-0000-7000-8000-000000000001' WHERE event = 'type.paused'";
    app.db.client().await.execute(aged, &[]).await.unwrap();
    app.ticks.prune.send(errand::actors::Prune).await.unwrap();
    let left: i64 = app.db.scalar("SELECT count(*) FROM webhook_deliveries", &[]).await;
    assert_eq!(left, 0);
}
