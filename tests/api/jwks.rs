//! API tokens from an identity provider: RS256 tokens verified with keys from
//! a real JWKS document served over HTTP by the test, with issuer, audience
//! and claim names configured as a host app would.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use actix_web::{App, HttpResponse, HttpServer, web};
use errand::jobs::HandlerRegistry;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

const ISSUER: &str = "https://idp.test/";
const AUDIENCE: &str = "errand-api";

fn fixture_bytes(name: &str) -> Vec<u8> {
    std::fs::read(format!("{}/tests/fixtures/jwks/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn fixture(name: &str) -> String {
    String::from_utf8(fixture_bytes(name)).unwrap()
}

/// A test key's private half (PKCS#1 DER).
fn private_key(key: &str) -> EncodingKey {
    EncodingKey::from_rsa_der(&fixture_bytes(&format!("rsa-{key}.der")))
}

/// A JWKS endpoint whose key set the test changes, counting its fetches.
struct Provider {
    url: String,
    keys: Arc<std::sync::Mutex<Vec<Value>>>,
    fetches: Arc<AtomicUsize>,
}

impl Provider {
    fn start(published: &[&str]) -> Self {
        let all: Value = serde_json::from_str(&fixture("public-jwks.json")).unwrap();
        let keys = Arc::new(std::sync::Mutex::new(published.iter().map(|k| all[*k].clone()).collect::<Vec<_>>()));
        let fetches = Arc::new(AtomicUsize::new(0));
        let (served, counted) = (keys.clone(), fetches.clone());
        let server = HttpServer::new(move || {
            let (served, counted) = (served.clone(), counted.clone());
            App::new().route(
                "/jwks.json",
                web::get().to(move || {
                    counted.fetch_add(1, Ordering::SeqCst);
                    let keys = served.lock().unwrap().clone();
                    async move { HttpResponse::Ok().json(json!({ "keys": keys })) }
                }),
            )
        })
        .workers(1)
        .disable_signals()
        .bind("127.0.0.1:0")
        .unwrap();
        let url = format!("http://{}/jwks.json", server.addrs()[0]);
        actix_web::rt::spawn(server.run());
        Self { url, keys, fetches }
    }

    fn publish(&self, key: &str) {
        let all: Value = serde_json::from_str(&fixture("public-jwks.json")).unwrap();
        self.keys.lock().unwrap().push(all[key].clone());
    }
}

fn signed(key: &str, claims: Value) -> String {
    let mut header = Header::new(Algorithm::RS256);
    header.kid = Some(format!("key-{key}"));
    jsonwebtoken::encode(&header, &claims, &private_key(key)).unwrap()
}

fn claims() -> Value {
    json!({"iss": ISSUER, "aud": AUDIENCE, "sub": "alice", "org_id": "acme", "exp": now_secs() + 300})
}

async fn app_trusting(provider: &Provider, min_refresh: Duration) -> TestApp {
    let url = provider.url.clone();
    spawn_app_with(
        move |s| {
            s.auth.jwks_url = Some(errand::config::HttpUrl::parse(&url).unwrap());
            s.auth.jwks_min_refresh = min_refresh;
            s.auth.issuer = Some(ISSUER.into());
            s.auth.audience = Some(AUDIENCE.into());
            s.auth.tenant_claim = "org_id".into();
        },
        HandlerRegistry::builtin(),
    )
    .await
}

async fn status(app: &TestApp, token: &str) -> StatusCode {
    app.get(token, "/jobs").await.status()
}

#[actix_web::test]
async fn a_providers_token_names_the_caller_through_the_configured_claims() {
    let provider = Provider::start(&["one"]);
    let app = app_trusting(&provider, Duration::from_secs(30)).await;
    let token = signed("one", claims());
    let id = app.create(&token, "noop", json!({})).await;
    let tenant: String = app.db.scalar("SELECT tenant_id FROM jobs WHERE id::text = $1", &[&id]).await;
    assert_eq!(tenant, "acme", "the tenant comes from org_id");
}

#[actix_web::test]
async fn wrong_issuer_audience_algorithm_or_signature_is_401() {
    let provider = Provider::start(&["one"]);
    let app = app_trusting(&provider, Duration::from_secs(30)).await;
    let mut wrong_issuer = claims();
    wrong_issuer["iss"] = json!("https://elsewhere.test/");
    let mut wrong_audience = claims();
    wrong_audience["aud"] = json!("another-api");
    let mut no_tenant = claims();
    no_tenant.as_object_mut().unwrap().remove("org_id");
    // Algorithm confusion: HS256 with the provider's public key as the secret.
    let mut hs_header = Header::new(Algorithm::HS256);
    hs_header.kid = Some("key-one".into());
    let confused = jsonwebtoken::encode(
        &hs_header,
        &claims(),
        &EncodingKey::from_secret(fixture("rsa-one.pub.pem").as_bytes()).unwrap(),
    )
    .unwrap();
    let none = unsigned_token(json!({"alg": "none", "kid": "key-one"}), claims());
    // Signed with key two but naming key one.
    let mut forged_header = Header::new(Algorithm::RS256);
    forged_header.kid = Some("key-one".into());
    let forged = jsonwebtoken::encode(&forged_header, &claims(), &private_key("two")).unwrap();
    let shared = token("acme", "alice");
    for (what, token) in [
        ("wrong issuer", signed("one", wrong_issuer)),
        ("wrong audience", signed("one", wrong_audience)),
        ("no tenant claim", signed("one", no_tenant)),
        ("HS256 with the public key", confused),
        ("alg none", none),
        ("signed by another key", forged),
        ("errand's shared secret", shared),
    ] {
        assert_eq!(status(&app, &token).await, StatusCode::UNAUTHORIZED, "{what}");
    }
    assert_eq!(status(&app, &signed("one", claims())).await, StatusCode::OK);
}

#[actix_web::test]
async fn a_rotated_key_is_fetched_on_its_first_token_but_unknown_ids_cannot_hammer_the_provider() {
    let provider = Provider::start(&["one"]);
    let app = app_trusting(&provider, Duration::ZERO).await;
    assert_eq!(status(&app, &signed("one", claims())).await, StatusCode::OK);
    assert_eq!(status(&app, &signed("two", claims())).await, StatusCode::UNAUTHORIZED, "not published yet");
    provider.publish("two");
    assert_eq!(status(&app, &signed("two", claims())).await, StatusCode::OK, "the rotation is picked up");

    let provider = Provider::start(&["one"]);
    let app = app_trusting(&provider, Duration::from_secs(3600)).await;
    assert_eq!(status(&app, &signed("one", claims())).await, StatusCode::OK);
    for _ in 0..5 {
        assert_eq!(status(&app, &signed("two", claims())).await, StatusCode::UNAUTHORIZED);
    }
    assert_eq!(provider.fetches.load(Ordering::SeqCst), 1, "unknown key ids wait for the refresh floor");
}

#[actix_web::test]
async fn an_unreachable_provider_is_a_retryable_503_not_a_401() {
    let closed = format!("http://127.0.0.1:{}/jwks.json", free_port());
    let provider = Provider { url: closed, keys: Default::default(), fetches: Default::default() };
    let app = app_trusting(&provider, Duration::ZERO).await;
    let response = app.get(&signed("one", claims()), "/jobs").await;
    assert_eq!(response.headers().get("retry-after").map(|v| v.to_str().unwrap()), Some("1"));
    assert_problem(response, StatusCode::SERVICE_UNAVAILABLE, "unavailable").await;
}
