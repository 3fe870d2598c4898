//! Digests: a person who reads a category's emails as a digest gets, at
//! their digest time, one email of the ends still unread and still
//! downloadable, through a real SMTP server. The Scheduler fires digests
//! beside schedules, with the clock moved by the test (`FireDue { now }`).

use std::time::Duration;

use chrono::{DateTime, Utc};
use errand::actors::FireDue;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

const WITHIN: Duration = Duration::from_secs(30);
const SETTINGS: &str = "/me/notification-settings";
const NOOP: &str = "/me/notification-preferences/noop";

/// Fires what is due as of `now`; answers how many digests were written.
async fn fire(app: &TestApp, now: DateTime<Utc>) -> usize {
    app.ticks.fire_schedules.send(FireDue { now }).await.unwrap().digests
}

async fn noop_done(app: &TestApp, token: &str) -> String {
    let job = app.create(token, "noop", json!({})).await;
    app.wait_until_finished(token, &job, WITHIN).await;
    job
}

#[actix_web::test]
async fn a_digest_lists_once_what_is_still_unread_and_downloadable_and_marks_what_it_told() {
    let mail = MailServer::start().await;
    let app = TestApp::builder().configure(email_to(mail.smtp_port)).spawn().await;
    let alice = token_for("t1", "alice", "alice@example.com");
    let daily = json!({"timezone": "Europe/Paris", "quiet_hours": null, "digest": {"every": "day", "at": "08:00"}});
    let set = app.put_json(&alice, SETTINGS, daily.clone()).await;
    assert_eq!(set.status(), StatusCode::OK);
    assert_eq!(set.json::<Value>().await.unwrap(), daily);
    let chosen: Value = app.put_json(&alice, NOOP, json!({"email": "digest"})).await.json().await.unwrap();
    assert_eq!(chosen["channels"]["email"], "digest", "{chosen}");

    let (read, expired, told) =
        (noop_done(&app, &alice).await, noop_done(&app, &alice).await, noop_done(&app, &alice).await);
    for job in [&read, &expired, &told] {
        assert_eq!(app.db.email_state(job).await, "held", "no email of its own");
    }
    let notice = app.notifications_of(&alice, "job_completed").await;
    let read_notice = notice.iter().find(|n| n["job_id"] == read.as_str()).unwrap()["id"].as_str().unwrap().to_owned();
    let marked = app.post(&alice, &format!("/notifications/{read_notice}/read")).await;
    assert_eq!(marked.status(), StatusCode::NO_CONTENT);
    let gone = "UPDATE jobs SET result = '{\"expired\": true}' WHERE id = $1::text::uuid";
    assert_eq!(app.db.client().await.execute(gone, &[&expired]).await.unwrap(), 1);

    // The next 08:00 in Paris.
    let next: DateTime<Utc> =
        app.db.scalar("SELECT digest_next_at FROM notification_settings WHERE user_id = 'alice'", &[]).await;
    let local = next.with_timezone(&chrono_tz::Europe::Paris);
    assert_eq!(local.format("%H:%M").to_string(), "08:00");
    assert!(next > Utc::now() && next <= Utc::now() + chrono::Duration::days(1), "{next}");
    assert_eq!(fire(&app, next - chrono::Duration::minutes(1)).await, 0, "not yet");
    assert_eq!(fire(&app, next).await, 1);
    assert_eq!(fire(&app, next).await, 0, "once per occurrence");

    let email = &mail.wait_for(1, WITHIN).await[0];
    assert_eq!(email["subject"], "1 job finished since your last digest");
    let text = email["text"].as_str().unwrap();
    assert!(text.contains(&told), "the unread one, with its link: {text}");
    assert!(!text.contains(&read) && !text.contains(&expired), "neither the read nor the expired one: {text}");
    let id = mail.header(email, "Message-ID").await.unwrap();
    assert!(id.starts_with("<digest-"), "{id}");
    assert_eq!(app.db.email_state(&read).await, "dropped");
    assert_eq!(app.db.email_state(&expired).await, "dropped");
    assert_eq!(app.db.email_state(&told).await, "digested");
    let listed = "SELECT count(*) FROM email_outbox o JOIN email_outbox d ON d.id = o.digest_id
                  WHERE o.job_id = $1::text::uuid AND d.digest_at = $2";
    assert_eq!(app.db.scalar::<i64>(listed, &[&told, &next]).await, 1, "listed in that occurrence's digest");

    // The next day's digest has nothing to tell: no email.
    assert_eq!(fire(&app, next + chrono::Duration::days(1)).await, 0);
    mail.assert_all_sent(&app.db, 1).await;
}

#[actix_web::test]
async fn a_digest_is_for_an_optional_category_s_email_once_a_time_is_set_and_turning_it_off_sends_what_it_held() {
    let mail = MailServer::start().await;
    let app = TestApp::builder().configure(email_to(mail.smtp_port)).configure(with_alerts).spawn().await;
    let alice = token_for("t1", "alice", "alice@example.com");
    let early = app.put_json(&alice, NOOP, json!({"email": "digest"})).await;
    let problem = assert_problem(early, StatusCode::UNPROCESSABLE_ENTITY, "invalid_preference").await;
    assert!(problem["detail"].as_str().unwrap().contains("digest time"), "{problem}");

    for (body, why) in [
        (json!({"timezone": "UTC", "digest": {"every": "week"}}), "no such period"),
        (json!({"timezone": "UTC", "digest": {"every": "day"}}), "a day without its time"),
        (json!({"timezone": "UTC", "digest": {"every": "hour", "at": "08:00"}}), "an hour at a time"),
        (json!({"timezone": "UTC", "digest": {"every": "day", "at": "8am"}}), "not HH:MM"),
    ] {
        let refused = app.put_json(&alice, SETTINGS, body).await;
        let problem = assert_problem(refused, StatusCode::UNPROCESSABLE_ENTITY, "invalid_preference").await;
        assert!(problem["detail"].as_str().unwrap().contains("digest"), "{why}: {problem}");
    }
    let hourly = json!({"timezone": "UTC", "digest": {"every": "hour"}});
    let set: Value = app.put_json(&alice, SETTINGS, hourly).await.json().await.unwrap();
    assert_eq!(set["digest"], json!({"every": "hour"}));

    for (path, body, why) in [
        (NOOP, json!({"in_app": "digest"}), "only email has one"),
        ("/me/notification-preferences/alerts", json!({"email": "digest"}), "a required category's go at once"),
        (NOOP, json!({"email": "weekly"}), "no such setting"),
    ] {
        let refused = app.put_json(&alice, path, body).await;
        let problem = assert_problem(refused, StatusCode::UNPROCESSABLE_ENTITY, "invalid_preference").await;
        assert!(problem["detail"].is_string(), "{why}");
    }
    assert_eq!(app.put_json(&alice, NOOP, json!({"email": "digest"})).await.status(), StatusCode::OK);
    let held = noop_done(&app, &alice).await;
    assert_eq!(app.db.email_state(&held).await, "held");

    // No digest any more: what it held goes on its own, and the category's
    // emails go at once again.
    let none = app.put_json(&alice, SETTINGS, json!({"timezone": "UTC"})).await;
    assert_eq!(none.status(), StatusCode::OK);
    let emails = mail.wait_for(1, WITHIN).await;
    assert!(emails[0]["text"].as_str().unwrap().contains(&held), "the held job's own email");
    let standing: Value = app.get(&alice, "/me/notification-preferences").await.json().await.unwrap();
    let noop = standing["categories"].as_array().unwrap().iter().find(|c| c["category"] == "noop").unwrap();
    assert_eq!(noop["channels"]["email"], true, "{noop}");
    let instant = noop_done(&app, &alice).await;
    assert_ne!(app.db.email_state(&instant).await, "held", "at once again");
    mail.assert_all_sent(&app.db, 2).await;
}

#[actix_web::test]
async fn a_token_s_zoneinfo_is_the_person_s_zone_until_they_set_one() {
    let app = spawn_app().await;
    let with_zone = |user: &str, zone: &str| {
        let claims = json!({"sub": user, "tenant": "t1", "zoneinfo": zone, "exp": now_secs() + 3600});
        errand::domain::tokens::TokenIssuer::new(SECRET).unwrap().issue(&claims).unwrap()
    };
    let tokyo = with_zone("alice", "Asia/Tokyo");
    let shown: Value = app.get(&tokyo, SETTINGS).await.json().await.unwrap();
    assert_eq!(shown["timezone"], "Asia/Tokyo");
    let quiet = json!({"quiet_hours": {"start": "22:00", "end": "07:00"}});
    let set: Value = app.put_json(&tokyo, SETTINGS, quiet).await.json().await.unwrap();
    assert_eq!(set["timezone"], "Asia/Tokyo", "the claim's, kept");
    let kept: String = app.db.scalar("SELECT timezone FROM notification_settings WHERE user_id = 'alice'", &[]).await;
    assert_eq!(kept, "Asia/Tokyo");

    let paris = with_zone("alice", "Europe/Paris");
    let shown: Value = app.get(&paris, SETTINGS).await.json().await.unwrap();
    assert_eq!(shown["timezone"], "Asia/Tokyo", "as set, whatever a later token says");

    // A zone no one knows is no zone: bob has none to default to.
    let nowhere = with_zone("bob", "Mars/Olympus");
    let shown: Value = app.get(&nowhere, SETTINGS).await.json().await.unwrap();
    assert_eq!(shown["timezone"], Value::Null);
    let refused = app.put_json(&nowhere, SETTINGS, json!({"quiet_hours": null})).await;
    assert_problem(refused, StatusCode::UNPROCESSABLE_ENTITY, "invalid_preference").await;
}
