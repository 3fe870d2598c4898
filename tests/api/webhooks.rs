//! Webhook endpoints: registered, listed and removed by a tenant's admins
//! only, within the tenant, and only where errand may call (SSRF).

use errand::config::Settings;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

fn admin(tenant: &str, user: &str) -> String {
    tenant_admin_token(tenant, user)
}

/// Local endpoints allowed, as a developer's machine would (the rules hold for every other host).
fn local_allowed(s: &mut Settings) {
    s.webhooks.allow_hosts = vec!["127.0.0.1".into()];
}

async fn register(app: &TestApp, caller: &str, body: Value) -> reqwest::Response {
    app.post_json(caller, "/webhooks", body).await
}

async fn listed(app: &TestApp, caller: &str) -> Vec<Value> {
    let response = app.get(caller, "/webhooks").await;
    assert_eq!(response.status(), StatusCode::OK);
    response.json::<Value>().await.unwrap()["webhooks"].as_array().unwrap().clone()
}

#[actix_web::test]
async fn an_admin_registers_an_endpoint_sees_its_secret_once_and_removes_it() {
    let app = TestApp::builder().configure(local_allowed).spawn().await;
    let ada = admin("acme", "ada");
    let body = json!({"url": "http://127.0.0.1:9/hooks", "events": ["job.failed", "job.completed", "job.failed"]});
    let created = register(&app, &ada, body).await;
    assert_eq!(created.status(), StatusCode::CREATED);
    let created: Value = created.json().await.unwrap();
    let secret = created["secret"].as_str().unwrap();
    assert!(secret.starts_with("whsec_"), "{secret}");
    use base64::Engine;
    let key = base64::engine::general_purpose::STANDARD.decode(&secret["whsec_".len()..]).unwrap();
    assert_eq!(key.len(), 32);
    assert_eq!(created["events"], json!(["job.completed", "job.failed"]), "each once, in order");
    assert_eq!((created["enabled"].as_bool(), created["created_by"].as_str()), (Some(true), Some("ada")));

    let list = listed(&app, &ada).await;
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["id"], created["id"]);
    assert!(list[0].get("secret").is_none(), "the secret is shown only once: {}", list[0]);

    let path = format!("/webhooks/{}", created["id"].as_str().unwrap());
    assert_eq!(app.delete(&ada, &path).await.status(), StatusCode::NO_CONTENT);
    assert!(listed(&app, &ada).await.is_empty());
    assert_problem(app.delete(&ada, &path).await, StatusCode::NOT_FOUND, "not_found").await;
}

#[actix_web::test]
async fn other_users_get_403_and_other_tenants_endpoints_are_not_there() {
    let app = TestApp::builder().configure(local_allowed).spawn().await;
    let body = json!({"url": "http://127.0.0.1:9/hooks", "events": ["job.completed"]});
    let created: Value = register(&app, &admin("acme", "ada"), body.clone()).await.json().await.unwrap();
    let path = format!("/webhooks/{}", created["id"].as_str().unwrap());

    let user = token("acme", "bob");
    assert_problem(register(&app, &user, body.clone()).await, StatusCode::FORBIDDEN, "forbidden").await;
    assert_problem(app.get(&user, "/webhooks").await, StatusCode::FORBIDDEN, "forbidden").await;
    assert_problem(app.delete(&user, &path).await, StatusCode::FORBIDDEN, "forbidden").await;

    let stranger = admin("globex", "gil");
    assert!(listed(&app, &stranger).await.is_empty());
    assert_problem(app.delete(&stranger, &path).await, StatusCode::NOT_FOUND, "not_found").await;
    assert_eq!(listed(&app, &admin("acme", "ada")).await.len(), 1, "still there for its own tenant");
}

#[actix_web::test]
async fn endpoints_errand_may_not_call_and_unknown_events_are_refused() {
    let app = TestApp::builder().configure(local_allowed).spawn().await;
    let ada = admin("acme", "ada");
    for (url, events) in [
        ("http://hooks.example.com/in", json!(["job.completed"])),
        ("https://10.0.0.7/in", json!(["job.completed"])),
        ("https://169.254.169.254/latest/meta-data", json!(["job.completed"])),
        ("https://[::1]/in", json!(["job.completed"])),
        ("https://localhost/in", json!(["job.completed"])),
        ("http://127.0.0.1:9/in", json!(["job.started"])),
        ("http://127.0.0.1:9/in", json!([])),
        ("not a url", json!(["job.completed"])),
    ] {
        let refused = register(&app, &ada, json!({"url": url, "events": events})).await;
        assert_problem(refused, StatusCode::UNPROCESSABLE_ENTITY, "invalid_webhook").await;
    }
    assert!(listed(&app, &ada).await.is_empty());
}

#[actix_web::test]
async fn a_tenant_has_at_most_its_cap_of_endpoints() {
    let app = TestApp::builder()
        .configure(local_allowed)
        .configure(|s| s.webhooks.max_endpoints_per_tenant = std::num::NonZeroUsize::new(2).unwrap())
        .spawn()
        .await;
    let ada = admin("acme", "ada");
    let body = json!({"url": "http://127.0.0.1:9/hooks", "events": ["job.completed"]});
    for _ in 0..2 {
        assert_eq!(register(&app, &ada, body.clone()).await.status(), StatusCode::CREATED);
    }
    assert_problem(register(&app, &ada, body.clone()).await, StatusCode::UNPROCESSABLE_ENTITY, "invalid_webhook").await;
    assert_eq!(register(&app, &admin("globex", "gil"), body).await.status(), StatusCode::CREATED, "per tenant");
}
