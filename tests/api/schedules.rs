//! Schedules (`/schedules`): a user's own recurring jobs. Made under an
//! idempotency key, scoped to their owner, checked field by field; fired by
//! the Scheduler exactly once per occurrence, with the clock moved by the
//! test (`FireDue { now }`), never slept through.

use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};
use errand::actors::FireDue;
use errand::jobs::HandlerRegistry;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

/// An app whose `sleep` jobs may be scheduled hourly at most, and run none
/// (what a schedule makes stays queued, so the tests can count it). Its
/// schedules never pause for an owner away (the tests move the clock by
/// months); `privacy.rs` tests that.
pub(super) async fn scheduling_app(configure: impl FnOnce(&mut errand::config::Settings)) -> TestApp {
    spawn_app_with(
        |s| {
            let sleep = s.job_types.get_mut("sleep").unwrap();
            sleep.schedulable = true;
            sleep.min_schedule_interval = Duration::from_secs(3600);
            s.workers.global_limit = 0;
            s.schedules.owner_inactive_after = None;
            configure(s);
        },
        HandlerRegistry::builtin(),
    )
    .await
}

pub(super) async fn schedule(app: &TestApp, token: &str, key: &str, body: Value) -> reqwest::Response {
    let url = format!("{}/schedules/sleep", app.address);
    app.http.post(url).bearer_auth(token).header("Idempotency-Key", key).json(&body).send().await.unwrap()
}

async fn created(app: &TestApp, token: &str, body: Value) -> Value {
    let response = schedule(app, token, &uuid::Uuid::new_v4().to_string(), body).await;
    assert_eq!(response.status(), StatusCode::CREATED);
    response.json().await.unwrap()
}

pub(super) async fn patch(app: &TestApp, token: &str, id: &str, body: Value) -> reqwest::Response {
    app.http.patch(format!("{}/schedules/{id}", app.address)).bearer_auth(token).json(&body).send().await.unwrap()
}

pub(super) fn at(text: &Value) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text.as_str().expect("a time")).unwrap().with_timezone(&Utc)
}

/// Fires what is due as of `now` in `app`'s scheduler.
pub(super) async fn fire(app: &TestApp, now: DateTime<Utc>) -> usize {
    app.ticks.fire_schedules.send(FireDue { now }).await.unwrap().jobs
}

/// The jobs a schedule made: (scheduled_for, state), oldest first.
pub(super) async fn jobs_of(app: &TestApp, schedule: &str) -> Vec<(DateTime<Utc>, String)> {
    let id: uuid::Uuid = schedule.parse().unwrap();
    let rows = app
        .db
        .client()
        .await
        .query("SELECT scheduled_for, state::text FROM jobs WHERE schedule_id = $1 ORDER BY scheduled_for", &[&id])
        .await
        .unwrap();
    rows.iter().map(|r| (r.get(0), r.get(1))).collect()
}

#[actix_web::test]
async fn a_schedule_is_made_once_per_key_read_changed_and_deleted_by_its_owner_only() {
    let app = scheduling_app(|_| {}).await;
    let (alice, mallory) = (token("acme", "alice"), token("evil", "mallory"));
    let body = json!({"params": {"ms": 1}, "cron": "0 8 * * 1", "timezone": "Europe/Paris"});
    let first = schedule(&app, &alice, "weekly-report", body.clone()).await;
    assert_eq!(first.status(), StatusCode::CREATED);
    let made: Value = first.json().await.unwrap();
    let next = at(&made["next_run_at"]);
    assert!(next > Utc::now() && next - Utc::now() <= TimeDelta::days(7), "{made}");
    let local = next.with_timezone(&chrono_tz::Europe::Paris);
    assert_eq!((local.format("%a %H:%M").to_string()), "Mon 08:00", "Monday 08:00 in Paris: {made}");
    assert_eq!(
        (made["missed"].as_str(), made["overlap"].as_str(), made["paused"].as_bool()),
        (Some("skip"), Some("skip"), Some(false))
    );

    let again = schedule(&app, &alice, "weekly-report", body.clone()).await;
    assert_eq!(again.status(), StatusCode::OK);
    assert_eq!(again.headers()["Idempotent-Replayed"], "true");
    assert_eq!(again.json::<Value>().await.unwrap()["id"], made["id"]);
    let other = json!({"params": {"ms": 2}, "cron": "0 8 * * 1", "timezone": "Europe/Paris"});
    assert_problem(
        schedule(&app, &alice, "weekly-report", other).await,
        StatusCode::UNPROCESSABLE_ENTITY,
        "idempotency_key_reused",
    )
    .await;

    let id = made["id"].as_str().unwrap();
    let path = format!("/schedules/{id}");
    for response in [
        app.get(&mallory, &path).await,
        patch(&app, &mallory, id, json!({"paused": true})).await,
        app.delete(&mallory, &path).await,
    ] {
        assert_problem(response, StatusCode::NOT_FOUND, "not_found").await;
    }
    let theirs: Value = app.get(&mallory, "/schedules").await.json().await.unwrap();
    assert_eq!(theirs["schedules"], json!([]));
    let ours: Value = app.get(&alice, "/schedules").await.json().await.unwrap();
    assert_eq!(ours["schedules"][0]["id"], made["id"]);

    let paused: Value = patch(&app, &alice, id, json!({"paused": true})).await.json().await.unwrap();
    assert_eq!(paused["paused"], true);
    let moved: Value =
        patch(&app, &alice, id, json!({"cron": "@daily", "timezone": "America/New_York"})).await.json().await.unwrap();
    let local = at(&moved["next_run_at"]).with_timezone(&chrono_tz::America::New_York);
    assert_eq!(local.format("%H:%M").to_string(), "00:00", "{moved}");
    assert_eq!(app.delete(&alice, &path).await.status(), StatusCode::NO_CONTENT);
    assert_problem(app.get(&alice, &path).await, StatusCode::NOT_FOUND, "not_found").await;
}

#[actix_web::test]
async fn a_bad_schedule_gets_a_422_naming_its_field() {
    let app = scheduling_app(|s| s.schedules.max_per_user = nonzero(1)).await;
    let alice = token("acme", "alice");
    let cases = [
        (json!({"params": {}, "cron": "61 * * * *", "timezone": "UTC"}), "invalid_schedule", "cron"),
        (json!({"params": {}, "cron": "0 8 * *", "timezone": "UTC"}), "invalid_schedule", "cron"),
        (json!({"params": {}, "cron": "@daily", "timezone": "Mars/Olympus"}), "invalid_schedule", "timezone"),
        (json!({"params": {}, "cron": "*/5 * * * *", "timezone": "UTC"}), "invalid_schedule", "cron"), // more often than hourly
        (json!({"params": {"ms": "soon"}, "cron": "@daily", "timezone": "UTC"}), "invalid_params", "/params/ms"),
        (
            json!({"params": {}, "cron": "@daily", "timezone": "UTC", "ends_at": "2001-01-01T00:00:00Z"}),
            "invalid_schedule",
            "ends_at",
        ),
        (
            json!({"params": {}, "cron": "@daily", "timezone": "UTC", "missed": "catch_up", "catch_up_limit": 0}),
            "invalid_schedule",
            "catch_up_limit",
        ),
    ];
    for (body, code, field) in cases {
        let problem =
            assert_problem(schedule(&app, &alice, "k", body.clone()).await, StatusCode::UNPROCESSABLE_ENTITY, code)
                .await;
        assert_eq!(problem["field"], field, "{body} → {problem}");
    }
    let url = format!("{}/schedules/noop", app.address);
    let noop = app
        .http
        .post(url)
        .bearer_auth(&alice)
        .header("Idempotency-Key", "n")
        .json(&json!({"params": {}, "cron": "@daily", "timezone": "UTC"}))
        .send()
        .await
        .unwrap();
    assert_problem(noop, StatusCode::UNPROCESSABLE_ENTITY, "job_type_not_schedulable").await;
    // One schedule each at most here: the second is refused, as a job over a quota is.
    created(&app, &alice, json!({"params": {}, "cron": "@daily", "timezone": "UTC"})).await;
    let over = schedule(&app, &alice, "another", json!({"params": {}, "cron": "@weekly", "timezone": "UTC"})).await;
    let problem = assert_problem(over, StatusCode::TOO_MANY_REQUESTS, "quota_exceeded").await;
    assert_eq!((problem["scope"].as_str(), problem["limit"].as_u64()), (Some("user_schedules"), Some(1)));
}

#[actix_web::test]
async fn two_processes_firing_at_once_make_exactly_one_job_per_occurrence() {
    let app = scheduling_app(|_| {}).await;
    let other = TestApp::builder()
        .on(app.db.shared())
        .configure(|s| {
            let sleep = s.job_types.get_mut("sleep").unwrap();
            sleep.schedulable = true;
            s.workers.global_limit = 0;
        })
        .spawn()
        .await;
    let alice = token("acme", "alice");
    let made = created(
        &app,
        &alice,
        json!({"params": {"ms": 1}, "cron": "@hourly", "timezone": "Europe/Paris", "overlap": "queue"}),
    )
    .await;
    let first = at(&made["next_run_at"]);
    // A day of occurrences on a compressed clock, each fired by both processes at the same moment.
    for hour in 0..24 {
        let now = first + TimeDelta::hours(hour) + TimeDelta::seconds(1);
        let (a, b) = tokio::join!(fire(&app, now), fire(&other, now));
        assert_eq!(a + b, 1, "hour {hour}: one job between them");
        // Firing the same moment again makes nothing.
        assert_eq!(fire(&other, now).await, 0);
    }
    let jobs = jobs_of(&app, made["id"].as_str().unwrap()).await;
    let times: Vec<DateTime<Utc>> = jobs.iter().map(|(t, _)| *t).collect();
    let expected: Vec<DateTime<Utc>> = (0..24).map(|h| first + TimeDelta::hours(h)).collect();
    assert_eq!(times, expected, "one job per occurrence, at its nominal time");
    let now: Value =
        app.get(&alice, &format!("/schedules/{}", made["id"].as_str().unwrap())).await.json().await.unwrap();
    assert_eq!(at(&now["next_run_at"]), first + TimeDelta::hours(24));
}

#[actix_web::test]
async fn after_downtime_missed_runs_are_skipped_or_the_latest_caught_up() {
    let app = scheduling_app(|_| {}).await;
    let alice = token("acme", "alice");
    let skipping =
        created(&app, &alice, json!({"params": {}, "cron": "@hourly", "timezone": "UTC", "overlap": "queue"})).await;
    let catching = created(&app, &alice, json!({"params": {}, "cron": "@hourly", "timezone": "UTC", "overlap": "queue", "missed": "catch_up", "catch_up_limit": 2})).await;
    let first = at(&skipping["next_run_at"]);
    // errand was down across three occurrences; it comes back half an hour before the fourth.
    let back = first + TimeDelta::minutes(150);
    fire(&app, back).await;
    let (skipped, caught) =
        (jobs_of(&app, skipping["id"].as_str().unwrap()).await, jobs_of(&app, catching["id"].as_str().unwrap()).await);
    assert!(skipped.is_empty(), "{skipped:?}");
    let caught: Vec<DateTime<Utc>> = caught.iter().map(|(t, _)| *t).collect();
    assert_eq!(caught, [first + TimeDelta::hours(1), first + TimeDelta::hours(2)], "the latest two missed");
    // The next occurrence comes as ever.
    fire(&app, first + TimeDelta::hours(3)).await;
    assert_eq!(jobs_of(&app, skipping["id"].as_str().unwrap()).await.len(), 1, "skip: the next one only");
    assert_eq!(jobs_of(&app, catching["id"].as_str().unwrap()).await.len(), 3);
}

#[actix_web::test]
async fn while_an_operator_pauses_its_type_a_schedule_makes_no_job_and_then_follows_its_missed_policy() {
    let app = scheduling_app(|_| {}).await;
    let alice = token("acme", "alice");
    let skipping =
        created(&app, &alice, json!({"params": {}, "cron": "@hourly", "timezone": "UTC", "overlap": "queue"})).await;
    let catching = created(&app, &alice, json!({"params": {}, "cron": "@hourly", "timezone": "UTC", "overlap": "queue", "missed": "catch_up", "catch_up_limit": 2})).await;
    let olga = operator_token("olga");
    let response =
        app.post_json(&olga, "/admin/pauses", json!({"type": "sleep", "tenant": "acme", "reason": "down"})).await;
    assert_eq!(response.status(), StatusCode::CREATED);
    let pause: Value = response.json().await.unwrap();
    let first = at(&skipping["next_run_at"]);
    // Paused across three occurrences: none makes a job (it would only wait).
    for hour in 0..3 {
        assert_eq!(fire(&app, first + TimeDelta::hours(hour)).await, 0);
    }
    let (skipping_id, catching_id) = (skipping["id"].as_str().unwrap(), catching["id"].as_str().unwrap());
    assert!(jobs_of(&app, skipping_id).await.is_empty() && jobs_of(&app, catching_id).await.is_empty());
    // Resumed half an hour before the fourth: the three are missed, each schedule's policy decides.
    let resumed = app.delete(&olga, &format!("/admin/pauses/{}", pause["id"].as_str().unwrap())).await;
    assert_eq!(resumed.status(), StatusCode::OK);
    fire(&app, first + TimeDelta::minutes(150)).await;
    assert!(jobs_of(&app, skipping_id).await.is_empty(), "skip: none of the three");
    let caught: Vec<DateTime<Utc>> = jobs_of(&app, catching_id).await.iter().map(|(t, _)| *t).collect();
    assert_eq!(caught, [first + TimeDelta::hours(1), first + TimeDelta::hours(2)], "catch_up: the latest two");
}

#[actix_web::test]
async fn while_its_last_job_is_unfinished_a_skipping_schedule_makes_no_other() {
    let app = scheduling_app(|_| {}).await;
    let alice = token("acme", "alice");
    let made = created(&app, &alice, json!({"params": {}, "cron": "@hourly", "timezone": "UTC"})).await;
    let (id, first) = (made["id"].as_str().unwrap().to_owned(), at(&made["next_run_at"]));
    assert_eq!(fire(&app, first).await, 1);
    let priority: i16 = app.db.scalar("SELECT priority FROM job_queue", &[]).await;
    assert_eq!(priority, -10, "scheduled work, below what a person clicks for");
    assert_eq!(fire(&app, first + TimeDelta::hours(1)).await, 0, "the first is still queued: skipped");
    let job: Value = app.get(&alice, "/jobs?type=sleep").await.json().await.unwrap();
    let job_id = job["jobs"][0]["id"].as_str().unwrap().to_owned();
    // The job says which schedule made it, and for which occurrence.
    assert_eq!(job["jobs"][0]["schedule_id"].as_str(), Some(id.as_str()));
    assert_eq!(at(&job["jobs"][0]["scheduled_for"]), first);
    assert_eq!(app.post(&alice, &format!("/jobs/{job_id}/cancel")).await.status(), StatusCode::OK);
    assert_eq!(fire(&app, first + TimeDelta::hours(2)).await, 1, "it ended: the next occurrence runs");
    let states: Vec<String> = jobs_of(&app, &id).await.into_iter().map(|(_, s)| s).collect();
    assert_eq!(states, ["cancelled", "available"]);
    // Paused, nothing fires; resumed, what it missed goes by its policy (skip).
    patch(&app, &alice, &id, json!({"paused": true})).await;
    assert_eq!(fire(&app, first + TimeDelta::hours(5)).await, 0);
}

#[actix_web::test]
async fn a_process_killed_while_firing_leaves_exactly_one_job_per_occurrence() {
    const SCHEDULES: i64 = 10_000;
    let db = TestDb::create().await;
    // Ten thousand schedules of a thousand users, all due now: a few seconds
    // of firing. Yearly, so that the next occurrence cannot come mid-test.
    let insert = format!(
        "INSERT INTO schedules (tenant_id, user_id, idempotency_key, fingerprint, job_type, params, cron, timezone,
                                next_run_at, next_local)
         SELECT 't' || (g % 100), 'u' || (g % 1000), 'k' || g, '\\x00', 'sleep', '{{}}', '@yearly', 'UTC',
                date_trunc('minute', now()), date_trunc('minute', now()) AT TIME ZONE 'UTC'
         FROM generate_series(1, {SCHEDULES}) AS g"
    );
    db.client().await.batch_execute(&insert).await.unwrap();
    let env = [
        ("ERRAND_JOB_TYPES__SLEEP__SCHEDULABLE", "true"),
        ("ERRAND_WORKERS__GLOBAL_LIMIT", "0"),
        ("ERRAND_SCHEDULES__POLL_INTERVAL", "10ms"),
    ];
    let fired = || async { db.scalar::<i64>("SELECT count(*) FROM jobs WHERE schedule_id IS NOT NULL", &[]).await };
    let mut first = ErrandProcess::start(&db, &env);
    eventually(Duration::from_secs(30), "the first process to fire some", || async { fired().await > 0 }).await;
    first.kill_hard();
    let before = fired().await;
    assert!(before < SCHEDULES, "killed mid-way: {before} of {SCHEDULES} had fired");
    // Two more take over, firing at once.
    let _others = [ErrandProcess::start(&db, &env), ErrandProcess::start(&db, &env)];
    let all_moved_on = || async {
        db.scalar::<i64>("SELECT count(*) FROM schedules WHERE next_run_at <= date_trunc('minute', now())", &[]).await
            == 0
    };
    eventually(Duration::from_secs(60), "every schedule to fire", all_moved_on).await;
    let (jobs, schedules): (i64, i64) = (
        fired().await,
        db.scalar("SELECT count(DISTINCT schedule_id) FROM jobs WHERE schedule_id IS NOT NULL", &[]).await,
    );
    assert_eq!((jobs, schedules), (SCHEDULES, SCHEDULES), "one job per schedule's occurrence, none twice");
}

#[actix_web::test]
async fn a_schedules_latest_job_may_be_pruned_and_deleting_it_keeps_its_jobs() {
    let app = scheduling_app(|s| s.history.retention = Duration::from_secs(1)).await;
    let alice = token("acme", "alice");
    let made = created(&app, &alice, json!({"params": {}, "cron": "@hourly", "timezone": "UTC"})).await;
    let (id, first) = (made["id"].as_str().unwrap().to_owned(), at(&made["next_run_at"]));
    assert_eq!(fire(&app, first).await, 1);
    let jobs: Value = app.get(&alice, "/jobs?type=sleep").await.json().await.unwrap();
    let latest = jobs["jobs"][0]["id"].as_str().unwrap().to_owned();
    // The schedule's latest job ends and outlives the history's retention: pruned all the same.
    assert_eq!(app.post(&alice, &format!("/jobs/{latest}/cancel")).await.status(), StatusCode::OK);
    eventually(Duration::from_secs(20), "the schedule's latest job pruned", || async {
        app.ticks.prune.send(errand::actors::Prune).await.unwrap();
        app.get(&alice, &format!("/jobs/{latest}")).await.status() == StatusCode::NOT_FOUND
    })
    .await;
    let schedule: Value = app.get(&alice, &format!("/schedules/{id}")).await.json().await.unwrap();
    assert!(schedule["last_job_id"].is_null(), "{schedule}");
    assert_eq!(fire(&app, first + TimeDelta::hours(1)).await, 1, "it fires on");
    let jobs: Value = app.get(&alice, "/jobs?type=sleep").await.json().await.unwrap();
    let next = jobs["jobs"][0]["id"].as_str().unwrap().to_owned();
    assert_eq!(app.delete(&alice, &format!("/schedules/{id}")).await.status(), StatusCode::NO_CONTENT);
    let kept = app.job(&alice, &next).await;
    assert!(kept.get("schedule_id").is_none(), "its job stays, no longer naming it: {kept}");
}

#[actix_web::test]
async fn a_scheduled_jobs_notification_and_email_name_its_schedule_and_the_emails_link_pauses_it() {
    let mail = MailServer::start().await;
    let app = spawn_app_with(
        |s| {
            email_to(mail.smtp_port)(s);
            s.job_types.get_mut("sleep").unwrap().schedulable = true;
        },
        HandlerRegistry::builtin(),
    )
    .await;
    let alice = token_for("acme", "alice", "alice@example.com");
    let made =
        created(&app, &alice, json!({"params": {"ms": 1}, "cron": "0 8 * * 1", "timezone": "Europe/Paris"})).await;
    let id = made["id"].as_str().unwrap();
    assert_eq!(fire(&app, at(&made["next_run_at"])).await, 1);
    let email = mail.wait_for(1, Duration::from_secs(30)).await.remove(0);
    // In the app, the notification names the schedule too.
    let told = app.notifications_of(&alice, "job_completed").await;
    assert_eq!(told[0]["schedule_id"].as_str(), Some(id), "{told:?}");
    assert!(told[0]["body"].as_str().unwrap().ends_with("One of your schedules made it."), "{told:?}");
    let text = email["text"].as_str().unwrap();
    assert!(text.contains("Your schedule 0 8 * * 1 (Europe/Paris) made this job."), "{text}");
    let link = text.split_whitespace().find(|w| w.contains("/schedules/pause/")).expect("a pause link").to_owned();
    let path = &link[link.find("/schedules/pause/").unwrap()..];

    // A GET (a link scanner's, say) changes nothing; the page's button POSTs.
    let asked = app.http.get(format!("{}{path}", app.address)).send().await.unwrap();
    assert_eq!(asked.status(), StatusCode::OK);
    let page = asked.text().await.unwrap();
    let action = path.replace('/', "&#x2f;"); // as the page escapes it
    assert!(page.contains(&format!("action=\"{action}\"")), "a form that POSTs to the link: {page}");
    assert_eq!(schedule_of(&app, &alice, id).await["paused"], false);
    let paused = app.http.post(format!("{}{path}", app.address)).send().await.unwrap();
    assert_eq!(paused.status(), StatusCode::OK);
    assert_eq!(schedule_of(&app, &alice, id).await["paused"], true);
    // A tampered link pauses nothing.
    let tampered = app.http.post(format!("{}{path}0", app.address)).send().await.unwrap();
    assert_eq!(tampered.status(), StatusCode::FORBIDDEN);
}

/// The caller's schedule `id`, as the API shows it.
async fn schedule_of(app: &TestApp, token: &str, id: &str) -> Value {
    app.get(token, &format!("/schedules/{id}")).await.json().await.unwrap()
}

#[actix_web::test]
async fn a_schedule_of_a_type_no_longer_schedulable_can_still_be_paused_but_not_changed() {
    let app = scheduling_app(|_| {}).await;
    let alice = token("acme", "alice");
    let made = created(&app, &alice, json!({"params": {}, "cron": "@daily", "timezone": "UTC"})).await;
    let id = made["id"].as_str().unwrap();
    // Another process, configured since without `schedulable` for the type.
    let later = TestApp::builder().on(app.db.shared()).configure(|s| s.workers.global_limit = 0).spawn().await;
    let paused = patch(&later, &alice, id, json!({"paused": true})).await;
    assert_eq!(paused.status(), StatusCode::OK);
    assert_eq!(paused.json::<Value>().await.unwrap()["paused"], true);
    let changed = patch(&later, &alice, id, json!({"cron": "@weekly"})).await;
    assert_problem(changed, StatusCode::UNPROCESSABLE_ENTITY, "job_type_not_schedulable").await;
}

#[actix_web::test]
async fn behind_a_deep_queue_of_scheduled_jobs_an_interactive_job_of_the_same_tenant_starts_next() {
    let (app, gate) = spawn_app_with_gate(|s| s.workers.tenant_limit = nonzero(1)).await;
    let alice = token("acme", "alice");
    // The tenant's one slot is taken; then thirty jobs queue as the
    // scheduler makes them (its priority class), all older than the click.
    let first = app.create(&alice, "held", json!({})).await;
    gate.started(1, Duration::from_secs(20)).await;
    app.db
        .client()
        .await
        .batch_execute(
            "WITH made AS (
                 INSERT INTO jobs (id, tenant_id, user_id, idempotency_key, fingerprint, job_type, params, max_attempts,
                                   priority)
                 SELECT errand_uuid_v7(), 'acme', 'alice', 'scheduled-' || g, '\\x00', 'held', '{}', 1, -10
                 FROM generate_series(1, 30) AS g
                 RETURNING id, tenant_id, user_id, job_type, priority)
             INSERT INTO job_queue (job_id, tenant_id, user_id, job_type, priority, run_at, turn)
             SELECT id, tenant_id, user_id, job_type, priority, now() - interval '1 minute',
                    row_number() OVER (ORDER BY id) - 1
             FROM made",
        )
        .await
        .unwrap();
    let clicked = app.create(&alice, "held", json!({})).await;
    gate.release(1);
    assert_eq!(app.wait_until_finished(&alice, &first, Duration::from_secs(20)).await["status"], "completed");
    gate.started(1, Duration::from_secs(20)).await; // one more: the next
    let job = app.job(&alice, &clicked).await;
    assert_eq!(job["state"], "running", "the click ran next, ahead of 30 older scheduled jobs: {job}");
    let waiting: i64 =
        app.db.scalar("SELECT count(*) FROM job_queue WHERE priority = -10 AND state = 'available'", &[]).await;
    assert_eq!(waiting, 30);
    gate.release(100);
}

#[actix_web::test]
async fn a_request_may_move_its_priority_within_limits_only() {
    let app = spawn_app_with(|s| s.workers.global_limit = 0, HandlerRegistry::builtin()).await;
    let alice = token("acme", "alice");
    let url = |priority: &str| format!("{}/jobs/noop?priority={priority}", app.address);
    let send = |priority: &'static str| {
        let url = url(priority);
        let http = app.http.clone();
        let alice = alice.clone();
        async move {
            http.post(url)
                .bearer_auth(alice)
                .header("Idempotency-Key", uuid::Uuid::new_v4().to_string())
                .json(&json!({}))
                .send()
                .await
                .unwrap()
        }
    };
    let moved = send("3").await;
    assert_eq!(moved.status(), StatusCode::ACCEPTED);
    let stored: i16 = app.db.scalar("SELECT priority FROM job_queue", &[]).await;
    assert_eq!(stored, 3);
    let view: Value = moved.json().await.unwrap();
    assert_eq!(view["priority"], 3, "the job's view shows it: {view}");
    // A batch's children are bulk work: below anything a person clicks for.
    let batch = app.submit_batch(&alice, "noop", "bulk", json!([{}, {}])).await;
    assert_eq!(batch.status(), StatusCode::ACCEPTED);
    let bulk: Vec<i16> = app.db.column("SELECT DISTINCT priority FROM jobs WHERE batch_id IS NOT NULL", &[]).await;
    assert_eq!(bulk, [-20]);
    for bad in ["5", "-5", "high"] {
        assert_problem(send(bad).await, StatusCode::BAD_REQUEST, "bad_request").await;
    }
}

#[actix_web::test]
async fn cancel_previous_cancels_the_unfinished_job_before_making_the_next() {
    let app = scheduling_app(|s| s.job_types.get_mut("sleep").unwrap().priority = 2).await;
    let alice = token("acme", "alice");
    let made = created(
        &app,
        &alice,
        json!({"params": {}, "cron": "@hourly", "timezone": "UTC", "overlap": "cancel_previous"}),
    )
    .await;
    let (id, first) = (made["id"].as_str().unwrap().to_owned(), at(&made["next_run_at"]));
    assert_eq!(fire(&app, first).await, 1);
    assert_eq!(fire(&app, first + TimeDelta::hours(1)).await, 1, "the next is made");
    let states: Vec<String> = jobs_of(&app, &id).await.into_iter().map(|(_, s)| s).collect();
    assert_eq!(states, ["cancelled", "available"], "and the one before, still queued, cancelled");
    // The type's priority moves its scheduled jobs within their class.
    let priority: i16 = app.db.scalar("SELECT priority FROM job_queue", &[]).await;
    assert_eq!(priority, -8);
}

#[actix_web::test]
async fn scheduled_jobs_count_against_their_owners_quota_and_an_occurrence_without_room_is_skipped() {
    let app = scheduling_app(|s| s.quotas.max_unfinished_per_user = errand::config::CountCap(Some(2))).await;
    let alice = token("acme", "alice");
    let made =
        created(&app, &alice, json!({"params": {}, "cron": "@hourly", "timezone": "UTC", "overlap": "queue"})).await;
    let (id, first) = (made["id"].as_str().unwrap().to_owned(), at(&made["next_run_at"]));
    // Nothing runs: each occurrence's job stays unfinished.
    for hour in 0..4 {
        fire(&app, first + TimeDelta::hours(hour)).await;
    }
    assert_eq!(jobs_of(&app, &id).await.len(), 2, "two occurrences fit the quota; the others were skipped");
    let clicked = app.submit(&alice, "noop", &uuid::Uuid::new_v4().to_string(), json!({})).await;
    assert_problem(clicked, StatusCode::TOO_MANY_REQUESTS, "quota_exceeded").await;
    // Room again: the next occurrence is made.
    let job: Value = app.get(&alice, "/jobs?type=sleep").await.json().await.unwrap();
    let oldest = job["jobs"][1]["id"].as_str().unwrap().to_owned();
    assert_eq!(app.post(&alice, &format!("/jobs/{oldest}/cancel")).await.status(), StatusCode::OK);
    assert_eq!(fire(&app, first + TimeDelta::hours(4)).await, 1);
    assert_eq!(jobs_of(&app, &id).await.len(), 3);
}

#[actix_web::test]
async fn a_resumed_schedule_skips_what_fell_while_it_was_paused_whatever_its_missed_policy() {
    let app = scheduling_app(|_| {}).await;
    let alice = token("acme", "alice");
    let catching = json!({"params": {}, "cron": "@hourly", "timezone": "UTC", "overlap": "queue",
                          "missed": "catch_up", "catch_up_limit": 5});
    let made = created(&app, &alice, catching).await;
    let id = made["id"].as_str().unwrap().to_owned();
    assert_eq!(patch(&app, &alice, &id, json!({"paused": true})).await.status(), StatusCode::OK);
    // Three hours pass while it is paused: its next run, as stored, is behind.
    let passed = "UPDATE schedules SET next_run_at = next_run_at - interval '3 hours', \
                  next_local = next_local - interval '3 hours'";
    app.db.client().await.execute(passed, &[]).await.unwrap();
    let resumed: Value = patch(&app, &alice, &id, json!({"paused": false})).await.json().await.unwrap();
    assert_eq!(resumed["paused"], false);
    let next = at(&resumed["next_run_at"]);
    assert!(next > Utc::now(), "the next occurrence after now: {resumed}");
    assert_eq!(fire(&app, Utc::now()).await, 0, "nothing that fell in the pause is made");
    assert!(jobs_of(&app, &id).await.is_empty());
    assert_eq!(fire(&app, next).await, 1, "and the next comes as ever");
}
