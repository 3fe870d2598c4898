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

/// How the test's JWKS endpoint answers.
#[derive(Clone, Copy, PartialEq, Default)]
enum Answer {
    #[default]
    Keys,
    /// 500, as a provider that is down.
    Fails,
    /// 302 to a document of other keys.
    Redirects,
    /// A valid document padded past any sane size.
    Huge,
}

/// A JWKS endpoint whose key set and answer the test changes, counting its fetches.
struct Provider {
    url: String,
    keys: Arc<std::sync::Mutex<Vec<Value>>>,
    answer: Arc<std::sync::Mutex<Answer>>,
    fetches: Arc<AtomicUsize>,
}

impl Provider {
    fn start(published: &[&str]) -> Self {
        let all: Value = serde_json::from_str(&fixture("public-jwks.json")).unwrap();
        let keys = Arc::new(std::sync::Mutex::new(published.iter().map(|k| all[*k].clone()).collect::<Vec<_>>()));
        let answer = Arc::new(std::sync::Mutex::new(Answer::Keys));
        let fetches = Arc::new(AtomicUsize::new(0));
        let (served, answering, counted) = (keys.clone(), answer.clone(), fetches.clone());
        let server = HttpServer::new(move || {
            let (served, answering, counted) = (served.clone(), answering.clone(), counted.clone());
            let everything = all.clone();
            App::new()
                .route(
                    "/jwks.json",
                    web::get().to(move || {
                        counted.fetch_add(1, Ordering::SeqCst);
                        let keys = served.lock().unwrap().clone();
                        let answer = *answering.lock().unwrap();
                        async move {
                            match answer {
                                Answer::Keys => HttpResponse::Ok().json(json!({ "keys": keys })),
                                Answer::Fails => HttpResponse::InternalServerError().finish(),
                                Answer::Redirects => {
                                    HttpResponse::Found().insert_header(("location", "/other.json")).finish()
                                }
                                Answer::Huge => HttpResponse::Ok()
                                    .json(json!({ "keys": keys, "padding": "x".repeat(2 * 1024 * 1024) })),
                            }
                        }
                    }),
                )
                .route(
                    "/other.json",
                    web::get().to(move || {
                        let keys = vec![everything["one"].clone(), everything["two"].clone()];
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
        Self { url, keys, answer, fetches }
    }

    fn publish(&self, key: &str) {
        let all: Value = serde_json::from_str(&fixture("public-jwks.json")).unwrap();
        self.keys.lock().unwrap().push(all[key].clone());
    }

    fn withdraw(&self, key: &str) {
        self.keys.lock().unwrap().retain(|k| k["kid"] != format!("key-{key}"));
    }

    fn answer(&self, answer: Answer) {
        *self.answer.lock().unwrap() = answer;
    }

    fn fetches(&self) -> usize {
        self.fetches.load(Ordering::SeqCst)
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
    app_refreshing(provider, min_refresh, Duration::from_secs(600), |_| {}).await
}

/// errand trusting `provider`, refetching unknown keys at most every
/// `min_refresh` and known ones every `refresh`.
async fn app_refreshing(
    provider: &Provider,
    min_refresh: Duration,
    refresh: Duration,
    configure: impl FnOnce(&mut errand::config::Settings),
) -> TestApp {
    let url = provider.url.clone();
    spawn_app_with(
        move |s| {
            s.auth.jwks_url = Some(errand::config::HttpUrl::parse(&url).unwrap());
            s.auth.jwks_min_refresh = min_refresh;
            s.auth.jwks_refresh = refresh;
            s.auth.issuer = Some(ISSUER.into());
            s.auth.audience = Some(AUDIENCE.into());
            s.auth.tenant_claim = "org_id".into();
            configure(s);
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
    assert_eq!(provider.fetches(), 1, "unknown key ids wait for the refresh floor");
}

#[actix_web::test]
async fn an_unreachable_provider_is_a_retryable_503_not_a_401() {
    let closed = format!("http://127.0.0.1:{}/jwks.json", free_port());
    let provider =
        Provider { url: closed, keys: Default::default(), answer: Default::default(), fetches: Default::default() };
    let app = app_trusting(&provider, Duration::ZERO).await;
    let response = app.get(&signed("one", claims()), "/jobs").await;
    assert_eq!(response.headers().get("retry-after").map(|v| v.to_str().unwrap()), Some("1"));
    assert_problem(response, StatusCode::SERVICE_UNAVAILABLE, "unavailable").await;
}

#[actix_web::test]
async fn a_configured_issuer_or_audience_must_be_present_not_only_right_when_present() {
    let provider = Provider::start(&["one"]);
    let app = app_trusting(&provider, Duration::from_secs(30)).await;
    for claim in ["iss", "aud"] {
        let mut without = claims();
        without.as_object_mut().unwrap().remove(claim);
        assert_eq!(status(&app, &signed("one", without)).await, StatusCode::UNAUTHORIZED, "no {claim}");
    }
}

#[actix_web::test]
async fn a_failing_provider_is_asked_again_only_after_the_refresh_floor() {
    let provider = Provider::start(&["one"]);
    provider.answer(Answer::Fails);
    let app = app_trusting(&provider, Duration::from_secs(3600)).await;
    for kid in ["one", "made-up-1", "made-up-2", "made-up-3"] {
        let mut header = Header::new(Algorithm::RS256);
        header.kid = Some(format!("key-{kid}"));
        let token = jsonwebtoken::encode(&header, &claims(), &private_key("one")).unwrap();
        assert_eq!(status(&app, &token).await, StatusCode::SERVICE_UNAVAILABLE, "{kid}: the provider is down");
    }
    assert_eq!(provider.fetches(), 1, "a failed fetch is not tried again by every token");
}

#[actix_web::test]
async fn a_key_the_provider_removed_stops_being_trusted_after_the_refresh() {
    let provider = Provider::start(&["one", "two"]);
    let app = app_refreshing(&provider, Duration::ZERO, Duration::from_millis(200), |_| {}).await;
    assert_eq!(status(&app, &signed("two", claims())).await, StatusCode::OK);
    provider.withdraw("two");
    eventually(Duration::from_secs(10), "the withdrawn key is refused", || async {
        status(&app, &signed("two", claims())).await == StatusCode::UNAUTHORIZED
    })
    .await;
    assert_eq!(status(&app, &signed("one", claims())).await, StatusCode::OK, "the key still published is");
}

#[actix_web::test]
async fn keys_known_stay_in_use_while_the_provider_is_down() {
    let provider = Provider::start(&["one"]);
    let app = app_refreshing(&provider, Duration::ZERO, Duration::from_millis(100), |_| {}).await;
    assert_eq!(status(&app, &signed("one", claims())).await, StatusCode::OK);
    provider.answer(Answer::Fails);
    let before = provider.fetches();
    eventually(Duration::from_secs(10), "a refresh is tried", || async {
        assert_eq!(status(&app, &signed("one", claims())).await, StatusCode::OK, "the known key serves on");
        provider.fetches() > before
    })
    .await;
}

#[actix_web::test]
async fn the_jwks_fetch_follows_no_redirect_and_reads_no_huge_document() {
    for answer in [Answer::Redirects, Answer::Huge] {
        let provider = Provider::start(&["one"]);
        provider.answer(answer);
        let app = app_trusting(&provider, Duration::ZERO).await;
        // Key two is published only where the redirect points.
        let response = app.get(&signed("two", claims()), "/jobs").await;
        assert_problem(response, StatusCode::SERVICE_UNAVAILABLE, "unavailable").await;
        let response = app.get(&signed("one", claims()), "/jobs").await;
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE, "nothing was read");
    }
}

#[actix_web::test]
async fn a_user_token_that_asks_for_the_operator_or_worker_scope_gets_neither() {
    let provider = Provider::start(&["one"]);
    let app = app_trusting(&provider, Duration::from_secs(30)).await;
    for scope in ["operator", "operator:read", "worker"] {
        let mut asking = claims();
        asking["scope"] = json!(scope);
        asking["types"] = json!(["noop"]);
        let token = signed("one", asking);
        for path in ["/admin/jobs", "/jobs"] {
            let response = app.get(&token, path).await;
            assert_problem(response, StatusCode::FORBIDDEN, "forbidden").await;
        }
        let response = app.post_json(&token, "/worker/v1/claim", json!({"types": ["noop"]})).await;
        assert_problem(response, StatusCode::FORBIDDEN, "forbidden").await;
    }
}

#[actix_web::test]
async fn operators_may_be_required_to_come_from_their_own_issuer() {
    let provider = Provider::start(&["one"]);
    let app = app_refreshing(&provider, Duration::from_secs(30), Duration::from_secs(600), |s| {
        s.auth.operators.issuer = Some("https://ops.idp.test/".into());
        s.auth.operators.audience = Some("errand-admin".into());
    })
    .await;
    let operator = |iss: &str, aud: &str| {
        signed("one", json!({"iss": iss, "aud": aud, "sub": "olga", "scope": "operator", "exp": now_secs() + 300}))
    };
    let users_issuer = operator(ISSUER, AUDIENCE);
    assert_eq!(status_of(&app, &users_issuer, "/admin/jobs").await, StatusCode::UNAUTHORIZED, "the users' issuer");
    let own = operator("https://ops.idp.test/", "errand-admin");
    assert_eq!(status_of(&app, &own, "/admin/jobs").await, StatusCode::OK, "the operators' issuer");
    assert_eq!(status(&app, &signed("one", claims())).await, StatusCode::OK, "users as before");
}

#[actix_web::test]
async fn services_may_be_required_to_carry_an_audience_of_their_own() {
    let provider = Provider::start(&["one"]);
    let app = app_refreshing(&provider, Duration::from_secs(30), Duration::from_secs(600), |s| {
        s.auth.services.audience = Some("errand-services".into());
    })
    .await;
    let service = |aud: &str| {
        signed("one", json!({"iss": ISSUER, "aud": aud, "sub": "billing", "scope": "service", "exp": now_secs() + 300}))
    };
    let for_alice = |token: String| {
        let request = app.http.get(format!("{}/jobs", app.address)).bearer_auth(token);
        request.header("Errand-On-Behalf-Of", "acme/alice").send()
    };
    let users_audience = for_alice(service(AUDIENCE)).await.unwrap();
    assert_eq!(users_audience.status(), StatusCode::UNAUTHORIZED, "a token for users' audience acts for no one");
    let own = for_alice(service("errand-services")).await.unwrap();
    assert_eq!(own.status(), StatusCode::OK, "the services' audience");
}

async fn status_of(app: &TestApp, token: &str, path: &str) -> StatusCode {
    app.get(token, path).await.status()
}
