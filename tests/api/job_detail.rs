//! The operators' job detail (`GET /admin/jobs/{id}`): each attempt with
//! its lease, its owner and how it ended, what the job's end sent and where
//! the outboxes have it, and the operator actions taken on it.

use std::time::Duration;

use errand::jobs::HandlerRegistry;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

const WITHIN: Duration = Duration::from_secs(20);

/// The job's `history`.
async fn detail(app: &TestApp, ops: &str, id: &str) -> Value {
    let response = app.get(ops, &format!("/admin/jobs/{id}")).await;
    assert_eq!(response.status(), StatusCode::OK);
    let mut job: Value = response.json().await.unwrap();
    job["history"].take()
}

fn field<'a>(items: &'a Value, key: &str) -> Vec<&'a Value> {
    items.as_array().unwrap().iter().map(|item| &item[key]).collect()
}

#[actix_web::test]
async fn a_jobs_detail_shows_each_attempt_with_its_lease_and_what_its_end_sent() {
    let mail = MailServer::start().await;
    let app = spawn_app_with(email_to(mail.smtp_port), HandlerRegistry::builtin()).await;
    let (alice, ops) = (token_for("acme", "alice", "alice@example.com"), operator_token("olga"));
    let id = app.create(&alice, "sleep", json!({"ms": 1, "fail_times": 2})).await;
    assert_eq!(app.wait_until_finished(&alice, &id, WITHIN).await["status"], "completed");
    mail.wait_for(1, WITHIN).await;
    mail.assert_all_sent(&app.db, 1).await;

    let job = detail(&app, &ops, &id).await;
    let attempts = &job["attempts"];
    assert_eq!(field(attempts, "attempt"), [1, 2, 3]);
    assert_eq!(field(attempts, "outcome"), ["failed", "failed", "completed"]);
    assert_eq!(field(attempts, "error")[..2], ["planned failure 1 of 2", "planned failure 2 of 2"]);
    assert!(attempts[2]["error"].is_null());
    let leases: std::collections::HashSet<&str> =
        field(attempts, "lease_id").iter().map(|l| l.as_str().expect("each attempt's lease")).collect();
    assert_eq!(leases.len(), 3, "a new lease per claim: {attempts}");
    for attempt in attempts.as_array().unwrap() {
        assert!(attempt["lease_owner"].is_string(), "who ran it: {attempt}");
        let (started, ended) = (attempt["started_at"].as_str().unwrap(), attempt["ended_at"].as_str().unwrap());
        let started = chrono::DateTime::parse_from_rfc3339(started).unwrap();
        assert!(started <= chrono::DateTime::parse_from_rfc3339(ended).unwrap(), "{attempt}");
    }
    assert_eq!(field(&job["notifications"], "kind"), ["job_completed"]);
    assert_eq!(field(&job["emails"], "state"), ["sent"]);
    assert_eq!(field(&job["emails"], "recipient"), ["alice@example.com"]);
    assert!(job["webhooks"].as_array().unwrap().is_empty());
    assert!(job["actions"].as_array().unwrap().is_empty());

    let whole: Value = app.get(&ops, &format!("/admin/jobs/{id}")).await.json().await.unwrap();
    assert_eq!((whole["attempts"].as_i64(), whole["status"].as_str()), (Some(3), Some("completed")), "{whole}");
    assert_eq!(whole["attempt_errors"].as_array().unwrap().len(), 2, "the older field stays");
    // Each process publishes its claims and attempt ends every few seconds:
    // the overview's totals, from which a page shows claims per second.
    let published = || async {
        let overview: Value = app.get(&ops, "/admin/overview").await.json().await.unwrap();
        let totals = &overview["totals"];
        totals["claimed"].as_i64().unwrap() >= 3 && totals["attempts_ended"].as_i64().unwrap() >= 3
    };
    eventually(WITHIN, "this process's three claims and attempt ends to be published", published).await;
    // The list does not carry the history (it is a page of many jobs).
    let list: Value = app.get(&ops, "/admin/jobs").await.json().await.unwrap();
    assert!(list["jobs"][0].get("history").is_none(), "{list}");
}

#[actix_web::test]
async fn a_running_attempt_shows_its_live_lease_and_an_operators_cancel_is_listed() {
    let (app, gate) = spawn_app_with_gate(|_| {}).await;
    let (alice, ops) = (token("acme", "alice"), operator_token("olga"));
    let id = app.create(&alice, "held", json!({})).await;
    gate.started(1, WITHIN).await;

    let job = detail(&app, &ops, &id).await;
    let running = &job["attempts"][0];
    assert_eq!((running["outcome"].as_str(), running["attempt"].as_i64()), (Some("running"), Some(1)));
    let started = chrono::DateTime::parse_from_rfc3339(running["started_at"].as_str().unwrap()).unwrap();
    let expires = chrono::DateTime::parse_from_rfc3339(running["lease_expires_at"].as_str().unwrap()).unwrap();
    assert!(expires > started, "the lease runs past the claim: {running}");
    assert!(running["ended_at"].is_null());
    assert!(running["lease_id"].is_string(), "an operator who may act sees the live lease: {running}");
    let viewer = detail(&app, &operator_viewer_token("vera"), &id).await;
    assert!(viewer["attempts"][0]["lease_id"].is_null(), "a read-only operator does not: {viewer}");
    let overview: Value = app.get(&ops, "/admin/overview").await.json().await.unwrap();
    let owners = &overview["running_by_owner"];
    assert_eq!(
        (owners[0]["owner"].as_str(), owners[0]["running"].as_i64()),
        (running["lease_owner"].as_str(), Some(1))
    );

    assert_stopping(app.post(&ops, &format!("/admin/jobs/{id}/cancel")).await).await;
    assert_eq!(app.wait_until_finished(&alice, &id, WITHIN).await["status"], "cancelled");
    let job = detail(&app, &ops, &id).await;
    assert_eq!(field(&job["attempts"], "outcome"), ["cancelled"], "{job}");
    assert_eq!(job["attempts"][0]["lease_id"], running["lease_id"], "the same attempt, ended");
    assert_eq!(field(&job["actions"], "action"), ["cancel"]);
    assert_eq!(field(&job["actions"], "operator"), ["olga"]);
}

#[actix_web::test]
async fn what_a_type_redacts_is_kept_from_operators_without_the_sensitive_scope() {
    use errand::config::RedactedField::{Params, Result};
    let configure =
        |s: &mut errand::config::Settings| s.job_types.get_mut("noop").unwrap().redact = vec![Params, Result];
    let app = spawn_app_with(configure, HandlerRegistry::builtin()).await;
    let alice = token("acme", "alice");
    let private = json!({"customer": {"email": "alice@example.com"}});
    let id = app.create(&alice, "noop", private.clone()).await;
    app.wait_until_finished(&alice, &id, WITHIN).await;
    let shown = app.create(&alice, "sleep", json!({"ms": 0})).await;

    let plain = operator_token("olga");
    let job: Value = app.get(&plain, &format!("/admin/jobs/{id}")).await.json().await.unwrap();
    assert_eq!(
        (&job["params"], &job["result"], &job["redacted"]),
        (&json!({}), &Value::Null, &json!(["params", "result"]))
    );
    let list: Value = app.get(&plain, "/admin/jobs").await.json().await.unwrap();
    let by_id =
        |list: &Value, id: &str| list["jobs"].as_array().unwrap().iter().find(|j| j["id"] == id).cloned().unwrap();
    assert_eq!(by_id(&list, &id)["params"], json!({}));
    assert_eq!(by_id(&list, &shown)["params"], json!({"ms": 0}), "other types are shown");
    assert!(by_id(&list, &shown).get("redacted").is_none());
    // Nor can the params be found by guessing: the search passes over them.
    let search = "/admin/jobs?param=customer.email=alice@example.com";
    let found: Value = app.get(&plain, search).await.json().await.unwrap();
    assert!(found["jobs"].as_array().unwrap().is_empty(), "{found}");
    let counted = app
        .post_json(
            &plain,
            "/admin/jobs/retry",
            json!({"tenant": "acme", "param": "customer.email=alice@example.com", "dry_run": true}),
        )
        .await;
    assert_eq!(counted.json::<Value>().await.unwrap(), json!({"would_retry": 0}));

    // `errand token --operator --read-only --sensitive` makes one who sees it (and may only look).
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_errand"))
        .args(["token", "--operator", "--read-only", "--sensitive", "--user", "sam"])
        .env("ERRAND_AUTH__JWT_SECRET", SECRET)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let sensitive = String::from_utf8(output.stdout).unwrap().trim().to_owned();
    let job: Value = app.get(&sensitive, &format!("/admin/jobs/{id}")).await.json().await.unwrap();
    assert_eq!(job["params"], private);
    assert!(job.get("redacted").is_none(), "{job}");
    let found: Value = app.get(&sensitive, search).await.json().await.unwrap();
    assert_eq!(found["jobs"][0]["id"], id.as_str());
    let retry = app.post(&sensitive, &format!("/admin/jobs/{id}/retry")).await;
    assert_problem(retry, StatusCode::FORBIDDEN, "forbidden").await;
    // The owner always sees their own job whole.
    assert_eq!(app.job(&alice, &id).await["params"], private);
}
