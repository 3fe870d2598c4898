//! Exports into a real S3-compatible server that checks signatures.

use std::time::Duration;

use errand::config::StorageBackend;
use errand::domain::ExportFormat;
use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::*;

const WITHIN: Duration = Duration::from_secs(60);

fn into(s3: &S3Server) -> impl FnOnce(&mut errand::config::Settings) + use<> {
    let settings = s3.settings();
    move |s| {
        s.storage.backend = StorageBackend::S3;
        s.storage.s3 = Some(settings);
    }
}

#[actix_web::test]
async fn an_export_lands_in_the_bucket_and_downloads_through_a_presigned_url() {
    let s3 = S3Server::start().await;
    let configure = into(&s3);
    let (app, _dir) = spawn_exporting_app(move |s| {
        configure(s);
        s.storage.url_expiry = Duration::from_secs(2);
    })
    .await;
    let alice = token("demo-1", "alice");
    let id = app.create(&alice, "export_sales_report", json!({"from": "2000-01-01", "to": "2100-01-01"})).await;
    let job = app.wait_until_finished(&alice, &id, WITHIN).await;
    assert_eq!(job["status"], "completed", "{job}");
    let key = job["result"]["storage_key"].as_str().unwrap();
    let stored = std::fs::read(s3.root.join(&s3.bucket).join(key)).expect("the object is in the bucket");

    let url = job["result_url"].as_str().unwrap().to_owned();
    assert!(url.starts_with(&s3.endpoint) && url.contains("X-Amz-Signature="), "{url}");
    let response = reqwest::get(&url).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let disposition = response.headers()["content-disposition"].to_str().unwrap().to_owned();
    assert!(disposition.contains(job["result"]["file_name"].as_str().unwrap()), "{disposition}");
    assert_eq!(response.bytes().await.unwrap().to_vec(), stored, "byte for byte");
    let rows: i64 = app.db.scalar("SELECT count(*) FROM sales WHERE tenant_id = 'demo-1'", &[]).await;
    assert_eq!(job["result"]["row_count"], rows);

    let last = url.chars().last().unwrap();
    let tampered = format!("{}{}", &url[..url.len() - 1], if last == 'a' { 'b' } else { 'a' });
    assert_eq!(reqwest::get(&tampered).await.unwrap().status(), StatusCode::FORBIDDEN);
    eventually(Duration::from_secs(10), "the presigned URL expires", || async {
        reqwest::get(&url).await.unwrap().status() == StatusCode::FORBIDDEN
    })
    .await;
    let redirect = app.result_redirect(&alice, &id).await;
    assert_eq!(redirect.status(), StatusCode::SEE_OTHER);
    let fresh = redirect.headers()["location"].to_str().unwrap().to_owned();
    assert_eq!(reqwest::get(&fresh).await.unwrap().status(), StatusCode::OK);
}

#[actix_web::test]
async fn a_large_export_failing_mid_upload_leaves_no_object_and_no_open_upload() {
    let s3 = S3Server::start().await;
    let configure = into(&s3);
    let failing = export_settings(
        // About 20 MB (several 8 MiB parts) before a division by zero.
        "SELECT g, repeat('x', 1000) AS padding, 1 / (g - 20000) AS boom \
                FROM generate_series(1, 30000) AS g WHERE :tenant <> ''",
        ExportFormat::Csv,
    );
    let (app, _dir) = spawn_exporting_app(move |s| {
        configure(s);
        add_export_type(s, "export_boom", failing);
    })
    .await;
    let alice = token("demo-1", "alice");
    let id = app.create(&alice, "export_boom", json!({})).await;
    let job = app.wait_until_finished(&alice, &id, WITHIN).await;
    assert_eq!(job["status"], "failed", "{job}");
    assert!(job["error_message"].as_str().unwrap().contains("division by zero"), "{job}");
    let (objects, uploads) = s3.objects_and_uploads();
    assert!(objects.is_empty(), "no object: {objects:?}");
    assert!(uploads.is_empty(), "no multipart upload left open: {uploads:?}");
}
