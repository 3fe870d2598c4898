//! `GET /jobs/{id}` and `GET /jobs`: only ever the caller's own jobs.

use std::collections::HashSet;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

#[actix_web::test]
async fn a_job_shows_every_contract_field() {
    let app = spawn_app().await;
    let alice = token("acme", "alice");
    let id = app.create(&alice, "noop", json!({"a": 1})).await;
    let job = app.wait_until_finished(&alice, &id, Duration::from_secs(10)).await;
    for field in
        ["id", "type", "status", "params", "result_url", "error_message", "attempts", "created_at", "completed_at"]
    {
        assert!(job.get(field).is_some(), "missing {field}: {job}");
    }
    assert_eq!(job["status"], "completed");
    assert_eq!(job["attempts"], 1);
    assert!(chrono::DateTime::parse_from_rfc3339(job["completed_at"].as_str().unwrap()).is_ok());
}

#[actix_web::test]
async fn anything_but_the_callers_own_job_is_the_same_404() {
    let app = spawn_app().await;
    let id = app.create(&token("acme", "alice"), "noop", json!({})).await;
    let random = uuid::Uuid::now_v7().to_string();
    let attempts = [
        (token("acme", "bob"), id.clone()),
        (token("globex", "alice"), id.clone()),
        (token("acme", "alice"), random),
        (token("acme", "alice"), "not-a-uuid".to_owned()),
        (token("acme", "alice"), "%20".to_owned()),
    ];
    let mut bodies = HashSet::new();
    for (caller, path_id) in attempts {
        let response = app.get(&caller, &format!("/jobs/{path_id}")).await;
        let body = assert_problem(response, StatusCode::NOT_FOUND, "not_found").await;
        bodies.insert(body.to_string());
    }
    assert_eq!(bodies.len(), 1, "every 404 must look the same: {bodies:?}");
}

async fn list(app: &TestApp, caller: &str, query: &str) -> Value {
    let response = app.get(caller, &format!("/jobs{query}")).await;
    assert_eq!(response.status(), StatusCode::OK, "{query}");
    response.json().await.unwrap()
}

#[actix_web::test]
async fn the_list_pages_through_the_callers_jobs_newest_first() {
    let app = spawn_app().await;
    let alice = token("acme", "alice");
    let mut created = Vec::new();
    for i in 0..7 {
        created.push(app.create(&alice, "noop", json!({ "i": i })).await);
    }
    app.create(&token("acme", "bob"), "noop", json!({})).await;
    app.create(&token("globex", "alice"), "noop", json!({})).await;

    let mut seen = Vec::new();
    let mut query = "?limit=3".to_owned();
    loop {
        let page = list(&app, &alice, &query).await;
        let jobs = page["jobs"].as_array().unwrap();
        assert!(jobs.len() <= 3);
        seen.extend(jobs.iter().map(|j| j["id"].as_str().unwrap().to_owned()));
        match page["next_cursor"].as_str() {
            Some(cursor) => query = format!("?limit=3&cursor={cursor}"),
            None => break,
        }
    }
    created.reverse();
    assert_eq!(seen, created, "all of alice's jobs, newest first, each once");
}

#[actix_web::test]
async fn the_list_filters_by_status_and_type() {
    let app = spawn_app().await;
    let alice = token("acme", "alice");
    let done = app.create(&alice, "noop", json!({})).await;
    app.wait_until_finished(&alice, &done, Duration::from_secs(10)).await;
    let slow = app.create(&alice, "sleep", json!({"ms": 60000})).await;

    let completed = list(&app, &alice, "?status=completed").await;
    assert_eq!(completed["jobs"].as_array().unwrap().len(), 1);
    assert_eq!(completed["jobs"][0]["id"], done.as_str());
    let processing = list(&app, &alice, "?status=processing&type=sleep").await;
    assert_eq!(processing["jobs"][0]["id"], slow.as_str());
    let none = list(&app, &alice, "?type=sleep&status=completed").await;
    assert_eq!(none["jobs"], json!([]));
    assert_eq!(none["next_cursor"], Value::Null);
}

#[actix_web::test]
async fn bad_list_parameters_are_400() {
    let app = spawn_app().await;
    let alice = token("acme", "alice");
    for query in ["?limit=0", "?limit=101", "?limit=ten", "?status=done", "?cursor=nonsense"] {
        let response = app.get(&alice, &format!("/jobs{query}")).await;
        assert_problem(response, StatusCode::BAD_REQUEST, "bad_request").await;
    }
    let default_and_max = [("", 20), ("?limit=100", 100)];
    for _ in 0..25 {
        app.create(&alice, "noop", json!({})).await;
    }
    for (query, expected) in default_and_max {
        let page = list(&app, &alice, query).await;
        assert_eq!(page["jobs"].as_array().unwrap().len(), expected.min(25), "{query}");
    }
}

#[actix_web::test]
async fn unknown_routes_are_problem_404s() {
    let app = spawn_app().await;
    let response = app.get(&token("acme", "alice"), "/nothing/here").await;
    assert_problem(response, StatusCode::NOT_FOUND, "not_found").await;
}

#[actix_web::test]
async fn a_type_filter_that_cannot_name_a_job_type_is_400() {
    let app = spawn_app().await;
    let alice = token("acme", "alice");
    for filter in ["%00", "noop%00", "NOOP", "no%20op"] {
        let response = app.get(&alice, &format!("/jobs?type={filter}")).await;
        assert_problem(response, reqwest::StatusCode::BAD_REQUEST, "bad_request").await;
    }
    let fine = app.get(&alice, "/jobs?type=noop").await;
    assert_eq!(fine.status(), reqwest::StatusCode::OK);
}

#[actix_web::test]
async fn connections_cut_under_the_api_give_retries_or_503s_never_500s() {
    let app = spawn_app().await;
    let alice = token("acme", "alice");
    app.create(&alice, "noop", json!({})).await;
    let database = app.db.name.clone();
    let admin = app.db.client().await;
    for round in 0..5 {
        // Every connection errand holds to this database is cut.
        admin
            .execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
                &[&database],
            )
            .await
            .unwrap();
        for path in ["/jobs", "/notifications"] {
            let response = app.get(&alice, path).await;
            let status = response.status();
            assert!(
                status == StatusCode::OK || status == StatusCode::SERVICE_UNAVAILABLE,
                "round {round}, {path}: {status} {}",
                response.text().await.unwrap_or_default()
            );
        }
        let key = format!("after-cut-{round}");
        let created = app.submit(&alice, "noop", &key, json!({})).await.status();
        assert!(
            matches!(created, StatusCode::ACCEPTED | StatusCode::OK | StatusCode::SERVICE_UNAVAILABLE),
            "round {round}: {created}"
        );
    }
    let after = app.get(&alice, "/jobs").await;
    assert_eq!(after.status(), StatusCode::OK, "errand recovers without a restart");
}

#[actix_web::test]
async fn every_answer_carries_a_request_id_taken_from_the_caller_when_sensible() {
    let app = spawn_app().await;
    let alice = token("acme", "alice");
    let get = |id: Option<&'static str>| {
        let mut request = app.http.get(format!("{}/jobs", app.address)).bearer_auth(&alice);
        if let Some(id) = id {
            request = request.header("X-Request-Id", id);
        }
        request.send()
    };
    let echoed = get(Some("client-req-7")).await.unwrap();
    assert_eq!(echoed.headers()["x-request-id"], "client-req-7");
    let fresh = get(None).await.unwrap();
    let made = fresh.headers()["x-request-id"].to_str().unwrap().to_owned();
    assert!(uuid::Uuid::parse_str(&made).is_ok(), "{made}");
    let refused = get(Some("two words")).await.unwrap();
    assert_ne!(refused.headers()["x-request-id"], "two words");
    let unauthorized = app.get_without_token("/jobs").await;
    assert!(unauthorized.headers().contains_key("x-request-id"), "errors carry one too");
}

#[actix_web::test]
async fn the_openapi_document_lists_every_route_and_an_operation_per_job_type() {
    let app = spawn_app().await;
    let response = app.get_without_token("/openapi.json").await;
    assert_eq!(response.status(), StatusCode::OK);
    let doc: Value = response.json().await.unwrap();
    assert_eq!(doc["openapi"], "3.1.0");
    let paths = doc["paths"].as_object().unwrap();
    for (path, method) in [
        ("/jobs/{job_type}", "post"),
        ("/jobs", "get"),
        ("/jobs/{id}", "get"),
        ("/jobs/{id}/result", "get"),
        ("/files/{key}", "get"),
        ("/notifications", "get"),
        ("/notifications/{id}/read", "post"),
        ("/notifications/read-all", "post"),
        ("/notifications/stream-tickets", "post"),
        ("/notifications/stream", "get"),
        ("/healthz", "get"),
        ("/readyz", "get"),
        ("/metrics", "get"),
    ] {
        assert!(paths.get(path).is_some_and(|p| p.get(method).is_some()), "{method} {path} is documented");
    }
    let sleep = &paths["/jobs/sleep"]["post"];
    assert_eq!(sleep["operationId"], "create_sleep");
    let schema = &sleep["requestBody"]["content"]["application/json"]["schema"];
    assert_eq!(schema["properties"]["ms"]["type"], "integer", "{schema}");
    let export = &paths["/jobs/export_sales_report"]["post"]["requestBody"]["content"]["application/json"]["schema"];
    assert_eq!(export["properties"]["from"]["format"], "date");
    let submit = &sleep["responses"];
    for status in ["202", "200", "400", "401", "413", "422", "503"] {
        assert!(submit.get(status).is_some(), "submit documents {status}");
    }
    assert!(submit["422"]["content"].get("application/problem+json").is_some(), "{submit}");
    assert!(sleep["parameters"].as_array().unwrap().iter().any(|p| p["name"] == "Idempotency-Key"));
    assert_eq!(doc["components"]["securitySchemes"]["bearer"]["scheme"], "bearer");
    assert_eq!(doc["components"]["schemas"]["Problem"]["properties"]["code"]["type"], "string");
}

#[actix_web::test]
async fn a_known_path_asked_with_another_method_is_405_and_an_unknown_one_404() {
    let app = spawn_app().await;
    let alice = token("acme", "alice");
    let trace = app
        .http
        .request(reqwest::Method::from_bytes(b"TRACE").unwrap(), format!("{}/healthz", app.address))
        .send()
        .await
        .unwrap();
    assert_eq!(trace.headers()["allow"], "GET, HEAD");
    assert_problem(trace, StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed").await;
    let delete = app.http.delete(format!("{}/jobs", app.address)).bearer_auth(&alice).send().await.unwrap();
    assert_problem(delete, StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed").await;
    let read_a_type = app.get(&alice, "/jobs/noop").await;
    assert_eq!(read_a_type.headers()["allow"], "POST");
    assert_problem(read_a_type, StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed").await;
    let nowhere = app.get_without_token("/nowhere").await;
    assert_problem(nowhere, StatusCode::NOT_FOUND, "not_found").await;
}

#[actix_web::test]
async fn the_api_page_renders_the_document_with_a_bundle_errand_serves_itself() {
    let app = spawn_app().await;
    let page = app.get_without_token("/docs").await;
    assert_eq!(page.status(), StatusCode::OK);
    assert!(page.headers()["content-type"].to_str().unwrap().starts_with("text/html"));
    let policy = page.headers()["content-security-policy"].to_str().unwrap().to_owned();
    assert!(policy.contains("script-src 'self'") && policy.contains("img-src 'self' data:"), "{policy}");
    let html = page.text().await.unwrap();
    assert!(html.contains(r#"spec-url="openapi.json""#), "{html}");
    // Every script is errand's own (relative), none from a CDN.
    let scripts: Vec<&str> = html.split("<script src=\"").skip(1).map(|s| s.split('"').next().unwrap()).collect();
    assert_eq!(scripts.len(), 1, "{html}");
    assert!(!scripts[0].contains("//"), "{}", scripts[0]);
    let bundle = app.get_without_token(&format!("/{}", scripts[0])).await;
    assert_eq!(bundle.status(), StatusCode::OK);
    assert!(bundle.headers()["content-type"].to_str().unwrap().starts_with("text/javascript"));
    assert!(bundle.headers()["cache-control"].to_str().unwrap().contains("immutable"));
    assert!(bundle.bytes().await.unwrap().len() > 100_000, "the whole bundle");
}

#[actix_web::test]
async fn pages_files_and_probes_answer_head_with_the_gets_headers_and_no_body() {
    let app = spawn_app().await;
    // Ready once the listener listens too, a moment after start-up.
    eventually(std::time::Duration::from_secs(10), "the app is ready", || async {
        app.get_without_token("/readyz").await.status() == StatusCode::OK
    })
    .await;
    for path in ["/", "/client/errand.js", "/openapi.json", "/healthz", "/readyz"] {
        let get = app.get_without_token(path).await;
        let head = app.http.head(format!("{}{path}", app.address)).send().await.unwrap();
        assert_eq!((head.status(), get.status()), (StatusCode::OK, StatusCode::OK), "{path}");
        assert_eq!(head.headers().get("content-type"), get.headers().get("content-type"), "{path}");
        assert!(head.bytes().await.unwrap().is_empty(), "{path}");
    }
    // A route whose GET reads data is not one of them.
    let jobs = app.http.head(format!("{}/jobs", app.address)).bearer_auth(token("acme", "alice")).send().await.unwrap();
    assert_eq!((jobs.status(), jobs.headers()["allow"].to_str().unwrap()), (StatusCode::METHOD_NOT_ALLOWED, "GET"));
}

#[actix_web::test]
async fn the_demo_page_and_the_browser_client_are_errands_own_files() {
    let app = spawn_app().await;
    let page = app.get_without_token("/").await;
    assert_eq!(page.status(), StatusCode::OK);
    assert!(page.headers()["content-type"].to_str().unwrap().starts_with("text/html"));
    let policy = page.headers()["content-security-policy"].to_str().unwrap().to_owned();
    assert!(policy.contains("default-src 'none'") && policy.contains("script-src 'self'"), "{policy}");
    let html = page.text().await.unwrap();
    // Every script and style the page loads is one of errand's, none from elsewhere.
    let sources: Vec<&str> = ["src=\"", "href=\""]
        .iter()
        .flat_map(|attr| html.split(attr).skip(1).map(|s| s.split('"').next().unwrap()))
        .filter(|url| url.ends_with(".js") || url.ends_with(".css"))
        .collect();
    assert!(sources.iter().any(|s| s.ends_with(".js")), "{html}");
    for source in sources {
        assert!(source.starts_with("/client/"), "{source}");
        let file = app.get_without_token(source).await;
        assert_eq!(file.status(), StatusCode::OK, "{source}");
    }
    let client = app.get_without_token("/client/errand.js").await;
    assert_eq!(client.headers()["content-type"], "text/javascript; charset=utf-8");
    assert!(client.text().await.unwrap().contains("export "), "an ES module");
    let elsewhere = app.get_without_token("/client/../config.toml").await;
    assert_problem(elsewhere, StatusCode::NOT_FOUND, "not_found").await;
    let unknown = app.get_without_token("/client/secrets.js").await;
    assert_problem(unknown, StatusCode::NOT_FOUND, "not_found").await;
}
