//! A resumed scope ramps: its concurrency rises from 1 to its limit over the
//! pause's `ramp`, so that a source that has just come back is not hit by
//! every waiting job at once. The tests move a ramp along by moving its
//! start back in the database, and make the dispatcher claim by a NOTIFY:
//! each claim's jobs are committed together, so the running count after a
//! claim's first start is all that claim took.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

const WITHIN: Duration = Duration::from_secs(20);

/// A process that claims only when told (no backstop poll), with the `held`
/// type behind a gate and a tenant limit of 5 that one user may fill.
async fn quiet_app(configure: impl FnOnce(&mut errand::config::Settings)) -> (TestApp, Gate) {
    crate::work::quiet_app_with_gate(|s| {
        s.workers.tenant_limit = nonzero(5);
        s.workers.user_limit = Some(nonzero(5));
        configure(s);
    })
    .await
}

async fn pause(app: &TestApp, scope: Value) -> Value {
    let mut body = scope;
    body["reason"] = json!("the sales database is down");
    body["ramp"] = json!("1h");
    let response = app.post_json(&operator_token("olga"), "/admin/pauses", body).await;
    assert_eq!(response.status(), StatusCode::CREATED);
    response.json().await.unwrap()
}

async fn resume(app: &TestApp, pause: &Value) -> Value {
    let path = format!("/admin/pauses/{}", pause["id"].as_str().unwrap());
    let response = app.delete(&operator_token("olga"), &path).await;
    assert_eq!(response.status(), StatusCode::OK);
    response.json().await.unwrap()
}

/// Moves the ramp of `pause` to `reached` (0 to 1) of its hour.
async fn ramp_reached(app: &TestApp, pause: &Value, reached: f64) {
    let id = uuid::Uuid::parse_str(pause["id"].as_str().unwrap()).unwrap();
    let statement = "UPDATE job_pauses SET resumed_at = now() - $2 * interval '1 hour' WHERE id = $1";
    app.db.client().await.execute(statement, &[&id, &reached]).await.unwrap();
}

/// Makes the process's dispatcher claim, as a submission elsewhere would.
async fn claim_now(app: &TestApp) {
    app.db.client().await.batch_execute("NOTIFY errand_jobs").await.unwrap();
}

/// How many jobs of `tenant` (`None`: any) and of type `held` run.
async fn running(app: &TestApp, tenant: Option<&str>) -> i64 {
    let statement = "SELECT count(*) FROM job_queue WHERE state = 'running' AND job_type = 'held'
                     AND ($1::text IS NULL OR tenant_id = $1)";
    app.db.scalar(statement, &[&tenant]).await
}

#[actix_web::test]
async fn a_resumed_tenant_runs_one_job_then_more_as_its_ramp_goes_on_up_to_its_limit() {
    let (app, gate) = quiet_app(|_| {}).await;
    let pause = pause(&app, json!({"tenant": "acme"})).await;
    let alice = token("acme", "alice");
    let mut jobs = Vec::new();
    for _ in 0..6 {
        jobs.push(app.create(&alice, "held", json!({})).await);
    }
    let resumed = resume(&app, &pause).await;
    assert_eq!((&resumed["state"], &resumed["ramp_seconds"]), (&json!("ramping"), &json!(3600.0)));
    gate.started(1, WITHIN).await;
    assert_eq!(running(&app, Some("acme")).await, 1, "at the ramp's start, one job");

    // Half way: 1 + (5 - 1) / 2.
    ramp_reached(&app, &pause, 0.5).await;
    claim_now(&app).await;
    gate.started(2, WITHIN).await;
    assert_eq!(running(&app, Some("acme")).await, 3);

    // Over: the tenant's limit, and the pause is forgotten.
    ramp_reached(&app, &pause, 1.0).await;
    claim_now(&app).await;
    gate.started(2, WITHIN).await;
    assert_eq!(running(&app, Some("acme")).await, 5);
    let listed: Value = app.get(&operator_token("olga"), "/admin/pauses").await.json().await.unwrap();
    assert_eq!(listed["pauses"], json!([]));

    gate.release(6);
    for id in &jobs {
        let job = app.wait_until_finished(&alice, id, WITHIN).await;
        assert_eq!((job["status"].as_str(), job["attempts"].as_i64()), (Some("completed"), Some(1)));
    }
}

#[actix_web::test]
async fn a_type_resumed_everywhere_ramps_across_tenants_to_its_concurrency_and_a_second_resume_ends_the_ramp() {
    let (app, gate) = quiet_app(|s| s.job_types.get_mut("held").unwrap().concurrency = Some(nonzero(4))).await;
    let pause = pause(&app, json!({"type": "held"})).await;
    let owners: Vec<_> = ["acme", "globex", "initech", "umbrella"].map(|tenant| token(tenant, "alice")).into();
    let mut jobs = Vec::new();
    for owner in &owners {
        jobs.push(app.create(owner, "held", json!({})).await);
    }
    resume(&app, &pause).await;
    gate.started(1, WITHIN).await;
    assert_eq!(running(&app, None).await, 1, "one job of the type in all tenants");

    // Half way: 1 + (4 - 1) / 2, rounded down.
    ramp_reached(&app, &pause, 0.5).await;
    claim_now(&app).await;
    gate.started(1, WITHIN).await;
    assert_eq!(running(&app, None).await, 2);

    // Resumed again: the ramp ends, and the type runs up to its concurrency.
    let ended = resume(&app, &pause).await;
    assert_eq!(ended["id"], pause["id"]);
    gate.started(2, WITHIN).await;
    assert_eq!(running(&app, None).await, 4);
    gate.release(4);
    for (owner, id) in owners.iter().zip(&jobs) {
        assert_eq!(app.wait_until_finished(owner, id, WITHIN).await["status"], "completed");
    }
}

#[actix_web::test]
async fn a_type_resumed_in_one_tenant_ramps_there_alone() {
    let (app, gate) = quiet_app(|_| {}).await;
    let pause = pause(&app, json!({"tenant": "acme", "type": "held"})).await;
    let (alice, bob) = (token("acme", "alice"), token("globex", "bob"));
    let mut jobs = Vec::new();
    for owner in [&alice, &alice, &alice, &bob, &bob] {
        jobs.push((owner, app.create(owner, "held", json!({})).await));
    }
    gate.started(2, WITHIN).await;
    assert_eq!(running(&app, Some("globex")).await, 2, "another tenant's jobs of the type run");
    resume(&app, &pause).await;
    gate.started(1, WITHIN).await;
    assert_eq!(running(&app, Some("acme")).await, 1);
    // The tenant's other types are not held back by the type's ramp.
    let other = app.create(&alice, "noop", json!({})).await;
    app.wait_until_finished(&alice, &other, WITHIN).await;
    ramp_reached(&app, &pause, 0.5).await;
    claim_now(&app).await;
    gate.started(2, WITHIN).await;
    assert_eq!(running(&app, Some("acme")).await, 3);
    gate.release(5);
    for (owner, id) in jobs {
        assert_eq!(app.wait_until_finished(owner, &id, WITHIN).await["status"], "completed");
    }
}

/// A ramping type's backlog longer than the tenant's room does not hold its
/// other types back: the line leaves out the type's jobs past its room
/// (before V6 they filled the line's length, and a job of another type
/// behind them waited for the whole ramp, an hour here).
#[actix_web::test]
async fn a_type_ramping_with_a_long_backlog_does_not_hold_the_tenants_other_types_back() {
    let (app, gate) = quiet_app(|_| {}).await;
    let pause = pause(&app, json!({"tenant": "acme", "type": "held"})).await;
    let alice = token("acme", "alice");
    let mut held = Vec::new();
    for _ in 0..8 {
        held.push(app.create(&alice, "held", json!({})).await);
    }
    resume(&app, &pause).await;
    gate.started(1, WITHIN).await;
    let other = app.create(&alice, "noop", json!({})).await;
    let job = app.wait_until_finished(&alice, &other, WITHIN).await;
    assert_eq!(job["status"], "completed");
    assert_eq!(running(&app, Some("acme")).await, 1, "the ramp's cap holds: one job of the type");
    gate.release(8);
    for id in &held {
        assert_eq!(app.wait_until_finished(&alice, id, WITHIN).await["status"], "completed");
    }
}

/// Submissions during a type's ramp are not claimed beside their
/// submission past the ramp: a type without `concurrency` ramps to the
/// tenants' limit across all tenants.
#[actix_web::test]
async fn submissions_during_a_ramp_of_a_type_without_concurrency_wait_their_turn() {
    let (app, gate) = quiet_app(|_| {}).await;
    let pause = pause(&app, json!({"type": "held"})).await;
    resume(&app, &pause).await;
    let owners: Vec<_> = ["acme", "globex", "initech"].map(|tenant| token(tenant, "alice")).into();
    let mut jobs = Vec::new();
    for owner in &owners {
        jobs.push(app.create(owner, "held", json!({})).await);
    }
    gate.started(1, WITHIN).await;
    // Another type runs meanwhile, and a claim has looked at every tenant since.
    let other = app.create(&owners[1], "noop", json!({})).await;
    app.wait_until_finished(&owners[1], &other, WITHIN).await;
    claim_now(&app).await;
    let bob = token("hooli", "bob");
    let later = app.create(&bob, "noop", json!({})).await;
    app.wait_until_finished(&bob, &later, WITHIN).await;
    assert_eq!(running(&app, None).await, 1);

    // Over: every waiting job starts.
    ramp_reached(&app, &pause, 1.0).await;
    claim_now(&app).await;
    gate.started(2, WITHIN).await;
    gate.release(3);
    for (owner, id) in owners.iter().zip(&jobs) {
        assert_eq!(app.wait_until_finished(owner, id, WITHIN).await["status"], "completed");
    }
}

#[actix_web::test]
async fn a_ramp_is_a_duration_of_at_most_a_day_and_zero_resumes_at_once() {
    let (app, gate) = quiet_app(|_| {}).await;
    let olga = operator_token("olga");
    for ramp in ["soon", "25h", "-1s"] {
        let body = json!({"tenant": "acme", "reason": "down", "ramp": ramp});
        let problem =
            assert_problem(app.post_json(&olga, "/admin/pauses", body).await, StatusCode::BAD_REQUEST, "bad_request")
                .await;
        assert!(problem["detail"].as_str().unwrap().contains("`ramp`"), "{problem}");
    }
    let pause = pause(&app, json!({"tenant": "acme"})).await;
    let alice = token("acme", "alice");
    for _ in 0..3 {
        app.create(&alice, "held", json!({})).await;
    }
    let path = format!("/admin/pauses/{}", pause["id"].as_str().unwrap());
    let refused = app.delete(&olga, &format!("{path}?ramp=forever")).await;
    assert_problem(refused, StatusCode::BAD_REQUEST, "bad_request").await;
    assert_eq!(app.delete(&olga, &format!("{path}?ramp=0s")).await.status(), StatusCode::OK);
    gate.started(3, WITHIN).await;
    gate.release(3);
}
