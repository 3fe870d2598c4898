//! The database going away under errand: a restart of the whole server in
//! the middle of the work, which errand rides out without being restarted.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::*;
use crate::private_cluster::PrivateCluster;

const WITHIN: Duration = Duration::from_secs(30);

#[actix_web::test]
async fn a_database_restart_mid_work_is_ridden_out_without_restarting_errand() {
    let Some(cluster) = PrivateCluster::start() else {
        eprintln!("skipped: no PostgreSQL server binaries under /usr/lib/postgresql");
        return;
    };
    let db = cluster.database().await;
    // An API-only process and a worker that hears of work only by NOTIFY
    // (its backstop poll is an hour): after the restart, the work can only
    // flow if the worker's LISTEN connection came back.
    let api = ErrandProcess::start(&db, &[("ERRAND_WORKERS__GLOBAL_LIMIT", "0")]);
    // A short lease: should recording the running job's end give up during
    // the outage, it is rescued within seconds.
    let _worker =
        ErrandProcess::start(&db, &[("ERRAND_WORKERS__POLL_INTERVAL", "1h"), ("ERRAND_WORKERS__LEASE", "3s")]);
    let alice = token("acme", "alice");
    let before = api.create(&alice, "sleep", json!({"ms": 10})).await;
    api.wait_until_finished(&alice, &before, WITHIN).await;
    let running = api.create(&alice, "sleep", json!({"ms": 1500})).await;

    cluster.stop();
    let jobs = api.get(&alice, "/jobs").await;
    assert_problem(jobs, StatusCode::SERVICE_UNAVAILABLE, "unavailable").await;
    let ready = api.get_without_token("/readyz").await;
    assert_eq!(ready.status(), StatusCode::SERVICE_UNAVAILABLE, "readyz reports the database down");

    cluster.restart();
    eventually(WITHIN, "readyz recovers", || async {
        api.get_without_token("/readyz").await.status() == StatusCode::OK
    })
    .await;
    let job = api.wait_until_finished(&alice, &running, WITHIN).await;
    assert_eq!(job["status"], "completed", "the job accepted before the outage is not lost: {job}");
    let after = api.create(&alice, "noop", json!({})).await;
    assert_eq!(api.wait_until_finished(&alice, &after, WITHIN).await["status"], "completed");
    assert_eq!(db.notifications_for(&running).await, 1);
    assert_eq!(db.notifications_for(&after).await, 1);
}

#[actix_web::test]
async fn a_job_that_ended_while_the_database_was_away_longer_than_the_lease_runs_once() {
    let Some(cluster) = PrivateCluster::start() else {
        eprintln!("skipped: no PostgreSQL server binaries under /usr/lib/postgresql");
        return;
    };
    let db = cluster.database().await;
    // A 6 s lease: renewed every 2 s, rescued 6 s after it expired.
    let errand = ErrandProcess::start(&db, &[("ERRAND_WORKERS__LEASE", "6s")]);
    let alice = token("acme", "alice");
    let job = errand.create(&alice, "sleep", json!({"ms": 2000})).await;
    eventually(WITHIN, "the job runs", || async {
        errand.get(&alice, &format!("/jobs/{job}")).await.json::<serde_json::Value>().await.unwrap()["state"]
            == "running"
    })
    .await;

    // The handler ends during the outage, which outlasts the lease: the end
    // is kept and recorded once the database is back, the lease renewed
    // first, and the rescuer leaves it to its process.
    cluster.stop();
    tokio::time::sleep(Duration::from_secs(7)).await; // the outage itself, not a wait for anything
    cluster.restart();
    let finished = errand.wait_until_finished(&alice, &job, WITHIN).await;
    assert_eq!(finished["status"], "completed", "{finished}");
    assert_eq!(finished["attempts"], 1, "the handler ran once: {finished}");
    assert_eq!(db.notifications_for(&job).await, 1);
}
