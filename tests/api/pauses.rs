//! Operators' pauses and holds, and breakers: while a scope (a type, a
//! tenant, a type in a tenant) is paused, or one job held, its waiting jobs
//! wait, in every process, and everything else runs; resuming or releasing
//! starts them; a breaker pauses its type after failures in a row; the
//! rules of who may pause, and what a pause must say.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

const WITHIN: Duration = Duration::from_secs(10);

/// Pauses `scope` (plus a reason) as operator `olga`; answers the pause.
async fn pause(app: &impl Api, scope: Value) -> Value {
    let mut body = scope;
    body["reason"] = json!("the sales database is down");
    let response = app.post_json(&operator_token("olga"), "/admin/pauses", body).await;
    assert_eq!(response.status(), StatusCode::CREATED);
    response.json().await.unwrap()
}

async fn resume(app: &impl Api, pause: &Value) {
    let path = format!("/admin/pauses/{}", pause["id"].as_str().unwrap());
    let response = app.delete(&operator_token("olga"), &path).await;
    assert_eq!(response.status(), StatusCode::OK);
}

/// The job's queue row is still waiting and was never claimed.
async fn assert_never_started(db: &TestDb, id: &str) {
    let id = uuid::Uuid::parse_str(id).unwrap();
    let (state, attempt): (String, i32) = {
        let client = db.client().await;
        let row =
            client.query_one("SELECT state::text, attempt FROM job_queue WHERE job_id = $1", &[&id]).await.unwrap();
        (row.get(0), row.get(1))
    };
    assert_eq!((state.as_str(), attempt), ("available", 0), "job {id} of a paused scope was claimed");
}

/// Its owner reads the job as `paused`, alone and in their list, with a
/// reason that names none of the operators' own.
async fn assert_shown_paused(app: &TestApp, owner: &str, id: &str) {
    let job = app.job(owner, id).await;
    assert_eq!((&job["status"], &job["state"]), (&json!("processing"), &json!("paused")), "{job}");
    let reason = job["paused_reason"].as_str().unwrap();
    assert!(reason.contains("operators") && !reason.contains("sales database"), "{reason}");
    let list: Value = app.get(owner, "/jobs?status=processing").await.json().await.unwrap();
    let listed = list["jobs"].as_array().unwrap().iter().find(|j| j["id"] == id).cloned().unwrap();
    assert_eq!(listed["state"], "paused");
}

/// Jobs (tenant, type) `held` in the paused `scope` and `free` of other
/// scopes, queued in that order; the free ones finish (each claim walked past the paused ones,
/// ahead of them in line), the paused ones wait; then resumed, they finish.
async fn assert_pause_holds(app: &TestApp, scope: Value, held: &[(&str, &str)], free: &[(&str, &str)]) {
    let pause = pause(app, scope).await;
    let mut waiting = Vec::new();
    for (tenant, job_type) in held {
        let owner = token(tenant, "alice");
        waiting.push((owner.clone(), app.create(&owner, job_type, json!({"ms": 1})).await));
    }
    for (tenant, job_type) in free {
        let owner = token(tenant, "alice");
        let id = app.create(&owner, job_type, json!({"ms": 1})).await;
        app.wait_until_finished(&owner, &id, WITHIN).await;
    }
    for (owner, id) in &waiting {
        assert_never_started(&app.db, id).await;
        assert_shown_paused(app, owner, id).await;
    }
    resume(app, &pause).await;
    for (owner, id) in &waiting {
        let job = app.wait_until_finished(owner, id, WITHIN).await;
        assert_eq!((&job["status"], &job["state"]), (&json!("completed"), &json!("completed")));
        assert!(job.get("paused_reason").is_none(), "{job}");
    }
}

#[actix_web::test]
async fn a_paused_type_waits_in_every_tenant_while_other_types_run() {
    let app = spawn_app().await;
    assert_pause_holds(
        &app,
        json!({"type": "noop"}),
        &[("acme", "noop"), ("globex", "noop")],
        &[("acme", "sleep"), ("globex", "sleep")],
    )
    .await;
}

#[actix_web::test]
async fn a_paused_tenant_waits_while_other_tenants_run() {
    let app = spawn_app().await;
    assert_pause_holds(&app, json!({"tenant": "acme"}), &[("acme", "noop"), ("acme", "sleep")], &[("globex", "noop")])
        .await;
}

#[actix_web::test]
async fn a_type_paused_in_one_tenant_runs_in_the_others_and_the_tenants_other_types_run() {
    let app = spawn_app().await;
    assert_pause_holds(
        &app,
        json!({"tenant": "acme", "type": "noop"}),
        &[("acme", "noop")],
        &[("acme", "sleep"), ("globex", "noop")],
    )
    .await;
}

#[actix_web::test]
async fn a_pause_made_through_one_process_holds_in_another() {
    // The API process runs nothing; the other one runs every job.
    let api = TestApp::builder().configure(|s| s.workers.global_limit = 0).spawn().await;
    let worker = TestApp::builder().on(api.db.shared()).spawn().await;
    let alice = token("acme", "alice");
    let pause = pause(&api, json!({"type": "noop"})).await;
    let held = api.create(&alice, "noop", json!({})).await;
    let free = api.create(&alice, "sleep", json!({"ms": 1})).await;
    worker.wait_until_finished(&alice, &free, WITHIN).await;
    assert_never_started(&api.db, &held).await;
    resume(&api, &pause).await;
    assert_eq!(worker.wait_until_finished(&alice, &held, WITHIN).await["status"], "completed");
}

#[actix_web::test]
async fn a_pause_with_an_end_ends_by_itself() {
    let app = spawn_app().await;
    let alice = token("acme", "alice");
    // Whole seconds, as the database keeps them (microseconds) and JSON shows them.
    let until = chrono::DateTime::from_timestamp(i64::try_from(now_secs()).unwrap() + 2, 0).unwrap();
    let pause = pause(&app, json!({"type": "noop", "until": until.to_rfc3339()})).await;
    assert_eq!(pause["until"].as_str().map(|s| s.parse::<chrono::DateTime<chrono::Utc>>().unwrap()), Some(until));
    let id = app.create(&alice, "noop", json!({})).await;
    assert_eq!(app.wait_until_finished(&alice, &id, WITHIN).await["status"], "completed");
    // Listed while its scope ramps, from its end on (2 minutes by default).
    let listed: Value = app.get(&operator_token("olga"), "/admin/pauses").await.json().await.unwrap();
    let ramping = &listed["pauses"][0];
    assert_eq!((&ramping["id"], &ramping["state"]), (&pause["id"], &json!("ramping")));
    let ramp_ends_at = ramping["ramp_ends_at"].as_str().unwrap().parse::<chrono::DateTime<chrono::Utc>>().unwrap();
    assert_eq!(ramp_ends_at, until + chrono::Duration::minutes(2));
}

#[actix_web::test]
async fn pausing_a_paused_scope_changes_its_reason_and_both_are_audited() {
    let app = TestApp::builder().configure(|s| s.workers.global_limit = 0).spawn().await;
    let olga = operator_token("olga");
    let first = pause(&app, json!({"tenant": "acme"})).await;
    let again = app.post_json(&olga, "/admin/pauses", json!({"tenant": "acme", "reason": "still down"})).await;
    assert_eq!(again.status(), StatusCode::OK);
    let again: Value = again.json().await.unwrap();
    assert_eq!((&again["id"], &again["reason"], &again["type"]), (&first["id"], &json!("still down"), &Value::Null));

    let viewer = operator_viewer_token("vera");
    let listed: Value = app.get(&viewer, "/admin/pauses").await.json().await.unwrap();
    assert_eq!(listed["pauses"].as_array().unwrap().len(), 1);
    // Resumed, its scope ramps; resumed again, the ramp ends.
    let path = format!("/admin/pauses/{}", first["id"].as_str().unwrap());
    for state in ["ramping", "ramping"] {
        let resumed = app.delete(&olga, &path).await;
        assert_eq!(resumed.status(), StatusCode::OK);
        assert_eq!(resumed.json::<Value>().await.unwrap()["state"], state);
    }
    let listed: Value = app.get(&viewer, "/admin/pauses").await.json().await.unwrap();
    assert_eq!(listed["pauses"], json!([]));
    assert_problem(app.delete(&olga, &path).await, StatusCode::NOT_FOUND, "not_found").await;

    // (Actions within one millisecond have no order: their ids are UUID v7.)
    let actions: Value = app.get(&olga, "/admin/actions").await.json().await.unwrap();
    let actions = actions["actions"].as_array().unwrap();
    let mut seen: Vec<_> = actions.iter().map(|a| a["action"].as_str().unwrap()).collect();
    seen.sort_unstable();
    assert_eq!(seen, ["pause", "pause", "resume", "resume"]);
    let resumed = actions.iter().find(|a| a["action"] == "resume").unwrap();
    assert_eq!((&resumed["filter"]["pause"], &resumed["operator"]), (&first["id"], &json!("olga")));
}

#[actix_web::test]
async fn only_acting_operators_pause_and_a_pause_must_name_a_known_scope_and_a_reason() {
    let app = TestApp::builder().configure(|s| s.workers.global_limit = 0).spawn().await;
    let olga = operator_token("olga");
    let scope = json!({"type": "noop", "reason": "down"});
    for token in [token("acme", "alice"), operator_viewer_token("vera")] {
        let refused = app.post_json(&token, "/admin/pauses", scope.clone()).await;
        assert_problem(refused, StatusCode::FORBIDDEN, "forbidden").await;
    }
    let past = (chrono::Utc::now() - chrono::Duration::seconds(5)).to_rfc3339();
    for (body, names) in [
        (json!({"reason": "down"}), "`type`"),
        (json!({"type": "no_such_type", "reason": "down"}), "no_such_type"),
        (json!({"type": "noop", "reason": "  "}), "`reason`"),
        (json!({"type": "noop", "reason": "down\u{0}"}), "`reason`"),
        (json!({"type": "noop", "reason": "down", "until": past}), "`until`"),
        (json!({"type": "noop", "reason": "down", "until": "soon"}), "until"),
        (json!({"type": "noop", "reason": "down", "scope": "all"}), "scope"),
    ] {
        let problem =
            assert_problem(app.post_json(&olga, "/admin/pauses", body).await, StatusCode::BAD_REQUEST, "bad_request")
                .await;
        assert!(problem["detail"].as_str().unwrap().contains(names), "{problem}");
    }
    let listed: Value = app.get(&olga, "/admin/pauses").await.json().await.unwrap();
    assert_eq!(listed["pauses"], json!([]), "no refused pause was recorded");
}

#[actix_web::test]
async fn a_held_job_waits_until_released_while_later_jobs_run() {
    // Recorded by a process that runs nothing, held, then a process that runs everything starts.
    let api = TestApp::builder().configure(|s| s.workers.global_limit = 0).spawn().await;
    let (olga, alice) = (operator_token("olga"), token("acme", "alice"));
    let held = api.create(&alice, "noop", json!({})).await;
    let response = api.post(&olga, &format!("/admin/jobs/{held}/hold")).await;
    assert_eq!(response.status(), StatusCode::OK);
    let answer: Value = response.json().await.unwrap();
    assert_eq!(
        (&answer["status"], &answer["state"], &answer["held_by"]),
        (&json!("processing"), &json!("paused"), &json!("olga"))
    );
    let worker = TestApp::builder().on(api.db.shared()).spawn().await;
    let later = api.create(&alice, "noop", json!({})).await;
    worker.wait_until_finished(&alice, &later, WITHIN).await;
    assert_never_started(&api.db, &held).await;
    assert_shown_paused(&api, &alice, &held).await;

    let viewer = operator_viewer_token("vera");
    let refused = api.post(&viewer, &format!("/admin/jobs/{held}/release")).await;
    assert_problem(refused, StatusCode::FORBIDDEN, "forbidden").await;
    let released = api.post(&olga, &format!("/admin/jobs/{held}/release")).await;
    assert_eq!(released.status(), StatusCode::OK);
    assert!(released.json::<Value>().await.unwrap().get("held_by").is_none(), "released");
    assert_eq!(worker.wait_until_finished(&alice, &held, WITHIN).await["status"], "completed");

    let ended = api.post(&olga, &format!("/admin/jobs/{held}/hold")).await;
    let problem = assert_problem(ended, StatusCode::CONFLICT, "job_not_waiting").await;
    assert!(problem["detail"].as_str().unwrap().contains("completed"), "{problem}");
    let unknown = api.post(&olga, &format!("/admin/jobs/{}/hold", uuid::Uuid::new_v4())).await;
    assert_problem(unknown, StatusCode::NOT_FOUND, "not_found").await;
    let actions: Value = api.get(&olga, &format!("/admin/actions?job={held}")).await.json().await.unwrap();
    let mut seen: Vec<_> =
        actions["actions"].as_array().unwrap().iter().map(|a| a["action"].as_str().unwrap()).collect();
    seen.sort_unstable();
    assert_eq!(seen, ["hold", "hold", "release"], "the refused hold is audited too, as changing nothing");
}

#[actix_web::test]
async fn a_running_job_is_not_held() {
    let (app, gate) = spawn_app_with_gate(|_| {}).await;
    let alice = token("acme", "alice");
    let running = app.create(&alice, "held", json!({})).await;
    gate.started(1, WITHIN).await;
    let refused = app.post(&operator_token("olga"), &format!("/admin/jobs/{running}/hold")).await;
    let problem = assert_problem(refused, StatusCode::CONFLICT, "job_not_waiting").await;
    assert!(problem["detail"].as_str().unwrap().contains("running"), "{problem}");
    gate.release(1);
    assert_eq!(app.wait_until_finished(&alice, &running, WITHIN).await["status"], "completed");
}

/// An app with a type `flaky` (the sleep handler: `fail_times` failed
/// attempts, then a completion) whose breaker opens after 3 failures in a row.
async fn spawn_with_breaker() -> TestApp {
    TestApp::builder()
        .configure(|s| {
            let mut flaky = job_type("sleep");
            flaky.max_attempts = nonzero(20);
            flaky.breaker_after = Some(nonzero(3));
            s.job_types.insert("flaky".into(), flaky);
        })
        .spawn()
        .await
}

/// Waits for the breaker's pause of `flaky`; answers it.
async fn breaker_pause(app: &TestApp) -> Value {
    let olga = operator_token("olga");
    let deadline = std::time::Instant::now() + WITHIN;
    loop {
        let listed: Value = app.get(&olga, "/admin/pauses").await.json().await.unwrap();
        let pauses = listed["pauses"].as_array().unwrap();
        if let Some(pause) = pauses.iter().find(|p| p["paused_by"] == "errand:breaker" && p["state"] == "holding") {
            return pause.clone();
        }
        assert!(std::time::Instant::now() < deadline, "the breaker did not pause flaky within {WITHIN:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[actix_web::test]
async fn a_breaker_pauses_its_type_after_failures_in_a_row_and_a_resume_counts_again() {
    let app = spawn_with_breaker().await;
    let alice = token("acme", "alice");
    let failing = app.create(&alice, "flaky", json!({"ms": 1, "fail_times": 100})).await;
    let pause = breaker_pause(&app).await;
    assert_eq!((&pause["type"], &pause["tenant"]), (&json!("flaky"), &Value::Null));
    let reason = pause["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("3 attempts in a row failed") && reason.contains("planned failure 3 of 100"),
        "{reason}"
    );
    // The failing job keeps the attempts it has left: no claim takes it, while others run.
    let other = app.create(&alice, "noop", json!({})).await;
    app.wait_until_finished(&alice, &other, WITHIN).await;
    assert_eq!(app.job(&alice, &failing).await["attempts"], 3);

    // Resumed, it counts from nought: three more failures open it again.
    resume(&app, &pause).await;
    let again = breaker_pause(&app).await;
    assert_ne!(again["id"], pause["id"]);
    assert_eq!(app.job(&alice, &failing).await["attempts"], 6);
}

#[actix_web::test]
async fn a_completion_starts_the_breakers_count_again() {
    let app = spawn_with_breaker().await;
    let alice = token("acme", "alice");
    // Two failures then a completion, twice: four failures, never three in a row.
    for key in ["first", "second"] {
        let response = app.submit(&alice, "flaky", key, json!({"ms": 1, "fail_times": 2})).await;
        let id = id_of(response).await;
        assert_eq!(app.wait_until_finished(&alice, &id, WITHIN).await["status"], "completed");
    }
    let listed: Value = app.get(&operator_token("olga"), "/admin/pauses").await.json().await.unwrap();
    assert_eq!(listed["pauses"], json!([]));
}

#[tokio::test]
async fn the_queue_depth_counts_the_pauses_that_hold_by_who_made_them() {
    let (db, store) = migrated_store().await;
    let client = db.client().await;
    client
        .batch_execute(
            "INSERT INTO job_pauses (tenant_id, job_type, reason, paused_by, until) VALUES
                 (NULL, 'flaky', 'r', 'errand:breaker', NULL),
                 ('acme', NULL, 'r', 'olga', NULL),
                 ('globex', NULL, 'r', 'olga', now() - interval '1 second')",
        )
        .await
        .unwrap();
    let depth = store.queue().depth().await.unwrap();
    assert_eq!((depth.paused_by_operators, depth.paused_by_breakers), (1, 1), "an ended pause holds nothing");
}
