//! A batch's end by email: one email when its last child ends (its children
//! send none), as its owner's email choice for the category and their quiet
//! hours allow, through a real SMTP server.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::*;

const WITHIN: Duration = Duration::from_secs(60);

/// `n` sleep items, those at `failing` failing for good.
fn items(n: usize, failing: &[usize]) -> Value {
    (0..n).map(|i| json!({"ms": 0, "fail_times": u32::from(failing.contains(&i))})).collect()
}

async fn batch_done(app: &TestApp, token: &str, items: Value) -> String {
    let response = app.submit_batch(token, "sleep", &Uuid::new_v4().to_string(), items).await;
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    let batch = id_of(response).await;
    eventually(WITHIN, "the batch to end", || async {
        let shown: Value = app.get(token, &format!("/batches/{batch}")).await.json().await.unwrap();
        shown["status"] != "processing"
    })
    .await;
    batch
}

#[actix_web::test]
async fn a_batch_s_end_is_one_email_with_its_counts_and_none_when_its_owner_turned_email_off() {
    let mail = MailServer::start().await;
    let app = TestApp::builder()
        .configure(email_to(mail.smtp_port))
        .configure(|s| s.job_types.get_mut("sleep").unwrap().max_attempts = nonzero(1))
        .spawn()
        .await;
    let alice = token_for("acme", "alice", "alice@example.com");
    let batch = batch_done(&app, &alice, items(5, &[1, 3])).await;
    let email = &mail.wait_for(1, WITHIN).await[0];
    let notice = app.notifications_of(&alice, "batch_completed").await.remove(0);
    assert_eq!(email["subject"], notice["title"], "the same words as the bell's");
    assert!(email["subject"].as_str().unwrap().starts_with("Your batch of 5 "), "{email}");
    let text = email["text"].as_str().unwrap();
    assert!(text.contains("3 completed, 2 failed"), "{text}");
    assert!(text.contains(&format!("/batches/{batch}/report")), "{text}");
    assert!(text.contains("/unsubscribe/"), "an unsubscribe link: {text}");
    let id = mail.header(email, "Message-ID").await.unwrap();
    assert!(id.starts_with(&format!("<batch-{batch}@")), "{id}");
    mail.assert_all_sent(&app.db, 1).await;

    // The owner turns email off for the category: the next batch sends none.
    let off = app.put_json(&alice, "/me/notification-preferences/sleep", json!({"email": false})).await;
    assert_eq!(off.status(), StatusCode::OK);
    let quiet = batch_done(&app, &alice, items(2, &[])).await;
    let written = "SELECT count(*) FROM email_outbox WHERE batch_id = $1::text::uuid";
    assert_eq!(app.db.scalar::<i64>(written, &[&quiet]).await, 0);
    assert_eq!(app.notifications_of(&alice, "batch_completed").await.len(), 2, "in the app as before");
}

#[actix_web::test]
async fn a_batch_ending_in_its_owner_s_quiet_hours_emails_when_they_end_and_without_email_on_writes_none() {
    let mail = MailServer::start().await;
    let app = TestApp::builder().configure(email_to(mail.smtp_port)).spawn().await;
    let alice = token_for("acme", "alice", "alice@example.com");
    let now = chrono::Utc::now();
    let hh_mm = |t: chrono::DateTime<chrono::Utc>| t.format("%H:%M").to_string();
    let (start, end) = (hh_mm(now - chrono::Duration::hours(1)), hh_mm(now + chrono::Duration::hours(1)));
    let settings = json!({"timezone": "UTC", "quiet_hours": {"start": start, "end": end}});
    assert_eq!(app.put_json(&alice, "/me/notification-settings", settings).await.status(), StatusCode::OK);
    let batch = batch_done(&app, &alice, items(2, &[])).await;
    let due =
        "SELECT next_attempt_at > now() + interval '50 minutes' FROM email_outbox WHERE batch_id = $1::text::uuid";
    assert!(app.db.scalar::<bool>(due, &[&batch]).await, "due when the quiet hours end");

    let without_email = spawn_app().await;
    let batch = batch_done(&without_email, &alice, items(2, &[])).await;
    let written = "SELECT count(*) FROM email_outbox WHERE batch_id = $1::text::uuid";
    assert_eq!(without_email.db.scalar::<i64>(written, &[&batch]).await, 0);
}
