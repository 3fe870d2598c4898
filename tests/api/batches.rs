//! Batches: one request makes a job per item; the children run as any job
//! does, and the batch's owner hears once, when the last of them ended,
//! with the counts and a report of those that did not complete.

use std::time::Duration;

use errand::config::{CountCap, Settings};
use reqwest::StatusCode;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::*;

const WITHIN: Duration = Duration::from_secs(60);

/// Sleep jobs fail for good at their first failure.
fn one_attempt(s: &mut Settings) {
    s.job_types.get_mut("sleep").unwrap().max_attempts = nonzero(1);
}

/// `n` sleep items, those at `failing` failing.
fn items(n: usize, failing: &[usize]) -> Value {
    (0..n).map(|i| json!({"ms": 0, "fail_times": u32::from(failing.contains(&i))})).collect()
}

/// Submits a batch and expects a 202; answers its id.
async fn create_batch(api: &impl Api, token: &str, items: Value) -> String {
    let response = api.submit_batch(token, "sleep", &Uuid::new_v4().to_string(), items).await;
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    id_of(response).await
}

/// Waits for the caller's one `batch_completed` notification.
async fn batch_notification(api: &impl Api, token: &str) -> Value {
    eventually(WITHIN, "the batch's notification", || async {
        !api.notifications_of(token, "batch_completed").await.is_empty()
    })
    .await;
    api.notifications_of(token, "batch_completed").await.remove(0)
}

#[actix_web::test]
async fn a_batch_ends_with_one_notification_with_its_counts_and_a_report_of_what_failed() {
    let app = TestApp::builder().configure(one_attempt).spawn().await;
    let alice = token("acme", "alice");
    let batch = create_batch(&app, &alice, items(40, &[3, 17, 39])).await;

    let notice = batch_notification(&app, &alice).await;
    assert_eq!(notice["batch_id"], batch.as_str());
    assert_eq!(notice["counts"], json!({"total": 40, "completed": 37, "failed": 3, "cancelled": 0}));
    assert_eq!(notice["body"], "37 completed, 3 failed; the report lists the others.");
    // The children told nobody on their own: no feed entries, no emails.
    assert!(app.notifications_of(&alice, "job_completed").await.is_empty());
    let feed: Value = app.get(&alice, "/notifications").await.json().await.unwrap();
    assert_eq!(feed["unread_count"], 1);
    let emails: i64 = app.db.scalar("SELECT count(*) FROM email_outbox", &[]).await;
    assert_eq!(emails, 0);

    let shown: Value = app.get(&alice, &format!("/batches/{batch}")).await.json().await.unwrap();
    assert_eq!(
        (shown["status"].as_str(), shown["total"].as_u64(), shown["completed"].as_u64(), shown["failed"].as_u64()),
        (Some("completed_with_failures"), Some(40), Some(37), Some(3))
    );
    let report = app.get(&alice, shown["report_url"].as_str().unwrap()).await;
    assert_eq!(report.status(), StatusCode::OK);
    assert!(report.headers()["content-type"].to_str().unwrap().starts_with("text/csv"));
    let report = report.text().await.unwrap();
    let lines: Vec<&str> = report.lines().collect();
    assert_eq!(lines[0], "job_id,status,error,params");
    assert_eq!(lines.len(), 4, "{report}");
    let failed: Vec<String> = app.db.column("SELECT id::text FROM jobs WHERE state = 'failed' ORDER BY id", &[]).await;
    for (line, job) in lines[1..].iter().zip(&failed) {
        assert!(line.starts_with(&format!("{job},failed,")), "{line}");
        assert!(line.contains("fail_times"), "the item's params: {line}");
    }
}

#[actix_web::test]
async fn a_key_makes_one_batch_and_a_reused_key_is_refused() {
    let app = TestApp::builder().configure(|s| s.workers.global_limit = 0).spawn().await;
    let alice = token("acme", "alice");
    let first = app.submit_batch(&alice, "sleep", "bulk-1", items(3, &[])).await;
    assert_eq!(first.status(), StatusCode::ACCEPTED);
    let id = id_of(first).await;
    let again = app.submit_batch(&alice, "sleep", "bulk-1", items(3, &[])).await;
    assert_eq!(again.status(), StatusCode::OK);
    assert_eq!(again.headers()["idempotent-replayed"], "true");
    assert_eq!(id_of(again).await, id);
    let other = app.submit_batch(&alice, "sleep", "bulk-1", items(4, &[])).await;
    assert_problem(other, StatusCode::UNPROCESSABLE_ENTITY, "idempotency_key_reused").await;
    let children: i64 =
        app.db.scalar("SELECT count(*) FROM jobs WHERE batch_id = $1", &[&Uuid::parse_str(&id).unwrap()]).await;
    assert_eq!(children, 3);
}

#[actix_web::test]
async fn bad_batches_are_refused_with_a_problem_naming_what_is_wrong() {
    let app =
        TestApp::builder().configure(|s| s.batches.max_items = std::num::NonZeroUsize::new(5).unwrap()).spawn().await;
    let alice = token("acme", "alice");
    let key = || Uuid::new_v4().to_string();
    assert_problem(
        app.submit_batch(&alice, "sleep", &key(), json!([])).await,
        StatusCode::UNPROCESSABLE_ENTITY,
        "invalid_batch",
    )
    .await;
    assert_problem(
        app.submit_batch(&alice, "sleep", &key(), items(6, &[])).await,
        StatusCode::UNPROCESSABLE_ENTITY,
        "invalid_batch",
    )
    .await;
    let refused = app.submit_batch(&alice, "sleep", &key(), json!([{"ms": 1}, {"ms": "soon"}])).await;
    let problem = assert_problem(refused, StatusCode::UNPROCESSABLE_ENTITY, "invalid_params").await;
    assert_eq!(problem["field"], "/items/1/ms");
    let refused = app.submit_batch(&alice, "sleep", &key(), json!([{"ms": 1}, 7])).await;
    assert_eq!(assert_problem(refused, StatusCode::UNPROCESSABLE_ENTITY, "invalid_params").await["field"], "/items/1");
    assert_problem(
        app.submit_batch(&alice, "nope", &key(), items(1, &[])).await,
        StatusCode::NOT_FOUND,
        "unknown_job_type",
    )
    .await;
    let not_items = app.post_json(&alice, "/batches/sleep", json!({"things": []})).await;
    assert_problem(not_items, StatusCode::BAD_REQUEST, "invalid_idempotency_key").await;
    let not_items = app.submit_batch(&alice, "sleep", &key(), json!({"things": []})).await;
    assert_problem(not_items, StatusCode::BAD_REQUEST, "bad_request").await;
    let batches: i64 = app.db.scalar("SELECT count(*) FROM batches", &[]).await;
    assert_eq!(batches, 0, "nothing recorded");
}

#[actix_web::test]
async fn another_users_or_tenants_batch_is_not_found() {
    let app = TestApp::builder().configure(|s| s.workers.global_limit = 0).spawn().await;
    let batch = create_batch(&app, &token("acme", "alice"), items(2, &[])).await;
    for stranger in [token("acme", "bob"), token("globex", "alice")] {
        for path in [format!("/batches/{batch}"), format!("/batches/{batch}/report")] {
            assert_problem(app.get(&stranger, &path).await, StatusCode::NOT_FOUND, "not_found").await;
        }
        let cancel = app.post(&stranger, &format!("/batches/{batch}/cancel")).await;
        assert_problem(cancel, StatusCode::NOT_FOUND, "not_found").await;
    }
    let waiting: i64 = app.db.scalar("SELECT count(*) FROM job_queue", &[]).await;
    assert_eq!(waiting, 2, "a stranger's cancel changed nothing");
}

#[actix_web::test]
async fn cancelling_a_batch_cancels_its_waiting_children_and_notifies_once() {
    // An API-only process: nothing starts.
    let app = TestApp::builder().configure(|s| s.workers.global_limit = 0).spawn().await;
    let alice = token("acme", "alice");
    let batch = create_batch(&app, &alice, items(5, &[])).await;
    let cancelled = app.post(&alice, &format!("/batches/{batch}/cancel")).await;
    assert_eq!(cancelled.status(), StatusCode::OK);
    let shown: Value = cancelled.json().await.unwrap();
    assert_eq!((shown["cancelled"].as_u64(), shown["status"].as_str()), (Some(5), Some("completed_with_failures")));
    let again = app.post(&alice, &format!("/batches/{batch}/cancel")).await;
    assert_eq!(again.status(), StatusCode::OK);

    let notices = app.notifications_of(&alice, "batch_completed").await;
    assert_eq!(notices.len(), 1);
    assert_eq!(notices[0]["counts"], json!({"total": 5, "completed": 0, "failed": 0, "cancelled": 5}));
    let report = app.get(&alice, &format!("/batches/{batch}/report")).await.text().await.unwrap();
    assert_eq!(report.lines().filter(|line| line.contains(",cancelled,")).count(), 5);
}

#[actix_web::test]
async fn a_batch_that_would_go_over_a_quota_records_nothing() {
    let app = TestApp::builder()
        .configure(|s| {
            s.workers.global_limit = 0;
            s.quotas.max_unfinished_per_user = CountCap(Some(10));
        })
        .spawn()
        .await;
    let alice = token("acme", "alice");
    app.create(&alice, "noop", json!({})).await;
    let refused = app.submit_batch(&alice, "sleep", "big", items(10, &[])).await;
    let problem = assert_problem(refused, StatusCode::TOO_MANY_REQUESTS, "quota_exceeded").await;
    assert_eq!((problem["limit"].as_u64(), problem["count"].as_u64()), (Some(10), Some(10)), "{problem}");
    let (batches, jobs): (i64, i64) = (
        app.db.scalar("SELECT count(*) FROM batches", &[]).await,
        app.db.scalar("SELECT count(*) FROM jobs", &[]).await,
    );
    assert_eq!((batches, jobs), (0, 1));
    // Nine fit.
    create_batch(&app, &alice, items(9, &[])).await;
}

#[actix_web::test]
async fn a_live_stream_shows_a_batchs_progress_then_its_notification() {
    let app = TestApp::builder().configure(one_attempt).spawn().await;
    let alice = token("acme", "alice");
    let mut stream = SseStream::open(&format!("{}/notifications/stream", app.address), Some(&alice), None).await;
    // One child runs for a while: the others end while the batch is still open.
    let mut children = items(30, &[0]);
    children[29] = json!({"ms": 3000});
    let batch = create_batch(&app, &alice, children).await;
    let (_, progress) = stream.next_event_of("batch_progress", WITHIN).await.expect("a batch_progress event");
    assert_eq!(progress["batch_id"], batch.as_str());
    assert_eq!(progress["total"], 30);
    let (id, notice) = stream.next_event_of("batch_completed", WITHIN).await.expect("a batch_completed event");
    assert!(id.is_some(), "a notification, resumable by its id");
    assert_eq!(notice["counts"], json!({"total": 30, "completed": 29, "failed": 1, "cancelled": 0}));
}

#[actix_web::test]
async fn a_thousand_children_across_two_processes_and_a_kill_end_in_exactly_one_notification() {
    let db = TestDb::create().await;
    // Three attempts: a child whose attempt died with the process runs
    // again; the failing ones fail all three.
    let settings = [
        ("ERRAND_WORKERS__LEASE", "1s"),
        ("ERRAND_JOB_TYPES__SLEEP__MAX_ATTEMPTS", "3"),
        ("ERRAND_JOB_TYPES__SLEEP__BACKOFF_BASE", "100ms"),
        ("ERRAND_BATCHES__MAX_ITEMS", "1000"),
    ];
    let mut doomed = ErrandProcess::start(&db, &settings);
    let survivor = ErrandProcess::start(&db, &settings);
    let alice = token("acme", "alice");
    let failing = [10, 500, 998];
    let items: Value =
        (0..1000).map(|i| json!({"ms": 5, "fail_times": if failing.contains(&i) { 3 } else { 0 }})).collect();
    let batch = create_batch(&doomed, &alice, items).await;
    eventually(WITHIN, "some children to end", || async {
        doomed.get(&alice, &format!("/batches/{batch}")).await.json::<Value>().await.unwrap()["completed"]
            .as_u64()
            .is_some_and(|n| n >= 100)
    })
    .await;
    doomed.kill_hard();

    let notice = batch_notification(&survivor, &alice).await;
    assert_eq!(notice["counts"], json!({"total": 1000, "completed": 997, "failed": 3, "cancelled": 0}));
    assert_eq!(survivor.notifications_of(&alice, "batch_completed").await.len(), 1);
    let notifications: i64 = db.scalar("SELECT count(*) FROM notifications", &[]).await;
    assert_eq!(notifications, 1, "the batch's, and no child's");
    let (ended, failed): (i64, i64) = (
        db.scalar("SELECT count(*) FROM jobs WHERE finished_at IS NOT NULL", &[]).await,
        db.scalar("SELECT count(*) FROM jobs WHERE state = 'failed'", &[]).await,
    );
    assert_eq!((ended, failed), (1000, 3));
}

#[actix_web::test]
async fn an_operators_retry_of_a_failed_child_takes_it_out_of_its_count_and_the_batch_still_notifies_once() {
    let app = TestApp::builder().configure(one_attempt).spawn().await;
    let alice = token("acme", "alice");
    // The failing child takes two seconds an attempt: its retry is seen running.
    let batch = create_batch(&app, &alice, json!([{"ms": 0}, {"ms": 2000, "fail_times": 1}, {"ms": 0}])).await;
    batch_notification(&app, &alice).await;
    let failed: Uuid = app.db.scalar("SELECT id FROM jobs WHERE state = 'failed'", &[]).await;
    let retried = app.post(&operator_token("ops"), &format!("/admin/jobs/{failed}/retry")).await;
    assert!(retried.status().is_success(), "{}", retried.status());
    let shown: Value = app.get(&alice, &format!("/batches/{batch}")).await.json().await.unwrap();
    assert_eq!((shown["status"].as_str(), shown["failed"].as_u64()), (Some("processing"), Some(0)), "{shown}");

    // It fails again (a new run starts at attempt 1): counted once more, told no more.
    eventually(WITHIN, "the retried child to be counted", || async {
        let shown: Value = app.get(&alice, &format!("/batches/{batch}")).await.json().await.unwrap();
        shown["status"] == "completed_with_failures" && shown["failed"] == 1
    })
    .await;
    let run: i32 = app.db.scalar("SELECT run FROM jobs WHERE id = $1", &[&failed]).await;
    assert_eq!(run, 2);
    assert_eq!(app.notifications_of(&alice, "batch_completed").await.len(), 1);
}

#[actix_web::test]
async fn a_finished_batch_past_the_history_retention_goes_with_its_children_and_its_notification() {
    let app = TestApp::builder().configure(|s| s.history.retention = Duration::from_secs(1)).spawn().await;
    let alice = token("acme", "alice");
    let batch = id_of(app.submit_batch(&alice, "sleep", "bulk", items(3, &[])).await).await;
    batch_notification(&app, &alice).await;
    eventually(WITHIN, "the batch, its children and its notification pruned", || async {
        app.ticks.prune.send(errand::actors::Prune).await.unwrap();
        let left: i64 = app
            .db
            .scalar("SELECT (SELECT count(*) FROM batches) + (SELECT count(*) FROM jobs) + (SELECT count(*) FROM notifications)", &[])
            .await;
        left == 0
    })
    .await;
    assert_problem(app.get(&alice, &format!("/batches/{batch}")).await, StatusCode::NOT_FOUND, "not_found").await;
    // Its key is free again, for other items too.
    assert_eq!(app.submit_batch(&alice, "sleep", "bulk", items(1, &[])).await.status(), StatusCode::ACCEPTED);
}

/// A cancelled batch of `alice`'s whose report is 10 MB (200 children of 50
/// KB), more than the sockets between errand and a reader who stopped hold.
async fn a_large_report(app: &TestApp, alice: &str) -> String {
    let pad = "x".repeat(50_000);
    let items: Value = (0..200).map(|_| json!({"pad": pad})).collect();
    let response = app.submit_batch(alice, "noop", &Uuid::new_v4().to_string(), items).await;
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    let batch = id_of(response).await;
    assert_eq!(app.post(alice, &format!("/batches/{batch}/cancel")).await.status(), StatusCode::OK);
    batch
}

/// A reader of `batch`'s report who reads its first bytes and stops.
async fn stalled_reader(app: &TestApp, alice: &str, batch: &str) -> tokio::net::TcpStream {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let address: std::net::SocketAddr = app.address.trim_start_matches("http://").parse().unwrap();
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut socket = socket.connect(address).await.unwrap();
    let request = format!("GET /batches/{batch}/report HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {alice}\r\n\r\n");
    socket.write_all(request.as_bytes()).await.unwrap();
    let mut head = [0u8; 12];
    tokio::time::timeout(WITHIN, socket.read_exact(&mut head)).await.expect("the report begins").unwrap();
    assert_eq!(&head, b"HTTP/1.1 200");
    socket
}

#[actix_web::test]
async fn readers_who_stop_reading_a_report_hold_no_database_connection() {
    // An API-only process: the children wait, and are cancelled.
    let app = TestApp::builder().configure(|s| s.workers.global_limit = 0).spawn().await;
    let alice = token("acme", "alice");
    let batch = a_large_report(&app, &alice).await;
    // More readers than the pool has connections (8) read the head and stop.
    let mut stalled = Vec::new();
    for _ in 0..12 {
        stalled.push(stalled_reader(&app, &alice, &batch).await);
    }

    // Everyone else carries on: another tenant creates a job, and a reader
    // who reads gets the whole report.
    let bob = token("globex", "bob");
    let created = app.submit(&bob, "noop", &Uuid::new_v4().to_string(), json!({})).await;
    assert_eq!(created.status(), StatusCode::ACCEPTED);
    let report = app.get(&alice, &format!("/batches/{batch}/report")).await.text().await.unwrap();
    assert_eq!(report.lines().filter(|line| line.contains(",cancelled,")).count(), 200);
    drop(stalled);
}

#[actix_web::test]
async fn a_reader_who_takes_nothing_for_the_send_timeout_is_disconnected() {
    use tokio::io::AsyncWriteExt;

    let app = TestApp::builder()
        .configure(|s| {
            s.workers.global_limit = 0;
            s.http.send_timeout = Duration::from_secs(1);
        })
        .spawn()
        .await;
    let alice = token("acme", "alice");
    let batch = a_large_report(&app, &alice).await;
    let mut reader = stalled_reader(&app, &alice, &batch).await;
    // Once errand dropped the connection, its kernel answers what the reader
    // sends with a reset (blank lines are allowed before a request).
    let dropped = tokio::time::timeout(WITHIN, async {
        while reader.write_all(b"\r\n").await.is_ok() {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    })
    .await;
    assert!(dropped.is_ok(), "errand still holds a reader who took nothing for a minute");
}
