//! An export stopped part way (`kill -9`, SIGTERM) is finished by another
//! process from its last checkpoint: the file holds every row once, in
//! order, and the second attempt starts where the first's checkpoint said.

use std::time::Duration;

use futures_util::StreamExt;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::helpers::*;

/// Rows of the one tenant's sales.
const ROWS: i64 = 4_000_000;
const PARAMS: (&str, &str) = ("2000-01-01", "2100-01-01");

/// A database with `ROWS` sales of tenant `demo-1`.
async fn sales_db() -> TestDb {
    let db = TestDb::create().await;
    let store = errand::store::Store::connect(&db.url, 2).unwrap();
    errand::store::demo::seed(&store, 1, 0).await.unwrap();
    let fill = "INSERT INTO sales (tenant_id, sold_at, customer, product, quantity, unit_price, status) \
                SELECT 'demo-1', date '2020-01-01' + (i % 2000)::int, 'Customer ' || i, 'Product ' || (i % 97), \
                       1 + i % 5, (i % 10000) / 100.0, CASE WHEN i % 10 = 0 THEN 'pending' ELSE 'paid' END \
                FROM generate_series(1, $1::bigint) AS i";
    db.client().await.execute(fill, &[&ROWS]).await.unwrap();
    db.client().await.batch_execute("ANALYZE sales").await.unwrap();
    db
}

/// sha256 of what the export should hold: the shipped query's rows, by PostgreSQL's own COPY.
async fn expected_digest(db: &TestDb) -> Vec<u8> {
    let client = db.client().await;
    let copy = client
        .copy_out(&format!(
            "COPY (SELECT id AS \"Sale ID\", sold_at AS \"Date\", customer AS \"Customer\", product AS \"Product\", \
             quantity AS \"Quantity\", unit_price AS \"Unit price\", quantity * unit_price AS \"Total\", status AS \"Status\" \
             FROM sales WHERE tenant_id = 'demo-1' AND sold_at BETWEEN '{}' AND '{}' ORDER BY sold_at, id) \
             TO STDOUT WITH (FORMAT csv, HEADER true)",
            PARAMS.0, PARAMS.1
        ))
        .await
        .unwrap();
    let mut copy = std::pin::pin!(copy);
    let mut hasher = Sha256::new();
    while let Some(chunk) = copy.next().await {
        hasher.update(chunk.unwrap());
    }
    hasher.finalize().to_vec()
}

/// sha256 of the file a signed URL downloads (a local one through `process`).
async fn downloaded_digest(process: &ErrandProcess, url: &str) -> Vec<u8> {
    let url = match url.split_once("/files/") {
        Some((_, rest)) => format!("{}/files/{rest}", process.address),
        None => url.to_owned(),
    };
    let response = reqwest::get(url).await.unwrap();
    assert_eq!(response.status(), reqwest::StatusCode::OK);
    let mut body = response.bytes_stream();
    let mut hasher = Sha256::new();
    while let Some(chunk) = body.next().await {
        hasher.update(chunk.unwrap());
    }
    hasher.finalize().to_vec()
}

/// How the first process stops.
#[derive(Clone, Copy, PartialEq)]
enum Stop {
    /// `kill -9`: its lease runs out, and the attempt counts.
    Kill,
    /// SIGTERM: it gives the job back at once, as if the attempt never started.
    Term,
}

/// Starts the export in one process, stops that process once 40 % is
/// written, and checks that another finishes it from the checkpoint.
async fn stopped_at_40_percent_and_finished_elsewhere(db: &TestDb, storage: &[(&str, &str)], stop: Stop) -> Value {
    // A short grace: a SIGTERM'd process lets its running jobs go on that
    // long, and the export must not finish meanwhile.
    let mut settings = vec![("ERRAND_WORKERS__LEASE", "1s"), ("ERRAND_WORKERS__SHUTDOWN_GRACE", "1s")];
    settings.extend_from_slice(storage);
    let alice = token("demo-1", "alice");
    let mut first = ErrandProcess::start(db, &settings);
    let id = first.create(&alice, "export_sales_report", json!({"from": PARAMS.0, "to": PARAMS.1})).await;
    let written = std::cell::Cell::new(0);
    eventually(Duration::from_secs(300), "40 % of the rows are written", || async {
        written.set(first.job(&alice, &id).await["progress"]["done"].as_i64().unwrap_or(0));
        written.get() >= ROWS * 4 / 10
    })
    .await;
    match stop {
        Stop::Kill => first.kill_hard(),
        Stop::Term => assert!(first.terminate().success()),
    }
    let written = written.get();

    let second = ErrandProcess::start(db, &settings);
    let job = second.wait_until_finished(&alice, &id, Duration::from_secs(600)).await;
    assert_eq!(job["status"], "completed", "{job}");
    let attempts = if stop == Stop::Kill { 2 } else { 1 };
    assert_eq!(job["attempts"], attempts, "a killed attempt counts; one given back does not");
    assert_eq!(job["result"]["row_count"], ROWS);
    // (Not necessarily at most the rows seen written: progress is stored
    // about once a second, a checkpoint after each part.)
    let resumed = job["resumed_from"].as_i64().expect("the second attempt resumed");
    assert!(resumed > 0 && resumed < ROWS, "resumed from {resumed}, {written} rows seen written");
    assert_eq!(
        downloaded_digest(&second, job["result_url"].as_str().unwrap()).await,
        expected_digest(db).await,
        "every row once, in order"
    );
    // The operators' timeline: a killed attempt from the start, the last from its checkpoint.
    let detail: Value = second.get(&operator_token("ops"), &format!("/admin/jobs/{id}")).await.json().await.unwrap();
    let timeline = detail["history"]["attempts"].as_array().unwrap().clone();
    let from: Vec<Value> = timeline.iter().map(|a| a["resumed_from"].clone()).collect();
    let expected = if stop == Stop::Kill { vec![Value::Null, json!(resumed)] } else { vec![json!(resumed)] };
    assert_eq!(from, expected, "{timeline:?}");
    job
}

#[actix_web::test]
async fn an_export_killed_at_40_percent_is_finished_by_another_process_from_its_checkpoint() {
    let db = sales_db().await;
    let results = TempDir::named("resumed");
    let dir = results.to_str().unwrap().to_owned();
    stopped_at_40_percent_and_finished_elsewhere(&db, &[("ERRAND_STORAGE__LOCAL_DIR", &dir)], Stop::Kill).await;
    assert_eq!(files_under(&results).len(), 1, "one file: {:?}", files_under(&results));
    assert!(uploads_under(&results).is_empty(), "no upload left");
}

#[actix_web::test]
async fn an_export_stopped_by_sigterm_at_40_percent_checkpoints_and_goes_on_in_another_process() {
    let db = sales_db().await;
    let results = TempDir::named("resumed");
    let dir = results.to_str().unwrap().to_owned();
    // Parts of 1 GiB: none is uploaded before the SIGTERM, so the only
    // checkpoint there is to resume from is the one written on stopping.
    let storage = [("ERRAND_STORAGE__LOCAL_DIR", dir.as_str()), ("ERRAND_STORAGE__PART_SIZE", "1073741824")];
    stopped_at_40_percent_and_finished_elsewhere(&db, &storage, Stop::Term).await;
    assert_eq!(files_under(&results).len(), 1, "one file: {:?}", files_under(&results));
}

#[actix_web::test]
async fn an_export_to_s3_killed_at_40_percent_goes_on_with_the_same_multipart_upload() {
    let db = sales_db().await;
    let s3 = S3Server::start().await;
    let storage = [
        ("ERRAND_STORAGE__BACKEND", "s3"),
        ("ERRAND_STORAGE__S3__ENDPOINT", s3.endpoint.as_str()),
        ("ERRAND_STORAGE__S3__BUCKET", s3.bucket.as_str()),
        ("ERRAND_STORAGE__S3__REGION", "us-east-1"),
        ("ERRAND_STORAGE__S3__PATH_STYLE", "true"),
        ("ERRAND_STORAGE__S3__ACCESS_KEY", S3_ACCESS_KEY),
        ("ERRAND_STORAGE__S3__SECRET_KEY", S3_SECRET_KEY),
    ];
    stopped_at_40_percent_and_finished_elsewhere(&db, &storage, Stop::Kill).await;
    let (objects, uploads) = s3.objects_and_uploads();
    assert_eq!(objects.len(), 1, "one object: {objects:?}");
    assert!(uploads.is_empty(), "no open upload: {uploads:?}");
}
