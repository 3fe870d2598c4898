//! Cancelling jobs: at once while they wait, through PostgreSQL while they
//! run (in whichever process runs them), idempotent, never after they ended,
//! and settled by the database when a cancel races a completion or a retry.

use std::time::{Duration, Instant};

use errand::jobs::HandlerRegistry;
use futures_util::future::join_all;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

const WITHIN: Duration = Duration::from_secs(20);

/// Waits until the job's `state` (the fine one) is `state`.
async fn wait_for_state(api: &impl Api, token: &str, id: &str, state: &str) -> Value {
    let deadline = Instant::now() + WITHIN;
    loop {
        let job = api.job(token, id).await;
        if job["state"] == state {
            return job;
        }
        assert!(Instant::now() < deadline, "job {id} never reached {state}: {job}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn cancel(api: &impl Api, token: &str, id: &str) -> reqwest::Response {
    api.post(token, &format!("/jobs/{id}/cancel")).await
}

#[actix_web::test]
async fn a_waiting_job_is_cancelled_at_once_and_never_runs() {
    // An API-only process: nothing here runs jobs.
    let app = spawn_app_with(|s| s.workers.global_limit = 0, HandlerRegistry::builtin()).await;
    let alice = token("acme", "alice");
    let id = app.create(&alice, "noop", json!({})).await;
    let first = cancel(&app, &alice, &id).await;
    assert_eq!(first.status(), StatusCode::OK);
    let job: Value = first.json().await.unwrap();
    assert_eq!((job["status"].as_str(), job["state"].as_str()), (Some("cancelled"), Some("cancelled")));
    assert!(job["completed_at"].is_string());
    let again = cancel(&app, &alice, &id).await;
    assert_eq!(again.status(), StatusCode::OK, "idempotent");
    assert_eq!(again.json::<Value>().await.unwrap()["status"], "cancelled");

    let queued: i64 = app.db.scalar("SELECT count(*) FROM job_queue", &[]).await;
    assert_eq!(queued, 0, "it left the queue: no process can claim it");
    let listed: Value = app.get(&alice, "/jobs?status=cancelled").await.json().await.unwrap();
    assert_eq!(listed["jobs"][0]["id"], id.as_str());
    // The owner knows: no notification in the feed for it.
    let feed: Value = app.get(&alice, "/notifications").await.json().await.unwrap();
    assert_eq!((feed["notifications"].as_array().unwrap().len(), feed["unread_count"].as_i64()), (0, Some(0)));
}

#[actix_web::test]
async fn cancelling_is_for_the_owner_and_only_before_the_job_ended() {
    let app = spawn_app().await;
    let (alice, bob) = (token("acme", "alice"), token("acme", "bob"));
    let id = app.create(&alice, "noop", json!({})).await;
    app.wait_until_finished(&alice, &id, WITHIN).await;
    let ended = assert_problem(cancel(&app, &alice, &id).await, StatusCode::CONFLICT, "job_already_ended").await;
    assert!(ended["detail"].as_str().unwrap().contains("completed"), "{ended}");
    assert_eq!(app.job(&alice, &id).await["status"], "completed", "nothing changed");
    assert_problem(cancel(&app, &bob, &id).await, StatusCode::NOT_FOUND, "not_found").await;
    let other_tenant = token("globex", "alice");
    assert_problem(cancel(&app, &other_tenant, &id).await, StatusCode::NOT_FOUND, "not_found").await;
    assert_problem(cancel(&app, &alice, "not-a-uuid").await, StatusCode::NOT_FOUND, "not_found").await;
}

#[actix_web::test]
async fn a_running_job_asked_to_stop_through_another_process_stops_within_a_second() {
    let db = TestDb::create().await;
    let runner = ErrandProcess::start(&db, &[]);
    let api_only = ErrandProcess::start(&db, &[("ERRAND_WORKERS__GLOBAL_LIMIT", "0")]);
    let alice = token("acme", "alice");
    let url = format!("{}/notifications/stream", api_only.address);
    let mut stream = SseStream::open(&url, Some(&alice), None).await;
    let id = runner.create(&alice, "sleep", json!({"ms": 60_000})).await;
    wait_for_state(&runner, &alice, &id, "running").await;

    let asked = Instant::now();
    assert_stopping(cancel(&api_only, &alice, &id).await).await;
    let job = wait_for_state(&api_only, &alice, &id, "cancelled").await;
    assert!(asked.elapsed() < Duration::from_secs(1), "stopped {:?} after the cancel", asked.elapsed());
    assert_eq!(job["status"], "cancelled");
    assert_eq!(cancel(&api_only, &alice, &id).await.status(), StatusCode::OK, "idempotent once stopped");
    let uuid = uuid::Uuid::parse_str(&id).unwrap();
    let leased: i64 = db.scalar("SELECT count(*) FROM job_queue WHERE job_id = $1", &[&uuid]).await;
    assert_eq!(leased, 0, "its lease row is gone");

    // The owner's other tabs hear of it; the feed and the count do not change.
    let (_, event) = stream.next_event_of("job_cancelled", WITHIN).await.expect("a job_cancelled event");
    assert_eq!((event["job_id"].as_str(), event["job_status"].as_str()), (Some(id.as_str()), Some("cancelled")));
    let feed: Value = runner.get(&alice, "/notifications").await.json().await.unwrap();
    assert_eq!(feed["unread_count"], 0);
    assert!(feed["notifications"].as_array().unwrap().is_empty(), "{feed}");
}

#[actix_web::test]
async fn a_cancel_racing_completions_across_two_processes_ends_each_job_once() {
    let db = TestDb::create().await;
    let a = ErrandProcess::start(&db, &[]);
    let b = ErrandProcess::start(&db, &[]);
    let alice = token("acme", "alice");
    let mut ids = Vec::new();
    for i in 0..24 {
        let process = if i % 2 == 0 { &a } else { &b };
        ids.push(process.create(&alice, "sleep", json!({"ms": 5 * (i % 6)})).await);
    }
    // Cancels through the other process, at once or a little later: some
    // find the job waiting, some running, some ended.
    let cancels = ids.iter().enumerate().map(|(i, id)| {
        let (process, alice) = (if i % 2 == 0 { &b } else { &a }, alice.clone());
        async move {
            tokio::time::sleep(Duration::from_millis(3 * (i as u64 % 8))).await;
            cancel(process, &alice, id).await.status()
        }
    });
    let statuses = join_all(cancels).await;
    assert!(statuses.iter().all(|s| [200, 202, 409].contains(&s.as_u16())), "{statuses:?}");
    for (id, status) in ids.iter().zip(&statuses) {
        let job = a.wait_until_finished(&alice, id, WITHIN).await;
        let uuid = uuid::Uuid::parse_str(id).unwrap();
        let (feed, total): (i64, i64) = (
            db.scalar("SELECT count(*) FROM notifications WHERE job_id = $1 AND kind = 'job_completed'", &[&uuid])
                .await,
            db.notifications_for(id).await,
        );
        assert_eq!(total, 1, "one notification for job {id}: {job}");
        match job["status"].as_str().unwrap() {
            "cancelled" => assert_eq!(feed, 0, "the owner cancelled it: not in the feed"),
            "completed" => {
                assert_eq!(feed, 1);
                assert_ne!(status.as_u16(), 200, "a cancel that answered cancelled cannot be overtaken");
            }
            other => panic!("job {id} ended {other}: {job}"),
        }
        if status.as_u16() == 409 {
            assert_eq!(job["status"], "completed");
        }
    }
}

#[actix_web::test]
async fn a_cancel_racing_retries_across_two_processes_never_lets_the_job_run_again() {
    let db = TestDb::create().await;
    let retries = [("ERRAND_JOB_TYPES__SLEEP__BACKOFF_BASE", "10ms"), ("ERRAND_JOB_TYPES__SLEEP__BACKOFF_MAX", "20ms")];
    let a = ErrandProcess::start(&db, &retries);
    let b = ErrandProcess::start(&db, &retries);
    let alice = token("acme", "alice");
    let mut ids = Vec::new();
    for i in 0..12 {
        let process = if i % 2 == 0 { &a } else { &b };
        // Fails every attempt: it keeps retrying until its attempts run out.
        ids.push(process.create(&alice, "sleep", json!({"ms": 5, "fail_times": 100})).await);
    }
    for (i, id) in ids.iter().enumerate() {
        let process = if i % 2 == 0 { &b } else { &a };
        tokio::time::sleep(Duration::from_millis(7)).await;
        let answer = cancel(process, &alice, id).await;
        let status = answer.status();
        let at_cancel: Value = answer.json().await.unwrap();
        if status == StatusCode::CONFLICT {
            continue; // out of attempts (failed) before the cancel
        }
        assert!([200, 202].contains(&status.as_u16()), "{status}: {at_cancel}");
        let job = a.wait_until_finished(&alice, id, WITHIN).await;
        assert_eq!(job["status"], "cancelled", "{job}");
        assert!(
            job["attempts"].as_i64() <= at_cancel["attempts"].as_i64(),
            "no attempt started after the cancel: {at_cancel} then {job}"
        );
    }
}

#[actix_web::test]
async fn a_cancelled_export_leaves_no_file_behind() {
    let slow = export_settings(
        // Rows trickle out for minutes: the export is writing its file when cancelled.
        "SELECT g AS n, :tenant AS tenant, pg_sleep(0.005) AS pause FROM generate_series(1, 100000) AS g",
        errand::domain::ExportFormat::Csv,
    );
    let (app, dir) = spawn_exporting_app(move |s| add_export_type(s, "export_slow", slow)).await;
    let alice = token("demo-1", "alice");
    let id = app.create(&alice, "export_slow", json!({})).await;
    // Its upload's part directory, beside where the file will be.
    let uploading = || uploads_under(&dir);
    eventually(WITHIN, "the export is uploading its file", || async { !uploading().is_empty() }).await;
    // 202 as a rule; 200 if the attempt lost its 3 s test lease on a loaded
    // machine and was waiting to run again (its file went with it too).
    let status = cancel(&app, &alice, &id).await.status();
    assert!([StatusCode::ACCEPTED, StatusCode::OK].contains(&status), "{status}");
    let job = wait_for_state(&app, &alice, &id, "cancelled").await;
    assert!(job["result"].is_null() && job["result_url"].is_null(), "{job}");
    assert_eq!(files_under(&dir), Vec::<std::path::PathBuf>::new(), "no partial or final file is left");
    assert_eq!(uploading(), Vec::<std::path::PathBuf>::new(), "nor its upload");
}
