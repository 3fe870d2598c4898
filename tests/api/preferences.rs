//! Notification preferences: per category and channel, each user's own,
//! read where a job ends, required categories that stay on.

use std::time::Duration;

use errand::config::{HandlerKind, JobTypeSettings, Settings};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

const WITHIN: Duration = Duration::from_secs(30);
const PREFERENCES: &str = "/me/notification-preferences";

/// noop jobs in the category `bulk`; `alert` jobs in `alerts`, which is required.
fn categories(s: &mut Settings) {
    s.job_types.get_mut("noop").unwrap().category = Some("bulk".into());
    let mut alert = JobTypeSettings::new(HandlerKind::Registered("noop".into()));
    alert.category = Some("alerts".into());
    s.job_types.insert("alert".into(), alert);
    s.notifications.preferences.required = vec!["alerts".into()];
}

async fn preferences(app: &TestApp, caller: &str) -> Value {
    let response = app.get(caller, PREFERENCES).await;
    assert_eq!(response.status(), StatusCode::OK);
    response.json().await.unwrap()
}

fn entry<'a>(preferences: &'a Value, category: &str) -> &'a Value {
    let all = preferences["categories"].as_array().unwrap();
    all.iter().find(|entry| entry["category"] == category).unwrap_or_else(|| panic!("{category} in {preferences}"))
}

async fn choose(app: &TestApp, caller: &str, category: &str, body: Value) -> reqwest::Response {
    app.put_json(caller, &format!("{PREFERENCES}/{category}"), body).await
}

#[actix_web::test]
async fn every_category_is_listed_with_its_defaults_and_whether_it_is_required() {
    let app = TestApp::builder().configure(categories).spawn().await;
    let listed = preferences(&app, &token("acme", "alice")).await;
    assert_eq!(
        entry(&listed, "bulk"),
        &json!({"category": "bulk", "required": false, "channels": {"in_app": true, "email": true},
                "sources": {"in_app": "config", "email": "config"}})
    );
    assert_eq!(entry(&listed, "alerts")["required"], true);
    // A type without a category of its own is in its own name's.
    assert_eq!(entry(&listed, "sleep")["channels"], json!({"in_app": true, "email": true}));
    let names: Vec<&str> =
        listed["categories"].as_array().unwrap().iter().map(|e| e["category"].as_str().unwrap()).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted, "in name order, each once");
    assert!(!names.contains(&"noop"), "noop is in bulk: {names:?}");
}

#[actix_web::test]
async fn a_change_counts_from_the_next_job_end_for_the_app_and_email_alike() {
    let mail = MailServer::start().await;
    let app = TestApp::builder().configure(email_to(mail.smtp_port)).configure(categories).spawn().await;
    let alice = token_for("acme", "alice", "alice@example.com");

    let changed = choose(&app, &alice, "bulk", json!({"email": false})).await;
    assert_eq!(changed.status(), StatusCode::OK);
    let changed: Value = changed.json().await.unwrap();
    assert_eq!(changed["channels"], json!({"in_app": true, "email": false}), "the other channel as it was");
    let quiet = app.create(&alice, "noop", json!({})).await;
    app.wait_until_finished(&alice, &quiet, WITHIN).await;
    assert_eq!(app.db.notifications_for(&quiet).await, 1, "in the app");

    choose(&app, &alice, "bulk", json!({"in_app": false, "email": true})).await;
    let mailed = app.create(&alice, "noop", json!({})).await;
    app.wait_until_finished(&alice, &mailed, WITHIN).await;
    assert_eq!(app.db.notifications_for(&mailed).await, 0, "not in the app");
    // One email, the second job's: the first's was never written to the outbox.
    mail.assert_all_sent(&app.db, 1).await;
    let feed: Value = app.get(&alice, "/notifications").await.json().await.unwrap();
    let jobs: Vec<&str> =
        feed["notifications"].as_array().unwrap().iter().map(|n| n["job_id"].as_str().unwrap()).collect();
    assert_eq!(jobs, [quiet.as_str()], "the feed has the first job only");
}

#[actix_web::test]
async fn a_required_category_cannot_be_turned_off() {
    let mail = MailServer::start().await;
    let app = TestApp::builder().configure(email_to(mail.smtp_port)).configure(categories).spawn().await;
    let alice = token_for("acme", "alice", "alice@example.com");
    let refused = choose(&app, &alice, "alerts", json!({"email": false})).await;
    let problem = assert_problem(refused, StatusCode::UNPROCESSABLE_ENTITY, "invalid_preference").await;
    assert!(problem["detail"].as_str().unwrap().contains("required"), "{problem}");
    assert_eq!(choose(&app, &alice, "alerts", json!({"email": true})).await.status(), StatusCode::OK);
    assert_eq!(entry(&preferences(&app, &alice).await, "alerts")["channels"]["email"], true);
    let alert = app.create(&alice, "alert", json!({})).await;
    app.wait_until_finished(&alice, &alert, WITHIN).await;
    assert_eq!(app.db.notifications_for(&alert).await, 1);
    mail.assert_all_sent(&app.db, 1).await;
}

#[actix_web::test]
async fn unknown_categories_channels_and_values_are_refused() {
    let app = TestApp::builder().configure(categories).spawn().await;
    let alice = token("acme", "alice");
    for (category, body) in [
        ("nope", json!({"email": false})),
        ("noop", json!({"email": false})),
        ("bulk", json!({"sms": false})),
        ("bulk", json!({"email": "no"})),
        ("bulk", json!({"email": null})),
    ] {
        let refused = choose(&app, &alice, category, body.clone()).await;
        assert_problem(refused, StatusCode::UNPROCESSABLE_ENTITY, "invalid_preference").await;
    }
    assert_problem(choose(&app, &alice, "bulk", json!([])).await, StatusCode::BAD_REQUEST, "bad_request").await;
    assert_eq!(entry(&preferences(&app, &alice).await, "bulk")["channels"], json!({"in_app": true, "email": true}));
}

#[actix_web::test]
async fn a_choice_is_the_users_own() {
    let app = TestApp::builder().configure(categories).spawn().await;
    let alice = token("acme", "alice");
    assert_eq!(choose(&app, &alice, "bulk", json!({"in_app": false})).await.status(), StatusCode::OK);
    for other in [token("acme", "bob"), token("globex", "alice")] {
        assert_eq!(entry(&preferences(&app, &other).await, "bulk")["channels"]["in_app"], true);
        let job = app.create(&other, "noop", json!({})).await;
        app.wait_until_finished(&other, &job, WITHIN).await;
        assert_eq!(app.db.notifications_for(&job).await, 1, "the others still hear of their jobs");
    }
}

#[actix_web::test]
async fn required_categories_can_be_listed_in_the_environment() {
    let db = TestDb::create().await;
    let errand = ErrandProcess::start(&db, &[("ERRAND_NOTIFICATIONS__PREFERENCES__REQUIRED", "noop,sleep")]);
    let response = errand.get(&token("acme", "alice"), PREFERENCES).await;
    let listed: Value = response.json().await.unwrap();
    assert_eq!(entry(&listed, "noop")["required"], true, "{listed}");
    assert_eq!(entry(&listed, "sleep")["required"], true, "{listed}");
}

#[actix_web::test]
async fn an_operators_cancel_of_a_waiting_job_keeps_to_the_owners_preferences() {
    let mail = MailServer::start().await;
    let app = TestApp::builder()
        .configure(email_to(mail.smtp_port))
        .configure(categories)
        .configure(|s| s.workers.global_limit = 0) // the jobs wait: an operator cancels them waiting
        .spawn()
        .await;
    let (alice, ops) = (token_for("acme", "alice", "alice@example.com"), operator_token("olga"));
    assert_eq!(choose(&app, &alice, "bulk", json!({"email": false})).await.status(), StatusCode::OK);
    let quiet = app.create(&alice, "noop", json!({})).await;
    assert_eq!(app.post(&ops, &format!("/admin/jobs/{quiet}/cancel")).await.status(), StatusCode::OK);
    assert_eq!(app.db.notifications_for(&quiet).await, 1, "in the app");
    let mailed = app.create(&alice, "sleep", json!({"ms": 1})).await;
    assert_eq!(app.post(&ops, &format!("/admin/jobs/{mailed}/cancel")).await.status(), StatusCode::OK);
    // One email: the sleep job's; the noop job's category has email off.
    mail.assert_all_sent(&app.db, 1).await;
}
