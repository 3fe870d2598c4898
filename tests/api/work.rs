//! The work itself: starts at once, retries with backoff, times out, fails
//! visibly, is fair between tenants, and is found without any request.

use std::time::Duration;

use chrono::{DateTime, Utc};
use errand::jobs::{HandlerFuture, HandlerRegistry, JobContext, JobError, JobHandler};
use serde_json::json;
use uuid::Uuid;

use crate::helpers::*;

const WITHIN: Duration = Duration::from_secs(20);

#[actix_web::test]
async fn a_new_job_starts_without_waiting_for_a_poll() {
    // With the backstop poll an hour away, only the local wake-up can start the job.
    let app = spawn_app_with(|s| s.workers.poll_interval = Duration::from_secs(3600), HandlerRegistry::builtin()).await;
    let alice = token("acme", "alice");
    let id = app.create(&alice, "noop", json!({})).await;
    let job = app.wait_until_finished(&alice, &id, Duration::from_secs(5)).await;
    assert_eq!(job["status"], "completed");
}

/// A process whose only work is what this test submits: no backstop poll.
pub(super) async fn quiet_app_with_gate(configure: impl FnOnce(&mut errand::config::Settings)) -> (TestApp, Gate) {
    spawn_app_with_gate(|s| {
        s.workers.poll_interval = Duration::from_secs(3600);
        configure(s);
    })
    .await
}

/// The state of a job's queue row.
async fn queue_state(app: &TestApp, id: &str) -> String {
    let id = Uuid::parse_str(id).unwrap();
    app.db.scalar("SELECT state::text FROM job_queue WHERE job_id = $1", &[&id]).await
}

/// Each submission here comes while the jobs before it are still held in
/// their handlers, so nothing ends in between: an end makes the dispatcher
/// claim on its own, and a submission arriving while that claim is in flight
/// is (rightly) left to it. Only the first submissions may meet the claims
/// the process makes as it starts; the later ones find it quiet.
#[actix_web::test]
async fn a_quiet_process_claims_a_new_job_in_the_transaction_that_records_it() {
    let (app, gate) = quiet_app_with_gate(|_| {}).await;
    let submitted = 4;
    let mut claimed_with_their_submission = Vec::new();
    let mut jobs = Vec::new();
    for n in 0..submitted {
        // A tenant each, so that no tenant's limit holds a job back.
        let owner = token(&format!("tenant-{n}"), "alice");
        let id = app.create(&owner, "held", json!({})).await;
        gate.started(1, WITHIN).await;
        // The rows one transaction writes carry its id in xmin: the job's
        // record (inserted) and its queue row (updated by the claim).
        let same_transaction = "SELECT q.xmin::text = j.xmin::text FROM job_queue q JOIN jobs j ON j.id = q.job_id
                                WHERE q.job_id = $1";
        let same: bool = app.db.scalar(same_transaction, &[&Uuid::parse_str(&id).unwrap()]).await;
        claimed_with_their_submission.push(same);
        jobs.push((owner, id));
    }
    gate.release(submitted);
    for (owner, id) in &jobs {
        let job = app.wait_until_finished(owner, id, WITHIN).await;
        assert_eq!((job["status"].as_str(), job["attempts"].as_i64()), (Some("completed"), Some(1)));
    }
    assert_eq!(claimed_with_their_submission[2..], [true, true], "{claimed_with_their_submission:?}");
}

#[actix_web::test]
async fn claims_beside_submissions_keep_to_the_tenant_and_process_limits() {
    for (tenant_limit, global_limit, second_tenant) in [(1, 10, "acme"), (10, 1, "globex")] {
        let (app, gate) = quiet_app_with_gate(|s| {
            s.workers.tenant_limit = nonzero(tenant_limit);
            s.workers.global_limit = global_limit;
        })
        .await;
        let first = app.create(&token("acme", "alice"), "held", json!({})).await;
        gate.started(1, WITHIN).await;
        let second = app.create(&token(second_tenant, "bob"), "held", json!({})).await;
        // Answered after its transaction committed, claim and all: with
        // the limit reached it waits.
        assert_eq!(queue_state(&app, &second).await, "available", "limits {tenant_limit}/{global_limit}");
        assert_eq!(queue_state(&app, &first).await, "running");
        gate.release(1);
        gate.started(1, WITHIN).await;
        gate.release(1);
        let job = app.wait_until_finished(&token(second_tenant, "bob"), &second, WITHIN).await;
        assert_eq!(job["status"], "completed");
    }
}

/// A worker lets go of its slot once its attempt has ended, while the end is
/// written: with one slot, the next job starts although the first one's end
/// is still waiting (here on a lock on its queue row), and the first job
/// counts against its tenant until its end is written.
#[actix_web::test]
async fn a_slot_is_free_while_its_jobs_end_is_being_written() {
    let (app, gate) = quiet_app_with_gate(|s| {
        s.workers.global_limit = 1;
        s.workers.tenant_limit = nonzero(1);
    })
    .await;
    let (alice, bob, carol) = (token("acme", "alice"), token("globex", "bob"), token("acme", "carol"));
    let first = app.create(&alice, "held", json!({})).await;
    gate.started(1, WITHIN).await;
    let lock = app.db.lock_queue_row(&first).await;
    // acme's second job is behind its tenant's limit: the first still runs
    // there until its end is written.
    let same_tenant = app.create(&carol, "held", json!({})).await;
    let other_tenant = app.create(&bob, "held", json!({})).await;
    gate.release(1);
    gate.started(1, WITHIN).await;
    assert_eq!(queue_state(&app, &first).await, "running", "its end waits on the lock");
    assert_eq!(queue_state(&app, &other_tenant).await, "running", "the freed slot went to globex");
    assert_eq!(queue_state(&app, &same_tenant).await, "available", "acme is at its limit");

    lock.release().await;
    gate.release(1);
    gate.started(1, WITHIN).await;
    gate.release(1);
    for (caller, id) in [(&alice, &first), (&bob, &other_tenant), (&carol, &same_tenant)] {
        let job = app.wait_until_finished(caller, id, WITHIN).await;
        assert_eq!((job["status"].as_str(), job["attempts"].as_i64()), (Some("completed"), Some(1)));
        assert_eq!(app.db.notifications_for(id).await, 1);
    }
}

/// Ends are written in two lanes by tenant: one tenant's end held up (here
/// on a lock on its queue row) holds up the ends of the tenants in its lane,
/// not every other tenant's.
#[actix_web::test]
async fn one_tenants_end_held_up_does_not_hold_up_every_other_tenants_ends() {
    let (app, gate) = quiet_app_with_gate(|_| {}).await;
    let alice = token("acme", "alice");
    let held_up = app.create(&alice, "held", json!({})).await;
    gate.started(1, WITHIN).await;
    let lock = app.db.lock_queue_row(&held_up).await;
    gate.release(1);
    let waiting_on_a_lock = "SELECT count(*) FROM pg_stat_activity
                             WHERE datname = current_database() AND wait_event_type = 'Lock'";
    eventually(WITHIN, "acme's end waits on the lock", || async {
        app.db.scalar::<i64>(waiting_on_a_lock, &[]).await == 1
    })
    .await;
    let tenants = ["globex", "initech", "umbrella", "hooli", "stark", "wayne", "wonka", "tyrell"];
    let mut others = Vec::new();
    for tenant in tenants {
        let caller = token(tenant, "bob");
        others.push((app.create(&caller, "noop", json!({})).await, caller));
    }
    eventually(WITHIN, "another tenant's job completes while acme's end waits", || async {
        let mut completed = false;
        for (id, caller) in &others {
            completed |= app.job(caller, id).await["state"] == "completed";
        }
        completed
    })
    .await;
    assert_eq!(queue_state(&app, &held_up).await, "running");

    lock.release().await;
    for (id, caller) in others.iter().chain([(held_up.clone(), alice.clone())].iter()) {
        let job = app.wait_until_finished(caller, id, WITHIN).await;
        assert_eq!(job["status"], "completed");
        assert_eq!(app.db.notifications_for(id).await, 1);
    }
}

#[actix_web::test]
async fn a_flaky_job_retries_until_it_succeeds_and_notifies_once() {
    let app = spawn_app().await;
    let alice = token("acme", "alice");
    let id = app.create(&alice, "sleep", json!({"ms": 1, "fail_times": 2})).await;
    let job = app.wait_until_finished(&alice, &id, WITHIN).await;
    assert_eq!(job["status"], "completed");
    assert_eq!(job["attempts"], 3);
    assert_eq!(job["error_message"], serde_json::Value::Null);
    assert_eq!(app.db.notifications_for(&id).await, 1);
    let status: String = app.db.scalar("SELECT job_status FROM notifications", &[]).await;
    assert_eq!(status, "completed");
}

#[actix_web::test]
async fn a_job_that_keeps_failing_fails_after_its_last_attempt_and_notifies() {
    let app =
        spawn_app_with(|s| s.job_types.get_mut("sleep").unwrap().max_attempts = nonzero(3), HandlerRegistry::builtin())
            .await;
    let alice = token("acme", "alice");
    let id = app.create(&alice, "sleep", json!({"ms": 1, "fail_times": 10})).await;
    let job = app.wait_until_finished(&alice, &id, WITHIN).await;
    assert_eq!(job["status"], "failed");
    assert_eq!(job["attempts"], 3);
    assert_eq!(job["error_message"], "planned failure 3 of 10");
    assert_eq!(app.db.notifications_for(&id).await, 1);
    let (status, message): (String, String) = {
        let row =
            app.db.client().await.query_one("SELECT job_status, error_message FROM notifications", &[]).await.unwrap();
        (row.get(0), row.get(1))
    };
    assert_eq!((status.as_str(), message.as_str()), ("failed", "planned failure 3 of 10"));
}

#[actix_web::test]
async fn a_retry_waits_for_its_backoff() {
    let app = spawn_app_with(
        |s| {
            let sleep = s.job_types.get_mut("sleep").unwrap();
            sleep.backoff_base = Duration::from_millis(400);
            sleep.backoff_max = Duration::from_millis(400);
        },
        HandlerRegistry::builtin(),
    )
    .await;
    let alice = token("acme", "alice");
    let id = app.create(&alice, "sleep", json!({"ms": 0, "fail_times": 1})).await;
    let deadline = std::time::Instant::now() + WITHIN;
    let retrying = loop {
        let job = app.job(&alice, &id).await;
        if job["state"] == "retry_scheduled" || job["status"] == "completed" {
            break job;
        }
        assert!(std::time::Instant::now() < deadline, "the job never waited to retry: {job}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    assert_eq!(retrying["state"], "retry_scheduled", "the retry cannot have run yet: {retrying}");
    let next: DateTime<Utc> = retrying["next_attempt_at"].as_str().unwrap().parse().unwrap();
    let job = app.wait_until_finished(&alice, &id, WITHIN).await;
    let done: DateTime<Utc> = job["completed_at"].as_str().unwrap().parse().unwrap();
    assert!(done >= next, "ran at {done}, before its backoff ended at {next}");
    assert_eq!(job["attempts"], 2);
}

struct Refuses;

impl JobHandler for Refuses {
    fn run(&self, _ctx: JobContext) -> HandlerFuture {
        Box::pin(async { Err(JobError::Permanent("the date range is empty".into())) })
    }
}

#[actix_web::test]
async fn a_permanent_error_fails_at_once_without_retry() {
    let app = TestApp::builder().job_type("refuses", Refuses).spawn().await;
    let alice = token("acme", "alice");
    let id = app.create(&alice, "refuses", json!({})).await;
    let job = app.wait_until_finished(&alice, &id, WITHIN).await;
    assert_eq!(job["status"], "failed");
    assert_eq!(job["attempts"], 1);
    assert_eq!(job["error_message"], "the date range is empty");
    assert_eq!(app.db.notifications_for(&id).await, 1);
}

#[actix_web::test]
async fn an_attempt_past_the_timeout_is_cancelled_and_counts_as_failed() {
    let app = spawn_app_with(
        |s| {
            let sleep = s.job_types.get_mut("sleep").unwrap();
            sleep.timeout = Duration::from_millis(200);
            sleep.max_attempts = nonzero(2);
        },
        HandlerRegistry::builtin(),
    )
    .await;
    let alice = token("acme", "alice");
    let id = app.create(&alice, "sleep", json!({"ms": 60000})).await;
    let job = app.wait_until_finished(&alice, &id, WITHIN).await;
    assert_eq!(job["status"], "failed");
    assert_eq!(job["attempts"], 2);
    assert!(job["error_message"].as_str().unwrap().contains("timed out"), "{job}");
}

type Span = (Option<DateTime<Utc>>, Option<DateTime<Utc>>);

/// When each of a tenant's jobs (last) started and finished, if it did.
async fn started_and_finished(app: &TestApp, tenant: &str) -> Vec<Span> {
    let rows = app
        .db
        .client()
        .await
        .query("SELECT started_at, finished_at FROM jobs WHERE tenant_id = $1 ORDER BY started_at", &[&tenant])
        .await
        .unwrap();
    rows.iter().map(|r| (r.get(0), r.get(1))).collect()
}

#[actix_web::test]
async fn a_tenant_never_runs_more_than_its_limit_at_once() {
    let app = spawn_app_with(
        |s| {
            s.workers.tenant_limit = nonzero(2);
            s.workers.global_limit = 8;
        },
        HandlerRegistry::builtin(),
    )
    .await;
    let alice = token("acme", "alice");
    let mut ids = Vec::new();
    for _ in 0..6 {
        ids.push(app.create(&alice, "sleep", json!({"ms": 150})).await);
    }
    for id in &ids {
        app.wait_until_finished(&alice, id, WITHIN).await;
    }
    let spans = started_and_finished(&app, "acme").await;
    let spans: Vec<_> = spans.into_iter().map(|(s, f)| (s.unwrap(), f.unwrap())).collect();
    for (start, _) in &spans {
        let overlapping = spans.iter().filter(|(s, f)| s <= start && f > start).count();
        assert!(overlapping <= 2, "{overlapping} jobs of one tenant ran at once");
    }
}

#[actix_web::test]
async fn one_tenants_burst_does_not_starve_another_tenants_job() {
    let app = spawn_app_with(
        |s| {
            s.workers.tenant_limit = nonzero(4);
            s.workers.global_limit = 2;
        },
        HandlerRegistry::builtin(),
    )
    .await;
    let acme = token("acme", "alice");
    let mut burst = Vec::new();
    for _ in 0..10 {
        burst.push(app.create(&acme, "sleep", json!({"ms": 300})).await);
    }
    let globex = token("globex", "gina");
    let single = app.create(&globex, "sleep", json!({"ms": 1})).await;
    app.wait_until_finished(&globex, &single, WITHIN).await;
    let single_start = started_and_finished(&app, "globex").await[0].0.unwrap();
    let acme = started_and_finished(&app, "acme").await;
    let acme_started_before = acme.iter().filter(|(s, _)| s.is_some_and(|s| s < single_start)).count();
    assert!(
        acme_started_before <= 3,
        "globex's job waited behind {acme_started_before} of acme's; it should take the first free slot"
    );
}

#[actix_web::test]
async fn an_idle_tenant_supervisor_stops_and_comes_back_on_demand() {
    let app =
        spawn_app_with(|s| s.workers.supervisor_idle = Duration::from_millis(100), HandlerRegistry::builtin()).await;
    let count = || async { app.registry.send(errand::actors::CountSupervisors).await.unwrap() };
    let alice = token("acme", "alice");
    let first = app.create(&alice, "noop", json!({})).await;
    app.wait_until_finished(&alice, &first, WITHIN).await;
    app.create(&token("globex", "gina"), "noop", json!({})).await;
    assert!(count().await >= 1);
    eventually(WITHIN, "idle supervisors stop", || async { count().await == 0 }).await;
    // A request after the stop gets a new supervisor and works as before.
    let second = app.create(&alice, "noop", json!({})).await;
    let job = app.wait_until_finished(&alice, &second, WITHIN).await;
    assert_eq!(job["status"], "completed");
    assert_eq!(app.job(&alice, &first).await["id"], first.as_str());
}

#[actix_web::test]
async fn metrics_count_what_happened_without_naming_tenants() {
    let app = spawn_app_with(
        |s| _ = s.job_types.insert("metrics_probe".into(), job_type("noop")),
        HandlerRegistry::builtin(),
    )
    .await;
    let alice = token("tenant-that-must-not-leak", "alice");
    let id = app.create(&alice, "metrics_probe", json!({})).await;
    app.wait_until_finished(&alice, &id, WITHIN).await;
    let response = app.get_without_token("/metrics").await;
    assert_eq!(response.status(), 200);
    let text = response.text().await.unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("errand_job_attempts_ended_total{") && l.contains("job_type=\"metrics_probe\""))
        .unwrap_or_else(|| panic!("no attempt-ended line for the probe type in:\n{text}"));
    assert!(line.contains("state=\"completed\"") && line.ends_with(" 1"), "{line}");
    assert!(text.contains("errand_jobs_submitted_total{outcome=\"created\"}"));
    assert!(!text.contains("tenant-that-must-not-leak"));
    assert!(text.lines().any(|l| l.starts_with("errand_jobs_waiting ")), "{text}");
    assert!(text.lines().any(|l| l.starts_with("errand_oldest_due_job_wait_seconds ")), "{text}");
    // How long the probe's one attempt waited for its handler: counted once, and no longer than the test.
    let wait = |name: &str| {
        let line = text.lines().find(|l| l.starts_with(name) && l.contains("job_type=\"metrics_probe\""));
        let value = line.unwrap_or_else(|| panic!("no {name} for the probe type in:\n{text}")).rsplit(' ').next();
        value.unwrap().parse::<f64>().unwrap()
    };
    assert_eq!(wait("errand_job_wait_seconds_count{"), 1.0);
    assert!((0.0..WITHIN.as_secs_f64()).contains(&wait("errand_job_wait_seconds_sum{")));
}

#[actix_web::test]
async fn a_job_held_past_many_lease_lengths_keeps_its_lease_and_completes_once() {
    let lease = Duration::from_millis(300);
    let (app, gate) = spawn_app_with_gate(|s| s.workers.lease = lease).await;
    let alice = token("acme", "alice");
    let id = app.create(&alice, "held", json!({})).await;
    gate.started(1, WITHIN).await;
    for _ in 0..5 {
        // Longer than a lease: only the LeaseKeeper's renewals keep it ours.
        tokio::time::sleep(lease).await;
        app.ticks.rescue.send(errand::actors::RescueExpired).await.unwrap();
        let job = app.job(&alice, &id).await;
        assert_eq!((job["state"].as_str(), job["attempts"].as_i64()), (Some("running"), Some(1)), "{job}");
    }
    gate.release(1);
    let job = app.wait_until_finished(&alice, &id, WITHIN).await;
    assert_eq!((job["status"].as_str(), job["attempts"].as_i64()), (Some("completed"), Some(1)));
    assert_eq!(app.db.notifications_for(&id).await, 1);
}

#[actix_web::test]
async fn finished_jobs_past_the_history_retention_are_pruned_and_their_keys_freed() {
    let (app, gate) = spawn_app_with_gate(|s| s.history.retention = Duration::from_secs(1)).await;
    let alice = token("acme", "alice");
    let first = app.submit(&alice, "noop", "monthly-report", json!({})).await;
    let done = id_of(first).await;
    app.wait_until_finished(&alice, &done, WITHIN).await;
    let held = app.create(&alice, "held", json!({})).await;
    gate.started(1, WITHIN).await;
    eventually(WITHIN, "the finished job is pruned, the running one kept", || async {
        app.ticks.prune.send(errand::actors::Prune).await.unwrap();
        let ids: Vec<String> = app.db.column("SELECT id::text FROM jobs", &[]).await;
        ids == [held.clone()]
    })
    .await;
    assert_eq!(app.db.notifications_for(&done).await, 0);
    let again = app.submit(&alice, "noop", "monthly-report", json!({})).await;
    assert_eq!(again.status(), reqwest::StatusCode::ACCEPTED, "the pruned job's key is free again");
    let id = id_of(again).await;
    assert_ne!(id, done);
    gate.release(1);
    app.wait_until_finished(&alice, &held, WITHIN).await;
}

/// A handler whose words PostgreSQL cannot store: NUL in its error or result.
struct SaysNul;

impl JobHandler for SaysNul {
    fn run(&self, ctx: JobContext) -> HandlerFuture {
        Box::pin(async move {
            if ctx.params["in"] == "error" {
                Err(JobError::Permanent("bad\u{0}input".into()))
            } else {
                Ok(errand::jobs::JobOutput { result: Some(json!({"note": "a\u{0}b"})) })
            }
        })
    }
}

#[actix_web::test]
async fn a_handler_answering_with_nul_still_ends_its_job_once_with_one_notification() {
    let app = TestApp::builder().job_type("says_nul", SaysNul).spawn().await;
    let alice = token("acme", "alice");
    for place in ["error", "result"] {
        let id = app.create(&alice, "says_nul", json!({"in": place})).await;
        let job = app.wait_until_finished(&alice, &id, WITHIN).await;
        assert_eq!((job["status"].as_str(), job["attempts"].as_i64()), (Some("failed"), Some(1)), "{place}: {job}");
        assert!(!job["error_message"].as_str().unwrap().contains('\u{0}'), "{job}");
        assert_eq!(app.db.notifications_for(&id).await, 1);
    }
}

/// A handler whose result names a file with an expiry PostgreSQL cannot
/// read: a bug of errand's own handlers (results from outside are refused
/// before they get this far), which must not stop other jobs' ends.
struct BadExpiry;

impl JobHandler for BadExpiry {
    fn run(&self, _ctx: JobContext) -> HandlerFuture {
        Box::pin(async {
            Ok(errand::jobs::JobOutput { result: Some(json!({"storage_key": "k", "expires_at": "soon"})) })
        })
    }
}

#[actix_web::test]
async fn an_end_the_database_refuses_fails_its_own_job_and_no_other() {
    let app = TestApp::builder().job_type("bad_expiry", BadExpiry).spawn().await;
    let alice = token("acme", "alice");
    // Ends that come together share a statement with the bad one.
    let bad = app.create(&alice, "bad_expiry", json!({})).await;
    let mut good = Vec::new();
    for _ in 0..20 {
        good.push(app.create(&alice, "noop", json!({})).await);
    }
    let job = app.wait_until_finished(&alice, &bad, WITHIN).await;
    assert_eq!(job["status"], "failed", "{job}");
    assert!(job["error_message"].as_str().unwrap().contains("could not be stored"), "{job}");
    assert_eq!(app.db.notifications_for(&bad).await, 1);
    for id in &good {
        assert_eq!(app.wait_until_finished(&alice, id, WITHIN).await["status"], "completed");
    }
}

/// A handler that blocks its thread, as CPU-heavy work between two awaits
/// does (an export parsing megabytes), until the test lets it go or 30 s pass.
#[derive(Clone)]
struct Hog {
    /// Only its start signal: the hog holds attempts by blocking, not on the gate.
    starts: Gate,
    release: std::sync::Arc<std::sync::Mutex<std::sync::mpsc::Receiver<()>>>,
}

impl JobHandler for Hog {
    fn run(&self, _ctx: JobContext) -> HandlerFuture {
        let hog = self.clone();
        Box::pin(async move {
            hog.starts.mark_started();
            let _ = hog.release.lock().expect("not poisoned").recv_timeout(Duration::from_secs(30));
            Ok(errand::jobs::JobOutput::default())
        })
    }
}

#[actix_web::test]
async fn a_handler_hogging_its_thread_holds_up_no_other_job() {
    let (release, released) = std::sync::mpsc::channel();
    let starts = Gate::new();
    let hog = Hog { starts: starts.clone(), release: std::sync::Arc::new(std::sync::Mutex::new(released)) };
    let app = TestApp::builder().job_type("hog", hog).spawn().await;
    let alice = token("acme", "alice");
    let hogging = app.create(&alice, "hog", json!({})).await;
    starts.started(1, WITHIN).await;
    // While it blocks its thread, another job is submitted, claimed, run and ended:
    // handlers run apart from the actors that take submissions and record ends.
    let light = app.create(&alice, "noop", json!({})).await;
    let job = app.wait_until_finished(&alice, &light, WITHIN).await;
    assert_eq!(job["status"], "completed");
    assert_eq!(app.job(&alice, &hogging).await["state"], "running", "the hog was still blocking");
    release.send(()).unwrap();
    let job = app.wait_until_finished(&alice, &hogging, WITHIN).await;
    assert_eq!(job["status"], "completed");
}

#[actix_web::test]
async fn while_one_users_backlog_runs_a_colleagues_click_starts_at_once() {
    let (app, gate) = spawn_app_with_gate(|s| {
        s.workers.tenant_limit = nonzero(3);
        s.workers.user_limit = Some(nonzero(2));
    })
    .await;
    let (alice, bob) = (token("acme", "alice"), token("acme", "bob"));
    for _ in 0..10 {
        app.create(&alice, "held", json!({})).await;
    }
    gate.started(2, WITHIN).await;
    // Alice's backlog holds two of acme's three slots, however long it runs;
    // bob's click, queued behind eight of her jobs, takes the third.
    let click = app.create(&bob, "held", json!({})).await;
    gate.started(1, WITHIN).await;
    assert_eq!(app.job(&bob, &click).await["state"], "running");
    let running: Vec<String> =
        app.db.column("SELECT user_id FROM job_queue WHERE state = 'running' ORDER BY user_id", &[]).await;
    assert_eq!(running, ["alice", "alice", "bob"]);
    gate.release(100);
}
