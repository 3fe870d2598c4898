//! One-click unsubscribe (RFC 8058): the headers every email of a category
//! people may turn off carries, a GET that changes nothing (link scanners
//! GET every link), a POST that unsubscribes at once.

use std::time::Duration;

use errand::config::Settings;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

const WITHIN: Duration = Duration::from_secs(30);

/// `sleep` jobs are a required category.
fn sleep_required(s: &mut Settings) {
    s.notifications.preferences.required = vec!["sleep".into()];
}

/// Runs a job of `job_type` for `caller` and answers the email it sent (the `n`th of the run).
async fn emailed(app: &TestApp, mail: &MailServer, caller: &str, job_type: &str, n: usize) -> Value {
    let job = app.create(caller, job_type, json!({"ms": 1})).await;
    app.wait_until_finished(caller, &job, WITHIN).await;
    mail.wait_for(n, WITHIN).await.remove(n - 1)
}

/// The unsubscribe link's path, from the email's header `<https://…/unsubscribe/…>`.
async fn unsubscribe_path(mail: &MailServer, email: &Value) -> String {
    let value = mail.header(email, "List-Unsubscribe").await.expect("a List-Unsubscribe header");
    let url = value.trim_start_matches('<').trim_end_matches('>');
    assert!(url.starts_with("https://errand.example.com/unsubscribe/"), "{url}");
    url.trim_start_matches("https://errand.example.com").to_owned()
}

async fn email_on(app: &TestApp, caller: &str, category: &str) -> bool {
    let listed: Value = app.get(caller, "/me/notification-preferences").await.json().await.unwrap();
    let entry = listed["categories"].as_array().unwrap().iter().find(|e| e["category"] == category).unwrap();
    entry["channels"]["email"].as_bool().unwrap()
}

#[actix_web::test]
async fn an_email_carries_one_click_unsubscribe_unless_its_category_is_required() {
    let mail = MailServer::start().await;
    let app = TestApp::builder().configure(email_to(mail.smtp_port)).configure(sleep_required).spawn().await;
    let alice = token_for("acme", "alice", "alice@example.com");
    let email = emailed(&app, &mail, &alice, "noop", 1).await;
    unsubscribe_path(&mail, &email).await;
    let header = |email: Value, name: &'static str| {
        let mail = &mail;
        async move { mail.header(&email, name).await }
    };
    assert_eq!(header(email.clone(), "List-Unsubscribe-Post").await.as_deref(), Some("List-Unsubscribe=One-Click"));
    assert_eq!(header(email.clone(), "List-Id").await.as_deref(), Some("<noop.example.com>"));
    assert!(email["text"].as_str().unwrap().contains("/unsubscribe/"), "the text part has the link too");

    let required = emailed(&app, &mail, &alice, "sleep", 2).await;
    assert_eq!(header(required.clone(), "List-Unsubscribe").await, None, "a required category has no unsubscribe");
    assert_eq!(header(required, "List-Id").await.as_deref(), Some("<sleep.example.com>"));
}

#[actix_web::test]
async fn a_get_of_the_link_changes_nothing_and_a_post_unsubscribes_from_that_category_only() {
    let mail = MailServer::start().await;
    let app = TestApp::builder().configure(email_to(mail.smtp_port)).spawn().await;
    let alice = token_for("acme", "alice", "alice@example.com");
    let path = unsubscribe_path(&mail, &emailed(&app, &mail, &alice, "noop", 1).await).await;
    let url = format!("{}{path}", app.address);

    // What a link scanner does: nothing changes.
    for _ in 0..2 {
        let page = app.http.get(&url).send().await.unwrap();
        assert_eq!(page.status(), StatusCode::OK);
        let html = page.text().await.unwrap();
        assert!(html.contains(r#"<form method="post""#) && html.contains("Unsubscribe"), "{html}");
    }
    assert_eq!(app.http.head(&url).send().await.unwrap().status(), StatusCode::OK);
    assert!(email_on(&app, &alice, "noop").await, "a GET changed nothing");

    // What a mailbox provider's one click sends.
    let one_click = app.http.post(&url).body("List-Unsubscribe=One-Click").send().await.unwrap();
    assert_eq!(one_click.status(), StatusCode::OK);
    assert!(one_click.text().await.unwrap().contains("You are unsubscribed"));
    assert!(!email_on(&app, &alice, "noop").await);
    assert!(email_on(&app, &alice, "sleep").await, "other categories keep their emails");
    assert_eq!(app.http.post(&url).send().await.unwrap().status(), StatusCode::OK, "a second click is fine");

    let quiet = app.create(&alice, "noop", json!({})).await;
    app.wait_until_finished(&alice, &quiet, WITHIN).await;
    assert_eq!(app.db.notifications_for(&quiet).await, 1, "still in the app");
    mail.assert_all_sent(&app.db, 1).await;
}

#[actix_web::test]
async fn a_tampered_link_is_refused_and_changes_nothing() {
    let mail = MailServer::start().await;
    let app = TestApp::builder().configure(email_to(mail.smtp_port)).spawn().await;
    let alice = token_for("acme", "alice", "alice@example.com");
    let path = unsubscribe_path(&mail, &emailed(&app, &mail, &alice, "noop", 1).await).await;
    let (payload, sig) = path.rsplit_once('.').unwrap();
    let flipped = if sig.starts_with('0') { "1" } else { "0" };
    for tampered in
        [format!("{payload}.{flipped}{}", &sig[1..]), format!("{payload}x.{sig}"), "/unsubscribe/nope".into()]
    {
        let url = format!("{}{tampered}", app.address);
        for response in [app.http.get(&url).send().await.unwrap(), app.http.post(&url).send().await.unwrap()] {
            assert_eq!(response.status(), StatusCode::FORBIDDEN, "{tampered}");
            assert!(response.headers()["content-type"].to_str().unwrap().starts_with("text/html"));
        }
    }
    assert!(email_on(&app, &alice, "noop").await);
}
