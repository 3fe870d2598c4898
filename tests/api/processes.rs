//! Several real errand processes on one database: one job per key, work
//! announced across processes, and a SIGKILL mid-job that loses nothing and
//! runs nothing twice.

use std::time::Duration;

use futures_util::future::join_all;
use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::*;

#[actix_web::test]
async fn concurrent_requests_with_one_key_across_two_processes_make_one_job() {
    let db = TestDb::create().await;
    let mail = MailServer::start().await;
    let smtp_port = mail.smtp_port.to_string();
    let email = [("ERRAND_EMAIL__ENABLED", "true"), ("ERRAND_EMAIL__SMTP_PORT", smtp_port.as_str())];
    let a = ErrandProcess::start(&db, &email);
    let b = ErrandProcess::start(&db, &email);
    let alice = token_for("acme", "alice", "alice@example.com");
    let requests = (0..100).map(|i| {
        let process = if i % 2 == 0 { &a } else { &b };
        process.submit(&alice, "sleep", "one-intent", json!({"ms": 20}))
    });
    let responses = join_all(requests).await;
    let mut ids = Vec::new();
    let mut created = 0;
    for response in responses {
        assert!(matches!(response.status(), StatusCode::ACCEPTED | StatusCode::OK), "{}", response.status());
        created += usize::from(response.status() == StatusCode::ACCEPTED);
        ids.push(id_of(response).await);
    }
    assert_eq!(created, 1);
    assert!(ids.iter().all(|id| *id == ids[0]));
    let job = a.wait_until_finished(&alice, &ids[0], Duration::from_secs(20)).await;
    assert_eq!(job["attempts"], 1);
    let jobs: i64 = db.scalar("SELECT count(*) FROM jobs", &[]).await;
    assert_eq!(jobs, 1);
    assert_eq!(db.notifications_for(&ids[0]).await, 1);
    // One email, whichever process ran the job.
    mail.assert_all_sent(&db, 1).await;
}

#[actix_web::test]
async fn work_a_busy_process_cannot_take_is_announced_to_an_idle_one() {
    let db = TestDb::create().await;
    let busy = ErrandProcess::start(&db, &[("ERRAND_WORKERS__GLOBAL_LIMIT", "1")]);
    // The idle process polls only hourly: it can only hear of the work by NOTIFY.
    let idle = ErrandProcess::start(&db, &[("ERRAND_WORKERS__POLL_INTERVAL", "1h")]);
    let alice = token("acme", "alice");
    let blocker = busy.create(&alice, "sleep", json!({"ms": 60000})).await;
    eventually(Duration::from_secs(10), "the busy process runs its long job", || async {
        busy.job(&alice, &blocker).await["state"] == "running"
    })
    .await;
    let waiting = busy.create(&alice, "noop", json!({})).await;
    let job = idle.wait_until_finished(&alice, &waiting, Duration::from_secs(10)).await;
    assert_eq!(job["status"], "completed");
}

#[actix_web::test]
async fn a_process_killed_mid_job_loses_nothing_and_the_job_completes_once() {
    let db = TestDb::create().await;
    let mail = MailServer::start().await;
    let smtp_port = mail.smtp_port.to_string();
    let settings = [
        ("ERRAND_WORKERS__LEASE", "1s"),
        ("ERRAND_EMAIL__ENABLED", "true"),
        ("ERRAND_EMAIL__SMTP_PORT", smtp_port.as_str()),
    ];
    let mut doomed = ErrandProcess::start(&db, &settings);
    let alice = token_for("acme", "alice", "alice@example.com");
    let id = doomed.create(&alice, "sleep", json!({"ms": 1500})).await;
    eventually(Duration::from_secs(10), "the job is running in the doomed process", || async {
        doomed.job(&alice, &id).await["state"] == "running"
    })
    .await;
    doomed.kill_hard();

    let survivor = ErrandProcess::start(&db, &settings);
    let job = survivor.wait_until_finished(&alice, &id, Duration::from_secs(30)).await;
    assert_eq!(job["status"], "completed");
    assert_eq!(job["attempts"], 2, "the killed attempt and the one that finished");
    assert_eq!(db.notifications_for(&id).await, 1);
    let jobs: i64 = db.scalar("SELECT count(*) FROM jobs", &[]).await;
    assert_eq!(jobs, 1);
    // One email for the job that ran twice.
    mail.assert_all_sent(&db, 1).await;
}

#[actix_web::test]
async fn an_api_only_process_records_jobs_that_worker_processes_run() {
    let db = TestDb::create().await;
    let api = ErrandProcess::start(&db, &[("ERRAND_WORKERS__GLOBAL_LIMIT", "0")]);
    let alice = token("acme", "alice");
    let first = api.create(&alice, "noop", json!({})).await;
    // Nothing runs it yet: a second and a half of polls and wake-ups change nothing.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(api.job(&alice, &first).await["state"], "queued");

    // A worker that polls only hourly hears of new work from the API process's NOTIFY.
    let worker = ErrandProcess::start(&db, &[("ERRAND_WORKERS__POLL_INTERVAL", "1h")]);
    api.wait_until_finished(&alice, &first, Duration::from_secs(20)).await;
    let mut more = Vec::new();
    for _ in 0..5 {
        more.push(api.create(&alice, "noop", json!({})).await);
    }
    for id in &more {
        assert_eq!(worker.wait_until_finished(&alice, id, Duration::from_secs(20)).await["status"], "completed");
    }
}

#[actix_web::test]
async fn tenant_and_type_limits_hold_across_two_processes_and_each_job_notifies_once() {
    let db = TestDb::create().await;
    let limits = [("ERRAND_WORKERS__TENANT_LIMIT", "2"), ("ERRAND_JOB_TYPES__SLEEP__CONCURRENCY", "3")];
    let (a, b) = (ErrandProcess::start(&db, &limits), ErrandProcess::start(&db, &limits));
    let mut jobs = Vec::new();
    for tenant in ["acme", "globex", "initech"] {
        let caller = token(tenant, "alice");
        for i in 0..6 {
            let process = if i % 2 == 0 { &a } else { &b };
            jobs.push((caller.clone(), process.create(&caller, "sleep", json!({"ms": 100})).await));
        }
    }
    for (caller, id) in &jobs {
        assert_eq!(a.wait_until_finished(caller, id, Duration::from_secs(30)).await["status"], "completed");
        assert_eq!(db.notifications_for(id).await, 1);
    }
    let rows = db.client().await.query("SELECT tenant_id, started_at, finished_at FROM jobs", &[]).await.unwrap();
    let spans: Vec<(String, chrono::DateTime<chrono::Utc>, chrono::DateTime<chrono::Utc>)> =
        rows.iter().map(|r| (r.get(0), r.get(1), r.get(2))).collect();
    for (tenant, start, _) in &spans {
        let running = spans.iter().filter(|(_, s, f)| s <= start && f > start);
        let of_tenant = running.clone().filter(|(t, _, _)| t == tenant).count();
        assert!(of_tenant <= 2, "{of_tenant} jobs of {tenant} ran at once");
        assert!(running.count() <= 3, "more sleep jobs ran at once than the type's concurrency");
    }
}

#[actix_web::test]
async fn a_stopping_process_makes_and_records_the_webhook_deliveries_it_claimed() {
    let db = TestDb::create().await;
    let receiver = Receiver::holding();
    let webhooks = [("ERRAND_WEBHOOKS__ALLOW_HOSTS", "127.0.0.1"), ("ERRAND_WEBHOOKS__POLL_INTERVAL", "50ms")];
    let mut process = ErrandProcess::start(&db, &webhooks);
    let ada = tenant_admin_token("acme", "ada");
    let endpoint = json!({"url": receiver.url, "events": ["job.completed"]});
    assert_eq!(process.post_json(&ada, "/webhooks", endpoint).await.status(), StatusCode::CREATED);
    process.create(&ada, "noop", json!({})).await;
    receiver.arrived(Duration::from_secs(15)).await;

    // Stopped while its delivery is in flight: it stops listening, then
    // waits for the attempt it claimed instead of leaving it to its lock.
    process.ask_to_stop();
    let health = format!("{}/healthz", process.address);
    eventually(Duration::from_secs(10), "the process to stop listening", || async {
        reqwest::get(&health).await.is_err()
    })
    .await;
    receiver.release(1);
    assert!(process.wait().success());
    let state: String = db.scalar("SELECT state::text FROM webhook_deliveries", &[]).await;
    assert_eq!(state, "delivered", "made and recorded before the process exited");
}
