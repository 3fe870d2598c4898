//! Completion emails, end to end through a real SMTP server.

use std::time::Duration;

use errand::jobs::HandlerRegistry;
use serde_json::{Value, json};

use crate::helpers::*;

const WITHIN: Duration = Duration::from_secs(30);

fn addressed_to(email: &Value) -> &str {
    email["to"][0]["address"].as_str().unwrap()
}

#[actix_web::test]
async fn a_finished_job_sends_one_email_with_a_link_through_errand() {
    let mail = MailServer::start().await;
    let app = spawn_app_with(email_to(mail.smtp_port), HandlerRegistry::builtin()).await;
    let alice = token_for("acme", "alice", "alice@example.com");
    let id = app.create(&alice, "noop", json!({})).await;
    let emails = mail.wait_for(1, WITHIN).await;
    let email = &emails[0];
    assert_eq!(addressed_to(email), "alice@example.com");
    assert_eq!(email["subject"], "Your test job is ready");
    let link = format!("https://errand.example.com/jobs/{id}/result");
    assert!(email["text"].as_str().unwrap().contains(&link), "{}", email["text"]);
    // The HTML template escapes what it inserts ('/' becomes "&#x2f;").
    let html = email["html"].as_str().unwrap().replace("&#x2f;", "/");
    assert!(html.contains(&format!("href=\"{link}\"")), "{html}");
    assert_eq!(email["headers"]["message-id"], format!("<job-{id}@example.com>"));
    // The server has the email before errand records its answer: wait for the record.
    eventually(WITHIN, "the outbox records the send", || async {
        app.db.scalar::<String>("SELECT state::text FROM email_outbox", &[]).await == "sent"
    })
    .await;
    let response: String = app.db.scalar("SELECT smtp_response FROM email_outbox", &[]).await;
    assert!(response.starts_with("250"), "{response}");
}

#[actix_web::test]
async fn a_failed_job_emails_the_reason_and_a_retried_one_emails_once() {
    let mail = MailServer::start().await;
    let app = spawn_app_with(email_to(mail.smtp_port), HandlerRegistry::builtin()).await;
    let alice = token_for("acme", "alice", "alice@example.com");
    let failed = app.create(&alice, "sleep", json!({"ms": 1, "fail_times": 5})).await;
    let retried = app.create(&alice, "sleep", json!({"ms": 1, "fail_times": 2})).await;
    assert_eq!(app.wait_until_finished(&alice, &retried, WITHIN).await["attempts"], 3);
    app.wait_until_finished(&alice, &failed, WITHIN).await;
    let emails = mail.wait_for(2, WITHIN).await;
    let failure = emails.iter().find(|e| e["subject"] == "Your sleep job failed").expect("a failure email");
    assert!(failure["text"].as_str().unwrap().contains("failed: planned failure 3 of 5"), "{}", failure["text"]);
    // Nothing more arrives: one email per job, however many attempts it took.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(mail.emails().await.len(), 2);
    let rows: i64 = app.db.scalar("SELECT count(*) FROM email_outbox WHERE state = 'sent'", &[]).await;
    assert_eq!(rows, 2);
}

#[actix_web::test]
async fn no_address_means_no_email_but_still_a_notification() {
    let mail = MailServer::start().await;
    let app = spawn_app_with(email_to(mail.smtp_port), HandlerRegistry::builtin()).await;
    let alice = token("acme", "alice");
    let id = app.create(&alice, "noop", json!({})).await;
    app.wait_until_finished(&alice, &id, WITHIN).await;
    assert_eq!(app.db.notifications_for(&id).await, 1);
    let outbox: i64 = app.db.scalar("SELECT count(*) FROM email_outbox", &[]).await;
    assert_eq!(outbox, 0);
    assert!(mail.emails().await.is_empty());
}

#[actix_web::test]
async fn an_unusable_address_is_recorded_as_failed_and_not_retried() {
    let mail = MailServer::start().await;
    let app = spawn_app_with(email_to(mail.smtp_port), HandlerRegistry::builtin()).await;
    let caller = token_for("acme", "alice", "not an address");
    let id = app.create(&caller, "noop", json!({})).await;
    app.wait_until_finished(&caller, &id, WITHIN).await;
    eventually(WITHIN, "the email is given up on", || async {
        app.db.scalar::<String>("SELECT state::text FROM email_outbox", &[]).await == "failed"
    })
    .await;
    let attempts: i32 = app.db.scalar("SELECT attempts FROM email_outbox", &[]).await;
    assert_eq!(attempts, 1);
    assert!(mail.emails().await.is_empty());
}

#[actix_web::test]
async fn mail_written_while_smtp_is_down_goes_out_when_it_returns() {
    let port = free_port();
    let configure = email_to(port);
    let app = spawn_app_with(
        move |s| {
            configure(s);
            // Retries every 50-200 ms here: enough attempts to outlast the outage however slow
            // the machine (the shipped settings outlast about 50 minutes).
            s.email.max_attempts = 100_000;
        },
        HandlerRegistry::builtin(),
    )
    .await;
    let alice = token_for("acme", "alice", "alice@example.com");
    let mut jobs = Vec::new();
    for _ in 0..3 {
        jobs.push(app.create(&alice, "noop", json!({})).await);
    }
    eventually(WITHIN, "every email failed an attempt", || async {
        app.db
            .scalar::<i64>("SELECT count(*) FROM email_outbox WHERE attempts >= 1 AND last_error IS NOT NULL", &[])
            .await
            == 3
    })
    .await;
    let mail = MailServer::start_on(port).await;
    let emails = mail.wait_for(3, WITHIN).await;
    assert_eq!(emails.len(), 3);
    let mut ids: Vec<_> = emails.iter().map(|e| e["headers"]["message-id"].as_str().unwrap().to_owned()).collect();
    ids.sort();
    let mut expected: Vec<_> = jobs.iter().map(|id| format!("<job-{id}@example.com>")).collect();
    expected.sort();
    assert_eq!(ids, expected);
}
