//! The `http` job kind against a small real HTTP server started here: errand
//! POSTs each attempt, signed; 2xx completes, 4xx fails for good, 5xx retries.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};
use errand::jobs::HandlerRegistry;
use serde_json::{Value, json};

use crate::helpers::*;

const WITHIN: Duration = Duration::from_secs(20);
const SIGNING_SECRET: &str = "the-apps-own-signing-secret-0123456789";

/// The app: checks each push's signature, then answers as the job's params
/// say (`answer`, after `fail_first` answers of 503), counting pushes per job.
#[derive(Clone, Default)]
struct Pushes {
    pushes: Arc<Mutex<HashMap<String, u32>>>,
    /// Each job's pushes' `traceparent` headers, in order.
    traces: Arc<Mutex<HashMap<String, Vec<Option<String>>>>>,
}

async fn receive(req: HttpRequest, body: web::Bytes, app: web::Data<Pushes>) -> HttpResponse {
    let header = req.headers().get("errand-signature").and_then(|v| v.to_str().ok()).unwrap_or_default();
    let timestamp: u64 = header.split(',').find_map(|p| p.strip_prefix("t=")).and_then(|t| t.parse().ok()).unwrap_or(0);
    if errand::jobs::push_signature(SIGNING_SECRET.as_bytes(), timestamp, &body) != header
        || now_secs().abs_diff(timestamp) > 300
    {
        return HttpResponse::Unauthorized().body("bad signature");
    }
    let push: Value = serde_json::from_slice(&body).unwrap();
    let job = &push["job"];
    let trace = req.headers().get("traceparent").and_then(|v| v.to_str().ok()).map(str::to_owned);
    app.traces.lock().unwrap().entry(job["id"].as_str().unwrap().to_owned()).or_default().push(trace);
    assert!(push["lease_id"].is_string() && push["worker_api"]["token"].is_string(), "{push}");
    let n = {
        let mut pushes = app.pushes.lock().unwrap();
        let n = pushes.entry(job["id"].as_str().unwrap().to_owned()).or_default();
        *n += 1;
        *n
    };
    if u64::from(n) <= job["params"]["fail_first"].as_u64().unwrap_or(0) {
        return HttpResponse::ServiceUnavailable().finish();
    }
    match (job["params"]["answer"].as_u64().unwrap_or(200), job["params"]["shape"].as_str()) {
        (422, _) => HttpResponse::UnprocessableEntity().body("invoice 42 does not exist"),
        (302, _) => HttpResponse::Found().insert_header(("location", "/errand")).finish(),
        (_, Some("huge")) => HttpResponse::Ok().json(json!({"pad": "x".repeat(100_000)})),
        (_, Some("expiring")) => HttpResponse::Ok().json(json!({"expires_at": "soon"})),
        _ => HttpResponse::Ok().json(json!({"pages": 2, "attempt": job["attempt"]})),
    }
}

#[actix_web::test]
async fn pushed_jobs_complete_fail_for_good_or_retry_as_the_app_answers() {
    let received = Pushes::default();
    let data = web::Data::new(received.clone());
    let server = HttpServer::new(move || App::new().app_data(data.clone()).route("/errand", web::post().to(receive)))
        .workers(1)
        .bind("127.0.0.1:0")
        .unwrap();
    let port = server.addrs()[0].port();
    let server = server.run();
    let handle = server.handle();
    actix_web::rt::spawn(server);

    let app = spawn_app_with(
        move |s| {
            let mut push = job_type("http");
            push.http = Some(errand::config::PushSettings {
                url: errand::config::HttpUrl::parse(&format!("http://127.0.0.1:{port}/errand")).unwrap(),
                signing_secret: SIGNING_SECRET.to_owned().try_into().unwrap(),
            });
            s.job_types.insert("render_invoice".into(), push);
        },
        HandlerRegistry::builtin(),
    )
    .await;
    let alice = token("acme", "alice");
    let done = app.create(&alice, "render_invoice", json!({"answer": 200})).await;
    let refused = app.create(&alice, "render_invoice", json!({"answer": 422})).await;
    let click = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let traced = app
        .http()
        .post(format!("{}/jobs/render_invoice", app.address()))
        .bearer_auth(&alice)
        .header("Idempotency-Key", "traced")
        .header("traceparent", click)
        .json(&json!({"answer": 200, "fail_first": 1}))
        .send()
        .await
        .unwrap();
    let flaky = id_of(traced).await;

    let job = app.wait_until_finished(&alice, &done, WITHIN).await;
    assert_eq!((job["status"].as_str(), job["result"]["pages"].as_u64()), (Some("completed"), Some(2)), "{job}");
    let job = app.wait_until_finished(&alice, &refused, WITHIN).await;
    assert_eq!((job["status"].as_str(), job["attempts"].as_i64()), (Some("failed"), Some(1)), "{job}");
    assert!(job["error_message"].as_str().unwrap().contains("invoice 42 does not exist"), "{job}");
    let job = app.wait_until_finished(&alice, &flaky, WITHIN).await;
    assert_eq!((job["status"].as_str(), job["attempts"].as_i64()), (Some("completed"), Some(2)), "{job}");
    assert_eq!(job["result"]["attempt"], 2);
    let pushes = received.pushes.lock().unwrap().clone();
    assert_eq!((pushes[&done], pushes[&refused], pushes[&flaky]), (1, 1, 2), "one push per attempt");
    // The app continues the click's trace on the first attempt (passed on as
    // it came: this errand exports no spans); a retry is a trace of its own.
    let traces = received.traces.lock().unwrap().clone();
    assert_eq!(traces[&flaky], [Some(click.to_owned()), None]);
    assert_eq!(traces[&done], [None]);

    // What an app answers is held to what a worker's end may say.
    for (params, error) in [
        (json!({"shape": "huge"}), "longer than 65536 bytes"),
        (json!({"shape": "expiring"}), "`expires_at`"),
        (json!({"answer": 302}), "HTTP 302"),
    ] {
        let id = app.create(&alice, "render_invoice", params).await;
        let job = app.wait_until_finished(&alice, &id, WITHIN).await;
        assert_eq!(job["status"], "failed", "{job}");
        assert!(job["error_message"].as_str().unwrap().contains(error), "{job}");
    }
    handle.stop(false).await;
}
