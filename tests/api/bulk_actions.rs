//! Operators' actions on every job a filter matches (`POST /admin/jobs/retry`
//! and `/admin/jobs/cancel`): the list's filters, a dry run that counts what
//! the run then takes, steps that a page can follow, and keyset pages of the
//! list that hold while jobs keep arriving.

use std::time::Duration;

use errand::jobs::HandlerRegistry;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

const WITHIN: Duration = Duration::from_secs(20);

async fn ok_json(response: reqwest::Response) -> Value {
    assert_eq!(response.status(), StatusCode::OK, "{}", response.url());
    response.json().await.unwrap()
}

/// Writes `n` failed `sleep` jobs of `tenant`'s `user` with these params and error.
async fn failed_jobs(app: &TestApp, n: i32, (tenant, user): (&str, &str), params: Value, error: &str) {
    let insert = "INSERT INTO jobs (id, tenant_id, user_id, idempotency_key, fingerprint, job_type, params, state,
                                    max_attempts, attempt, finished_at, error_message)
                  SELECT errand_uuid_v7(), $1, $2, gen_random_uuid()::text, '\\x00', 'sleep', $3, 'failed', 3, 3, now(), $4
                  FROM generate_series(1, $5)";
    app.db.client().await.execute(insert, &[&tenant, &user, &params, &error, &n]).await.unwrap();
}

#[actix_web::test]
async fn a_stepped_bulk_retry_takes_exactly_what_its_filters_and_dry_run_name() {
    let app = spawn_app_with(|s| s.workers.global_limit = 0, HandlerRegistry::builtin()).await;
    let ops = operator_token("olga");
    let customer = |id: &str| json!({"customer": {"id": id}});
    failed_jobs(&app, 5, ("acme", "alice"), customer("42"), "Timeout talking to the bank").await;
    failed_jobs(&app, 2, ("acme", "bob"), customer("42"), "timeout talking to the bank").await;
    failed_jobs(&app, 3, ("acme", "alice"), customer("42"), "boom").await;
    failed_jobs(&app, 1, ("acme", "alice"), customer("7"), "timeout talking to the bank").await;
    failed_jobs(&app, 1, ("globex", "alice"), customer("42"), "timeout talking to the bank").await;
    let filter = json!({"tenant": "acme", "user": "alice", "error": "TIMEOUT", "param": "customer.id=42"});
    let with = |extra: Value| {
        let mut body = filter.clone();
        body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        body
    };

    let counted = ok_json(app.post_json(&ops, "/admin/jobs/retry", with(json!({"dry_run": true}))).await).await;
    assert_eq!(counted, json!({"would_retry": 5}));
    let (mut after, mut steps) = (Value::Null, Vec::new());
    loop {
        let step =
            ok_json(app.post_json(&ops, "/admin/jobs/retry", with(json!({"limit": 2, "after": after}))).await).await;
        steps.push(step["retried"].as_u64().unwrap());
        after = step["next_after"].clone();
        if after.is_null() {
            break;
        }
    }
    assert_eq!(steps, [2, 2, 1], "steps of the limit, the last one short");
    let retried: Vec<(String, String, Value)> = app
        .db
        .client()
        .await
        .query("SELECT tenant_id, user_id, params FROM jobs WHERE state = 'available'", &[])
        .await
        .unwrap()
        .iter()
        .map(|row| (row.get(0), row.get(1), row.get(2)))
        .collect();
    assert_eq!(retried.len(), 5);
    assert!(retried.iter().all(|job| *job == ("acme".into(), "alice".into(), customer("42"))), "{retried:?}");
    let audited: i64 = app.db.scalar("SELECT count(*) FROM operator_actions WHERE action = 'bulk_retry'", &[]).await;
    assert_eq!(audited, 3, "one audit row per step");

    for limit in [0, 1001] {
        let refused = app.post_json(&ops, "/admin/jobs/retry", with(json!({"limit": limit}))).await;
        assert_problem(refused, StatusCode::BAD_REQUEST, "bad_request").await;
    }
    let nul = app.post_json(&ops, "/admin/jobs/retry", json!({"tenant": "acme", "error": "a\u{0}b"})).await;
    assert_problem(nul, StatusCode::BAD_REQUEST, "bad_request").await;
}

#[actix_web::test]
async fn a_bulk_cancel_ends_the_waiting_stops_the_running_and_leaves_other_tenants_alone() {
    let (app, gate) = spawn_app_with_gate(|s| s.workers.tenant_limit = nonzero(1)).await;
    let (alice, bob, ops) = (token("acme", "alice"), token("globex", "bob"), operator_token("olga"));
    let mut acme = Vec::new();
    for _ in 0..4 {
        acme.push(app.create(&alice, "held", json!({})).await);
    }
    let globex = app.create(&bob, "held", json!({})).await;
    gate.started(2, WITHIN).await; // one of each tenant's, at their limit of one

    let counted =
        ok_json(app.post_json(&ops, "/admin/jobs/cancel", json!({"tenant": "acme", "dry_run": true})).await).await;
    assert_eq!(counted, json!({"would_cancel": 4}));
    let done = ok_json(app.post_json(&ops, "/admin/jobs/cancel", json!({"tenant": "acme"})).await).await;
    assert_eq!(done, json!({"cancelled": 4}));
    for id in &acme {
        assert_eq!(app.wait_until_finished(&alice, id, WITHIN).await["status"], "cancelled", "{id}");
    }
    assert_eq!(app.job(&bob, &globex).await["status"], "processing", "another tenant's job runs on");
    let told = || async { app.notifications_of(&alice, "job_completed").await.len() == 4 };
    eventually(WITHIN, "alice to be told of each cancel", told).await;
    let affected: i32 = app
        .db
        .scalar("SELECT affected FROM operator_actions WHERE action = 'bulk_cancel' AND operator = 'olga'", &[])
        .await;
    assert_eq!(affected, 4);
    let again = ok_json(app.post_json(&ops, "/admin/jobs/cancel", json!({"tenant": "acme"})).await).await;
    assert_eq!(again, json!({"cancelled": 0}));
    gate.release(1);
}

#[actix_web::test]
async fn the_operators_job_pages_hold_while_new_jobs_arrive() {
    let app = spawn_app_with(|s| s.workers.global_limit = 0, HandlerRegistry::builtin()).await;
    let (alice, ops) = (token("acme", "alice"), operator_token("olga"));
    let mut first = Vec::new();
    for _ in 0..5 {
        first.push(app.create(&alice, "noop", json!({})).await);
    }
    let page = ok_json(app.get(&ops, "/admin/jobs?tenant=acme&limit=2").await).await;
    let mut seen: Vec<String> =
        page["jobs"].as_array().unwrap().iter().map(|j| j["id"].as_str().unwrap().into()).collect();
    let mut cursor = page["next_cursor"].as_str().map(str::to_owned);
    let mut arrived = Vec::new();
    while let Some(at) = cursor {
        // Newer jobs arrive between pages: they belong to a first page, not to these.
        arrived.push(app.create(&alice, "noop", json!({})).await);
        let page = ok_json(app.get(&ops, &format!("/admin/jobs?tenant=acme&limit=2&cursor={at}")).await).await;
        seen.extend(page["jobs"].as_array().unwrap().iter().map(|j| j["id"].as_str().unwrap().to_owned()));
        cursor = page["next_cursor"].as_str().map(str::to_owned);
    }
    first.reverse();
    assert_eq!(seen, first, "each of the first five once, newest first, none of the later");
    let fresh = ok_json(app.get(&ops, "/admin/jobs?tenant=acme&limit=1").await).await;
    assert_eq!(fresh["jobs"][0]["id"].as_str(), arrived.last().map(String::as_str));
}
