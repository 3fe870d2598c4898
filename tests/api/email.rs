//! Completion emails, end to end through a real SMTP server.

use std::time::Duration;

use errand::domain::Locale;
use errand::jobs::HandlerRegistry;
use serde_json::{Value, json};

use crate::helpers::*;

const WITHIN: Duration = Duration::from_secs(30);

fn addressed_to(email: &Value) -> &str {
    email["to"][0]["address"].as_str().unwrap()
}

/// The signed link in an email's text part.
fn link_in(email: &Value) -> String {
    let text = email["text"].as_str().unwrap();
    text.split_whitespace().find(|word| word.contains("/links/jobs/")).expect("a link in the email").to_owned()
}

#[actix_web::test]
async fn an_emailed_export_says_what_and_how_big_and_its_link_downloads_the_file_without_a_token() {
    let mail = MailServer::start().await;
    let (app, _dir) = spawn_exporting_app(email_to(mail.smtp_port)).await;
    let alice = token_for("demo-1", "alice", "alice@example.com");
    let id = app.create(&alice, "export_sales_report", json!({"from": "2000-01-01", "to": "2100-01-01"})).await;
    let job = app.wait_until_finished(&alice, &id, WITHIN).await;
    assert_eq!(job["status"], "completed", "{job}");
    let email = &mail.wait_for(1, WITHIN).await[0];
    assert_eq!(email["subject"], "Your sales report export is ready");
    let text = email["text"].as_str().unwrap();
    let rows = job["result"]["row_count"].as_u64().unwrap();
    assert!(rows < 1000, "{rows} rows: the expected text below has no thousands separator");
    let expires = chrono::DateTime::parse_from_rfc3339(job["result"]["expires_at"].as_str().unwrap()).unwrap();
    for expected in [
        "From: 2000-01-01".to_owned(),
        "To: 2100-01-01".to_owned(),
        format!("Size: {rows} rows, "),
        job["result"]["file_name"].as_str().unwrap().to_owned(),
        format!("works until {}", expires.format("%-d %B %Y, %H:%M UTC")),
    ] {
        assert!(text.contains(&expected), "{expected:?} in {text}");
    }

    let opened = app.open_link(&link_in(email)).await;
    assert_eq!(opened.status(), 303, "to a fresh download URL");
    let download = opened.headers()["location"].to_str().unwrap().to_owned();
    assert!(download.contains("/files/") && download.contains("expires="), "{download}");
    let via_link = app.fetch_signed(&download).await.bytes().await.unwrap();
    let via_api = app.fetch_signed(job["result_url"].as_str().unwrap()).await.bytes().await.unwrap();
    assert_eq!(via_link, via_api, "the same file");
    let short_lived = download.split("expires=").nth(1).unwrap().split('&').next().unwrap().parse::<i64>().unwrap();
    assert!(short_lived < expires.timestamp() - 3600, "the download URL is short-lived, unlike the link");
}

#[actix_web::test]
async fn a_tampered_foreign_or_expired_link_is_refused_with_a_page_for_a_person() {
    const LINK_SECRET: &str = "a-link-secret-of-its-own-0123456789abcdef";
    let mail = MailServer::start().await;
    let configure = |s: &mut errand::config::Settings| {
        email_to(mail.smtp_port)(s);
        s.email.link_secret = Some(LINK_SECRET.to_owned().try_into().unwrap());
    };
    let app = spawn_app_with(configure, HandlerRegistry::builtin()).await;
    let alice = token_for("acme", "alice", "alice@example.com");
    let id = app.create(&alice, "noop", json!({})).await;
    let link = link_in(&mail.wait_for(1, WITHIN).await[0]);
    let done = app.open_link(&link).await;
    assert_eq!(done.status(), 200, "a job without a file: a page saying it is done");
    assert!(done.text().await.unwrap().contains("Your test job is done"));

    let other_job = uuid::Uuid::now_v7().to_string();
    let tampered = [
        link.replace(&id, &other_job),
        link.replace("user=alice", "user=bob"),
        link.replace("tenant=acme", "tenant=globex"),
        link.replace("sig=", "sig=00"),
        link.split("&sig=").next().unwrap().to_owned(),
    ];
    for link in tampered {
        let refused = app.open_link(&link).await;
        assert_eq!(refused.status(), 403, "{link}");
        assert_eq!(refused.headers()["content-type"], "text/html; charset=utf-8");
        assert!(refused.text().await.unwrap().contains("This link is not valid"));
    }
    // A link whose time is up, signed with the configured key.
    let links = errand::outbound::links::JobLinks::new(
        LINK_SECRET.as_bytes().to_vec(),
        &errand::config::HttpUrl::parse("https://errand.example.com/").unwrap(),
    );
    let (tenant, user) =
        (errand::domain::TenantId::parse("acme").unwrap(), errand::domain::UserId::parse("alice").unwrap());
    let job = errand::domain::JobId(uuid::Uuid::parse_str(&id).unwrap());
    let fresh = links.link(job, &tenant, &user, chrono::Utc::now() + chrono::Duration::hours(1), Locale::ENGLISH);
    assert_eq!(app.open_link(&fresh).await.status(), 200, "the test signs links as errand does");
    let expired = links.link(job, &tenant, &user, chrono::Utc::now() - chrono::Duration::seconds(1), Locale::ENGLISH);
    let refused = app.open_link(&expired).await;
    assert_eq!(refused.status(), 403);
    assert!(refused.text().await.unwrap().contains("This link has expired"));
}

#[actix_web::test]
async fn a_finished_job_sends_one_email_with_a_signed_link() {
    let mail = MailServer::start().await;
    let app = spawn_app_with(email_to(mail.smtp_port), HandlerRegistry::builtin()).await;
    let alice = token_for("acme", "alice", "alice@example.com");
    let id = app.create(&alice, "noop", json!({})).await;
    let emails = mail.wait_for(1, WITHIN).await;
    let email = &emails[0];
    assert_eq!(addressed_to(email), "alice@example.com");
    assert_eq!(email["subject"], "Your test job is ready");
    let link = link_in(email);
    assert!(link.starts_with(&format!("https://errand.example.com/links/jobs/{id}?")), "{link}");
    // The HTML template escapes what it inserts ('/' becomes "&#x2f;", '&' "&amp;").
    let html = email["html"].as_str().unwrap().replace("&#x2f;", "/").replace("&amp;", "&");
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
    let text = failure["text"].as_str().unwrap();
    assert!(text.contains("What went wrong: planned failure 3 of 5"), "{text}");
    assert!(text.contains("Fail times: 5"), "the params: {text}");
    let page = app.open_link(&link_in(failure)).await;
    assert_eq!(page.status(), 200, "a failed job's link shows its error");
    assert!(page.text().await.unwrap().contains("What went wrong: planned failure 3 of 5"));
    // One email per job, however many attempts it took.
    mail.assert_all_sent(&app.db, 2).await;
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
            s.email.max_attempts = nonzero(100_000);
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
