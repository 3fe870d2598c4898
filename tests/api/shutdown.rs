//! SIGTERM: stop taking work, let running jobs finish within the grace
//! period, and hand the rest to other processes at once.

use std::time::Duration;

use serde_json::json;

use crate::helpers::*;

#[actix_web::test]
async fn a_job_that_finishes_within_the_grace_period_completes_before_exit() {
    let db = TestDb::create().await;
    let mut process = ErrandProcess::start(&db, &[("ERRAND_WORKERS__SHUTDOWN_GRACE", "10s")]);
    let alice = token("acme", "alice");
    let id = process.create(&alice, "sleep", json!({"ms": 700})).await;
    eventually(Duration::from_secs(10), "the job is running", || async {
        process.job(&alice, &id).await["state"] == "running"
    })
    .await;
    let status = process.terminate();
    assert!(status.success(), "{status}");
    let state: String = db.scalar("SELECT state::text FROM jobs", &[]).await;
    assert_eq!(state, "completed");
    assert_eq!(db.notifications_for(&id).await, 1);
}

#[actix_web::test]
async fn a_job_still_running_after_the_grace_period_is_released_for_another_process() {
    let db = TestDb::create().await;
    let settings = [("ERRAND_WORKERS__SHUTDOWN_GRACE", "300ms"), ("ERRAND_WORKERS__LEASE", "1h")];
    let mut process = ErrandProcess::start(&db, &settings);
    let alice = token("acme", "alice");
    let id = process.create(&alice, "sleep", json!({"ms": 2000})).await;
    eventually(Duration::from_secs(10), "the job is running", || async {
        process.job(&alice, &id).await["state"] == "running"
    })
    .await;
    assert!(process.terminate().success());
    let row =
        db.client().await.query_one("SELECT state::text, attempt, lease_id IS NULL FROM job_queue", &[]).await.unwrap();
    let (state, attempt, no_lease): (String, i32, bool) = (row.get(0), row.get(1), row.get(2));
    assert_eq!((state.as_str(), attempt, no_lease), ("available", 0, true), "released, not left to a 1h lease");

    let next = ErrandProcess::start(&db, &settings);
    let job = next.wait_until_finished(&alice, &id, Duration::from_secs(20)).await;
    assert_eq!(job["status"], "completed");
    assert_eq!(job["attempts"], 1);
    assert_eq!(db.notifications_for(&id).await, 1);
}

#[actix_web::test]
async fn an_in_process_shutdown_stops_claiming_and_releases_what_runs() {
    let mut app = spawn_app_with(
        |s| s.workers.shutdown_grace = Duration::from_millis(200),
        errand::jobs::HandlerRegistry::builtin(),
    )
    .await;
    let alice = token("acme", "alice");
    let id = app.create(&alice, "sleep", json!({"ms": 60000})).await;
    eventually(Duration::from_secs(10), "the job is running", || async {
        app.job(&alice, &id).await["state"] == "running"
    })
    .await;
    app.shutdown().await;
    let state: String = app.db.scalar("SELECT state::text FROM jobs", &[]).await;
    assert_eq!(state, "available");
    assert_eq!(app.db.notifications_for(&id).await, 0, "a released job is not finished");
}

#[actix_web::test]
async fn open_notification_streams_end_at_shutdown_instead_of_holding_it_up() {
    let db = TestDb::create().await;
    let mut process = ErrandProcess::start(&db, &[("ERRAND_WORKERS__SHUTDOWN_GRACE", "30s")]);
    let alice = token("acme", "alice");
    let mut stream = SseStream::open(&format!("{}/notifications/stream", process.address), Some(&alice), None).await;
    assert_eq!(stream.next_unread_count(Duration::from_secs(10)).await, Some(0), "the stream is open");
    let asked = std::time::Instant::now();
    let status = process.terminate();
    assert!(status.success(), "{status}");
    // Nothing ran: only the open stream could have held the exit for the grace period.
    assert!(asked.elapsed() < Duration::from_secs(10), "exited after {:?}", asked.elapsed());
    // On a loaded machine the stream may have lived past its keep-alive
    // period before the end: that one comment may come first.
    let mut last = stream.next(Duration::from_secs(5)).await;
    if matches!(last, Some(SseFrame::Comment(_))) {
        last = stream.next(Duration::from_secs(5)).await;
    }
    assert_eq!(last, None, "the stream ended: its client reconnects elsewhere");
}

/// A connection first made for an HTTP request is made on that HTTP
/// worker's runtime, which ends at shutdown while the drain still writes.
/// The pool lends it to everyone, so it must outlive that runtime: its
/// socket and task live on the runtime the store was built on.
#[actix_web::test]
async fn a_connection_first_made_on_a_runtime_that_ends_stays_usable() {
    let db = TestDb::create().await;
    let store = errand::store::Store::connect(&db.url, 1).unwrap();
    let pool = store.pool().clone();
    // Off this runtime's thread, which must stay free to make the connection.
    let (made_by, held) = tokio::task::spawn_blocking(move || {
        let other = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        other.block_on(async {
            let client = pool.get().await.unwrap();
            let pid: i32 = client.query_one("SELECT pg_backend_pid()", &[]).await.unwrap().get(0);
            (pid, client)
        })
        // `other` ends here, the connection still checked out.
    })
    .await
    .unwrap();
    let pid: i32 = held.query_one("SELECT pg_backend_pid()", &[]).await.expect("the connection still works").get(0);
    assert_eq!(pid, made_by, "the same connection");
    drop(held);
    let again = store.pool().get().await.unwrap();
    let pid: i32 = again.query_one("SELECT pg_backend_pid()", &[]).await.unwrap().get(0);
    assert_eq!(pid, made_by, "the pool kept it");
}
