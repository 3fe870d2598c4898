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

/// Makes the cluster's server take no writes (`on`), or take them again, its sessions left open.
async fn read_only(db: &TestDb, on: bool) {
    let admin = db.client().await;
    // This session may write whatever the server's default.
    admin.batch_execute("SET default_transaction_read_only = off").await.unwrap();
    let set = if on {
        "ALTER SYSTEM SET default_transaction_read_only = on"
    } else {
        "ALTER SYSTEM RESET default_transaction_read_only"
    };
    admin.batch_execute(set).await.unwrap();
    admin.batch_execute("SELECT pg_reload_conf()").await.unwrap();
}

#[actix_web::test]
async fn a_primary_that_stays_up_read_only_gets_503s_and_is_left_once_it_takes_writes() {
    let Some(cluster) = PrivateCluster::start() else {
        eprintln!("skipped: no PostgreSQL server binaries under /usr/lib/postgresql");
        return;
    };
    let db = cluster.database().await;
    let errand = ErrandProcess::start(&db, &[]);
    let alice = token("acme", "alice");
    let before = errand.create(&alice, "noop", json!({})).await;
    errand.wait_until_finished(&alice, &before, WITHIN).await;

    // An old primary, fenced but up: every open session now refuses writes (25006).
    read_only(&db, true).await;
    let mut tries = 0;
    eventually(WITHIN, "a create is refused with 503", || {
        tries += 1;
        let key = format!("while-read-only-{tries}");
        let errand = &errand;
        let alice = &alice;
        async move {
            let status = errand.submit(alice, "noop", &key, json!({})).await.status();
            assert_ne!(status, StatusCode::INTERNAL_SERVER_ERROR, "never a 500");
            status == StatusCode::SERVICE_UNAVAILABLE
        }
    })
    .await;
    let refused = errand.submit(&alice, "noop", "refused", json!({})).await;
    assert!(refused.headers().contains_key("retry-after"));
    assert_problem(refused, StatusCode::SERVICE_UNAVAILABLE, "unavailable").await;
    assert_eq!(errand.get(&alice, &format!("/jobs/{before}")).await.status(), StatusCode::OK, "reads still answer");

    // Writable again: errand moves on by itself, on fresh connections.
    read_only(&db, false).await;
    eventually(WITHIN, "creates pass again", || async {
        errand.submit(&alice, "noop", "refused", json!({})).await.status() == StatusCode::ACCEPTED
    })
    .await;
    let jobs: i64 = db.scalar("SELECT count(*) FROM jobs WHERE idempotency_key = 'refused'", &[]).await;
    assert_eq!(jobs, 1, "the retried key made one job");
}

#[actix_web::test]
async fn a_connection_whose_server_refused_a_write_as_read_only_is_not_used_again() {
    let Some(cluster) = PrivateCluster::start() else {
        eprintln!("skipped: no PostgreSQL server binaries under /usr/lib/postgresql");
        return;
    };
    let db = cluster.database().await;
    let store = errand::store::Store::connect(&db.url, 1).unwrap();
    let pid = || async {
        let client = store.pool().get().await.unwrap();
        client.query_one("SELECT pg_backend_pid()", &[]).await.unwrap().get::<_, i32>(0)
    };
    let before = pid().await;
    assert_eq!(pid().await, before, "a pool of one reuses its connection");
    db.client().await.batch_execute("CREATE TABLE t (i int)").await.unwrap();

    read_only(&db, true).await;
    let client = store.pool().get().await.unwrap();
    // The session takes up the reloaded default in a moment.
    let deadline = std::time::Instant::now() + WITHIN;
    let refused = loop {
        match client.batch_execute("INSERT INTO t VALUES (1)").await {
            Err(error) => break error,
            Ok(()) => assert!(std::time::Instant::now() < deadline, "the server never refused a write"),
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(refused.code().map(|code| code.code()), Some("25006"), "{refused}");
    let refused = errand::store::StoreError::from(refused);
    assert!(refused.is_connection_lost(), "a 503 and a retry elsewhere, not a 500: {refused}");
    drop(client);
    read_only(&db, false).await;
    assert_ne!(pid().await, before, "the connection was dropped, a fresh one made");
}
