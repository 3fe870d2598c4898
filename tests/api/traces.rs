//! One trace from click to webhook: errand's spans, exported with OTLP to a
//! receiver of the test's own (decoded with the OpenTelemetry protocol's
//! definitions), continue the caller's `traceparent` across the queue; a
//! retry is a trace of its own, linked to the click's. Without an exporter,
//! the caller's `traceparent` still reaches the job's webhook receiver and
//! its external worker.

use std::time::Duration;

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use opentelemetry_proto::tonic::trace::v1::Span;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use prost::Message;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

const CLICK_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLICK_SPAN: &str = "00f067aa0ba902b7";

fn click() -> String {
    format!("00-{CLICK_TRACE}-{CLICK_SPAN}-01")
}

/// An errand process exporting its spans to `otlp`, delivering webhooks to
/// loopback, with `more` settings.
fn exporting_process(db: &TestDb, otlp: &Receiver, more: &[(&str, &str)]) -> ErrandProcess {
    let endpoint = otlp.url.trim_end_matches("/hooks").to_owned();
    let mut env = vec![
        ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
        ("OTEL_BSP_SCHEDULE_DELAY", "50"),
        ("ERRAND_WEBHOOKS__ALLOW_HOSTS", "127.0.0.1"),
        ("ERRAND_WEBHOOKS__POLL_INTERVAL", "50ms"),
    ];
    env.extend_from_slice(more);
    ErrandProcess::start(db, &env)
}

/// `POST /jobs/{job_type}` as a browser in a traced page sends it.
async fn submit_traced(api: &impl Api, token: &str, job_type: &str, params: Value) -> String {
    let response = api
        .http()
        .post(format!("{}/jobs/{job_type}", api.address()))
        .bearer_auth(token)
        .header("Idempotency-Key", uuid::Uuid::new_v4().to_string())
        .header("traceparent", click())
        .header("tracestate", "vendor=kept")
        .json(&params)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    id_of(response).await
}

/// Every span the receiver got so far.
fn spans(otlp: &Receiver) -> Vec<Span> {
    otlp.received()
        .iter()
        .filter_map(|request| ExportTraceServiceRequest::decode(request.body.as_slice()).ok())
        .flat_map(|export| export.resource_spans)
        .flat_map(|resource| resource.scope_spans)
        .flat_map(|scope| scope.spans)
        .collect()
}

/// Waits until a span named `name` of `trace` (hex) has been exported, and answers it.
async fn exported(otlp: &Receiver, trace: &str, name: &str) -> Span {
    let found = || spans(otlp).into_iter().find(|s| hex::encode(&s.trace_id) == trace && s.name == name);
    eventually(Duration::from_secs(20), &format!("span {name:?} of trace {trace}"), || async { found().is_some() })
        .await;
    found().unwrap()
}

fn attribute(span: &Span, key: &str) -> Option<String> {
    span.attributes.iter().find(|kv| kv.key == key).and_then(|kv| match kv.value.as_ref()?.value.as_ref()? {
        AnyValue::StringValue(s) => Some(s.clone()),
        AnyValue::IntValue(i) => Some(i.to_string()),
        _ => None,
    })
}

async fn register_webhook(api: &impl Api, receiver: &Receiver) {
    let body = json!({"url": receiver.url, "events": ["job.completed"]});
    let response = api.post_json(&tenant_admin_token("acme", "ada"), "/webhooks", body).await;
    assert_eq!(response.status(), StatusCode::CREATED);
}

#[actix_web::test]
async fn one_click_s_trace_holds_the_request_the_attempt_and_the_webhook_delivery() {
    let (db, otlp, hooks, mail) =
        (TestDb::create().await, Receiver::start([]), Receiver::start([]), MailServer::start().await);
    let smtp_port = mail.smtp_port.to_string();
    let email = [("ERRAND_EMAIL__ENABLED", "true"), ("ERRAND_EMAIL__SMTP_PORT", smtp_port.as_str())];
    let errand = exporting_process(&db, &otlp, &email);
    register_webhook(&errand, &hooks).await;
    let alice = token_for("acme", "alice", "alice@example.com");

    let id = submit_traced(&errand, &alice, "noop", json!({})).await;
    errand.wait_until_finished(&alice, &id, Duration::from_secs(20)).await;

    let request = exported(&otlp, CLICK_TRACE, "POST /jobs/{id_or_type}").await;
    assert_eq!(hex::encode(&request.parent_span_id), CLICK_SPAN, "the request continues the caller's span");
    assert_eq!(request.kind, SpanKind::Server as i32);
    assert_eq!(request.trace_state, "vendor=kept");
    assert_eq!(attribute(&request, "http.response.status_code").as_deref(), Some("202"));

    let record = exported(&otlp, CLICK_TRACE, "create noop").await;
    assert_eq!(record.parent_span_id, request.span_id, "recording the job is part of the request");
    assert_eq!(record.kind, SpanKind::Producer as i32);
    assert_eq!(attribute(&record, "messaging.message.id").as_deref(), Some(id.as_str()));

    let attempt = exported(&otlp, CLICK_TRACE, "process noop").await;
    assert_eq!(attempt.parent_span_id, record.span_id, "the first attempt follows the recording");
    assert_eq!(attempt.kind, SpanKind::Consumer as i32);
    assert_eq!(attribute(&attempt, "messaging.system").as_deref(), Some("errand"));
    assert_eq!(attribute(&attempt, "messaging.message.id").as_deref(), Some(id.as_str()));
    assert_eq!(attribute(&attempt, "tenant").as_deref(), Some("acme"), "the tenant is an attribute of the span");

    let delivery = exported(&otlp, CLICK_TRACE, "send job.completed").await;
    assert_eq!(delivery.parent_span_id, record.span_id);
    assert_eq!(delivery.kind, SpanKind::Client as i32);
    let sent = hooks.received();
    let header = sent.first().map(|r| r.headers["traceparent"].clone()).unwrap_or_default();
    let expected = format!("00-{CLICK_TRACE}-{}-01", hex::encode(&delivery.span_id));
    assert_eq!(header, expected, "the receiver continues the delivery's span");
    let email = exported(&otlp, CLICK_TRACE, "send email").await;
    assert_eq!(email.parent_span_id, record.span_id, "the email is part of the click's trace too");

    // The actors' own work (polls, batches of submissions) starts no trace of its own.
    let names: Vec<String> =
        spans(&otlp).iter().filter(|s| s.parent_span_id.is_empty()).map(|s| s.name.clone()).collect();
    assert!(names.iter().all(|name| name.contains(' ')), "roots are requests, attempts and deliveries: {names:?}");
}

#[actix_web::test]
async fn the_claim_that_took_a_job_links_its_recording_and_the_job_s_wait_names_its_trace() {
    let (db, otlp) = (TestDb::create().await, Receiver::start([]));
    let errand = exporting_process(&db, &otlp, &[]);
    let alice = token("acme", "alice");
    let id = submit_traced(&errand, &alice, "noop", json!({})).await;
    errand.wait_until_finished(&alice, &id, Duration::from_secs(20)).await;

    let record = exported(&otlp, CLICK_TRACE, "create noop").await;
    let links_record =
        |span: &Span| span.links.iter().any(|l| hex::encode(&l.trace_id) == CLICK_TRACE && l.span_id == record.span_id);
    let found = || spans(&otlp).into_iter().find(|s| s.name == "claim noop" && links_record(s));
    eventually(Duration::from_secs(20), "a claim span linking the job's recording", || async { found().is_some() })
        .await;
    let claim = found().unwrap();
    assert!(claim.parent_span_id.is_empty(), "one claim serves many clicks: a trace of its own");
    assert_ne!(hex::encode(&claim.trace_id), CLICK_TRACE);
    assert_eq!(claim.kind, SpanKind::Client as i32);
    assert_eq!(attribute(&claim, "messaging.operation.type").as_deref(), Some("receive"));
    assert_eq!(attribute(&claim, "messaging.batch.message_count").as_deref(), Some("1"));

    // Prometheus asks for OpenMetrics first: there the wait's bucket names the click's trace.
    let accept = "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
    let response =
        errand.http().get(format!("{}/metrics", errand.address())).header("Accept", accept).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let content_type = response.headers()["content-type"].to_str().unwrap().to_owned();
    assert!(content_type.starts_with("application/openmetrics-text"), "{content_type}");
    let text = response.text().await.unwrap();
    let exemplar = format!("# {{trace_id=\"{CLICK_TRACE}\"}}");
    let bucket = text.lines().find(|l| {
        l.starts_with("errand_job_wait_seconds_bucket{") && l.contains("job_type=\"noop\"") && l.contains(&exemplar)
    });
    assert!(bucket.is_some(), "no wait bucket of noop names the click's trace in:\n{text}");
    assert!(text.ends_with("# EOF\n"));
    // Anything else gets the Prometheus text format, without exemplars.
    let plain = errand.get_without_token("/metrics").await.text().await.unwrap();
    assert!(plain.contains("errand_job_wait_seconds_count{job_type=\"noop\"}") && !plain.contains(&exemplar));
}

#[actix_web::test]
async fn an_http_push_is_a_client_span_of_its_attempt_which_the_app_continues() {
    let (db, otlp, app) = (TestDb::create().await, Receiver::start([]), Receiver::start([]));
    let errand = exporting_process(
        &db,
        &otlp,
        &[
            ("ERRAND_JOB_TYPES__RENDER_INVOICE__HANDLER", "http"),
            ("ERRAND_JOB_TYPES__RENDER_INVOICE__HTTP__URL", app.url.as_str()),
            ("ERRAND_JOB_TYPES__RENDER_INVOICE__HTTP__SIGNING_SECRET", "the-apps-own-signing-secret-0123456789"),
        ],
    );
    let alice = token("acme", "alice");
    let id = submit_traced(&errand, &alice, "render_invoice", json!({})).await;
    let job = errand.wait_until_finished(&alice, &id, Duration::from_secs(20)).await;
    assert_eq!(job["status"], "completed", "{job}");

    let attempt = exported(&otlp, CLICK_TRACE, "process render_invoice").await;
    let push = exported(&otlp, CLICK_TRACE, "push render_invoice").await;
    assert_eq!(push.parent_span_id, attempt.span_id, "the push is part of its attempt");
    assert_eq!(push.kind, SpanKind::Client as i32);
    assert_eq!(attribute(&push, "http.response.status_code").as_deref(), Some("200"));
    let header = app.received().first().map(|r| r.headers["traceparent"].clone()).unwrap_or_default();
    assert_eq!(header, format!("00-{CLICK_TRACE}-{}-01", hex::encode(&push.span_id)), "the app continues the push");
}

#[actix_web::test]
async fn a_retry_is_a_trace_of_its_own_linked_to_the_click() {
    let (db, otlp) = (TestDb::create().await, Receiver::start([]));
    let errand = exporting_process(&db, &otlp, &[]);
    let alice = token("acme", "alice");

    let id = submit_traced(&errand, &alice, "sleep", json!({"ms": 0, "fail_times": 1})).await;
    let job = errand.wait_until_finished(&alice, &id, Duration::from_secs(30)).await;
    assert_eq!(job["attempts"], 2);

    let record = exported(&otlp, CLICK_TRACE, "create sleep").await;
    let first = exported(&otlp, CLICK_TRACE, "process sleep").await;
    assert_eq!(attribute(&first, "attempt").as_deref(), Some("1"));
    assert_eq!(first.status.as_ref().map(|s| s.code), Some(2), "the failed attempt's span is an error");
    let retry = || {
        spans(&otlp).into_iter().find(|s| s.name == "process sleep" && attribute(s, "attempt").as_deref() == Some("2"))
    };
    eventually(Duration::from_secs(20), "the retry's span", || async { retry().is_some() }).await;
    let retry = retry().unwrap();
    assert_ne!(hex::encode(&retry.trace_id), CLICK_TRACE, "a retry starts a trace of its own");
    assert!(retry.parent_span_id.is_empty(), "as its root");
    let linked: Vec<_> = retry.links.iter().map(|l| (hex::encode(&l.trace_id), l.span_id.clone())).collect();
    assert_eq!(linked, [(CLICK_TRACE.to_owned(), record.span_id.clone())], "linked to the click's recording");
}

#[actix_web::test]
async fn without_an_exporter_the_caller_s_traceparent_reaches_the_webhook_and_the_external_worker() {
    let app = spawn_app_with(
        |s| {
            s.job_types.insert("render_invoice".into(), job_type("external"));
            s.webhooks.allow_hosts = vec!["127.0.0.1".into()];
            s.webhooks.poll_interval = Duration::from_millis(50);
            s.telemetry.trace_url = Some("https://tempo.example.com/trace/{trace_id}".into());
        },
        errand::jobs::HandlerRegistry::builtin(),
    )
    .await;
    let hooks = Receiver::start([]);
    register_webhook(&app, &hooks).await;
    let alice = token("acme", "alice");

    let id = submit_traced(&app, &alice, "render_invoice", json!({})).await;
    let worker = crate::worker_api::worker_token(&["render_invoice"]);
    let claimed: Value = app.post_json(&worker, "/worker/v1/claim", json!({"wait": 5})).await.json().await.unwrap();
    let job = &claimed["jobs"][0];
    assert_eq!(job["id"], id.as_str());
    assert_eq!(job["traceparent"], click().as_str(), "a first attempt continues the click");
    let lease = job["lease_id"].as_str().unwrap();
    let done = app.post_json(&worker, &format!("/worker/v1/jobs/{id}/complete"), json!({"lease_id": lease})).await;
    assert_eq!(done.status(), StatusCode::OK);

    eventually(Duration::from_secs(10), "the webhook", || async { !hooks.received().is_empty() }).await;
    assert_eq!(hooks.received()[0].headers["traceparent"], click(), "passed on as it came");

    // Operators see the click's trace, as a link to the tracing backend.
    let detail: Value = app.get(&operator_token("olga"), &format!("/admin/jobs/{id}")).await.json().await.unwrap();
    let page = format!("https://tempo.example.com/trace/{CLICK_TRACE}");
    assert_eq!(detail["history"]["trace"], json!({"trace_id": CLICK_TRACE, "url": page}));
}

#[actix_web::test]
async fn an_export_s_query_and_uploads_are_spans_of_its_attempt() {
    let (db, otlp, results) = (TestDb::create().await, Receiver::start([]), TempDir::named("traced-export"));
    let store = errand::store::Store::connect(&db.url, 2).unwrap();
    errand::store::demo::seed(&store, 1, 50).await.unwrap();
    let errand = exporting_process(&db, &otlp, &[("ERRAND_STORAGE__LOCAL_DIR", results.to_str().unwrap())]);
    let dana = token("demo-1", "dana");

    let id =
        submit_traced(&errand, &dana, "export_sales_report", json!({"from": "2000-01-01", "to": "2100-01-01"})).await;
    let job = errand.wait_until_finished(&dana, &id, Duration::from_secs(30)).await;
    assert_eq!(job["status"], "completed", "{job}");

    let attempt = exported(&otlp, CLICK_TRACE, "process export_sales_report").await;
    let export = exported(&otlp, CLICK_TRACE, "export csv").await;
    assert_eq!(export.parent_span_id, attempt.span_id, "the export is part of its attempt");
    assert_eq!(attribute(&export, "rows"), Some(job["result"]["row_count"].to_string()));
    let upload = exported(&otlp, CLICK_TRACE, "upload part").await;
    assert_eq!(upload.parent_span_id, export.span_id, "its uploads are part of the export");
}

#[actix_web::test]
async fn a_schedule_s_occurrence_and_a_run_an_operator_retried_link_to_the_click_and_do_not_continue_it() {
    let app = spawn_app_with(
        |s| {
            let mut external = job_type("external");
            external.schedulable = true;
            s.job_types.insert("render_invoice".into(), external);
        },
        errand::jobs::HandlerRegistry::builtin(),
    )
    .await;
    let (alice, worker, ops) =
        (token("acme", "alice"), crate::worker_api::worker_token(&["render_invoice"]), operator_token("olga"));
    let claim_one = || async {
        let claimed: Value = app.post_json(&worker, "/worker/v1/claim", json!({"wait": 5})).await.json().await.unwrap();
        claimed["jobs"][0].clone()
    };

    // A schedule made in a traced request: its occurrence links to that request's trace.
    let made: Value = app
        .http()
        .post(format!("{}/schedules/render_invoice", app.address()))
        .bearer_auth(&alice)
        .header("Idempotency-Key", "weekly")
        .header("traceparent", click())
        .json(&json!({"params": {}, "cron": "0 8 * * 1", "timezone": "UTC"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(crate::schedules::fire(&app, crate::schedules::at(&made["next_run_at"])).await, 1);
    let occurrence = claim_one().await;
    assert_eq!((&occurrence["traceparent"], &occurrence["trace_link"]), (&Value::Null, &json!(click())));
    let lease = occurrence["lease_id"].as_str().unwrap();
    let call = format!("/worker/v1/jobs/{}/fail", occurrence["id"].as_str().unwrap());
    app.post_json(&worker, &call, json!({"lease_id": lease, "error": "no", "retryable": false})).await;

    // A run an operator retries links to the click's trace too.
    let id = submit_traced(&app, &alice, "render_invoice", json!({})).await;
    let first = claim_one().await;
    assert_eq!(
        (&first["id"], &first["traceparent"]),
        (&json!(id), &json!(click())),
        "the click's first run continues it"
    );
    let lease = first["lease_id"].as_str().unwrap();
    let failed = json!({"lease_id": lease, "error": "the printer is on fire", "retryable": false});
    app.post_json(&worker, &format!("/worker/v1/jobs/{id}/fail"), failed).await;
    assert!(app.post(&ops, &format!("/admin/jobs/{id}/retry")).await.status().is_success());
    let second = claim_one().await;
    assert_eq!((&second["id"], &second["attempt"]), (&json!(id), &json!(1)));
    assert_eq!((&second["traceparent"], &second["trace_link"]), (&Value::Null, &json!(click())));
}
