//! errand vacuums its own queue once jobs leave dead rows in it, rather than
//! wait for autovacuum's visit (a minute apart by default), and only where
//! its role owns the table; and it tells of a transaction left open, which
//! no vacuum gets past.

use std::time::Duration;

use serde_json::{Value, json};

use crate::helpers::*;

const QUEUE_VACUUMS: &str = "SELECT vacuum_count FROM pg_stat_user_tables WHERE relname = 'job_queue'";

const DEAD_ROWS: &str = "SELECT n_dead_tup FROM pg_stat_user_tables WHERE relname = 'job_queue'";

/// `errand_database_oldest_snapshot_seconds` as `/metrics` says it now.
async fn oldest_snapshot_seconds(app: &TestApp) -> f64 {
    let text = app.get_without_token("/metrics").await.text().await.unwrap();
    let line = text.lines().find(|l| l.starts_with("errand_database_oldest_snapshot_seconds "));
    line.and_then(|l| l.split_whitespace().nth(1)).and_then(|v| v.parse().ok()).expect("the gauge is exported")
}

/// Runs `n` no-op jobs as one batch of alice's and waits until each ended.
async fn run_jobs(app: &TestApp, key: &str, n: usize) {
    let items: Vec<Value> = (0..n).map(|_| json!({})).collect();
    let response = app.submit_batch(&token("acme", "alice"), "noop", key, Value::from(items)).await;
    assert_eq!(response.status(), reqwest::StatusCode::ACCEPTED);
    let queued = "SELECT count(*) FROM job_queue";
    eventually(Duration::from_secs(120), "every job ran", || async { app.db.scalar::<i64>(queued, &[]).await == 0 })
        .await;
}

#[actix_web::test]
async fn errand_vacuums_job_queue_once_the_jobs_that_ran_leave_a_thousand_dead_rows() {
    let app = TestApp::builder()
        .configure(|s| {
            s.database.vacuum_queue_every = Some(Duration::from_millis(100));
            s.workers.tenant_limit = nonzero(50);
            s.workers.user_limit = Some(nonzero(50));
        })
        .spawn()
        .await;
    let store = errand::store::Store::connect(&app.db.url, 1).unwrap();
    assert!(store.may_vacuum_queue().await.unwrap(), "the tests' role owns the tables");
    assert_eq!(app.db.scalar::<i64>(QUEUE_VACUUMS, &[]).await, 0, "nothing dead, nothing vacuumed");

    // Each job that runs leaves two dead versions of its queue row: the one
    // its claim replaced, and the one its end deleted.
    run_jobs(&app, "first", 600).await;
    // The server's statistics reach the vacuum within about 10 s of the last end.
    eventually(Duration::from_secs(60), "errand vacuumed job_queue", || async {
        app.db.scalar::<i64>(QUEUE_VACUUMS, &[]).await >= 1
    })
    .await;
    let autovacuums = "SELECT autovacuum_count FROM pg_stat_user_tables WHERE relname = 'job_queue'";
    assert_eq!(app.db.scalar::<i64>(autovacuums, &[]).await, 0, "below the table's autovacuum threshold");
    let completed = "SELECT count(*) FROM jobs WHERE state = 'completed'";
    assert_eq!(app.db.scalar::<i64>(completed, &[]).await, 600);

    // A transaction left open elsewhere: no vacuum removes what ended after
    // it began, and the pass names it.
    let holder = app.db.client().await;
    holder.batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT 1").await.unwrap();
    let holder_pid: i32 = holder.query_one("SELECT pg_backend_pid()", &[]).await.unwrap().get(0);
    eventually(Duration::from_secs(10), "/metrics tells how long it has been open", || async {
        oldest_snapshot_seconds(&app).await >= 1.0
    })
    .await;
    run_jobs(&app, "second", 600).await;
    eventually(Duration::from_secs(60), "a vacuum that names the open transaction", || async {
        let pass = store.vacuum_queue(Duration::ZERO).await.unwrap();
        pass.horizon_held.is_some_and(|held| held.pid == holder_pid)
    })
    .await;
    assert!(app.db.scalar::<i64>(DEAD_ROWS, &[]).await >= 1000, "kept for the open transaction");
    holder.batch_execute("COMMIT").await.unwrap();
    eventually(Duration::from_secs(10), "/metrics sees no transaction held open", || async {
        oldest_snapshot_seconds(&app).await < 1.0
    })
    .await;
    eventually(Duration::from_secs(60), "the dead rows removed once it ended", || async {
        app.db.scalar::<i64>(DEAD_ROWS, &[]).await < 1000
    })
    .await;
}
