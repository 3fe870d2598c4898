//! People's data (issue 44): what errand keeps of a person, counted by a
//! dry run, then erased (files and rows), audited without the person's id,
//! and idempotent, a colleague's data staying; tenant admins erasing only in
//! their own tenant; schedules that tenant admins and operators can stop;
//! the operators' audit kept for its retention only.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

const WITHIN: Duration = Duration::from_secs(30);
const YEAR: (&str, &str) = ("2000-01-01", "2100-01-01");

async fn erase(app: &TestApp, token: &str, path: &str, body: Value) -> Value {
    let response = app.post_json(token, path, body).await;
    assert_eq!(response.status(), StatusCode::OK);
    response.json().await.unwrap()
}

#[actix_web::test]
async fn a_person_s_jobs_files_notifications_schedules_and_preferences_are_counted_then_erased_once() {
    let (app, results) = spawn_exporting_app(|s| {
        s.job_types.get_mut("export_sales_report").unwrap().schedulable = true;
    })
    .await;
    let (alice, bob, ops) = (token("demo-1", "alice"), token("demo-1", "bob"), operator_token("olga"));
    // Alice: an export (a file, a notification), a schedule, a preference; Bob: an export.
    let export = json!({"from": YEAR.0, "to": YEAR.1});
    let hers = app.create(&alice, "export_sales_report", export.clone()).await;
    let job = app.wait_until_finished(&alice, &hers, WITHIN).await;
    assert_eq!(job["status"], "completed", "{job}");
    let his = app.create(&bob, "export_sales_report", export.clone()).await;
    app.wait_until_finished(&bob, &his, WITHIN).await;
    let schedule = json!({"params": export, "cron": "0 8 * * 1", "timezone": "UTC"});
    app.http()
        .post(format!("{}/schedules/export_sales_report", app.address()))
        .bearer_auth(&alice)
        .header("Idempotency-Key", "weekly")
        .json(&schedule)
        .send()
        .await
        .unwrap();
    app.put_json(&alice, "/me/notification-preferences/export_sales_report", json!({"email": false})).await;
    let files_before = files_under(&results).len();

    let scope = json!({"tenant": "demo-1", "user": "alice", "dry_run": true});
    let counted = erase(&app, &ops, "/admin/erasures", scope).await;
    let found = &counted["found"];
    assert_eq!((found["jobs"].as_i64(), found["files"].as_i64()), (Some(1), Some(1)), "{counted}");
    assert_eq!((found["schedules"].as_i64(), found["preferences"].as_i64()), (Some(1), Some(1)), "{counted}");
    assert_eq!(found["idempotency_keys"], 2, "her job's and her schedule's: {counted}");
    assert!(found["notifications"].as_i64() >= Some(1), "{counted}");
    assert_eq!(app.job(&alice, &hers).await["status"], "completed", "a dry run erases nothing");

    let scope = json!({"tenant": "demo-1", "user": "alice"});
    let erased = erase(&app, &ops, "/admin/erasures", scope.clone()).await;
    assert_eq!(erased["found"], counted["found"]);
    assert!(erased["left"].as_object().unwrap().values().all(|n| n == 0), "nothing left: {erased}");
    assert_eq!(app.get(&alice, &format!("/jobs/{hers}")).await.status(), StatusCode::NOT_FOUND);
    assert!(app.notifications_of(&alice, "job_completed").await.is_empty());
    let schedules: Value = app.get(&alice, "/schedules").await.json().await.unwrap();
    assert_eq!(schedules["schedules"], json!([]), "{schedules}");
    assert_eq!(files_under(&results).len(), files_before - 1, "her file is gone, his stays");
    assert_eq!(app.job(&bob, &his).await["status"], "completed", "a colleague's job stays");

    // Audited with a hash of the user, never the id; a second run finds nothing.
    let audit: String = app.db.scalar("SELECT filter::text FROM operator_actions WHERE action = 'erase'", &[]).await;
    assert!(!audit.contains("alice") && audit.contains("user_sha256"), "{audit}");
    let listed: Value = app.get(&ops, "/admin/actions?action=erase").await.json().await.unwrap();
    assert_eq!(listed["actions"].as_array().map(Vec::len), Some(1), "the audit lists it: {listed}");
    let again = erase(&app, &ops, "/admin/erasures", scope).await;
    assert!(again["found"].as_object().unwrap().values().all(|n| n == 0), "{again}");
}

#[actix_web::test]
async fn a_waiting_job_is_erased_and_tenant_admins_erase_only_in_their_own_tenant() {
    let app = spawn_app_with(|s| s.workers.global_limit = 0, errand::jobs::HandlerRegistry::builtin()).await;
    let (alice, ada, eve) =
        (token("acme", "alice"), tenant_admin_token("acme", "ada"), tenant_admin_token("evil", "eve"));
    let waiting = app.create(&alice, "noop", json!({})).await;

    let refused = app.post_json(&alice, "/tenant/erasures", json!({"user": "alice"})).await;
    assert_problem(refused, StatusCode::FORBIDDEN, "forbidden").await;
    let viewer = app.post_json(&operator_viewer_token("vic"), "/admin/erasures", json!({"tenant": "acme"})).await;
    assert_eq!(viewer.status(), StatusCode::FORBIDDEN, "a read-only operator erases nothing");
    // Another tenant's admin names alice: their own tenant's alice, who has nothing.
    let elsewhere = erase(&app, &eve, "/tenant/erasures", json!({"user": "alice"})).await;
    assert_eq!(elsewhere["found"]["jobs"], 0);
    assert_eq!(app.job(&alice, &waiting).await["status"], "processing");

    let erased = erase(&app, &ada, "/tenant/erasures", json!({"user": "alice"})).await;
    assert_eq!((&erased["found"]["unfinished_jobs"], &erased["found"]["jobs"]), (&json!(1), &json!(1)), "{erased}");
    assert_eq!(app.get(&alice, &format!("/jobs/{waiting}")).await.status(), StatusCode::NOT_FOUND);
    let counted: i64 = app.db.scalar("SELECT coalesce(sum(jobs), 0)::bigint FROM unfinished_counts", &[]).await;
    assert_eq!(counted, 0, "the queue's counts follow");
    let by: String = app
        .db
        .scalar("SELECT string_agg(operator, ' ' ORDER BY id) FROM operator_actions WHERE action = 'erase'", &[])
        .await;
    assert_eq!(by, "tenant_admin:evil:eve tenant_admin:acme:ada", "each audited, by whom");
}

#[actix_web::test]
async fn operators_actions_are_kept_for_their_retention_then_deleted() {
    let app = spawn_app_with(
        |s| s.history.audit_retention = Duration::from_secs(30 * 24 * 3600),
        errand::jobs::HandlerRegistry::builtin(),
    )
    .await;
    // One action taken 40 days ago (its UUID v7 says when), one now.
    let client = app.db.client().await;
    let insert = "INSERT INTO operator_actions (id, at, operator, action, filter, affected) \
                  VALUES ($1, $2, 'olga', 'erase', '{}', 1)";
    for days_ago in [40, 0] {
        let at = chrono::Utc::now() - chrono::Duration::days(days_ago);
        let secs = u64::try_from(at.timestamp()).unwrap();
        let id = uuid::Uuid::new_v7(uuid::Timestamp::from_unix(uuid::NoContext, secs, 0));
        client.execute(insert, &[&id, &at]).await.unwrap();
    }

    app.ticks.prune.send(errand::actors::Prune).await.unwrap();
    let kept: Vec<String> = client
        .query("SELECT (now() - at < interval '1 day')::text FROM operator_actions", &[])
        .await
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    assert_eq!(kept, ["true"], "the old action is gone, the new one stays");
}

#[actix_web::test]
async fn tenant_admins_and_operators_list_pause_and_delete_a_user_s_schedules_within_their_reach() {
    let app = spawn_app_with(
        |s| {
            let sleep = s.job_types.get_mut("sleep").unwrap();
            sleep.schedulable = true;
        },
        errand::jobs::HandlerRegistry::builtin(),
    )
    .await;
    let (alice, ada, eve, ops) = (
        token("acme", "alice"),
        tenant_admin_token("acme", "ada"),
        tenant_admin_token("evil", "eve"),
        operator_token("olga"),
    );
    let schedule = |key: &'static str| {
        let body = json!({"params": {"ms": 1}, "cron": "0 8 * * 1", "timezone": "UTC"});
        app.http()
            .post(format!("{}/schedules/sleep", app.address()))
            .bearer_auth(&alice)
            .header("Idempotency-Key", key)
            .json(&body)
            .send()
    };
    let first: Value = schedule("weekly").await.unwrap().json().await.unwrap();
    let second: Value = schedule("monday").await.unwrap().json().await.unwrap();
    let (first, second) = (first["id"].as_str().unwrap(), second["id"].as_str().unwrap());

    let listed: Value = app.get(&ada, "/tenant/schedules?user=alice").await.json().await.unwrap();
    let ids: Vec<&str> = listed["schedules"].as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap()).collect();
    assert_eq!(ids, [second, first], "newest first: {listed}");
    assert_eq!(listed["schedules"][0]["user"], "alice");
    // Another tenant's admin sees none of them, and can touch none (an operator naming a tenant sees them).
    let theirs: Value = app.get(&eve, "/tenant/schedules?tenant=acme").await.json().await.unwrap();
    assert_eq!(theirs["schedules"], json!([]), "{theirs}");
    let refused = app.post(&eve, &format!("/tenant/schedules/{first}/pause")).await;
    assert_problem(refused, StatusCode::NOT_FOUND, "not_found").await;
    assert_problem(app.get(&alice, "/tenant/schedules").await, StatusCode::FORBIDDEN, "forbidden").await;
    let all: Value = app.get(&ops, "/admin/schedules?tenant=acme&user=alice").await.json().await.unwrap();
    assert_eq!(all["schedules"].as_array().unwrap().len(), 2);

    let paused: Value = app.post(&ada, &format!("/tenant/schedules/{first}/pause")).await.json().await.unwrap();
    assert_eq!(paused["paused"], true, "{paused}");
    let own: Value = app.get(&alice, &format!("/schedules/{first}")).await.json().await.unwrap();
    assert_eq!(own["paused"], true, "the owner sees it paused: {own}");
    assert_eq!(app.delete(&ops, &format!("/admin/schedules/{second}")).await.status(), StatusCode::NO_CONTENT);
    assert_eq!(app.get(&alice, &format!("/schedules/{second}")).await.status(), StatusCode::NOT_FOUND);

    let audited: String = app
        .db
        .scalar("SELECT string_agg(action || ' by ' || operator, ', ' ORDER BY id) FROM operator_actions", &[])
        .await;
    assert_eq!(audited, "schedule_pause by tenant_admin:acme:ada, schedule_delete by olga");
}

#[actix_web::test]
async fn a_type_s_own_retentions_keep_its_jobs_and_files_shorter_or_longer_than_the_rest() {
    let (app, _results) = spawn_exporting_app(|s| {
        s.history.retention = Duration::from_secs(10 * 24 * 3600);
        s.job_types.get_mut("noop").unwrap().retention = Some(Duration::from_secs(3600));
        s.job_types.get_mut("sleep").unwrap().retention = Some(Duration::from_secs(30 * 24 * 3600));
        s.job_types.get_mut("export_sales_report").unwrap().result_retention = Some(Duration::from_secs(2 * 3600));
        s.job_types.insert("tick".into(), job_type("noop"));
    })
    .await;
    let alice = token("demo-1", "alice");
    let ids =
        finished(&app, [(&alice, "noop", json!({})), (&alice, "sleep", json!({"ms": 0})), (&alice, "tick", json!({}))])
            .await;
    // Two hours on, the noop's hour is past; eleven days on, the tick's ten
    // (the default); thirty-one days on, the sleep's thirty.
    pruned_as_hours_pass(
        &app,
        &ids,
        [(2, [false, true, true]), (11 * 24, [false, true, false]), (31 * 24, [false; 3])],
    )
    .await;

    // A type's file is kept for the shorter of its own and the storage's retention.
    let export = app.create(&alice, "export_sales_report", json!({"from": YEAR.0, "to": YEAR.1})).await;
    let job = app.wait_until_finished(&alice, &export, WITHIN).await;
    let expires = chrono::DateTime::parse_from_rfc3339(job["result"]["expires_at"].as_str().unwrap()).unwrap();
    let within = expires.with_timezone(&chrono::Utc) - chrono::Utc::now();
    assert!(within <= chrono::Duration::hours(2) && within > chrono::Duration::minutes(110), "{job}");
}

#[actix_web::test]
async fn a_tenant_keeps_files_shorter_and_one_of_its_types_history_shorter_than_the_rest() {
    let (app, _results) = spawn_exporting_app(|s| s.history.retention = Duration::from_secs(10 * 24 * 3600)).await;
    let (ops, alice) = (operator_token("olga"), token("demo-1", "alice"));
    let file_expiry = |job: &Value| {
        let at = |field: &str| chrono::DateTime::parse_from_rfc3339(job[field].as_str().unwrap()).unwrap();
        let expires = chrono::DateTime::parse_from_rfc3339(job["result"]["expires_at"].as_str().unwrap()).unwrap();
        expires - at("completed_at")
    };
    let export = || app.create(&alice, "export_sales_report", json!({"from": YEAR.0, "to": YEAR.1}));
    let before = export().await;
    let before_job = app.wait_until_finished(&alice, &before, WITHIN).await;
    assert!(file_expiry(&before_job) > chrono::Duration::days(6), "the storage's week: {before_job}");

    let path = "/admin/tenants/demo-1/retention";
    let set = app.put_json(&ops, path, json!({"retention": "30d", "result_retention": "1h"})).await;
    assert_eq!(set.status(), StatusCode::OK);
    let set = app.put_json(&ops, &format!("{path}?type=noop"), json!({"retention": "1h"})).await;
    assert_eq!(
        set.json::<Value>().await.unwrap(),
        json!({"retention_seconds": 3600, "result_retention_seconds": null})
    );
    let unknown = app.put_json(&ops, &format!("{path}?type=nope"), json!({"retention": "1h"})).await;
    assert_problem(unknown, StatusCode::BAD_REQUEST, "bad_request").await;
    let read: Value = app.get(&ops, path).await.json().await.unwrap();
    assert_eq!(
        read,
        json!({"retention_seconds": 2_592_000, "result_retention_seconds": 3600,
               "types": {"noop": {"retention_seconds": 3600, "result_retention_seconds": null}}})
    );

    // The file already kept expires an hour after its job ended; a new one too.
    let shortened = app.job(&alice, &before).await;
    // (`completed_at` is shown to the millisecond.)
    let off = (file_expiry(&shortened) - chrono::Duration::hours(1)).abs();
    assert!(off < chrono::Duration::milliseconds(1), "{shortened}");
    let after = export().await;
    let after_job = app.wait_until_finished(&alice, &after, WITHIN).await;
    let within = file_expiry(&after_job);
    assert!(within <= chrono::Duration::hours(1) && within > chrono::Duration::minutes(59), "{after_job}");

    // History: the tenant's noop an hour (its own), its sleep thirty days (the
    // tenant's, before the history's ten); another tenant's the history's.
    let gil = token("globex", "gil");
    let ids =
        finished(&app, [(&alice, "noop", json!({})), (&alice, "sleep", json!({"ms": 0})), (&gil, "noop", json!({}))])
            .await;
    pruned_as_hours_pass(
        &app,
        &ids,
        [(2, [false, true, true]), (11 * 24, [false, true, false]), (31 * 24, [false; 3])],
    )
    .await;
    let audited: Vec<Value> =
        app.db.column("SELECT filter FROM operator_actions WHERE action = 'set_retention' ORDER BY id", &[]).await;
    assert_eq!(audited[1], json!({"tenant": "demo-1", "type": "noop", "retention_seconds": 3600}));
}

/// Each (owner, type, params) job made and finished: (owner, id) each.
async fn finished<const N: usize>(app: &TestApp, jobs: [(&String, &str, Value); N]) -> Vec<(String, String)> {
    let mut ids = Vec::with_capacity(N);
    for (owner, job_type, params) in jobs {
        let id = app.create(owner, job_type, params).await;
        app.wait_until_finished(owner, &id, WITHIN).await;
        ids.push((owner.clone(), id));
    }
    ids
}

/// Prunes the history as of each step's hours from now, and checks after
/// each which of `ids` are kept.
async fn pruned_as_hours_pass(app: &TestApp, ids: &[(String, String)], steps: [(i64, [bool; 3]); 3]) {
    let now = chrono::Utc::now();
    for (hours, expected) in steps {
        app.ticks.prune_as_of.send(errand::actors::PruneAsOf(now + chrono::Duration::hours(hours))).await.unwrap();
        assert_eq!(kept(app, ids).await, expected, "{hours} hours on");
    }
}

/// Whether each (owner, id) job is still there for its owner.
async fn kept(app: &TestApp, ids: &[(String, String)]) -> Vec<bool> {
    let mut kept = Vec::with_capacity(ids.len());
    for (owner, id) in ids {
        kept.push(app.get(owner, &format!("/jobs/{id}")).await.status() == StatusCode::OK);
    }
    kept
}

#[actix_web::test]
async fn a_tenant_s_own_retention_comes_before_its_types_and_the_history_s() {
    let app = spawn_app_with(
        |s| {
            s.history.retention = Duration::from_secs(10 * 24 * 3600);
            s.job_types.get_mut("sleep").unwrap().retention = Some(Duration::from_secs(30 * 24 * 3600));
        },
        errand::jobs::HandlerRegistry::builtin(),
    )
    .await;
    let (ops, viewer) = (operator_token("olga"), operator_viewer_token("vic"));
    let path = "/admin/tenants/acme/retention";
    let set = app.put_json(&ops, path, json!({"retention": "1h"})).await;
    assert_eq!(
        set.json::<Value>().await.unwrap(),
        json!({"retention_seconds": 3600, "result_retention_seconds": null})
    );
    let refused = app.put_json(&viewer, path, json!({"retention": "2h"})).await;
    assert_eq!(refused.status(), StatusCode::FORBIDDEN, "a read-only operator sets nothing");
    let zero = app.put_json(&ops, path, json!({"retention": "0s"})).await;
    assert_problem(zero, StatusCode::BAD_REQUEST, "bad_request").await;
    assert_eq!(app.get(&viewer, path).await.json::<Value>().await.unwrap()["retention_seconds"], 3600);

    let (alice, gil) = (token("acme", "alice"), token("globex", "gil"));
    let ids =
        finished(&app, [(&alice, "noop", json!({})), (&alice, "sleep", json!({"ms": 0})), (&gil, "noop", json!({}))])
            .await;
    // Two hours on: acme's hour is past for both its jobs (its sleep's thirty
    // days too); globex keeps the history's ten days.
    app.ticks
        .prune_as_of
        .send(errand::actors::PruneAsOf(chrono::Utc::now() + chrono::Duration::hours(2)))
        .await
        .unwrap();
    assert_eq!(kept(&app, &ids).await, [false, false, true]);

    let cleared = app.put_json(&ops, path, json!({"retention": null})).await;
    assert_eq!(
        cleared.json::<Value>().await.unwrap(),
        json!({"retention_seconds": null, "result_retention_seconds": null})
    );
    let listed: Value = app.get(&ops, "/admin/actions?action=set_retention").await.json().await.unwrap();
    assert_eq!(listed["actions"].as_array().map(Vec::len), Some(2), "both changes audited: {listed}");
}

#[actix_web::test]
async fn a_job_still_running_when_its_person_is_erased_ends_without_a_notification_email_or_webhook() {
    let app = spawn_app_with(
        |s| {
            s.job_types.insert("render_invoice".into(), job_type("external"));
            s.webhooks.allow_hosts = vec!["127.0.0.1".into()];
        },
        errand::jobs::HandlerRegistry::builtin(),
    )
    .await;
    let hooks = Receiver::start([]);
    let (alice, ada) = (token_for("acme", "alice", "alice@example.com"), tenant_admin_token("acme", "ada"));
    let endpoint = json!({"url": hooks.url, "events": ["job.completed", "job.failed", "job.cancelled"]});
    assert_eq!(app.post_json(&ada, "/webhooks", endpoint).await.status(), StatusCode::CREATED);
    let id = app.create(&alice, "render_invoice", json!({})).await;
    let worker = crate::worker_api::worker_token(&["render_invoice"]);
    let claimed: Value = app.post_json(&worker, "/worker/v1/claim", json!({"wait": 5})).await.json().await.unwrap();
    let lease = claimed["jobs"][0]["lease_id"].as_str().unwrap().to_owned();

    let erased = erase(&app, &ada, "/tenant/erasures", json!({"user": "alice"})).await;
    assert_eq!(erased["found"]["unfinished_jobs"], 1, "{erased}");
    // The worker finishes its attempt: its lease names nothing any more.
    let late = app.post_json(&worker, &format!("/worker/v1/jobs/{id}/complete"), json!({"lease_id": lease})).await;
    assert_problem(late, StatusCode::CONFLICT, "lease_lost").await;

    let written: i64 = app
        .db
        .scalar(
            "SELECT (SELECT count(*) FROM notifications) + (SELECT count(*) FROM email_outbox) \
                    + (SELECT count(*) FROM webhook_deliveries) + (SELECT count(*) FROM jobs)",
            &[],
        )
        .await;
    assert_eq!(written, 0, "no feed row, email, webhook or job for her");
    assert!(hooks.received().is_empty());
}

#[actix_web::test]
async fn a_schedule_mails_its_owner_s_latest_address_and_pauses_itself_once_they_have_been_away() {
    use crate::schedules::{at, fire, patch, schedule, scheduling_app};
    let app = scheduling_app(|s| s.schedules.owner_inactive_after = Some(Duration::from_secs(90 * 24 * 3600))).await;
    let write_sightings = || async { app.ticks.write_sightings.send(errand::actors::WriteSightings).await.unwrap() };
    let body = json!({"params": {"ms": 1}, "cron": "@hourly", "timezone": "UTC", "overlap": "queue"});
    let response = schedule(&app, &token_for("acme", "alice", "alice@old.example"), "hourly", body).await;
    assert_eq!(response.status(), StatusCode::CREATED);
    let made: Value = response.json().await.unwrap();
    let (id, first) = (made["id"].as_str().unwrap().to_owned(), at(&made["next_run_at"]));

    // She signs in again with a new address: her schedule's job is mailed there.
    let alice = token_for("acme", "alice", "alice@new.example");
    assert_eq!(app.get(&alice, "/notifications").await.status(), StatusCode::OK);
    write_sightings().await;
    assert_eq!(fire(&app, first).await, 1);
    let email: Option<String> = app
        .db
        .scalar("SELECT user_email FROM jobs WHERE schedule_id = $1", &[&id.parse::<uuid::Uuid>().unwrap()])
        .await;
    assert_eq!(email.as_deref(), Some("alice@new.example"));

    // 91 days without her: the schedule pauses itself, once, and tells her why.
    let later = first + chrono::TimeDelta::days(91);
    assert_eq!(fire(&app, later).await, 0);
    assert_eq!(fire(&app, later + chrono::TimeDelta::hours(1)).await, 0);
    let schedule: Value = app.get(&alice, &format!("/schedules/{id}")).await.json().await.unwrap();
    assert_eq!((&schedule["paused"], &schedule["paused_by"]), (&json!(true), &json!("owner_inactive")), "{schedule}");
    let feed: Value = app.get(&alice, "/notifications").await.json().await.unwrap();
    let notices: Vec<&Value> =
        feed["notifications"].as_array().unwrap().iter().filter(|n| n["kind"] == "schedule_paused").collect();
    assert_eq!(notices.len(), 1, "told once: {feed}");
    assert_eq!(notices[0]["schedule_id"], json!(id));
    assert!(notices[0]["body"].as_str().unwrap().contains("had not signed in"), "{}", notices[0]);

    // Resumed by her, it runs again (her resuming is a sign-in).
    let resumed: Value = patch(&app, &alice, &id, json!({"paused": false})).await.json().await.unwrap();
    assert!(resumed["paused_by"].is_null(), "{resumed}");
    // (Its next occurrence is the one its first job was for: the next hour's is new.)
    assert_eq!(fire(&app, at(&resumed["next_run_at"]) + chrono::TimeDelta::hours(1)).await, 1);

    // Someone who owns no schedule is forgotten once away that long; she is kept.
    assert_eq!(app.get(&token("acme", "bob"), "/notifications").await.status(), StatusCode::OK);
    write_sightings().await;
    app.ticks
        .prune_as_of
        .send(errand::actors::PruneAsOf(chrono::Utc::now() + chrono::TimeDelta::days(91)))
        .await
        .unwrap();
    let people: Vec<String> = app.db.column("SELECT user_id FROM people ORDER BY user_id", &[]).await;
    assert_eq!(people, ["alice"]);
}

#[actix_web::test]
async fn under_the_caller_role_a_read_that_forgets_its_tenant_sees_that_tenant_s_rows_and_with_none_nothing() {
    let app = spawn_app().await;
    let (alice, gil) = (token("acme", "alice"), token("globex", "gil"));
    for owner in [&alice, &gil] {
        let id = app.create(owner, "noop", json!({})).await;
        app.wait_until_finished(owner, &id, WITHIN).await;
    }
    let mut client = app.db.client().await;
    // What a caller door's transaction is (store/pool/tenant_scope.rs), with
    // statements that name no tenant.
    let unscoped =
        "SELECT (SELECT count(*) FROM jobs), (SELECT count(*) FROM jobs_live), (SELECT count(*) FROM notifications)";
    let counts = |row: tokio_postgres::Row| (0..3).map(|i| row.get::<_, i64>(i)).collect::<Vec<_>>();
    for (tenant, expected) in [(Some("acme"), [1, 1, 1]), (None, [0, 0, 0])] {
        let tx = client.transaction().await.unwrap();
        tx.execute(
            "SELECT set_config('role', $1, true), set_config('errand.tenant', coalesce($2, ''), true)",
            &[&errand::store::CALLER_ROLE, &tenant],
        )
        .await
        .unwrap();
        let seen = counts(tx.query_one(unscoped, &[]).await.unwrap());
        assert_eq!(seen, expected, "tenant {tenant:?}");
        let changed = tx.execute("UPDATE jobs SET params = '{\"touched\": true}'", &[]).await.unwrap();
        assert_eq!(changed, expected[0] as u64, "it changes only its tenant's rows");
        if tenant.is_some() {
            let foreign = tx
                .execute(
                    "INSERT INTO notification_preferences (tenant_id, user_id, category) VALUES ('globex', 'gil', 'x')",
                    &[],
                )
                .await;
            assert!(foreign.is_err(), "nor writes another tenant's");
        }
        tx.rollback().await.unwrap();
    }
    // The process's own sides (and operators) read every tenant's, as before.
    let all = counts(client.query_one(unscoped, &[]).await.unwrap());
    assert_eq!(all, [2, 2, 2]);
}

#[actix_web::test]
async fn a_webhook_secret_is_kept_sealed_under_its_tenant_s_key_rotated_to_a_new_key_and_shredded_with_the_tenant() {
    use base64::Engine;
    use errand::domain::sealing::{Keyring, Purpose};
    let key =
        |version: &str, byte: u8| format!("{version}:{}", base64::engine::general_purpose::STANDARD.encode([byte; 32]));
    let (v1, v2) = (key("v1", 1), key("v2", 2));
    let app = spawn_app_with(
        |s| {
            s.webhooks.allow_hosts = vec!["127.0.0.1".into()];
            s.encryption.keys = vec![key("v1", 1)];
        },
        errand::jobs::HandlerRegistry::builtin(),
    )
    .await;
    let body = json!({"url": "http://127.0.0.1:9/hooks", "events": ["job.completed"]});
    let created = app.post_json(&tenant_admin_token("acme", "ada"), "/webhooks", body).await;
    assert_eq!(created.status(), StatusCode::CREATED);
    let secret = created.json::<Value>().await.unwrap()["secret"].as_str().unwrap().to_owned();
    let kept: String = app.db.scalar("SELECT secret FROM webhook_endpoints WHERE tenant_id = 'acme'", &[]).await;
    assert!(kept.starts_with("sealed:") && !kept.contains(&secret["whsec_".len()..]), "{kept}");
    // One written in clear (by hand, or before errand sealed them) is sealed by a rotation.
    app.db
        .client()
        .await
        .batch_execute(
            "INSERT INTO webhook_endpoints (tenant_id, url, events, secret, created_by)
             VALUES ('globex', 'http://127.0.0.1:9/in', '{job.completed}', 'whsec_clear', 'gil')",
        )
        .await
        .unwrap();

    // A new key first: the rotation rewraps acme's data key under it and seals globex's secret.
    let ring = Keyring::new(&[v2.clone(), v1], b"unused here: both keys are configured").unwrap();
    let store = errand::store::Store::connect(&app.db.url, 2).unwrap().with_keyring(ring);
    assert_eq!(store.rotate_keys().await.unwrap(), (1, 1));
    assert_eq!(store.rotate_keys().await.unwrap(), (0, 0), "nothing left to do");
    // v1 may now go: v2 alone opens what v1 sealed.
    let only_v2 = Keyring::new(&[v2], b"unused here").unwrap();
    let open = |tenant: &'static str| {
        let only_v2 = &only_v2;
        let app = &app;
        async move {
            let row = app
                .db
                .client()
                .await
                .query_one(
                    "SELECT k.version, k.wrapped, e.secret FROM tenant_keys k
                     JOIN webhook_endpoints e USING (tenant_id) WHERE tenant_id = $1",
                    &[&tenant],
                )
                .await
                .unwrap();
            let (version, wrapped, kept): (String, Vec<u8>, String) = (row.get(0), row.get(1), row.get(2));
            let sealed = base64::engine::general_purpose::STANDARD.decode(&kept["sealed:".len()..]).unwrap();
            let key = only_v2.unwrap(tenant, &version, &wrapped).unwrap();
            String::from_utf8(key.open(&sealed, Purpose::WebhookSecret).unwrap()).unwrap()
        }
    };
    assert_eq!(open("acme").await, secret);
    assert_eq!(open("globex").await, "whsec_clear");

    // Erasing the tenant destroys its data key.
    let erased = app.post_json(&operator_token("olga"), "/admin/erasures", json!({"tenant": "acme"})).await;
    assert_eq!(erased.status(), StatusCode::OK);
    let keys_left: i64 = app.db.scalar("SELECT count(*) FROM tenant_keys WHERE tenant_id = 'acme'", &[]).await;
    assert_eq!(keys_left, 0);
}

#[actix_web::test]
async fn with_a_migration_url_errand_runs_as_a_role_that_owns_no_table_and_refuses_the_owner() {
    let db = TestDb::create().await;
    // A login role of this test's (the cluster's, made once), a member of errand_runtime.
    let create_role = "DO $$ BEGIN CREATE ROLE errand_test_runtime LOGIN;
                       EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$;
                       GRANT errand_runtime TO errand_test_runtime";
    db.client().await.batch_execute(create_role).await.unwrap();
    let owner_url = db.url.clone();
    let mut runtime_url = reqwest::Url::parse(&db.url).unwrap();
    runtime_url.set_username("errand_test_runtime").unwrap();
    let runtime_url = runtime_url.to_string();

    // The owner refused as the runtime role, by `errand migrate`, naming the key.
    let (code, stderr) = crate::config::errand_with(&[
        ("ERRAND_DATABASE__URL", owner_url.as_str()),
        ("ERRAND_DATABASE__MIGRATION_URL", owner_url.as_str()),
    ]);
    assert_ne!(code, 0, "{stderr}");
    assert!(stderr.contains("database.url") && stderr.contains("owns errand's tables"), "{stderr}");

    let app = spawn_app_on(
        db,
        |s| {
            s.database.url = runtime_url.clone().try_into().unwrap();
            s.database.migration_url = Some(owner_url.clone().try_into().unwrap());
        },
        errand::jobs::HandlerRegistry::builtin(),
    )
    .await;
    let alice = token("acme", "alice");
    let id = app.create(&alice, "noop", json!({})).await;
    let job = app.wait_until_finished(&alice, &id, WITHIN).await;
    assert_eq!(job["status"], "completed");
    let feed: Value = app.get(&alice, "/notifications").await.json().await.unwrap();
    assert_eq!(feed["unread_count"], 1, "{feed}");
    let sessions: Vec<String> = app
        .db
        .column("SELECT DISTINCT usename::text FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'errand/%'", &[])
        .await;
    assert_eq!(sessions, ["errand_test_runtime"], "errand's own connections");
    // Nor may it vacuum the queue: autovacuum alone keeps it then.
    let runtime = errand::store::Store::connect(&runtime_url, 1).unwrap();
    assert!(!runtime.may_vacuum_queue().await.unwrap(), "a role that owns no table may not vacuum");
}
