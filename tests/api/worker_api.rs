//! The external worker API: job types run outside errand, claimed over HTTP
//! (long-polled, under the same limits as errand's own claims) and reported
//! back under their lease, fenced and idempotent.

use std::time::{Duration, Instant};

use errand::jobs::HandlerRegistry;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

pub(super) fn worker_token(types: &[&str]) -> String {
    let claims = errand::domain::tokens::WorkerClaims {
        sub: "invoice-renderer".into(),
        scope: "worker".into(),
        types: types.iter().map(|t| (*t).to_owned()).collect(),
        exp: now_secs() + 3600,
    };
    errand::domain::tokens::TokenIssuer::new(SECRET).unwrap().issue(&claims).unwrap()
}

/// An app with the external type `render_invoice` (quick retries, 1 s leases).
async fn app_with_external_type() -> TestApp {
    spawn_app_with(
        |s| {
            let mut external = job_type("external");
            external.max_attempts = nonzero(3);
            s.job_types.insert("render_invoice".into(), external);
            s.workers.lease = Duration::from_secs(1);
        },
        HandlerRegistry::builtin(),
    )
    .await
}

/// An app with the external type `render_invoice` whose files go where `storage` says.
async fn app_storing_files(storage: impl FnOnce(&mut errand::config::Settings)) -> TestApp {
    let configure = |s: &mut errand::config::Settings| {
        s.job_types.insert("render_invoice".into(), job_type("external"));
        storage(s);
    };
    spawn_app_with(configure, HandlerRegistry::builtin()).await
}

async fn claim(app: &TestApp, token: &str, body: Value) -> Vec<Value> {
    let response = app.post_json(token, "/worker/v1/claim", body).await;
    assert_eq!(response.status(), StatusCode::OK);
    let claimed: Value = response.json().await.unwrap();
    claimed["jobs"].as_array().unwrap().clone()
}

#[actix_web::test]
async fn worker_tokens_and_the_others_each_keep_to_their_own_routes() {
    let app = app_with_external_type().await;
    let (worker, alice, ops) = (worker_token(&["render_invoice"]), token("acme", "alice"), operator_token("olga"));
    for path in ["/jobs", "/notifications", "/admin/queues"] {
        assert_problem(app.get(&worker, path).await, StatusCode::FORBIDDEN, "forbidden").await;
    }
    for token in [&alice, &ops] {
        let refused = app.post_json(token, "/worker/v1/claim", json!({"wait": 0})).await;
        assert_problem(refused, StatusCode::FORBIDDEN, "forbidden").await;
    }
    let other_type = app.post_json(&worker, "/worker/v1/claim", json!({"types": ["noop"], "wait": 0})).await;
    assert_problem(other_type, StatusCode::BAD_REQUEST, "bad_request").await;
}

#[actix_web::test]
async fn a_waiting_worker_gets_a_new_job_at_once_and_completes_it_under_its_lease() {
    let app = app_with_external_type().await;
    let (worker, alice) = (worker_token(&["render_invoice"]), token("acme", "alice"));
    let waiting = {
        let (address, worker) = (app.address.clone(), worker.clone());
        tokio::spawn(async move {
            let asked = Instant::now();
            let response = reqwest::Client::new()
                .post(format!("{address}/worker/v1/claim"))
                .bearer_auth(worker)
                .json(&json!({"wait": 20}))
                .send()
                .await
                .unwrap();
            (asked, response.json::<Value>().await.unwrap())
        })
    };
    // The claim is waiting (it would answer an empty list after 20 s); submit.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let id = app.create(&alice, "render_invoice", json!({"invoice": 42})).await;
    let (asked, claimed) = waiting.await.unwrap();
    assert!(asked.elapsed() < Duration::from_secs(5), "answered when the job came, not at the wait's end");
    let job = &claimed["jobs"][0];
    assert_eq!((job["id"].as_str(), job["type"].as_str()), (Some(id.as_str()), Some("render_invoice")));
    assert_eq!(
        (job["tenant"].as_str(), job["user"].as_str(), job["attempt"].as_u64()),
        (Some("acme"), Some("alice"), Some(1))
    );
    assert_eq!(job["params"], json!({"invoice": 42}));
    let lease = job["lease_id"].as_str().unwrap().to_owned();
    let call = |what: &str| format!("/worker/v1/jobs/{id}/{what}");

    // Held past its 1 s lease by heartbeats: errand's rescuer leaves it alone.
    for _ in 0..3 {
        let renewed = app.post_json(&worker, &call("heartbeat"), json!({"lease_id": lease})).await;
        assert_eq!(renewed.status(), StatusCode::OK);
        assert_eq!(renewed.json::<Value>().await.unwrap()["cancel_requested"], false);
        tokio::time::sleep(Duration::from_millis(500)).await;
        app.ticks.rescue.send(errand::actors::RescueExpired).await.unwrap();
    }
    let progress = json!({"lease_id": lease, "done": 2, "total": 3, "message": "pages"});
    assert_eq!(app.post_json(&worker, &call("progress"), progress).await.status(), StatusCode::NO_CONTENT);
    let running = app.job(&alice, &id).await;
    assert_eq!((running["state"].as_str(), running["progress"]["done"].as_u64()), (Some("running"), Some(2)));

    let done = json!({"lease_id": lease, "result": {"pages": 3}});
    let completed = app.post_json(&worker, &call("complete"), done.clone()).await;
    assert_eq!(completed.json::<Value>().await.unwrap()["status"], "completed");
    let again = app.post_json(&worker, &call("complete"), done).await;
    assert_eq!(again.status(), StatusCode::OK, "a retried call after a network error gets the same answer");
    assert_eq!(again.json::<Value>().await.unwrap()["status"], "completed");
    let job = app.job(&alice, &id).await;
    assert_eq!((job["status"].as_str(), job["attempts"].as_i64()), (Some("completed"), Some(1)));
    assert_eq!(app.db.notifications_for(&id).await, 1);
    let stale = json!({"lease_id": uuid::Uuid::new_v4(), "result": {}});
    assert_problem(app.post_json(&worker, &call("complete"), stale).await, StatusCode::CONFLICT, "lease_lost").await;
    let forged = json!({"lease_id": lease, "result": {"storage_key": "tenants/b3RoZXI/jobs/x.csv"}});
    assert_problem(app.post_json(&worker, &call("complete"), forged).await, StatusCode::BAD_REQUEST, "bad_request")
        .await;
}

#[actix_web::test]
async fn failures_retry_within_the_types_attempts_and_a_lost_lease_changes_nothing() {
    let app = app_with_external_type().await;
    let (worker, alice) = (worker_token(&["render_invoice"]), token("acme", "alice"));
    let id = app.create(&alice, "render_invoice", json!({})).await;
    let call = |what: &str| format!("/worker/v1/jobs/{id}/{what}");

    let first = claim(&app, &worker, json!({"wait": 5})).await;
    let lease = first[0]["lease_id"].as_str().unwrap().to_owned();
    let failed = json!({"lease_id": lease, "error": "the printer is on fire", "retryable": true});
    let answer: Value = app.post_json(&worker, &call("fail"), failed.clone()).await.json().await.unwrap();
    assert_eq!(answer["status"], "retry_scheduled");
    let again: Value = app.post_json(&worker, &call("fail"), failed).await.json().await.unwrap();
    assert_eq!(again["status"], "retry_scheduled", "idempotent for the same lease");

    let second = claim(&app, &worker, json!({"wait": 5})).await;
    assert_eq!(second[0]["attempt"], 2);
    let lost = second[0]["lease_id"].as_str().unwrap().to_owned();
    // No heartbeat: the lease runs out (moved into the past rather than
    // waited for) and the rescuer gives the job back.
    app.db.expire_lease(&id).await;
    app.ticks.rescue.send(errand::actors::RescueExpired).await.unwrap();
    let heartbeat = app.post_json(&worker, &call("heartbeat"), json!({"lease_id": lost})).await;
    assert_problem(heartbeat, StatusCode::CONFLICT, "lease_lost").await;
    let late = app.post_json(&worker, &call("complete"), json!({"lease_id": lost})).await;
    assert_problem(late, StatusCode::CONFLICT, "lease_lost").await;
    assert_eq!(app.job(&alice, &id).await["status"], "processing", "the lost lease's completion changed nothing");

    let third = claim(&app, &worker, json!({"wait": 5})).await;
    let lease = third[0]["lease_id"].as_str().unwrap().to_owned();
    // The stale worker wakes up after the job was claimed again: refused, and
    // the new attempt goes on as if it never called.
    let stale = app.post_json(&worker, &call("complete"), json!({"lease_id": lost, "result": {"stale": true}})).await;
    assert_problem(stale, StatusCode::CONFLICT, "lease_lost").await;
    let running = app.job(&alice, &id).await;
    assert_eq!((running["state"].as_str(), running["attempts"].as_i64()), (Some("running"), Some(3)), "{running}");
    let permanent = json!({"lease_id": lease, "error": "invoice 42 does not exist", "retryable": false});
    let answer: Value = app.post_json(&worker, &call("fail"), permanent).await.json().await.unwrap();
    assert_eq!(answer["status"], "failed");
    let job = app.job(&alice, &id).await;
    assert_eq!(
        (job["status"].as_str(), job["error_message"].as_str()),
        (Some("failed"), Some("invoice 42 does not exist"))
    );
    assert!(claim(&app, &worker, json!({"wait": 0})).await.is_empty(), "nothing left to claim");
}

#[actix_web::test]
async fn a_file_a_worker_uploads_is_its_jobs_result_behind_a_signed_url() {
    let dir = std::env::temp_dir().join(format!("errand-uploads-{}", uuid::Uuid::new_v4().simple()));
    let results = dir.clone();
    let app = app_storing_files(move |s| s.storage.local_dir = results).await;
    let (worker, alice) = (worker_token(&["render_invoice"]), token("acme", "alice"));
    let id = app.create(&alice, "render_invoice", json!({})).await;
    let leased = claim(&app, &worker, json!({"wait": 5})).await;
    let lease = leased[0]["lease_id"].as_str().unwrap().to_owned();
    let pdf: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
    let upload = |lease: &str| {
        let url = format!("{}/worker/v1/jobs/{id}/result?lease_id={lease}&file_name=invoice-42.pdf", app.address);
        reqwest::Client::new().put(url).bearer_auth(&worker).header("content-type", "application/pdf").body(pdf.clone())
    };
    let stale = upload(&uuid::Uuid::new_v4().to_string()).send().await.unwrap();
    assert_problem(stale, StatusCode::CONFLICT, "lease_lost").await;
    let stored: Value = upload(&lease).send().await.unwrap().json().await.unwrap();
    assert_eq!((stored["size_bytes"].as_u64(), stored["file_name"].as_str()), (Some(300_000), Some("invoice-42.pdf")));
    let done = json!({"lease_id": lease, "result": {"pages": 3}});
    assert_eq!(app.post_json(&worker, &format!("/worker/v1/jobs/{id}/complete"), done).await.status(), StatusCode::OK);

    let job = app.job(&alice, &id).await;
    assert_eq!(
        (job["result"]["pages"].as_u64(), job["result"]["content_type"].as_str()),
        (Some(3), Some("application/pdf"))
    );
    let download = app.fetch_signed(job["result_url"].as_str().expect("a signed URL")).await;
    assert_eq!(download.status(), StatusCode::OK);
    assert_eq!(download.bytes().await.unwrap().as_ref(), pdf.as_slice(), "the same bytes");
    let _ = std::fs::remove_dir_all(dir);
}

#[actix_web::test]
async fn uploads_that_never_became_a_result_are_deleted_and_the_result_stays() {
    let dir = std::env::temp_dir().join(format!("errand-uploads-{}", uuid::Uuid::new_v4().simple()));
    let results = dir.clone();
    let app = app_storing_files(move |s| s.storage.local_dir = results).await;
    let (worker, alice) = (worker_token(&["render_invoice"]), token("acme", "alice"));
    let id = app.create(&alice, "render_invoice", json!({})).await;
    let upload = |lease: &str, file_name: &str, body: &'static [u8]| {
        let url = format!("{}/worker/v1/jobs/{id}/result?lease_id={lease}&file_name={file_name}", app.address);
        reqwest::Client::new().put(url).bearer_auth(&worker).body(body).send()
    };
    // The first attempt uploads a draft, then another file in its place, then fails.
    let first = claim(&app, &worker, json!({"wait": 5})).await[0]["lease_id"].as_str().unwrap().to_owned();
    assert_eq!(upload(&first, "draft.txt", b"draft").await.unwrap().status(), StatusCode::OK);
    assert_eq!(upload(&first, "invoice.pdf", b"first try").await.unwrap().status(), StatusCode::OK);
    let failed = json!({"lease_id": first, "error": "the printer jammed", "retryable": true});
    app.post_json(&worker, &format!("/worker/v1/jobs/{id}/fail"), failed).await;
    // The second uploads its own and completes.
    let second = claim(&app, &worker, json!({"wait": 5})).await[0]["lease_id"].as_str().unwrap().to_owned();
    assert_eq!(upload(&second, "invoice.pdf", b"the invoice").await.unwrap().status(), StatusCode::OK);
    let done = json!({"lease_id": second});
    assert_eq!(app.post_json(&worker, &format!("/worker/v1/jobs/{id}/complete"), done).await.status(), StatusCode::OK);
    assert_eq!(files_under(&dir).len(), 3, "nothing deleted before the pruner runs");

    app.ticks.prune.send(errand::actors::Prune).await.unwrap();
    let left = files_under(&dir);
    assert_eq!(left.len(), 1, "{left:?}");
    // (Kept sealed under the tenant's key: its content is read through errand.)
    assert!(std::fs::read(&left[0]).unwrap().starts_with(errand::storage::sealed_file::MAGIC));
    let job = app.job(&alice, &id).await;
    let download = app.fetch_signed(job["result_url"].as_str().expect("a signed URL")).await;
    assert_eq!(download.bytes().await.unwrap().as_ref(), b"the invoice");
    let discarded: i64 = app.db.scalar("SELECT count(*) FROM discarded_files", &[]).await;
    assert_eq!(discarded, 0, "forgotten once deleted");
    let _ = std::fs::remove_dir_all(dir);
}

#[actix_web::test]
async fn with_s3_a_worker_puts_its_file_to_a_presigned_url_and_completion_checks_it_is_there() {
    let s3 = S3Server::start().await;
    let storage = s3.settings();
    let app = app_storing_files(move |s| {
        s.storage.backend = errand::config::StorageBackend::S3;
        s.storage.s3 = Some(storage);
    })
    .await;
    let (worker, alice) = (worker_token(&["render_invoice"]), token("acme", "alice"));
    let id = app.create(&alice, "render_invoice", json!({})).await;
    let leased = claim(&app, &worker, json!({"wait": 5})).await;
    let lease = leased[0]["lease_id"].as_str().unwrap().to_owned();
    let call = |what: &str| format!("/worker/v1/jobs/{id}/{what}");
    let asked = json!({"lease_id": lease, "file_name": "invoice-42.pdf", "content_type": "application/pdf"});
    let upload: Value = app.post_json(&worker, &call("result-url"), asked).await.json().await.unwrap();
    let url = upload["url"].as_str().unwrap();
    assert!(url.starts_with(&s3.endpoint) && url.contains("X-Amz-Signature="), "{upload}");

    let early = app.post_json(&worker, &call("complete"), json!({"lease_id": lease})).await;
    assert_problem(early, StatusCode::BAD_REQUEST, "bad_request").await;
    let pdf: Vec<u8> = (0..70_000u32).map(|i| (i % 253) as u8).collect();
    let put = reqwest::Client::new().put(url).body(pdf.clone()).send().await.unwrap();
    assert!(put.status().is_success(), "{}", put.status());
    let done = app.post_json(&worker, &call("complete"), json!({"lease_id": lease})).await;
    assert_eq!(done.status(), StatusCode::OK);

    let job = app.job(&alice, &id).await;
    assert_eq!(
        (job["result"]["size_bytes"].as_u64(), job["result"]["file_name"].as_str()),
        (Some(70_000), Some("invoice-42.pdf"))
    );
    let internal = ["pending", "url_expires_at"].map(|field| job["result"].get(field));
    assert_eq!(internal, [None, None], "the upload's bookkeeping stays out of the result: {job}");
    let download = reqwest::get(job["result_url"].as_str().expect("a signed URL")).await.unwrap();
    assert_eq!(download.bytes().await.unwrap().as_ref(), pdf.as_slice(), "the same bytes, through the bucket");
}

#[actix_web::test]
async fn a_discarded_presigned_upload_is_deleted_only_once_its_url_expired() {
    let s3 = S3Server::start().await;
    let storage = s3.settings();
    let app = app_storing_files(move |s| {
        s.storage.backend = errand::config::StorageBackend::S3;
        s.storage.s3 = Some(storage);
    })
    .await;
    let (worker, alice) = (worker_token(&["render_invoice"]), token("acme", "alice"));
    let id = app.create(&alice, "render_invoice", json!({})).await;
    let lease = claim(&app, &worker, json!({"wait": 5})).await[0]["lease_id"].as_str().unwrap().to_owned();
    let asked = json!({"lease_id": lease, "file_name": "invoice-42.pdf"});
    let upload: Value =
        app.post_json(&worker, &format!("/worker/v1/jobs/{id}/result-url"), asked).await.json().await.unwrap();
    let put = reqwest::Client::new().put(upload["url"].as_str().unwrap()).body("a draft").send().await.unwrap();
    assert!(put.status().is_success(), "{}", put.status());
    let failed = json!({"lease_id": lease, "error": "invoice 42 does not exist", "retryable": false});
    app.post_json(&worker, &format!("/worker/v1/jobs/{id}/fail"), failed).await;

    // The URL still works for a while: a PUT could still come, so the file waits.
    app.ticks.prune.send(errand::actors::Prune).await.unwrap();
    assert_eq!(s3.objects_and_uploads().0.len(), 1, "kept while its URL lives");
    let waits: bool = app.db.scalar("SELECT bool_and(delete_after > now()) FROM discarded_files", &[]).await;
    assert!(waits, "due when the URL expires");
    // The URL's expiry passing, as the database will see it:
    app.db.client().await.batch_execute("UPDATE discarded_files SET delete_after = now()").await.unwrap();
    app.ticks.prune.send(errand::actors::Prune).await.unwrap();
    assert!(s3.objects_and_uploads().0.is_empty(), "deleted once due");
    let left: i64 = app.db.scalar("SELECT count(*) FROM discarded_files", &[]).await;
    assert_eq!(left, 0);
}

#[actix_web::test]
async fn an_upload_over_the_cap_or_named_with_a_control_character_is_refused_and_nothing_is_kept() {
    let dir = TempDir::named("capped-uploads");
    let results = dir.to_path_buf();
    let app = app_storing_files(move |s| {
        s.storage.local_dir = results;
        s.storage.max_upload_bytes = 100_000;
    })
    .await;
    let (worker, alice) = (worker_token(&["render_invoice"]), token("acme", "alice"));
    let id = app.create(&alice, "render_invoice", json!({})).await;
    let lease = claim(&app, &worker, json!({"wait": 5})).await[0]["lease_id"].as_str().unwrap().to_owned();
    let upload = |name: &str, size: usize| {
        let url = format!("{}/worker/v1/jobs/{id}/result?lease_id={lease}&file_name={name}", app.address);
        reqwest::Client::new().put(url).bearer_auth(&worker).body(vec![7u8; size]).send()
    };
    assert_problem(upload("big.bin", 100_001).await.unwrap(), StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large").await;
    assert!(files_under(&dir).is_empty(), "the refused upload left no file: {:?}", files_under(&dir));
    assert_problem(upload("a%0Ab.pdf", 10).await.unwrap(), StatusCode::BAD_REQUEST, "bad_request").await;
    assert_eq!(upload("fits.bin", 100_000).await.unwrap().status(), StatusCode::OK);
    let done = json!({"lease_id": lease, "result": {}});
    assert_eq!(app.post_json(&worker, &format!("/worker/v1/jobs/{id}/complete"), done).await.status(), StatusCode::OK);
    let download = app.fetch_signed(app.job(&alice, &id).await["result_url"].as_str().unwrap()).await;
    assert_eq!(download.headers()["x-content-type-options"], "nosniff");
    assert!(download.headers()["content-security-policy"].to_str().unwrap().contains("sandbox"));
    assert_eq!(download.bytes().await.unwrap().len(), 100_000);
}

#[actix_web::test]
async fn a_worker_cannot_end_a_job_of_a_type_its_token_does_not_hold_even_with_its_lease() {
    let app = spawn_app_with(
        |s| {
            s.job_types.insert("render_invoice".into(), job_type("external"));
            s.job_types.insert("send_payouts".into(), job_type("external"));
        },
        HandlerRegistry::builtin(),
    )
    .await;
    let (payouts, invoices, alice) =
        (worker_token(&["send_payouts"]), worker_token(&["render_invoice"]), token("acme", "alice"));
    let id = app.create(&alice, "send_payouts", json!({})).await;
    let lease = claim(&app, &payouts, json!({"wait": 5})).await[0]["lease_id"].as_str().unwrap().to_owned();
    let path = |end: &str| format!("/worker/v1/jobs/{id}/{end}");
    let forged = app.post_json(&invoices, &path("complete"), json!({"lease_id": lease})).await;
    assert_problem(forged, StatusCode::FORBIDDEN, "forbidden").await;
    let forged =
        app.post_json(&invoices, &path("fail"), json!({"lease_id": lease, "error": "x", "retryable": false})).await;
    assert_problem(forged, StatusCode::FORBIDDEN, "forbidden").await;
    assert_eq!(app.job(&alice, &id).await["status"], "processing", "the job is untouched");
    let own = app.post_json(&payouts, &path("complete"), json!({"lease_id": lease})).await;
    assert_eq!(own.status(), StatusCode::OK);
}

#[actix_web::test]
async fn a_result_expiry_from_a_worker_is_refused_and_the_job_can_still_end() {
    let app = app_with_external_type().await;
    let (worker, alice) = (worker_token(&["render_invoice"]), token("acme", "alice"));
    let id = app.create(&alice, "render_invoice", json!({})).await;
    let lease = claim(&app, &worker, json!({"wait": 5})).await[0]["lease_id"].as_str().unwrap().to_owned();
    let call = format!("/worker/v1/jobs/{id}/complete");
    for expires_at in [json!("soon"), json!(1_700_000_000), json!("2999-01-01T00:00:00Z")] {
        let poisoned = json!({"lease_id": lease, "result": {"expires_at": expires_at}});
        let body =
            assert_problem(app.post_json(&worker, &call, poisoned).await, StatusCode::BAD_REQUEST, "bad_request").await;
        assert!(body["detail"].as_str().unwrap().contains("expires_at"), "{body}");
    }
    let done = app.post_json(&worker, &call, json!({"lease_id": lease, "result": {"pages": 1}})).await;
    assert_eq!(done.status(), StatusCode::OK, "the end is recorded once the worker sends a result errand can store");
}

#[actix_web::test]
async fn a_worker_s_checkpoint_is_handed_to_the_run_s_next_attempt_and_only_its_lease_may_write_one() {
    let app = app_with_external_type().await;
    let (worker, alice) = (worker_token(&["render_invoice"]), token("acme", "alice"));
    let id = app.create(&alice, "render_invoice", json!({})).await;
    let call = |what: &str| format!("/worker/v1/jobs/{id}/{what}");

    let first = claim(&app, &worker, json!({"wait": 5})).await;
    assert!(first[0].get("checkpoint").is_none(), "a first attempt starts at the beginning: {}", first[0]);
    let lease = first[0]["lease_id"].as_str().unwrap().to_owned();
    let saved = json!({"lease_id": lease, "checkpoint": {"page": 40, "cursor": "abc"}, "done": 400});
    assert_eq!(app.post_json(&worker, &call("checkpoint"), saved).await.status(), StatusCode::NO_CONTENT);
    let nul = json!({"lease_id": lease, "checkpoint": {"cursor": "a\u{0}b"}, "done": 1});
    assert_problem(app.post_json(&worker, &call("checkpoint"), nul).await, StatusCode::BAD_REQUEST, "bad_request")
        .await;
    // The worker dies: its lease runs out and the rescuer gives the job back.
    app.db.expire_lease(&id).await;
    app.ticks.rescue.send(errand::actors::RescueExpired).await.unwrap();
    let stale = json!({"lease_id": lease, "checkpoint": {"page": 99}, "done": 990});
    assert_problem(app.post_json(&worker, &call("checkpoint"), stale).await, StatusCode::CONFLICT, "lease_lost").await;

    let second = claim(&app, &worker, json!({"wait": 5})).await;
    assert_eq!(second[0]["attempt"], 2);
    assert_eq!(second[0]["checkpoint"], json!({"page": 40, "cursor": "abc"}), "the last checkpoint its lease wrote");
    assert_eq!(app.job(&alice, &id).await["resumed_from"], 400);
    let other = worker_token(&["another_type"]);
    let lease = second[0]["lease_id"].as_str().unwrap().to_owned();
    let foreign = json!({"lease_id": lease, "checkpoint": {}, "done": 0});
    assert_problem(app.post_json(&other, &call("checkpoint"), foreign).await, StatusCode::FORBIDDEN, "forbidden").await;
    let done = json!({"lease_id": lease, "result": {"pages": 80}});
    assert_eq!(app.post_json(&worker, &call("complete"), done).await.status(), StatusCode::OK);
    let job = app.job(&alice, &id).await;
    assert_eq!((job["status"].as_str(), job["resumed_from"].as_i64()), (Some("completed"), Some(400)), "{job}");
}
