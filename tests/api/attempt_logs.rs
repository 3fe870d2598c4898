//! Attempt logs: what a handler logs (`ctx.log` in Rust, the worker API's
//! `logs` call) is kept per attempt, fenced on the attempt's lease, capped,
//! and shown in the operators' timeline of the job, redacted where the
//! type's params are.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use errand::domain::LogLevel;
use errand::jobs::{HandlerFuture, JobContext, JobError, JobHandler, JobOutput};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

const WITHIN: Duration = Duration::from_secs(20);

/// Logs `lines` lines each attempt (`{"lines"}` in its params, 2 if absent),
/// then fails its first attempt and completes the next.
#[derive(Clone, Default)]
struct Chatty(Arc<AtomicU32>);

impl JobHandler for Chatty {
    fn run(&self, ctx: JobContext) -> HandlerFuture {
        let attempts = self.0.clone();
        Box::pin(async move {
            let lines = ctx.params.get("lines").and_then(Value::as_u64).unwrap_or(2);
            for n in 0..lines {
                ctx.log(LogLevel::Info, &format!("attempt {} line {n}", ctx.attempt), Some(json!({"n": n})));
            }
            if attempts.fetch_add(1, Ordering::SeqCst) == 0 {
                ctx.log(LogLevel::Error, "the source said no", None);
                return Err(JobError::Retryable("the source is away".into()));
            }
            Ok(JobOutput::default())
        })
    }
}

async fn chatty_app(redacted: bool) -> TestApp {
    TestApp::builder()
        .job_type("chatty", Chatty::default())
        .configure(move |s| {
            let chatty = s.job_types.get_mut("chatty").unwrap();
            if redacted {
                chatty.redact = vec![errand::config::RedactedField::Params];
            }
        })
        .spawn()
        .await
}

/// The operators' timeline of job `id`, once its last attempt's lines are in.
async fn attempts_logged(app: &TestApp, operator: &str, id: &str, lines_of_last: usize) -> Vec<Value> {
    let deadline = std::time::Instant::now() + WITHIN;
    loop {
        let job: Value = app.get(operator, &format!("/admin/jobs/{id}")).await.json().await.unwrap();
        let attempts = job["history"]["attempts"].as_array().unwrap().clone();
        if attempts.last().is_some_and(|a| a["logs"].as_array().unwrap().len() >= lines_of_last) {
            return attempts;
        }
        assert!(std::time::Instant::now() < deadline, "the last attempt's lines within {WITHIN:?}: {attempts:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[actix_web::test]
async fn each_attempts_lines_are_in_the_operators_timeline_under_that_attempt() {
    let app = chatty_app(false).await;
    let alice = token("acme", "alice");
    let id = app.create(&alice, "chatty", json!({})).await;
    assert_eq!(app.wait_until_finished(&alice, &id, WITHIN).await["status"], "completed");
    let attempts = attempts_logged(&app, &operator_token("olga"), &id, 2).await;
    let lines = |a: &Value| -> Vec<(String, String)> {
        let logs = a["logs"].as_array().unwrap();
        logs.iter().map(|l| (l["level"].as_str().unwrap().into(), l["message"].as_str().unwrap().into())).collect()
    };
    assert_eq!(attempts.len(), 2);
    let said = |level: &str, message: &str| (level.to_owned(), message.to_owned());
    let first =
        [said("info", "attempt 1 line 0"), said("info", "attempt 1 line 1"), said("error", "the source said no")];
    assert_eq!(lines(&attempts[0]), first);
    assert_eq!(lines(&attempts[1]).len(), 2);
    assert_eq!(attempts[1]["logs"][1]["fields"], json!({"n": 1}));
    assert_eq!(attempts[1]["log_truncated"], false);
}

#[actix_web::test]
async fn an_attempt_keeps_a_thousand_lines_and_says_the_rest_was_cut() {
    let app = chatty_app(false).await;
    let alice = token("acme", "alice");
    let id = app.create(&alice, "chatty", json!({"lines": 1500})).await;
    app.wait_until_finished(&alice, &id, WITHIN).await;
    let attempts = attempts_logged(&app, &operator_token("olga"), &id, 1001).await;
    let last = attempts.last().unwrap();
    let logs = last["logs"].as_array().unwrap();
    assert_eq!((logs.len(), last["log_truncated"].as_bool()), (1001, Some(true)));
    assert_eq!(logs[999]["message"], "attempt 2 line 999");
    assert!(logs[1000]["message"].as_str().unwrap().starts_with("truncated"), "{}", logs[1000]);
}

#[actix_web::test]
async fn an_operator_who_may_not_see_a_types_params_does_not_see_its_logs() {
    let app = chatty_app(true).await;
    let alice = token("acme", "alice");
    let id = app.create(&alice, "chatty", json!({})).await;
    app.wait_until_finished(&alice, &id, WITHIN).await;
    let sensitive = operator_token_with_scope("sam", "operator operator:sensitive");
    let seen = attempts_logged(&app, &sensitive, &id, 2).await;
    assert_eq!(seen[1]["logs"][0]["message"], "attempt 2 line 0");
    let hidden = attempts_logged(&app, &operator_token("olga"), &id, 2).await;
    let messages: Vec<&Value> =
        hidden.iter().flat_map(|a| a["logs"].as_array().unwrap()).map(|l| &l["message"]).collect();
    assert!(messages.iter().all(|m| *m == "(redacted)"), "{messages:?}");
    assert!(hidden[1]["logs"][1].get("fields").is_none());
}

#[actix_web::test]
async fn an_external_worker_logs_under_its_lease_its_last_lines_after_its_end_and_never_under_another() {
    let app = TestApp::builder()
        .configure(|s| _ = s.job_types.insert("render_invoice".into(), job_type("external")))
        .spawn()
        .await;
    let (worker, alice) = (crate::worker_api::worker_token(&["render_invoice"]), token("acme", "alice"));
    let id = app.create(&alice, "render_invoice", json!({})).await;
    let claimed: Value = app.post_json(&worker, "/worker/v1/claim", json!({"wait": 5})).await.json().await.unwrap();
    let lease = claimed["jobs"][0]["lease_id"].as_str().unwrap().to_owned();
    let logs = format!("/worker/v1/jobs/{id}/logs");
    let lines = json!([
        {"level": "info", "message": "rendering", "fields": {"pages": 3}},
        {"level": "warn", "message": "a font was missing", "at": "2026-01-02T03:04:05Z"}
    ]);
    let sent = app.post_json(&worker, &logs, json!({"lease_id": lease, "lines": lines})).await;
    assert_eq!(sent.status(), StatusCode::NO_CONTENT);
    for (body, status, code) in [
        (json!({"lease_id": uuid::Uuid::new_v4(), "lines": lines}), StatusCode::CONFLICT, "lease_lost"),
        (json!({"lease_id": lease, "lines": []}), StatusCode::BAD_REQUEST, "bad_request"),
        (
            json!({"lease_id": lease, "lines": [{"level": "loud", "message": "x"}]}),
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
    ] {
        assert_problem(app.post_json(&worker, &logs, body).await, status, code).await;
    }
    let done = app.post_json(&worker, &format!("/worker/v1/jobs/{id}/complete"), json!({"lease_id": lease})).await;
    assert_eq!(done.status(), StatusCode::OK);
    // Its last lines may come after its end, under the lease it ended with.
    let last = json!([{"level": "info", "message": "bye"}]);
    let late = app.post_json(&worker, &logs, json!({"lease_id": lease, "lines": last})).await;
    assert_eq!(late.status(), StatusCode::NO_CONTENT);

    let attempts = attempts_logged(&app, &operator_token("olga"), &id, 3).await;
    let logged = attempts[0]["logs"].as_array().unwrap();
    assert_eq!(logged.len(), 3, "{logged:?}");
    assert_eq!(logged[2]["message"], "bye");
    assert_eq!((&logged[0]["fields"], &logged[1]["level"]), (&json!({"pages": 3}), &json!("warn")));
    assert_eq!(logged[1]["at"], "2026-01-02T03:04:05Z");
}
