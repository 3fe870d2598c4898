//! Params and results of a job type that keeps them sealed (`encrypt =
//! true`): in the database (jobs, schedules, a batch's children) they are
//! an envelope under the tenant's data key, unreadable without errand's
//! keys (a result's file record stays in clear beside it); the owner, the
//! handler, the emails and webhooks, and operators see them whole.

use std::time::Duration;

use errand::jobs::{HandlerFuture, JobContext, JobHandler, JobOutput};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;
use crate::schedules::{at, fire};

const WITHIN: Duration = Duration::from_secs(20);
/// What must never be readable in the database.
const SECRET: &str = "ada.lovelace@example.com";

/// Answers the params it was given, as its result.
struct Echo;

impl JobHandler for Echo {
    fn run(&self, ctx: JobContext) -> HandlerFuture {
        Box::pin(async move { Ok(JobOutput { result: Some(json!({"seen": ctx.params})) }) })
    }
}

/// `report` keeps its params sealed (and may be scheduled); `plain` does not.
async fn sealed_app() -> TestApp {
    TestApp::builder()
        .job_type("report", Echo)
        .job_type("plain", Echo)
        .configure(|s| {
            let report = s.job_types.get_mut("report").unwrap();
            report.encrypt = true;
            report.schedulable = true;
            s.schedules.owner_inactive_after = None;
            s.webhooks.allow_hosts = vec!["127.0.0.1".into()];
        })
        .spawn()
        .await
}

/// How `table`'s row `id` keeps its params.
async fn kept(app: &TestApp, table: &str, id: &str) -> String {
    kept_column(app, table, "params", id).await
}

async fn kept_column(app: &TestApp, table: &str, column: &str, id: &str) -> String {
    let id: uuid::Uuid = id.parse().unwrap();
    app.db.scalar(&format!("SELECT {column}::text FROM {table} WHERE id = $1"), &[&id]).await
}

/// (`lovelace` is too long to turn up in the base64 of a seal by chance.)
fn assert_sealed(kept: &str) {
    let kept: Value = serde_json::from_str(kept).unwrap();
    assert!(kept["errand:sealed"].is_string() && !kept.to_string().contains("lovelace"), "{kept}");
}

#[actix_web::test]
async fn a_sealed_type_s_params_are_an_envelope_in_the_database_and_whole_to_everyone_errand_shows_them_to() {
    let app = sealed_app().await;
    let (alice, hooks) = (token("acme", "alice"), Receiver::start([]));
    let endpoint = json!({"url": hooks.url, "events": ["job.completed"]});
    let registered = app.post_json(&tenant_admin_token("acme", "ada"), "/webhooks", endpoint).await;
    assert_eq!(registered.status(), StatusCode::CREATED);
    let params = json!({"customer": SECRET});
    let response = app.submit(&alice, "report", "monthly", params.clone()).await;
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    let id = id_of(response).await;
    assert_sealed(&kept(&app, "jobs", &id).await);

    let job = app.wait_until_finished(&alice, &id, WITHIN).await;
    assert_eq!(job["status"], "completed", "{job}");
    assert_eq!(job["params"], params, "the owner sees them whole");
    assert_eq!(job["result"]["seen"], params, "the handler was given them whole, and its result is shown whole");
    assert_sealed(&kept_column(&app, "jobs", "result", &id).await);
    eventually(WITHIN, "the job's webhook", || async { !hooks.received().is_empty() }).await;
    let told: Value = serde_json::from_slice(&hooks.received()[0].body).unwrap();
    let told = told.to_string();
    assert!(told.matches(SECRET).count() == 2 && !told.contains("errand:sealed"), "params and result whole: {told}");
    let listed: Value = app.get(&alice, "/jobs").await.json().await.unwrap();
    assert_eq!(listed["jobs"][0]["params"], params);
    // The same request again is a replay: the same job, the same params.
    let again = app.submit(&alice, "report", "monthly", params.clone()).await;
    assert_eq!(again.status(), StatusCode::OK);
    let again: Value = again.json().await.unwrap();
    assert_eq!((&again["params"], &again["result"]["seen"]), (&params, &params));
    let olga = operator_token("olga");
    let seen: Value = app.get(&olga, &format!("/admin/jobs/{id}")).await.json().await.unwrap();
    assert_eq!((&seen["params"], &seen["result"]["seen"]), (&params, &params), "operators see them whole");
    // The database cannot search them: a params search says so, and finds nothing.
    let search: Value =
        app.get(&olga, "/admin/jobs?param=customer=ada.lovelace@example.com").await.json().await.unwrap();
    assert_eq!(
        (search["jobs"].as_array().map(Vec::len), &search["params_not_searched"]),
        (Some(0), &json!(["report"]))
    );

    // A type that does not seal keeps them as they are.
    let plain = app.create(&alice, "plain", params.clone()).await;
    assert_eq!(serde_json::from_str::<Value>(&kept(&app, "jobs", &plain).await).unwrap(), params);
    // Moved to another tenant's job, sealed params do not open: they show as null.
    let globex = app.create(&token("globex", "gil"), "plain", json!({})).await;
    let (from, to): (uuid::Uuid, uuid::Uuid) = (id.parse().unwrap(), globex.parse().unwrap());
    app.db
        .client()
        .await
        .execute("UPDATE jobs SET params = (SELECT params FROM jobs WHERE id = $1) WHERE id = $2", &[&from, &to])
        .await
        .unwrap();
    assert_eq!(app.job(&token("globex", "gil"), &globex).await["params"], Value::Null);
}

#[actix_web::test]
async fn a_sealed_type_s_schedules_and_batch_children_keep_their_params_sealed_too() {
    let app = sealed_app().await;
    let alice = token("acme", "alice");
    let params = json!({"customer": SECRET});

    let made = app
        .http
        .post(format!("{}/schedules/report", app.address))
        .bearer_auth(&alice)
        .header("Idempotency-Key", "weekly")
        .json(&json!({"params": params, "cron": "@weekly", "timezone": "UTC"}))
        .send()
        .await
        .unwrap();
    assert_eq!(made.status(), StatusCode::CREATED);
    let made: Value = made.json().await.unwrap();
    let schedule = made["id"].as_str().unwrap();
    assert_eq!(made["params"], params);
    assert_sealed(&kept(&app, "schedules", schedule).await);
    let shown: Value = app.get(&alice, &format!("/schedules/{schedule}")).await.json().await.unwrap();
    assert_eq!(shown["params"], params);
    assert_eq!(fire(&app, at(&made["next_run_at"]) + chrono::TimeDelta::seconds(1)).await, 1);
    let scheduled: uuid::Uuid =
        app.db.scalar("SELECT id FROM jobs WHERE schedule_id = $1", &[&schedule.parse::<uuid::Uuid>().unwrap()]).await;
    assert_sealed(&kept(&app, "jobs", &scheduled.to_string()).await);
    let job = app.wait_until_finished(&alice, &scheduled.to_string(), WITHIN).await;
    assert_eq!(job["result"]["seen"], params, "the scheduled job's handler was given them whole");

    let batch = app.submit_batch(&alice, "report", "both", json!([params, {"customer": "bob"}])).await;
    assert_eq!(batch.status(), StatusCode::ACCEPTED);
    let batch = id_of(batch).await;
    let children: Vec<String> = app
        .db
        .client()
        .await
        .query("SELECT params::text FROM jobs WHERE batch_id = $1", &[&batch.parse::<uuid::Uuid>().unwrap()])
        .await
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    assert_eq!(children.len(), 2);
    children.iter().for_each(|kept| assert_sealed(kept));
}

#[actix_web::test]
async fn params_may_not_hold_errand_s_own_envelope() {
    let app = sealed_app().await;
    let alice = token("acme", "alice");
    for job_type in ["report", "plain"] {
        let response = app.submit(&alice, job_type, "forged", json!({"errand:sealed": "AAAA"})).await;
        let problem = assert_problem(response, StatusCode::UNPROCESSABLE_ENTITY, "invalid_params").await;
        assert_eq!(problem["field"], "/errand:sealed", "{job_type}");
    }
}

#[actix_web::test]
async fn an_external_worker_s_result_is_sealed_beside_the_file_record_errand_reads() {
    let dir = std::env::temp_dir().join(format!("errand-sealed-{}", uuid::Uuid::new_v4().simple()));
    let results = dir.clone();
    let app = TestApp::builder()
        .configure(move |s| {
            let mut external = errand::config::JobTypeSettings::new("external".to_owned().into());
            external.encrypt = true;
            s.job_types.insert("render_invoice".into(), external);
            s.storage.local_dir = results;
        })
        .spawn()
        .await;
    let (worker, alice) = (crate::worker_api::worker_token(&["render_invoice"]), token("acme", "alice"));
    let id = app.create(&alice, "render_invoice", json!({"customer": SECRET})).await;
    let claimed: Value = app.post_json(&worker, "/worker/v1/claim", json!({"wait": 5})).await.json().await.unwrap();
    let job = &claimed["jobs"][0];
    assert_eq!(job["params"]["customer"], SECRET, "the worker is given the params whole");
    let lease = job["lease_id"].as_str().unwrap();
    let url = format!("{}/worker/v1/jobs/{id}/result?lease_id={lease}&file_name=invoice.pdf", app.address);
    let put = app.http.put(url).bearer_auth(&worker).header("content-type", "application/pdf").body(vec![7u8; 1000]);
    assert_eq!(put.send().await.unwrap().status(), StatusCode::OK);
    let done = json!({"lease_id": lease, "result": {"pages": 3, "billed_to": SECRET}});
    assert_eq!(app.post_json(&worker, &format!("/worker/v1/jobs/{id}/complete"), done).await.status(), StatusCode::OK);

    let kept: Value = serde_json::from_str(&kept_column(&app, "jobs", "result", &id).await).unwrap();
    assert_sealed(&kept.to_string());
    assert_eq!((kept["content_type"].as_str(), kept["size_bytes"].as_u64()), (Some("application/pdf"), Some(1000)));
    assert!(kept["storage_key"].is_string() && kept.get("pages").is_none(), "{kept}");
    let job = app.job(&alice, &id).await;
    assert_eq!((job["result"]["pages"].as_u64(), job["result"]["billed_to"].as_str()), (Some(3), Some(SECRET)));
    let download = app.fetch_signed(job["result_url"].as_str().expect("a signed URL")).await;
    assert_eq!(download.bytes().await.unwrap().as_ref(), [7u8; 1000].as_slice(), "downloaded whole");
    // On disk the file is sealed under the tenant's key (every tenant's, on the local backend).
    let on_disk = std::fs::read(dir.join(kept["storage_key"].as_str().unwrap())).unwrap();
    assert!(on_disk.starts_with(errand::storage::sealed_file::MAGIC), "sealed on disk");
    assert!(!on_disk.windows(16).any(|w| w == [7u8; 16]), "no run of the content in clear");
    // errand's own name is not a worker's to use.
    let forged = app.create(&alice, "render_invoice", json!({})).await;
    let claimed: Value = app.post_json(&worker, "/worker/v1/claim", json!({"wait": 5})).await.json().await.unwrap();
    let lease = claimed["jobs"][0]["lease_id"].as_str().unwrap();
    let done = json!({"lease_id": lease, "result": {"errand:sealed": "AAAA"}});
    let refused = app.post_json(&worker, &format!("/worker/v1/jobs/{forged}/complete"), done).await;
    assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
    let _ = std::fs::remove_dir_all(dir);
}

#[actix_web::test]
async fn with_seal_files_off_new_files_are_written_in_clear_and_sealed_ones_still_read() {
    let dir = std::env::temp_dir().join(format!("errand-clear-{}", uuid::Uuid::new_v4().simple()));
    let (results, again) = (dir.clone(), dir.clone());
    let external = |s: &mut errand::config::Settings| {
        s.job_types.insert("render_invoice".into(), errand::config::JobTypeSettings::new("external".to_owned().into()));
    };
    let sealing =
        TestApp::builder().configure(external).configure(move |s| s.storage.local_dir = results).spawn().await;
    let (worker, alice) = (crate::worker_api::worker_token(&["render_invoice"]), token("acme", "alice"));
    let sealed = uploaded(&sealing, &worker, &alice, b"sealed content").await;
    let clear = TestApp::builder()
        .on(sealing.db.shared())
        .configure(external)
        .configure(move |s| {
            s.storage.local_dir = again;
            s.storage.seal_files = false;
        })
        .spawn()
        .await;
    let written = uploaded(&clear, &worker, &alice, b"clear content").await;
    let on_disk = std::fs::read(dir.join(written["result"]["storage_key"].as_str().unwrap())).unwrap();
    assert_eq!(on_disk, b"clear content");
    for (job, content) in [(&sealed, b"sealed content".as_slice()), (&written, b"clear content".as_slice())] {
        let url = clear.job(&alice, job["id"].as_str().unwrap()).await["result_url"].as_str().unwrap().to_owned();
        assert_eq!(clear.fetch_signed(&url).await.bytes().await.unwrap().as_ref(), content);
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// A `render_invoice` job whose external worker uploaded `body` and completed it; answers the job.
async fn uploaded(app: &TestApp, worker: &str, owner: &str, body: &'static [u8]) -> Value {
    let id = app.create(owner, "render_invoice", json!({})).await;
    let claimed: Value = app.post_json(worker, "/worker/v1/claim", json!({"wait": 5})).await.json().await.unwrap();
    let lease = claimed["jobs"][0]["lease_id"].as_str().unwrap().to_owned();
    let url = format!("{}/worker/v1/jobs/{id}/result?lease_id={lease}&file_name=f.txt", app.address);
    assert_eq!(app.http.put(url).bearer_auth(worker).body(body).send().await.unwrap().status(), StatusCode::OK);
    let done = json!({"lease_id": lease});
    assert_eq!(app.post_json(worker, &format!("/worker/v1/jobs/{id}/complete"), done).await.status(), StatusCode::OK);
    app.job(owner, &id).await
}
