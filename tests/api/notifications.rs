//! The in-app feed, read-marks and the live stream.

use std::time::Duration;

use errand::jobs::HandlerRegistry;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

const WITHIN: Duration = Duration::from_secs(20);

async fn feed(app: &impl Api, caller: &str, query: &str) -> Value {
    let response = app.get(caller, &format!("/notifications{query}")).await;
    assert_eq!(response.status(), StatusCode::OK);
    response.json().await.unwrap()
}

/// Opens the caller's stream, sees the event of one job, and disconnects;
/// returns the stream's URL and that event's id.
async fn see_one_event_and_disconnect(app: &TestApp, caller: &str) -> (String, Option<String>) {
    let url = format!("{}/notifications/stream", app.address);
    let mut stream = SseStream::open(&url, Some(caller), None).await;
    app.create(caller, "noop", json!({})).await;
    let (last_seen, _) = stream.next_event(WITHIN).await.expect("an event");
    (url, last_seen)
}

/// Settings for stream tests: short keep-alives, quick retries.
fn quick_streams(s: &mut errand::config::Settings) {
    s.notifications.keep_alive = Duration::from_millis(200);
    s.job_types.get_mut("sleep").unwrap().max_attempts = nonzero(1);
}

#[actix_web::test]
async fn the_feed_tells_a_person_what_happened_newest_first() {
    let app = spawn_app_with(quick_streams, HandlerRegistry::builtin()).await;
    let alice = token("acme", "alice");
    let ok = app.create(&alice, "noop", json!({})).await;
    app.wait_until_finished(&alice, &ok, WITHIN).await;
    let bad = app.create(&alice, "sleep", json!({"ms": 1, "fail_times": 1})).await;
    app.wait_until_finished(&alice, &bad, WITHIN).await;
    app.create(&token("acme", "bob"), "noop", json!({})).await;

    let page = feed(&app, &alice, "").await;
    assert_eq!(page["unread_count"], 2);
    let items = page["notifications"].as_array().unwrap();
    assert_eq!(items.len(), 2, "only alice's: {page}");
    assert_eq!(items[0]["job_id"], bad.as_str());
    assert_eq!(items[0]["kind"], "job_completed");
    assert_eq!(items[0]["job_status"], "failed");
    assert_eq!(items[0]["title"], "Your sleep job failed");
    assert_eq!(items[0]["body"], "Your sleep job failed: planned failure 1 of 1");
    assert_eq!(items[1]["job_id"], ok.as_str());
    assert_eq!(items[1]["job_status"], "completed");
    assert_eq!(items[1]["title"], "Your test job is ready");
    assert_eq!(items[1]["read_at"], Value::Null);
}

#[actix_web::test]
async fn notifications_are_marked_read_one_by_one_or_all_and_only_ones_own() {
    let app = spawn_app().await;
    let alice = token("acme", "alice");
    for _ in 0..3 {
        let id = app.create(&alice, "noop", json!({})).await;
        app.wait_until_finished(&alice, &id, WITHIN).await;
    }
    eventually(WITHIN, "three notifications", || async { feed(&app, &alice, "").await["unread_count"] == 3 }).await;
    let first = feed(&app, &alice, "").await["notifications"][0]["id"].as_str().unwrap().to_owned();

    for (caller, id) in [(token("acme", "bob"), first.clone()), (token("globex", "alice"), first.clone())] {
        let response = app.post(&caller, &format!("/notifications/{id}/read")).await;
        assert_problem(response, StatusCode::NOT_FOUND, "not_found").await;
    }
    let missing = app.post(&alice, &format!("/notifications/{}/read", uuid::Uuid::now_v7())).await;
    assert_problem(missing, StatusCode::NOT_FOUND, "not_found").await;
    assert_eq!(feed(&app, &alice, "").await["unread_count"], 3, "nobody else could mark it");

    let response = app.post(&alice, &format!("/notifications/{first}/read")).await;
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    let unread = feed(&app, &alice, "?unread_only=true").await;
    assert_eq!(unread["unread_count"], 2);
    assert!(unread["notifications"].as_array().unwrap().iter().all(|n| n["id"] != first.as_str()));

    let response = app.post(&alice, "/notifications/read-all").await;
    assert_eq!(response.json::<Value>().await.unwrap()["marked_read"], 2);
    let all = feed(&app, &alice, "").await;
    assert_eq!(all["unread_count"], 0);
    assert!(all["notifications"].as_array().unwrap().iter().all(|n| n["read_at"].is_string()));
}

#[actix_web::test]
async fn the_feed_pages_with_a_cursor() {
    let app = spawn_app().await;
    let alice = token("acme", "alice");
    let mut jobs = Vec::new();
    for _ in 0..5 {
        let id = app.create(&alice, "noop", json!({})).await;
        app.wait_until_finished(&alice, &id, WITHIN).await;
        jobs.push(id);
    }
    let mut seen = Vec::new();
    let mut query = "?limit=2".to_owned();
    loop {
        let page = feed(&app, &alice, &query).await;
        seen.extend(page["notifications"].as_array().unwrap().iter().map(|n| n["job_id"].as_str().unwrap().to_owned()));
        match page["next_cursor"].as_str() {
            Some(cursor) => query = format!("?limit=2&cursor={cursor}"),
            None => break,
        }
    }
    jobs.reverse();
    assert_eq!(seen, jobs);
    let response = app.get(&alice, "/notifications?limit=0").await;
    assert_problem(response, StatusCode::BAD_REQUEST, "bad_request").await;
}

#[actix_web::test]
async fn a_stream_delivers_the_callers_new_notifications_and_keeps_alive() {
    let app = spawn_app_with(quick_streams, HandlerRegistry::builtin()).await;
    let alice = token("acme", "alice");
    let mut stream = SseStream::open(&format!("{}/notifications/stream", app.address), Some(&alice), None).await;
    let job = app.create(&alice, "noop", json!({})).await;
    // The count of 1 comes after the event, or just before it when the
    // notification committed between the stream's first look at the feed
    // and its first count (the count is the database's at each look, and is
    // sent only when it changes): both orders are right.
    let (mut event, mut count) = (None, None);
    while event.is_none() || count != Some(1) {
        match stream.next(WITHIN).await.expect("a frame") {
            SseFrame::Event { id, event: Some(name), data } if name == "job_completed" => event = Some((id, data)),
            SseFrame::Event { event: Some(name), data, .. } if name == "unread_count" => {
                count = data["unread_count"].as_i64();
            }
            _ => {}
        }
    }
    let (id, data) = event.expect("an event");
    assert_eq!(data["job_id"], job.as_str());
    assert_eq!(data["title"], "Your test job is ready");
    assert_eq!(id.as_deref(), data["id"].as_str(), "the event id is the notification id");
    // Idle now: keep-alive comments follow.
    assert!(matches!(stream.next(Duration::from_secs(5)).await, Some(SseFrame::Comment(_))));
}

#[actix_web::test]
async fn every_open_stream_of_the_user_hears_the_count_change_when_one_of_them_reads() {
    let app = spawn_app_with(quick_streams, HandlerRegistry::builtin()).await;
    let (alice, bob) = (token("acme", "alice"), token("acme", "bob"));
    let url = format!("{}/notifications/stream", app.address);
    for _ in 0..2 {
        let job = app.create(&alice, "noop", json!({})).await;
        app.wait_until_finished(&alice, &job, WITHIN).await;
    }
    let mut tab = SseStream::open(&url, Some(&alice), None).await;
    let mut other_tab = SseStream::open(&url, Some(&alice), None).await;
    let mut bobs_tab = SseStream::open(&url, Some(&bob), None).await;
    assert_eq!(tab.next_unread_count(WITHIN).await, Some(2), "a stream opens with the count");
    assert_eq!(other_tab.next_unread_count(WITHIN).await, Some(2));
    assert_eq!(bobs_tab.next_unread_count(WITHIN).await, Some(0));

    let page = feed(&app, &alice, "").await;
    let newest = page["notifications"][0]["id"].as_str().unwrap().to_owned();
    assert_eq!(app.post(&alice, &format!("/notifications/{newest}/read")).await.status(), 204);
    assert_eq!(other_tab.next_unread_count(WITHIN).await, Some(1), "one read in a tab shows in the other");
    assert_eq!(app.post(&alice, "/notifications/read-all").await.status(), 200);
    assert_eq!(other_tab.next_unread_count(WITHIN).await, Some(0), "read-all shows in the other tab");
    // The tab no one read from hears each change, or only the last when both
    // came before it looked again: a count is its latest value, never replayed.
    let mut counts = Vec::new();
    while counts.last() != Some(&0) {
        counts.push(tab.next_unread_count(WITHIN).await.expect("a count"));
    }
    assert!(counts == [1, 0] || counts == [0], "{counts:?}");
    assert_eq!(bobs_tab.next_unread_count(Duration::from_millis(500)).await, None, "another user hears nothing");
}

#[actix_web::test]
async fn another_tenants_or_users_stream_sees_nothing() {
    let app = spawn_app_with(quick_streams, HandlerRegistry::builtin()).await;
    let url = format!("{}/notifications/stream", app.address);
    let mut other_tenant = SseStream::open(&url, Some(&token("globex", "alice")), None).await;
    let mut other_user = SseStream::open(&url, Some(&token("acme", "bob")), None).await;
    let alice = token("acme", "alice");
    let job = app.create(&alice, "noop", json!({})).await;
    app.wait_until_finished(&alice, &job, WITHIN).await;
    // Keep-alives every 200 ms: a second of them and no event means none was sent.
    assert_eq!(other_tenant.next_event(Duration::from_secs(1)).await, None);
    assert_eq!(other_user.next_event(Duration::from_secs(1)).await, None);
}

#[actix_web::test]
async fn reconnecting_with_last_event_id_replays_what_was_missed() {
    let app = spawn_app_with(quick_streams, HandlerRegistry::builtin()).await;
    let alice = token("acme", "alice");
    let (url, last_seen) = see_one_event_and_disconnect(&app, &alice).await;

    let mut missed = Vec::new();
    for _ in 0..3 {
        let id = app.create(&alice, "noop", json!({})).await;
        app.wait_until_finished(&alice, &id, WITHIN).await;
        missed.push(id);
    }
    let mut stream = SseStream::open(&url, Some(&alice), last_seen.as_deref()).await;
    let mut replayed = Vec::new();
    while replayed.len() < missed.len() {
        let (_, data) = stream.next_event(WITHIN).await.expect("a replayed event");
        replayed.push(data["job_id"].as_str().unwrap().to_owned());
    }
    assert_eq!(replayed, missed, "in order, none lost");
    assert_eq!(stream.next_event(Duration::from_millis(600)).await, None, "nothing twice");
}

#[actix_web::test]
async fn a_stream_hears_of_jobs_that_ended_in_another_process() {
    let db = TestDb::create().await;
    let streaming = ErrandProcess::start(&db, &[("ERRAND_WORKERS__GLOBAL_LIMIT", "1")]);
    let working = ErrandProcess::start(&db, &[]);
    let alice = token("acme", "alice");
    let mut stream = SseStream::open(&format!("{}/notifications/stream", streaming.address), Some(&alice), None).await;
    // Keep the streaming process busy so the job runs in the other one.
    let blocker = streaming.create(&alice, "sleep", json!({"ms": 60000})).await;
    eventually(WITHIN, "the streaming process is busy", || async {
        streaming.job(&alice, &blocker).await["state"] == "running"
    })
    .await;
    let job = working.create(&alice, "noop", json!({})).await;
    let (_, data) = stream.next_event(WITHIN).await.expect("an event from the other process");
    assert_eq!(data["job_id"], job.as_str());
}

#[actix_web::test]
async fn a_browser_opens_the_stream_with_a_short_lived_ticket_that_opens_nothing_else() {
    let app = spawn_app_with(quick_streams, HandlerRegistry::builtin()).await;
    let alice = token("acme", "alice");
    let response = app.post(&alice, "/notifications/stream-tickets").await;
    assert_eq!(response.status(), StatusCode::CREATED);
    let body: Value = response.json().await.unwrap();
    let ticket = body["ticket"].as_str().unwrap().to_owned();
    assert_eq!(body["expires_in"], 60);

    let mut stream =
        SseStream::open(&format!("{}/notifications/stream?ticket={ticket}", app.address), None, None).await;
    let job = app.create(&alice, "noop", json!({})).await;
    assert_eq!(stream.next_event(WITHIN).await.unwrap().1["job_id"], job.as_str());

    let as_api_token = app.get(&ticket, "/jobs").await;
    assert_problem(as_api_token, StatusCode::UNAUTHORIZED, "unauthorized").await;
    let forged = app.get_without_token(&format!("/notifications/stream?ticket=x{ticket}")).await;
    assert_problem(forged, StatusCode::UNAUTHORIZED, "unauthorized").await;
    let api_token_as_ticket = app.get_without_token(&format!("/notifications/stream?ticket={alice}")).await;
    assert_problem(api_token_as_ticket, StatusCode::UNAUTHORIZED, "unauthorized").await;
}

#[actix_web::test]
async fn a_reconnect_after_many_notifications_catches_up_on_all_of_them() {
    let app = spawn_app_with(quick_streams, HandlerRegistry::builtin()).await;
    let alice = token("acme", "alice");
    let (url, last_seen) = see_one_event_and_disconnect(&app, &alice).await;
    // More than one page of the stream's catch-up query.
    let mut missed = std::collections::HashSet::new();
    for _ in 0..450 {
        missed.insert(app.create(&alice, "noop", json!({})).await);
    }
    eventually(WITHIN, "every job notified", || async { feed(&app, &alice, "").await["unread_count"] == 451 }).await;
    let mut stream = SseStream::open(&url, Some(&alice), last_seen.as_deref()).await;
    let mut replayed = std::collections::HashSet::new();
    while replayed.len() < missed.len() {
        let (_, data) = stream.next_event(WITHIN).await.expect("a replayed event");
        replayed.insert(data["job_id"].as_str().unwrap().to_owned());
    }
    assert_eq!(replayed, missed);
}

#[actix_web::test]
async fn a_users_streams_are_capped_and_a_closed_one_frees_its_slot() {
    let app = TestApp::builder()
        .configure(|s| {
            s.notifications.max_streams_per_user = std::num::NonZeroUsize::new(2).unwrap();
            s.notifications.keep_alive = Duration::from_millis(100);
        })
        .spawn()
        .await;
    let url = format!("{}/notifications/stream", app.address);
    let alice = token("acme", "alice");
    let first = SseStream::open(&url, Some(&alice), None).await;
    let _second = SseStream::open(&url, Some(&alice), None).await;
    let refused = app.get(&alice, "/notifications/stream").await;
    assert_eq!(refused.headers()["retry-after"], "5");
    assert_problem(refused, StatusCode::TOO_MANY_REQUESTS, "too_many_streams").await;
    let _bobs = SseStream::open(&url, Some(&token("acme", "bob")), None).await;

    drop(first);
    eventually(Duration::from_secs(10), "a closed stream frees its slot", || async {
        app.get(&alice, "/notifications/stream").await.status() == StatusCode::OK
    })
    .await;
}

#[actix_web::test]
async fn a_tenants_streams_are_capped_together_and_leave_room_for_other_tenants() {
    let app = TestApp::builder()
        .configure(|s| {
            s.notifications.max_streams_per_tenant = std::num::NonZeroUsize::new(2).unwrap();
            s.notifications.keep_alive = Duration::from_millis(100);
        })
        .spawn()
        .await;
    let url = format!("{}/notifications/stream", app.address);
    let alices = SseStream::open(&url, Some(&token("acme", "alice")), None).await;
    let _bobs = SseStream::open(&url, Some(&token("acme", "bob")), None).await;
    let carol = token("acme", "carol");
    let refused = app.get(&carol, "/notifications/stream").await;
    let problem = assert_problem(refused, StatusCode::TOO_MANY_REQUESTS, "too_many_streams").await;
    assert!(problem["detail"].as_str().unwrap().contains("organisation"), "{problem}");
    let _other_tenants = SseStream::open(&url, Some(&token("globex", "dave")), None).await;

    drop(alices);
    eventually(Duration::from_secs(10), "a closed stream frees its tenant's slot", || async {
        app.get(&carol, "/notifications/stream").await.status() == StatusCode::OK
    })
    .await;
}

#[actix_web::test]
async fn a_process_holds_at_most_its_streams() {
    let app = TestApp::builder()
        .configure(|s| s.notifications.max_streams = std::num::NonZeroUsize::new(1).unwrap())
        .spawn()
        .await;
    let url = format!("{}/notifications/stream", app.address);
    let _alices = SseStream::open(&url, Some(&token("acme", "alice")), None).await;
    let problem = assert_problem(
        app.get(&token("initech", "bob"), "/notifications/stream").await,
        StatusCode::TOO_MANY_REQUESTS,
        "too_many_streams",
    )
    .await;
    assert!(problem["detail"].as_str().unwrap().contains("this server"), "{problem}");
}

#[actix_web::test]
async fn unused_stream_tickets_are_capped_and_using_one_frees_its_place() {
    let app = TestApp::builder()
        .configure(|s| s.notifications.max_unused_tickets_per_user = std::num::NonZeroUsize::new(2).unwrap())
        .spawn()
        .await;
    let alice = token("acme", "alice");
    let ticket = |response: reqwest::Response| async move {
        assert_eq!(response.status(), StatusCode::CREATED);
        response.json::<Value>().await.unwrap()["ticket"].as_str().unwrap().to_owned()
    };
    let first = ticket(app.post(&alice, "/notifications/stream-tickets").await).await;
    ticket(app.post(&alice, "/notifications/stream-tickets").await).await;
    let refused = app.post(&alice, "/notifications/stream-tickets").await;
    assert_problem(refused, StatusCode::TOO_MANY_REQUESTS, "too_many_streams").await;
    ticket(app.post(&token("acme", "bob"), "/notifications/stream-tickets").await).await;

    let url = format!("{}/notifications/stream?ticket={first}", app.address);
    let _stream = SseStream::open(&url, None, None).await;
    ticket(app.post(&alice, "/notifications/stream-tickets").await).await;
}

/// A new stream ticket of the bearer of `token`.
async fn new_ticket(app: &TestApp, token: &str) -> String {
    let response = app.post(token, "/notifications/stream-tickets").await;
    assert_eq!(response.status(), StatusCode::CREATED);
    response.json::<Value>().await.unwrap()["ticket"].as_str().unwrap().to_owned()
}

#[actix_web::test]
async fn a_ticket_opens_one_stream_once_on_any_process() {
    let app = spawn_app().await;
    let other = ErrandProcess::start(&app.db, &[]);
    let alice = token("acme", "alice");
    let ticket = new_ticket(&app, &alice).await;
    let url = |address: &str| format!("{address}/notifications/stream?ticket={ticket}");
    let _stream = SseStream::open(&url(&app.address), None, None).await;
    for address in [&app.address, &other.address] {
        let again = app.http.get(url(address)).send().await.unwrap();
        let problem = assert_problem(again, StatusCode::UNAUTHORIZED, "unauthorized").await;
        assert!(problem["detail"].as_str().unwrap().contains("used already"), "{problem}");
    }
}

#[actix_web::test]
async fn opening_a_stream_with_a_ticket_spends_a_request_of_the_users_budget() {
    let app = TestApp::builder()
        .configure(|s| {
            // Two requests' worth: the ticket, and the stream it opens.
            s.rate_limits.per_user = errand::config::CountCap(Some(6));
            s.rate_limits.burst = Duration::from_secs(20);
        })
        .spawn()
        .await;
    let alice = token("acme", "alice");
    let ticket = new_ticket(&app, &alice).await;
    let _stream = SseStream::open(&format!("{}/notifications/stream?ticket={ticket}", app.address), None, None).await;
    assert_problem(app.get(&alice, "/jobs").await, StatusCode::TOO_MANY_REQUESTS, "rate_limited").await;
}

/// Writes a second notification of alice's job `job` by hand (as a second
/// run would), with no NOTIFY; answers its id.
async fn write_notification(client: &impl tokio_postgres::GenericClient, job: &str) -> String {
    let insert = "INSERT INTO notifications (tenant_id, user_id, kind, job_id, job_type, job_status, run) \
                  VALUES ('acme', 'alice', 'job_completed', $1, 'noop', 'completed', 2) RETURNING id";
    let id: uuid::Uuid = client.query_one(insert, &[&uuid::Uuid::parse_str(job).unwrap()]).await.unwrap().get(0);
    id.to_string()
}

/// Reads job_completed events until one with `id` arrives.
async fn hears(stream: &mut SseStream, id: &str) -> bool {
    while let Some((event_id, _)) = stream.next_event_of("job_completed", WITHIN).await {
        if event_id.as_deref() == Some(id) {
            return true;
        }
    }
    false
}

#[actix_web::test]
async fn a_notification_committed_after_a_newer_one_was_streamed_still_reaches_the_stream() {
    let app = spawn_app_with(quick_streams, HandlerRegistry::builtin()).await;
    let alice = token("acme", "alice");
    let earlier_job = app.create(&alice, "noop", json!({})).await;
    app.wait_until_finished(&alice, &earlier_job, WITHIN).await;
    let mut stream = SseStream::open(&format!("{}/notifications/stream", app.address), Some(&alice), None).await;
    // A notification whose id is taken first, and whose transaction commits
    // last: after a newer one was streamed.
    let mut slow = app.db.client().await;
    let slow_tx = slow.transaction().await.unwrap();
    let late = write_notification(&slow_tx, &earlier_job).await;
    let newer = app.create(&alice, "noop", json!({})).await;
    let (_, data) = stream.next_event_of("job_completed", WITHIN).await.expect("the newer job's event");
    assert_eq!(data["job_id"], newer);
    slow_tx
        .query_one("SELECT pg_notify('errand_notifications', errand_owner_tag('acme', 'alice'))", &[])
        .await
        .unwrap();
    slow_tx.commit().await.unwrap();
    assert!(hears(&mut stream, &late).await, "the late commit's notification is streamed");
}

#[actix_web::test]
async fn streams_catch_up_on_what_was_committed_while_the_listener_was_away() {
    let app = spawn_app_with(quick_streams, HandlerRegistry::builtin()).await;
    let alice = token("acme", "alice");
    let job = app.create(&alice, "noop", json!({})).await;
    app.wait_until_finished(&alice, &job, WITHIN).await;
    let mut stream = SseStream::open(&format!("{}/notifications/stream", app.address), Some(&alice), None).await;
    // Committed with no NOTIFY, as if announced while the listener was away.
    let unannounced = write_notification(&app.db.client().await, &job).await;
    assert_eq!(stream.next_event_of("job_completed", Duration::from_secs(1)).await, None, "nothing woke the stream");

    let listener = "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
                    WHERE datname = current_database() AND query LIKE 'LISTEN%'";
    assert_eq!(app.db.scalar::<i64>(listener, &[]).await, 1, "the listener's connection is cut");
    assert!(hears(&mut stream, &unannounced).await, "the listener, back, has every stream catch up");
}

#[actix_web::test]
async fn a_notification_of_a_kind_this_version_does_not_know_is_left_out_not_an_error() {
    // As a newer errand process on the same database might write during an upgrade.
    let app = spawn_app().await;
    let alice = token("acme", "alice");
    let url = format!("{}/notifications/stream", app.address);
    let mut stream = SseStream::open(&url, Some(&alice), None).await;
    let db = app.db.client().await;
    db.batch_execute(
        "ALTER TABLE notifications DROP CONSTRAINT notifications_kind_check, DROP CONSTRAINT notifications_subject;
         INSERT INTO notifications (tenant_id, user_id, kind) VALUES ('acme', 'alice', 'from_the_future');
         NOTIFY errand_notifications",
    )
    .await
    .unwrap();
    let job = app.create(&alice, "noop", json!({})).await;
    let (_, seen) = stream.next_event(WITHIN).await.expect("the job's event, after the unknown one");
    assert_eq!(seen["job_id"], job.as_str());
    let page = feed(&app, &alice, "?limit=1").await;
    assert_eq!(page["notifications"][0]["job_id"], job.as_str());
    let next = feed(&app, &alice, &format!("?limit=1&cursor={}", page["next_cursor"].as_str().unwrap())).await;
    assert_eq!(next["notifications"], json!([]), "the unknown one left out");
    assert!(next["next_cursor"].is_null());
}
