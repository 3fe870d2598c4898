//! Web Push: people's devices subscribe, and a job's end reaches each of them
//! through a real push service's protocol (the stub checks errand's VAPID
//! token and decrypts each message with the device's own keys).

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

const WITHIN: Duration = Duration::from_secs(30);
const DEVICES: &str = "/me/push-subscriptions";

async fn subscribe(app: &TestApp, caller: &str, subscription: Value) -> reqwest::Response {
    app.post_json(caller, DEVICES, subscription).await
}

/// Waits until the push outbox has nothing left to send.
async fn outbox_settled(app: &TestApp) {
    let unsent = "SELECT count(*) FROM push_outbox WHERE state IN ('pending', 'sending')";
    eventually(WITHIN, "the push outbox to have nothing left to send", || async {
        app.db.scalar::<i64>(unsent, &[]).await == 0
    })
    .await;
}

#[actix_web::test]
async fn a_job_s_end_reaches_each_subscribed_device_once_encrypted_to_its_keys_under_errand_s_vapid_key() {
    let push = PushService::start();
    let app = TestApp::builder().configure(push_on).spawn().await;
    let (alice, bob) = (token("t1", "alice"), token("t1", "bob"));
    let phone = push.subscription("phone").await;
    assert_eq!(subscribe(&app, &alice, phone.clone()).await.status(), StatusCode::CREATED);
    assert_eq!(subscribe(&app, &alice, push.subscription("laptop").await).await.status(), StatusCode::CREATED);
    let again = subscribe(&app, &alice, phone).await;
    assert_eq!(again.status(), StatusCode::OK, "the same endpoint again is the same device");
    let listed: Value = app.get(&alice, DEVICES).await.json().await.unwrap();
    assert_eq!(listed["subscriptions"].as_array().unwrap().len(), 2, "{listed}");
    let vapid = listed["vapid_public_key"].as_str().unwrap().to_owned();
    assert!(!listed.to_string().contains("p256dh"), "keys are never shown: {listed}");
    let bobs: Value = app.get(&bob, DEVICES).await.json().await.unwrap();
    assert_eq!(bobs["subscriptions"], json!([]), "scoped to the caller");

    let id = app.create(&alice, "sleep", json!({"ms": 1})).await;
    app.wait_until_finished(&alice, &id, WITHIN).await;
    outbox_settled(&app).await;
    let messages = push.messages().await;
    let refused = push.refused().await;
    assert!(refused.is_empty(), "every message passed the stub's checks: {refused:?}");
    let mut devices: Vec<&str> = messages.iter().map(|m| m["device"].as_str().unwrap()).collect();
    devices.sort();
    assert_eq!(devices, ["laptop", "phone"], "one message per device: {messages:?}");
    let notification = &app.notifications_of(&alice, "job_completed").await[0];
    for message in &messages {
        let payload = &message["payload"];
        assert_eq!(message["k"], vapid.as_str(), "signed with errand's key");
        assert_eq!(message["sub"], "mailto:ops@errand.example.com");
        assert_eq!(message["ttl"], 86400);
        assert!(payload["title"].as_str().unwrap().ends_with("is ready"), "{payload}");
        assert_eq!(payload["tag"], notification["id"], "the same notice as the open tab's");
        assert_eq!(payload["status"], "completed");
        let url = payload["url"].as_str().unwrap();
        assert!(url.starts_with(&format!("https://errand.example.com/links/jobs/{id}?")), "{url}");
        assert!(!url.contains("/files/"), "never a storage URL: {url}");
    }
    let sent = app.db.scalar::<i64>("SELECT count(*) FROM push_outbox WHERE state = 'sent'", &[]).await;
    assert_eq!(sent, 2);
}

#[actix_web::test]
async fn a_device_its_push_service_no_longer_knows_is_unsubscribed_and_a_busy_service_is_tried_again() {
    let push = PushService::start();
    let app = TestApp::builder().configure(push_on).spawn().await;
    let alice = token("t1", "alice");
    for device in ["gone", "busy"] {
        assert_eq!(subscribe(&app, &alice, push.subscription(device).await).await.status(), StatusCode::CREATED);
    }
    push.answer_next("gone", 410).await;
    push.answer_next("busy", 503).await;
    let id = app.create(&alice, "sleep", json!({"ms": 1})).await;
    app.wait_until_finished(&alice, &id, WITHIN).await;
    let taken = push.wait_for(1, WITHIN).await;
    assert_eq!(taken[0]["device"], "busy", "taken at its second attempt");
    assert_eq!(push.attempts("busy").await, 2);
    outbox_settled(&app).await;
    let listed: Value = app.get(&alice, DEVICES).await.json().await.unwrap();
    let endpoints: Vec<&str> =
        listed["subscriptions"].as_array().unwrap().iter().map(|s| s["endpoint"].as_str().unwrap()).collect();
    assert_eq!(endpoints.len(), 1, "{listed}");
    assert!(endpoints[0].ends_with("/push/busy"), "the gone device was unsubscribed: {listed}");
    let gone = "SELECT response_status FROM push_outbox o WHERE state = 'failed'
                AND NOT EXISTS (SELECT 1 FROM push_subscriptions s WHERE s.id = o.subscription_id)";
    assert_eq!(app.db.scalar::<Option<i32>>(gone, &[]).await, Some(410), "its message kept, with the answer");
    assert_eq!(push.attempts("gone").await, 1, "never tried again");

    let detail: Value = app.get(&operator_token("olga"), &format!("/admin/jobs/{id}")).await.json().await.unwrap();
    let mut log: Vec<(Value, Value, Value, Value)> = detail["history"]["pushes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["service"].clone(), p["state"].clone(), p["attempts"].clone(), p["response_status"].clone()))
        .collect();
    log.sort_by_key(|entry| entry.1.to_string());
    assert_eq!(
        log,
        [
            (Value::Null, json!("failed"), json!(1), json!(410)),
            (json!("127.0.0.1"), json!("sent"), json!(2), json!(201)),
        ],
        "the console's delivery log: {detail}"
    );
}

#[actix_web::test]
async fn a_subscription_must_be_a_push_service_s_with_a_browser_s_keys_and_each_person_has_a_few() {
    let push = PushService::start();
    let app = TestApp::builder()
        .configure(push_on)
        .configure(|s| {
            s.push.allow_hosts.push("127.0.0.2".into());
            s.push.max_subscriptions_per_user = std::num::NonZeroUsize::new(2).unwrap();
        })
        .spawn()
        .await;
    let alice = token("t1", "alice");
    let good = push.subscription("a").await;
    let with_endpoint = |endpoint: &str| json!({"endpoint": endpoint, "keys": good["keys"]});
    for (subscription, why) in [
        (with_endpoint("https://attacker.example/push/x"), "not a push service"),
        (with_endpoint("https://127.0.0.2/push/x"), "an allowed host at a private address"),
        (with_endpoint("http://127.0.0.2/push/x"), "plain http"),
        (with_endpoint(&format!("{}?{}", good["endpoint"].as_str().unwrap(), "x".repeat(2100))), "too long"),
        (
            json!({"endpoint": good["endpoint"], "keys": {"p256dh": "AAAA", "auth": good["keys"]["auth"]}}),
            "a short key",
        ),
        (
            json!({"endpoint": good["endpoint"], "keys": {"p256dh": good["keys"]["p256dh"], "auth": "AAAA"}}),
            "short auth",
        ),
    ] {
        let refused = subscribe(&app, &alice, subscription).await;
        let problem = assert_problem(refused, StatusCode::UNPROCESSABLE_ENTITY, "invalid_push_subscription").await;
        assert!(problem["detail"].is_string(), "{why}: {problem}");
    }
    let not_json = app.post_json(&alice, DEVICES, json!({"endpoint": 1})).await;
    assert_problem(not_json, StatusCode::BAD_REQUEST, "bad_request").await;
    for device in ["a", "b"] {
        assert_eq!(subscribe(&app, &alice, push.subscription(device).await).await.status(), StatusCode::CREATED);
    }
    let third = subscribe(&app, &alice, push.subscription("c").await).await;
    assert_problem(third, StatusCode::UNPROCESSABLE_ENTITY, "invalid_push_subscription").await;

    let listed: Value = app.get(&alice, DEVICES).await.json().await.unwrap();
    let first = listed["subscriptions"][0]["id"].as_str().unwrap().to_owned();
    let not_bobs = app.delete(&token("t1", "bob"), &format!("{DEVICES}/{first}")).await;
    assert_problem(not_bobs, StatusCode::NOT_FOUND, "not_found").await;
    let other_tenant = app.delete(&token("t2", "alice"), &format!("{DEVICES}/{first}")).await;
    assert_problem(other_tenant, StatusCode::NOT_FOUND, "not_found").await;
    assert_eq!(app.delete(&alice, &format!("{DEVICES}/{first}")).await.status(), StatusCode::NO_CONTENT);
    assert_eq!(subscribe(&app, &alice, push.subscription("c").await).await.status(), StatusCode::CREATED);

    let without_push = spawn_app().await;
    let off = without_push.get(&alice, DEVICES).await;
    assert_problem(off, StatusCode::NOT_FOUND, "push_not_enabled").await;
}

#[actix_web::test]
async fn the_push_channel_is_in_the_preferences_and_turned_off_sends_nothing() {
    let push = PushService::start();
    let app = TestApp::builder().configure(push_on).spawn().await;
    let alice = token("t1", "alice");
    assert_eq!(subscribe(&app, &alice, push.subscription("phone").await).await.status(), StatusCode::CREATED);
    let grid: Value = app.get(&alice, "/me/notification-preferences").await.json().await.unwrap();
    let sleep = grid["categories"].as_array().unwrap().iter().find(|c| c["category"] == "sleep").unwrap().clone();
    assert_eq!(sleep["channels"], json!({"in_app": true, "email": true, "push": true}));
    let off = app.put_json(&alice, "/me/notification-preferences/sleep", json!({"push": false})).await;
    assert_eq!(off.status(), StatusCode::OK);

    let id = app.create(&alice, "sleep", json!({"ms": 1})).await;
    app.wait_until_finished(&alice, &id, WITHIN).await;
    assert_eq!(app.notifications_of(&alice, "job_completed").await.len(), 1, "in the app as before");
    let written = app.db.scalar::<i64>("SELECT count(*) FROM push_outbox", &[]).await;
    assert_eq!(written, 0, "no message was written for the job's end");
    assert_eq!(push.attempts("phone").await, 0);

    let without_push = spawn_app().await;
    let grid: Value = without_push.get(&alice, "/me/notification-preferences").await.json().await.unwrap();
    assert!(!grid.to_string().contains("\"push\""), "no push channel where push is off: {grid}");
    let refused = without_push.put_json(&alice, "/me/notification-preferences/sleep", json!({"push": true})).await;
    assert_problem(refused, StatusCode::UNPROCESSABLE_ENTITY, "invalid_preference").await;
}

#[actix_web::test]
async fn an_erased_person_s_devices_and_messages_are_counted_then_gone() {
    let push = PushService::start();
    let app = TestApp::builder().configure(push_on).spawn().await;
    let (alice, bob) = (token("t1", "alice"), token("t1", "bob"));
    for (caller, device) in [(&alice, "alices"), (&bob, "bobs")] {
        assert_eq!(subscribe(&app, caller, push.subscription(device).await).await.status(), StatusCode::CREATED);
        let id = app.create(caller, "sleep", json!({"ms": 1})).await;
        app.wait_until_finished(caller, &id, WITHIN).await;
    }
    outbox_settled(&app).await;
    let admin = tenant_admin_token("t1", "ada");
    let erased = app.post_json(&admin, "/tenant/erasures", json!({"user": "alice"})).await;
    assert_eq!(erased.status(), StatusCode::OK);
    let erased: Value = erased.json().await.unwrap();
    assert_eq!((&erased["found"]["push_subscriptions"], &erased["found"]["push_messages"]), (&json!(1), &json!(1)));
    let left = "SELECT (SELECT count(*) FROM push_subscriptions WHERE user_id = $1)
                     + (SELECT count(*) FROM push_outbox WHERE user_id = $1)";
    assert_eq!(app.db.scalar::<i64>(left, &[&"alice"]).await, 0, "nothing of hers");
    assert_eq!(app.db.scalar::<i64>(left, &[&"bob"]).await, 2, "his device and message stay");
}
