//! Backend services acting for a tenant's users: a service token naming the
//! person in `Errand-On-Behalf-Of`, or a person's token with an RFC 8693
//! `act` claim. The job is the person's in every respect; the service is
//! recorded; a service reaches only the job and batch routes, and only the
//! tenants and job types its token lists.

use std::time::Duration;

use errand::domain::tokens::TokenFor;
use reqwest::{Response, StatusCode};
use serde_json::{Value, json};

use crate::helpers::*;

fn service_token(name: &str, types: Option<&[&str]>, tenants: Option<&[&str]>) -> String {
    let list = |names: Option<&[&str]>| names.map(|names| names.iter().map(|n| n.to_string()).collect());
    let kind = TokenFor::Service { name: name.into(), types: list(types), tenants: list(tenants) };
    kind.mint(SECRET, Duration::from_secs(3600)).unwrap()
}

/// `POST /jobs/{job_type}` by `token` for `person` (`tenant/user`).
async fn submit_for(app: &TestApp, token: &str, person: &str, job_type: &str, key: &str, params: Value) -> Response {
    let request = app.http.post(format!("{}/jobs/{job_type}", app.address)).bearer_auth(token);
    let request = request.header("Errand-On-Behalf-Of", person).header("Idempotency-Key", key);
    request.json(&params).send().await.unwrap()
}

/// `method` `path` by `token` for `person`.
async fn request_for(app: &TestApp, method: reqwest::Method, token: &str, person: &str, path: &str) -> Response {
    let request = app.http.request(method, format!("{}{path}", app.address)).bearer_auth(token);
    request.header("Errand-On-Behalf-Of", person).send().await.unwrap()
}

#[actix_web::test]
async fn a_service_starts_a_job_that_is_its_users_in_every_respect() {
    let app = spawn_app().await;
    // The address errand last saw in alice's own token (what a sighting writes).
    let seen =
        "INSERT INTO people (tenant_id, user_id, email, seen_at) VALUES ('acme', 'alice', 'alice@example.com', now())";
    app.db.client().await.execute(seen, &[]).await.unwrap();
    let billing = service_token("billing-backend", None, None);
    let alice = token("acme", "alice");

    let created = submit_for(&app, &billing, "acme/alice", "noop", "invoice-7", json!({})).await;
    assert_eq!(created.status(), StatusCode::ACCEPTED);
    let id = id_of(created).await;
    // Her key: the same intent from her own token is the same job.
    let replayed = app.submit(&alice, "noop", "invoice-7", json!({})).await;
    assert_eq!(replayed.headers()["Idempotent-Replayed"], "true");
    assert_eq!(id_of(replayed).await, id);
    let job = app.wait_until_finished(&alice, &id, Duration::from_secs(10)).await;
    assert_eq!(job["status"], "completed");
    assert_eq!(app.get(&token("acme", "bob"), &format!("/jobs/{id}")).await.status(), StatusCode::NOT_FOUND);
    assert_eq!(app.notifications_of(&alice, "job_completed").await.len(), 1, "her notification");
    let (email, acted_by): (Option<String>, Option<String>) = {
        let row = app.db.client().await.query_one("SELECT user_email, acted_by FROM jobs", &[]).await.unwrap();
        (row.get(0), row.get(1))
    };
    assert_eq!(email.as_deref(), Some("alice@example.com"), "her email as errand last saw it");
    assert_eq!(acted_by.as_deref(), Some("billing-backend"));
    let audit = app.get(&operator_token("olga"), &format!("/admin/jobs/{id}")).await;
    assert_eq!(audit.json::<Value>().await.unwrap()["acted_by"], "billing-backend", "the audit names the service");
    // The service reads and cancels her jobs as she would.
    let read = request_for(&app, reqwest::Method::GET, &billing, "acme/alice", &format!("/jobs/{id}")).await;
    assert_eq!(read.status(), StatusCode::OK);
    let not_hers = request_for(&app, reqwest::Method::GET, &billing, "acme/bob", &format!("/jobs/{id}")).await;
    assert_eq!(not_hers.status(), StatusCode::NOT_FOUND);
}

#[actix_web::test]
async fn a_batch_started_by_a_service_records_it_on_every_child() {
    let app = spawn_app().await;
    let billing = service_token("billing-backend", Some(&["noop"]), Some(&["acme"]));
    let request = app.http.post(format!("{}/batches/noop", app.address)).bearer_auth(&billing);
    let request = request.header("Errand-On-Behalf-Of", "acme/alice").header("Idempotency-Key", "b1");
    let created = request.json(&json!({"items": [{}, {}]})).send().await.unwrap();
    assert_eq!(created.status(), StatusCode::ACCEPTED);
    let acted: Vec<Option<String>> = app.db.column("SELECT acted_by FROM jobs", &[]).await;
    assert_eq!(acted, vec![Some("billing-backend".to_owned()); 2]);
    let owners: Vec<String> = app.db.column("SELECT user_id FROM jobs", &[]).await;
    assert_eq!(owners, vec!["alice".to_owned(); 2]);
}

#[actix_web::test]
async fn a_service_token_is_held_to_its_tenants_types_and_routes() {
    let app = spawn_app().await;
    let billing = service_token("billing-backend", Some(&["noop"]), Some(&["acme"]));
    let refused = [
        (submit_for(&app, &billing, "globex/gail", "noop", "k1", json!({})).await, "tenant globex"),
        (submit_for(&app, &billing, "acme/alice", "sleep", "k2", json!({"ms": 1})).await, "type sleep"),
        (request_for(&app, reqwest::Method::GET, &billing, "acme/alice", "/notifications").await, "GET /notifications"),
        (
            request_for(&app, reqwest::Method::GET, &billing, "acme/alice", "/me/notification-preferences").await,
            "GET /me/notification-preferences",
        ),
        (request_for(&app, reqwest::Method::POST, &billing, "acme/alice", "/webhooks").await, "POST /webhooks"),
        (app.get(&billing, "/jobs").await, "Errand-On-Behalf-Of"),
    ];
    for (response, named) in refused {
        assert_eq!(response.status(), StatusCode::FORBIDDEN, "{named}");
        let problem: Value = response.json().await.unwrap();
        assert!(problem["detail"].as_str().unwrap().contains(named), "{named}: {problem}");
    }
    let allowed = submit_for(&app, &billing, "acme/alice", "noop", "k3", json!({})).await;
    assert_eq!(allowed.status(), StatusCode::ACCEPTED);
    let jobs: i64 = app.db.scalar("SELECT count(*) FROM jobs", &[]).await;
    assert_eq!(jobs, 1, "nothing refused was recorded");
    // Not a worker's token either.
    let claim = app.post_json(&billing, "/worker/v1/claim", json!({"types": ["noop"], "max": 1, "wait": 0})).await;
    assert_eq!(claim.status(), StatusCode::FORBIDDEN);
}

#[actix_web::test]
async fn only_a_service_token_names_whom_it_acts_for_and_only_as_tenant_slash_user() {
    let app = spawn_app().await;
    let alice = token("acme", "alice");
    let as_bob = submit_for(&app, &alice, "acme/bob", "noop", "k", json!({})).await;
    assert_eq!(as_bob.status(), StatusCode::FORBIDDEN, "a person's token cannot act for another");
    let billing = service_token("billing-backend", None, None);
    for malformed in ["acme", "acme/", "/alice", "acme/%00"] {
        let response = submit_for(&app, &billing, malformed, "noop", "k", json!({})).await;
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{malformed}");
    }
    // A tenant's user's token whose client asked for the service scope too.
    let claims = json!({"sub": "mallory", "tenant": "acme", "scope": "service", "exp": now_secs() + 60});
    let mallory = errand::domain::tokens::TokenIssuer::new(SECRET).unwrap().issue(&claims).unwrap();
    let refused = submit_for(&app, &mallory, "acme/alice", "noop", "k", json!({})).await;
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    let jobs: i64 = app.db.scalar("SELECT count(*) FROM jobs", &[]).await;
    assert_eq!(jobs, 0);
}

#[actix_web::test]
async fn a_token_with_an_act_claim_is_its_persons_with_the_actor_recorded() {
    let app = spawn_app().await;
    let claims = json!({"sub": "alice", "tenant": "acme", "act": {"sub": "billing-backend"}, "exp": now_secs() + 60});
    let exchanged = errand::domain::tokens::TokenIssuer::new(SECRET).unwrap().issue(&claims).unwrap();
    let id = app.create(&exchanged, "noop", json!({})).await;
    assert_eq!(app.job(&token("acme", "alice"), &id).await["id"], id.as_str());
    let acted: Option<String> = app.db.scalar("SELECT acted_by FROM jobs", &[]).await;
    assert_eq!(acted.as_deref(), Some("billing-backend"));
    // An actor reaches the job routes only, as a service token does.
    assert_eq!(app.get(&exchanged, "/notifications").await.status(), StatusCode::FORBIDDEN);
}

#[test]
fn errand_token_mints_a_service_token_with_its_limits() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_errand"))
        .args(["token", "--service", "--name", "billing-backend", "--types", "noop,sleep", "--tenants", "acme"])
        .env("ERRAND_AUTH__JWT_SECRET", SECRET)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let token = String::from_utf8(output.stdout).unwrap();
    let payload = token.trim().split('.').nth(1).unwrap();
    use base64::Engine;
    let claims: Value =
        serde_json::from_slice(&base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap();
    assert_eq!(claims["sub"], "billing-backend");
    assert_eq!(claims["scope"], "service");
    assert_eq!(claims["types"], json!(["noop", "sleep"]));
    assert_eq!(claims["tenants"], json!(["acme"]));
    assert!(claims.get("tenant").is_none(), "a service names no tenant of its own");
}
