//! Admission keys: one unfinished job per resource. A second request for
//! the resource (another Idempotency-Key: another click, a colleague's, a
//! retry of a new intent) joins the unfinished job, is refused, debounces
//! it, or supersedes it, as the type says; decided under the key's lock in
//! the database, so across processes too.

use std::time::Duration;

use errand::config::{ConflictName, DebounceSetting, OnConflictSetting, Settings};
use errand::domain::AdmissionTemplate;
use futures_util::future::join_all;
use reqwest::StatusCode;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::*;

const WITHIN: Duration = Duration::from_secs(20);

/// `sleep` keyed by `template`, with `on_conflict`, in a process that runs
/// nothing (its jobs wait) unless `runs`.
async fn app_with(template: &str, on_conflict: Option<OnConflictSetting>, runs: bool) -> TestApp {
    let template = AdmissionTemplate::parse(template).unwrap();
    TestApp::builder()
        .configure(move |s: &mut Settings| {
            let sleep = s.job_types.get_mut("sleep").unwrap();
            sleep.admission_key = Some(template);
            sleep.on_conflict = on_conflict;
            if !runs {
                s.workers.global_limit = 0;
            }
        })
        .spawn()
        .await
}

async fn submit(
    app: &impl Api,
    token: &str,
    key: &str,
    params: Value,
) -> (StatusCode, reqwest::header::HeaderMap, Value) {
    let response = app.submit(token, "sleep", key, params).await;
    let (status, headers) = (response.status(), response.headers().clone());
    (status, headers, response.json().await.unwrap())
}

/// The queue row's start, in seconds from now.
async fn starts_in(app: &TestApp, id: &str) -> f64 {
    let id = Uuid::parse_str(id).unwrap();
    app.db.scalar("SELECT extract(epoch FROM run_at - now())::float8 FROM job_queue WHERE job_id = $1", &[&id]).await
}

/// Waits until the job runs.
async fn wait_until_running(app: &TestApp, token: &str, id: &str) {
    let deadline = std::time::Instant::now() + WITHIN;
    while app.job(token, id).await["state"] != "running" {
        assert!(std::time::Instant::now() < deadline, "job {id} did not start within {WITHIN:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Why the job ended, as recorded.
async fn error_of(app: &TestApp, id: &str) -> String {
    let id = Uuid::parse_str(id).unwrap();
    app.db.scalar("SELECT error_message FROM jobs WHERE id = $1", &[&id]).await
}

async fn jobs_recorded(app: &TestApp) -> i64 {
    app.db.scalar("SELECT count(*) FROM jobs", &[]).await
}

#[actix_web::test]
async fn a_second_click_for_the_same_resource_joins_the_unfinished_job_and_a_finished_one_frees_the_key() {
    // With the backstop poll an hour away, only the wake-up starts a job.
    let template = AdmissionTemplate::parse("{user}:{params.ms}").unwrap();
    let app = TestApp::builder()
        .configure(move |s: &mut Settings| {
            s.job_types.get_mut("sleep").unwrap().admission_key = Some(template);
            s.workers.poll_interval = Duration::from_secs(3600);
        })
        .spawn()
        .await;
    let (alice, bob) = (token("acme", "alice"), token("acme", "bob"));
    let (status, _, first) = submit(&app, &alice, "click-1", json!({"ms": 300})).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let (status, headers, joined) = submit(&app, &alice, "click-2", json!({"ms": 300})).await;
    assert_eq!((status, headers.get("Errand-Joined").map(|v| v.to_str().unwrap())), (StatusCode::OK, Some("true")));
    assert_eq!(joined["id"], first["id"]);
    // Another resource, or another user's: jobs of their own.
    let (other_resource, _, other) = submit(&app, &alice, "click-3", json!({"ms": 1})).await;
    let (bobs, _, bob_job) = submit(&app, &bob, "click-1", json!({"ms": 300})).await;
    assert_eq!((other_resource, bobs), (StatusCode::ACCEPTED, StatusCode::ACCEPTED));
    assert_ne!(other["id"], first["id"]);
    assert_ne!(bob_job["id"], first["id"]);
    // A retry of the first click is a replay, as ever.
    let (replayed, headers, again) = submit(&app, &alice, "click-1", json!({"ms": 300})).await;
    assert_eq!((replayed, headers.contains_key("Idempotent-Replayed")), (StatusCode::OK, true));
    assert_eq!(again["id"], first["id"]);

    let id = first["id"].as_str().unwrap();
    assert_eq!(app.wait_until_finished(&alice, id, WITHIN).await["status"], "completed");
    let (status, _, next) = submit(&app, &alice, "click-4", json!({"ms": 300})).await;
    assert_eq!(status, StatusCode::ACCEPTED, "the key is free once its job ended");
    assert_ne!(next["id"], first["id"]);
}

#[actix_web::test]
async fn a_joined_request_spends_no_quota_and_a_new_one_over_it_is_refused() {
    let template = AdmissionTemplate::parse("{user}:{params.ms}").unwrap();
    let app = TestApp::builder()
        .configure(move |s: &mut Settings| {
            s.workers.global_limit = 0;
            s.job_types.get_mut("sleep").unwrap().admission_key = Some(template);
            s.quotas.max_unfinished_per_user = errand::config::CountCap(Some(1));
        })
        .spawn()
        .await;
    let alice = token("acme", "alice");
    let (status, _, first) = submit(&app, &alice, "click-1", json!({"ms": 5})).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let (status, _, joined) = submit(&app, &alice, "click-2", json!({"ms": 5})).await;
    assert_eq!((status, &joined["id"]), (StatusCode::OK, &first["id"]), "at the cap, a join is answered");
    let over = app.submit(&alice, "sleep", "click-3", json!({"ms": 6})).await;
    assert_problem(over, StatusCode::TOO_MANY_REQUESTS, "quota_exceeded").await;
    assert_eq!(jobs_recorded(&app).await, 1);
}

#[actix_web::test]
async fn a_rejecting_type_refuses_a_second_request_naming_the_unfinished_job() {
    let app = app_with("{user}:{params.ms}", Some(OnConflictSetting::Named(ConflictName::Reject)), false).await;
    let alice = token("acme", "alice");
    let (_, _, first) = submit(&app, &alice, "click-1", json!({"ms": 5})).await;
    let refused = app.submit(&alice, "sleep", "click-2", json!({"ms": 5})).await;
    let problem = assert_problem(refused, StatusCode::CONFLICT, "admission_conflict").await;
    assert_eq!(problem["job_id"], first["id"]);
    assert_eq!(jobs_recorded(&app).await, 1);
}

#[actix_web::test]
async fn a_key_shared_by_a_tenants_users_never_hands_one_user_a_colleagues_job() {
    let app = app_with("{params.ms}", None, false).await;
    let (alice, bob) = (token("acme", "alice"), token("acme", "bob"));
    let (_, _, first) = submit(&app, &alice, "click-1", json!({"ms": 5})).await;
    let refused = app.submit(&bob, "sleep", "click-1", json!({"ms": 5})).await;
    let problem = assert_problem(refused, StatusCode::CONFLICT, "admission_conflict").await;
    assert_eq!(problem["job_id"], first["id"]);
    // Another tenant's key is another key.
    let (status, _, _) = submit(&app, &token("globex", "alice"), "click-1", json!({"ms": 5})).await;
    assert_eq!(status, StatusCode::ACCEPTED);
}

#[actix_web::test]
async fn a_request_without_the_field_its_key_names_is_refused() {
    let app = app_with("{user}:{params.report.id}", None, false).await;
    let refused = app.submit(&token("acme", "alice"), "sleep", "click-1", json!({"ms": 5})).await;
    let problem = assert_problem(refused, StatusCode::UNPROCESSABLE_ENTITY, "invalid_params").await;
    assert_eq!(problem["field"], "/report/id");
    assert_eq!(jobs_recorded(&app).await, 0);
}

#[actix_web::test]
async fn a_debounced_job_starts_later_with_the_latest_params_and_never_past_its_longest_delay() {
    let debounce = DebounceSetting { debounce: Duration::from_secs(3600), max_delay: Duration::from_secs(7200) };
    let app = app_with("{user}", Some(OnConflictSetting::Debounce(debounce)), false).await;
    let alice = token("acme", "alice");
    let (status, _, first) = submit(&app, &alice, "edit-1", json!({"ms": 1})).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let id = first["id"].as_str().unwrap();
    let wait = starts_in(&app, id).await;
    assert!((3590.0..=3600.0).contains(&wait), "it waits the debounce: {wait}");

    // Asked for 90 minutes ago: the next request moves it to its longest delay.
    let uuid = Uuid::parse_str(id).unwrap();
    let back = "UPDATE jobs SET created_at = created_at - interval '90 minutes' WHERE id = $1";
    app.db.client().await.execute(back, &[&uuid]).await.unwrap();
    let (status, headers, debounced) = submit(&app, &alice, "edit-2", json!({"ms": 2})).await;
    assert_eq!((status, headers.contains_key("Errand-Debounced")), (StatusCode::OK, true));
    assert_eq!((&debounced["id"], &debounced["params"]), (&first["id"], &json!({"ms": 2})));
    let wait = starts_in(&app, id).await;
    assert!((1790.0..=1800.0).contains(&wait), "two hours after it was first asked for: {wait}");
    assert_eq!(jobs_recorded(&app).await, 1);
}

#[actix_web::test]
async fn a_request_debouncing_a_job_that_already_runs_records_a_new_one() {
    let debounce = DebounceSetting { debounce: Duration::from_millis(50), max_delay: Duration::from_secs(1) };
    let app = app_with("{user}", Some(OnConflictSetting::Debounce(debounce)), true).await;
    let alice = token("acme", "alice");
    let (_, _, first) = submit(&app, &alice, "edit-1", json!({"ms": 60_000})).await;
    let id = first["id"].as_str().unwrap();
    wait_until_running(&app, &alice, id).await;
    let (status, _, second) = submit(&app, &alice, "edit-2", json!({"ms": 1})).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    assert_ne!(second["id"], first["id"]);
    let done = app.wait_until_finished(&alice, second["id"].as_str().unwrap(), WITHIN).await;
    assert_eq!(done["status"], "completed");
    assert_eq!(app.job(&alice, id).await["state"], "running", "the first goes on");
}

#[actix_web::test]
async fn a_superseding_request_cancels_the_waiting_job_and_its_owner_hears_job_superseded_only() {
    let app = app_with("{user}", Some(OnConflictSetting::Named(ConflictName::Supersede)), false).await;
    let alice = token_for("acme", "alice", "alice@example.com");
    let mut stream = SseStream::open(&format!("{}/notifications/stream", app.address), Some(&alice), None).await;
    let (_, _, first) = submit(&app, &alice, "edit-1", json!({"ms": 1})).await;
    let (status, _, second) = submit(&app, &alice, "edit-2", json!({"ms": 2})).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    assert_ne!(second["id"], first["id"]);
    let old = first["id"].as_str().unwrap();
    assert_eq!(app.job(&alice, old).await["status"], "cancelled");
    assert_eq!(error_of(&app, old).await, "superseded by a newer request");
    let (_, event) = stream.next_event_of("job_superseded", WITHIN).await.expect("a job_superseded event");
    assert_eq!(event["job_id"], first["id"]);
    let feed: Value = app.get(&alice, "/notifications").await.json().await.unwrap();
    assert_eq!((feed["notifications"].as_array().unwrap().len(), feed["unread_count"].as_i64()), (0, Some(0)));
    let emails: i64 = app.db.scalar("SELECT count(*) FROM email_outbox", &[]).await;
    assert_eq!(emails, 0, "no email for a job its owner replaced");
}

#[actix_web::test]
async fn a_superseding_request_stops_the_running_job() {
    let app = app_with("{user}", Some(OnConflictSetting::Named(ConflictName::Supersede)), true).await;
    let alice = token("acme", "alice");
    let (_, _, first) = submit(&app, &alice, "edit-1", json!({"ms": 60_000})).await;
    let id = first["id"].as_str().unwrap();
    wait_until_running(&app, &alice, id).await;
    let (_, _, second) = submit(&app, &alice, "edit-2", json!({"ms": 1})).await;
    assert_eq!(app.wait_until_finished(&alice, id, WITHIN).await["status"], "cancelled");
    assert_eq!(error_of(&app, id).await, "superseded by a newer request");
    let new = app.wait_until_finished(&alice, second["id"].as_str().unwrap(), WITHIN).await;
    assert_eq!(new["status"], "completed");
}

/// Every request is held at its insert (the test holds the tenant's row of
/// counts, which each insert updates) until several wait: without the key's
/// lock, all of them would have found no job holding the key, and all but
/// one would fail on the unique index once released.
#[actix_web::test]
async fn concurrent_requests_for_one_resource_through_two_processes_make_one_job() {
    let db = TestDb::create().await;
    let env = [("ERRAND_WORKERS__GLOBAL_LIMIT", "0"), ("ERRAND_JOB_TYPES__SLEEP__ADMISSION_KEY", "{user}:{params.ms}")];
    let processes = [ErrandProcess::start(&db, &env), ErrandProcess::start(&db, &env)];
    let alice = token("acme", "alice");
    // The tenant's counts exist (a job of another type), then are held.
    processes[0].create(&alice, "noop", json!({})).await;
    let mut holder = db.client().await;
    let counts = holder.transaction().await.unwrap();
    counts.execute("SELECT 1 FROM unfinished_counts WHERE tenant_id = 'acme' FOR UPDATE", &[]).await.unwrap();

    let requests = (0..64).map(|n| {
        let (process, alice) = (&processes[n % 2], &alice);
        async move {
            let response = process.submit(alice, "sleep", &format!("click-{n}"), json!({"ms": 5})).await;
            let status = response.status();
            let body: Value = response.json().await.unwrap();
            (status, body["id"].as_str().map_or_else(|| body.to_string(), str::to_owned))
        }
    });
    let release = async {
        let waiting =
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'";
        let deadline = std::time::Instant::now() + WITHIN;
        while db.scalar::<i64>(waiting, &[]).await < 4 {
            assert!(std::time::Instant::now() < deadline, "the requests never came to wait");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        counts.commit().await.unwrap();
    };
    let (answers, ()) = futures_util::join!(join_all(requests), release);
    let created = answers.iter().filter(|(status, _)| *status == StatusCode::ACCEPTED).count();
    let joined = answers.iter().filter(|(status, _)| *status == StatusCode::OK).count();
    assert_eq!((created, joined), (1, 63), "{answers:?}");
    assert!(answers.iter().all(|(_, id)| *id == answers[0].1), "one job: {answers:?}");
    let jobs: i64 = db.scalar("SELECT count(*) FROM jobs WHERE job_type = 'sleep'", &[]).await;
    assert_eq!(jobs, 1);
}

/// A schedule of a keyed type: its occurrence is skipped while a click's
/// job for the same resource is unfinished (that job does the work), and
/// its job, once made, holds the key against the next click.
#[actix_web::test]
async fn a_scheduled_occurrence_whose_resource_has_an_unfinished_job_is_skipped_and_its_own_job_holds_the_key() {
    let template = AdmissionTemplate::parse("{user}").unwrap();
    let app = crate::schedules::scheduling_app(move |s| {
        s.job_types.get_mut("sleep").unwrap().admission_key = Some(template);
    })
    .await;
    let alice = token("acme", "alice");
    let body = json!({"params": {"ms": 1}, "cron": "@hourly", "timezone": "UTC", "overlap": "queue"});
    let response = crate::schedules::schedule(&app, &alice, "nightly", body).await;
    assert_eq!(response.status(), StatusCode::CREATED);
    let made: Value = response.json().await.unwrap();
    let (schedule, first) = (made["id"].as_str().unwrap().to_owned(), crate::schedules::at(&made["next_run_at"]));

    let (_, _, clicked) = submit(&app, &alice, "click-1", json!({"ms": 1})).await;
    assert_eq!(crate::schedules::fire(&app, first).await, 0, "the click's job does the work");
    let cancel = app.post(&alice, &format!("/jobs/{}/cancel", clicked["id"].as_str().unwrap())).await;
    assert_eq!(cancel.status(), StatusCode::OK);
    assert_eq!(crate::schedules::fire(&app, first + chrono::TimeDelta::hours(1)).await, 1);
    let scheduled = crate::schedules::jobs_of(&app, &schedule).await;
    assert_eq!(scheduled.len(), 1);
    let (_, _, joined) = submit(&app, &alice, "click-2", json!({"ms": 2})).await;
    let job: Value = app.get(&alice, "/jobs?type=sleep&status=processing").await.json().await.unwrap();
    assert_eq!(joined["id"], job["jobs"][0]["id"], "the click joins the scheduled job");
}

#[actix_web::test]
async fn a_batch_of_a_keyed_type_is_refused() {
    let app = app_with("{user}:{params.ms}", None, false).await;
    let refused = app.submit_batch(&token("acme", "alice"), "sleep", "bulk-1", json!([{"ms": 1}, {"ms": 2}])).await;
    let problem = assert_problem(refused, StatusCode::UNPROCESSABLE_ENTITY, "invalid_batch").await;
    assert!(problem["detail"].as_str().unwrap().contains("admission key"), "{problem}");
    assert_eq!(jobs_recorded(&app).await, 0);
}
