//! A tenant's default notification preferences: what its users get until
//! they choose (a required category, then the user's choice, then the
//! tenant's, then the configuration's), set by its admins, audited, and
//! read in the statement that ends each job.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

const WITHIN: Duration = Duration::from_secs(30);
const DEFAULTS: &str = "/tenant/notification-defaults";

/// `category`'s entry in a `{"categories": [...]}` answer.
async fn entry(app: &TestApp, token: &str, path: &str, category: &str) -> Value {
    let page: Value = app.get(token, path).await.json().await.unwrap();
    page["categories"].as_array().unwrap().iter().find(|c| c["category"] == category).unwrap().clone()
}

/// How many emails `token`'s user's `noop` job's end wrote.
async fn emails_of_a_noop(app: &TestApp, token: &str) -> i64 {
    let job = app.create(token, "noop", json!({})).await;
    app.wait_until_finished(token, &job, WITHIN).await;
    app.db.scalar("SELECT count(*) FROM email_outbox WHERE job_id = $1::text::uuid", &[&job]).await
}

#[actix_web::test]
async fn a_tenant_s_default_comes_after_its_user_s_own_choice_and_before_the_configuration_s_and_says_so() {
    let mail = MailServer::start().await;
    let app = TestApp::builder().configure(email_to(mail.smtp_port)).configure(with_alerts).spawn().await;
    let admin = tenant_admin_token("t1", "ada");
    let (alice, bob) = (token_for("t1", "alice", "alice@example.com"), token_for("t1", "bob", "bob@example.com"));
    let carol = token_for("t2", "carol", "carol@example.com");
    let mine = "/me/notification-preferences";
    let before = entry(&app, &alice, mine, "noop").await;
    assert_eq!(before["channels"]["email"], true);
    assert_eq!(before["sources"]["email"], "config");
    assert_eq!(entry(&app, &alice, mine, "alerts").await["sources"]["email"], "required");

    let set = app.put_json(&admin, &format!("{DEFAULTS}/noop"), json!({"email": false})).await;
    assert_eq!(set.status(), StatusCode::OK);
    let set: Value = set.json().await.unwrap();
    assert_eq!((&set["channels"]["email"], &set["sources"]["email"]), (&json!(false), &json!("tenant")));
    assert_eq!((&set["channels"]["in_app"], &set["sources"]["in_app"]), (&json!(true), &json!("config")));
    assert_eq!(app.put_json(&bob, &format!("{mine}/noop"), json!({"email": true})).await.status(), StatusCode::OK);

    let (for_alice, for_bob) = (entry(&app, &alice, mine, "noop").await, entry(&app, &bob, mine, "noop").await);
    assert_eq!((&for_alice["channels"]["email"], &for_alice["sources"]["email"]), (&json!(false), &json!("tenant")));
    assert_eq!((&for_bob["channels"]["email"], &for_bob["sources"]["email"]), (&json!(true), &json!("user")));
    assert_eq!(entry(&app, &carol, mine, "noop").await["sources"]["email"], "config", "another tenant's are its own");
    assert_eq!(emails_of_a_noop(&app, &alice).await, 0, "the tenant's default, read as the job ended");
    assert_eq!(emails_of_a_noop(&app, &bob).await, 1, "bob's own choice first");
    assert_eq!(emails_of_a_noop(&app, &carol).await, 1);

    // `null` gives the channel back to the configuration.
    let back: Value =
        app.put_json(&admin, &format!("{DEFAULTS}/noop"), json!({"email": null})).await.json().await.unwrap();
    assert_eq!((&back["channels"]["email"], &back["sources"]["email"]), (&json!(true), &json!("config")));
    assert_eq!(emails_of_a_noop(&app, &alice).await, 1);
    let audited = "SELECT count(*) FROM operator_actions
                   WHERE action = 'notification_defaults' AND operator = 'tenant_admin:t1:ada'
                     AND filter @> '{\"tenant\": \"t1\", \"category\": \"noop\"}'";
    assert_eq!(app.db.scalar::<i64>(audited, &[]).await, 2, "each change");
    let listed = entry(&app, &admin, DEFAULTS, "alerts").await;
    assert_eq!(listed["required"], true);
}

#[actix_web::test]
async fn only_a_tenant_admin_sets_defaults_and_only_to_what_a_user_could_choose() {
    let mail = MailServer::start().await;
    let app = TestApp::builder().configure(email_to(mail.smtp_port)).configure(with_alerts).spawn().await;
    let admin = tenant_admin_token("t1", "ada");
    let alice = token_for("t1", "alice", "alice@example.com");
    assert_problem(app.get(&alice, DEFAULTS).await, StatusCode::FORBIDDEN, "forbidden").await;
    let not_hers = app.put_json(&alice, &format!("{DEFAULTS}/noop"), json!({"email": false})).await;
    assert_problem(not_hers, StatusCode::FORBIDDEN, "forbidden").await;
    for (category, body, why) in [
        ("alerts", json!({"email": false}), "a required category cannot be turned off"),
        ("alerts", json!({"email": "digest"}), "a required category's emails go at once"),
        ("noop", json!({"in_app": "digest"}), "only email has a digest"),
        ("noop", json!({"sms": true}), "no such channel"),
        ("noop", json!({"email": "weekly"}), "no such setting"),
        ("nothing", json!({"email": false}), "no such category"),
    ] {
        let refused = app.put_json(&admin, &format!("{DEFAULTS}/{category}"), body).await;
        let problem = assert_problem(refused, StatusCode::UNPROCESSABLE_ENTITY, "invalid_preference").await;
        assert!(problem["detail"].is_string(), "{why}");
    }

    // A digest by default: held for a user who set a digest time, at once for one who did not.
    let digest: Value =
        app.put_json(&admin, &format!("{DEFAULTS}/noop"), json!({"email": "digest"})).await.json().await.unwrap();
    assert_eq!(digest["channels"]["email"], "digest");
    let hourly = json!({"timezone": "UTC", "digest": {"every": "hour"}});
    assert_eq!(app.put_json(&alice, "/me/notification-settings", hourly).await.status(), StatusCode::OK);
    let bob = token_for("t1", "bob", "bob@example.com");
    let (held, sent) = (app.create(&alice, "noop", json!({})).await, app.create(&bob, "noop", json!({})).await);
    app.wait_until_finished(&alice, &held, WITHIN).await;
    app.wait_until_finished(&bob, &sent, WITHIN).await;
    assert_eq!(app.db.email_state(&held).await, "held");
    assert_ne!(app.db.email_state(&sent).await, "held");
    assert_eq!(entry(&app, &alice, "/me/notification-preferences", "noop").await["channels"]["email"], "digest");
}
