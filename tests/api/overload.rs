//! Load shedding: when submissions pile up faster than they can be written,
//! new ones get 503 `overloaded` at once while reads go on, and once the
//! load is gone submissions pass again.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::*;

#[actix_web::test]
async fn a_full_intake_sheds_new_submissions_at_once_and_reads_go_on() {
    let app = TestApp::builder()
        .configure(|s| {
            s.workers.global_limit = 0;
            s.overload.max_pending_submissions = std::num::NonZeroUsize::new(2).unwrap();
        })
        .spawn()
        .await;
    let alice = token("acme", "alice");
    let existing = app.create(&alice, "noop", json!({})).await;

    // Inserts into the queue wait behind this lock (reads of it do not): the
    // Intake's statements hang, and submissions pile up behind them.
    let mut blocker = app.db.client().await;
    let lock = blocker.transaction().await.unwrap();
    lock.batch_execute("LOCK TABLE job_queue IN EXCLUSIVE MODE").await.unwrap();
    let submissions: Vec<_> = (0..12)
        .map(|i| {
            let request = app
                .http
                .post(format!("{}/jobs/noop", app.address))
                .bearer_auth(&alice)
                .header("Idempotency-Key", format!("k{i}"))
                .json(&json!({}));
            actix_web::rt::spawn(async move {
                let response = request.send().await.unwrap();
                let retry_after = response.headers().get("retry-after").map(|v| v.to_str().unwrap().to_owned());
                (response.status(), retry_after, response.text().await.unwrap())
            })
        })
        .collect();
    eventually(Duration::from_secs(10), "some submissions are shed while the others wait", || async {
        submissions.iter().filter(|s| s.is_finished()).count() >= 8
    })
    .await;
    // The user still reads their jobs.
    assert_eq!(app.job(&alice, &existing).await["state"], "queued");

    lock.commit().await.unwrap();
    let mut shed = 0;
    let mut accepted = 0;
    for submission in submissions {
        let (status, retry_after, body) = submission.await.unwrap();
        match status {
            StatusCode::SERVICE_UNAVAILABLE => {
                shed += 1;
                assert_eq!(retry_after.as_deref(), Some("1"));
                assert!(body.contains("\"code\":\"overloaded\""), "{body}");
            }
            StatusCode::ACCEPTED => accepted += 1,
            other => panic!("{other}: {body}"),
        }
    }
    assert!(shed >= 8 && accepted >= 1, "shed {shed}, accepted {accepted}");
    let jobs: i64 = app.db.scalar("SELECT count(*) FROM jobs", &[]).await;
    assert_eq!(jobs, 1 + accepted, "a shed submission leaves nothing");
    // The load is gone: submissions pass again.
    app.create(&alice, "noop", json!({})).await;
}

#[actix_web::test]
async fn an_exhausted_pool_sheds_new_submissions_until_a_connection_frees() {
    let app = TestApp::builder()
        .configure(|s| {
            s.workers.global_limit = 0;
            s.database.pool_size = 2;
            s.overload.pool_saturated_for = Duration::from_millis(200);
        })
        .spawn()
        .await;
    let alice = token("acme", "alice");
    app.create(&alice, "noop", json!({})).await;

    // Two reads of the feed wait behind this lock, each holding one of the
    // pool's two connections; whatever asks for one next waits.
    let mut blocker = app.db.client().await;
    let lock = blocker.transaction().await.unwrap();
    lock.batch_execute("LOCK TABLE notifications IN ACCESS EXCLUSIVE MODE").await.unwrap();
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let request = app.http.get(format!("{}/notifications", app.address)).bearer_auth(&alice);
            actix_web::rt::spawn(async move { request.send().await.map(|r| r.status()) })
        })
        .collect();
    // A submission not shed waits for a connection too: this client gives up
    // on it early (errand records it once the pool frees).
    let submit = || async {
        let response = app
            .http
            .post(format!("{}/jobs/noop", app.address))
            .bearer_auth(&alice)
            .header("Idempotency-Key", uuid::Uuid::new_v4().to_string())
            .json(&json!({}))
            .timeout(Duration::from_millis(300))
            .send()
            .await;
        match response {
            Ok(response) => (response.status(), response.text().await.unwrap_or_default()),
            Err(_) => (StatusCode::REQUEST_TIMEOUT, String::new()),
        }
    };
    eventually(Duration::from_secs(4), "a submission is shed while the pool stays exhausted", || async {
        let (status, body) = submit().await;
        status == StatusCode::SERVICE_UNAVAILABLE && body.contains("every database connection")
    })
    .await;

    lock.commit().await.unwrap();
    for reader in readers {
        assert_eq!(reader.await.unwrap().unwrap(), StatusCode::OK, "the reads waited, and were answered");
    }
    eventually(Duration::from_secs(10), "submissions pass again", || async {
        submit().await.0 == StatusCode::ACCEPTED
    })
    .await;
}
