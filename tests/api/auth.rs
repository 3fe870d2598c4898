use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use errand::domain::tokens::{TokenIssuer, UserClaims};
use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::*;

async fn status_with(app: &TestApp, authorization: Option<&str>) -> reqwest::Response {
    let mut request = app.http.get(format!("{}/jobs", app.address));
    if let Some(value) = authorization {
        request = request.header("Authorization", value);
    }
    request.send().await.unwrap()
}

fn claims(exp: u64) -> UserClaims {
    UserClaims { sub: "alice".into(), tenant: "acme".into(), email: None, scope: None, exp }
}

#[actix_web::test]
async fn a_valid_token_is_accepted() {
    let app = spawn_app().await;
    let response = status_with(&app, Some(&format!("Bearer {}", token("acme", "alice")))).await;
    assert_eq!(response.status(), StatusCode::OK);
}

#[actix_web::test]
async fn missing_malformed_expired_and_forged_tokens_get_401() {
    let app = spawn_app().await;
    let expired = token_with(claims(now_secs() - 10));
    let forged =
        TokenIssuer::new("another-secret-that-is-long-enough-000000").unwrap().issue(&claims(now_secs() + 60)).unwrap();
    let alg_none = unsigned_token(
        json!({"alg": "none", "typ": "JWT"}),
        json!({"sub": "alice", "tenant": "acme", "exp": now_secs() + 60}),
    );
    let no_exp_body = URL_SAFE_NO_PAD.encode(json!({"sub": "alice", "tenant": "acme"}).to_string());
    let valid = token("acme", "alice");
    let valid_header = valid.split('.').next().unwrap();
    let no_exp = format!("{valid_header}.{no_exp_body}.{}", valid.rsplit('.').next().unwrap());

    let cases = [
        None,
        Some("Bearer".to_owned()),
        Some("Bearer not-a-jwt".to_owned()),
        Some(format!("Basic {valid}")),
        Some(format!("Bearer {expired}")),
        Some(format!("Bearer {forged}")),
        Some(format!("Bearer {alg_none}")),
        Some(format!("Bearer {no_exp}")),
    ];
    for case in cases {
        let response = status_with(&app, case.as_deref()).await;
        assert_eq!(response.headers()["www-authenticate"], "Bearer", "{case:?}");
        assert_problem(response, StatusCode::UNAUTHORIZED, "unauthorized").await;
    }
}

#[actix_web::test]
async fn health_checks_need_no_token() {
    let app = spawn_app().await;
    assert_eq!(app.get_without_token("/healthz").await.status(), StatusCode::OK);
    // Ready once the listener listens too, a moment after start-up.
    eventually(std::time::Duration::from_secs(10), "/readyz answers 200 without a token", || async {
        app.get_without_token("/readyz").await.status() == StatusCode::OK
    })
    .await;
}

#[actix_web::test]
async fn readyz_fails_when_migrations_are_missing() {
    let app = spawn_app().await;
    let client = app.db.client().await;
    client.batch_execute("DELETE FROM refinery_schema_history").await.unwrap();
    let response = app.get_without_token("/readyz").await;
    assert_problem(response, StatusCode::SERVICE_UNAVAILABLE, "unavailable").await;
}

#[actix_web::test]
async fn a_claim_holding_nul_is_not_an_identity_on_any_route() {
    let app = spawn_app().await;
    let exp = now_secs() + 60;
    let with = |sub: &str, tenant: &str, email: Option<&str>| {
        token_with(UserClaims {
            sub: sub.into(),
            tenant: tenant.into(),
            email: email.map(Into::into),
            scope: None,
            exp,
        })
    };
    for token in [with("alice", "ac\0me", None), with("al\0ice", "acme", None), with("alice", "acme", Some("a\0@x.io"))]
    {
        let jobs = status_with(&app, Some(&format!("Bearer {token}"))).await;
        assert_problem(jobs, StatusCode::UNAUTHORIZED, "unauthorized").await;
        let ticket = app.post(&token, "/notifications/stream-tickets").await;
        assert_problem(ticket, StatusCode::UNAUTHORIZED, "unauthorized").await;
    }
}

#[actix_web::test]
async fn a_token_not_yet_valid_is_refused_and_one_already_valid_accepted() {
    let app = spawn_app().await;
    let signed = |nbf: u64| {
        let body = json!({"sub": "alice", "tenant": "acme", "exp": now_secs() + 600, "nbf": nbf});
        jsonwebtoken::encode(
            &jsonwebtoken::Header::default(),
            &body,
            &jsonwebtoken::EncodingKey::from_secret(SECRET.as_bytes()).unwrap(),
        )
        .unwrap()
    };
    let later = status_with(&app, Some(&format!("Bearer {}", signed(now_secs() + 300)))).await;
    assert_problem(later, StatusCode::UNAUTHORIZED, "unauthorized").await;
    let earlier = status_with(&app, Some(&format!("Bearer {}", signed(now_secs() - 5)))).await;
    assert_eq!(earlier.status(), StatusCode::OK);
}
