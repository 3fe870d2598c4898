//! Quiet hours: a person's emails and Web Push wait, in their time zone,
//! until their quiet hours end; a required category's do not. A quiet hour
//! is the outbox row's `next_attempt_at`, written with the job's end.

use std::time::Duration;

use chrono::{DateTime, Timelike, Utc};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

const WITHIN: Duration = Duration::from_secs(30);
const SETTINGS: &str = "/me/notification-settings";

fn at(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&Utc)
}

async fn quiet_until(app: &TestApp, user: &str, when: DateTime<Utc>) -> DateTime<Utc> {
    app.db.scalar("SELECT errand_quiet_until('t1', $1, $2)", &[&user, &when]).await
}

#[actix_web::test]
async fn quiet_hours_end_at_the_next_local_end_across_midnight_and_a_change_of_clocks() {
    let app = spawn_app().await;
    let alice = token("t1", "alice");
    let paris = json!({"timezone": "Europe/Paris", "quiet_hours": {"start": "21:00", "end": "08:00"}, "digest": null});
    let set = app.put_json(&alice, SETTINGS, paris.clone()).await;
    assert_eq!(set.status(), StatusCode::OK);
    assert_eq!(set.json::<Value>().await.unwrap(), paris);
    assert_eq!(app.get(&alice, SETTINGS).await.json::<Value>().await.unwrap(), paris);
    for (when, until) in [
        ("2026-07-01T18:59:00Z", "2026-07-01T18:59:00Z"), // 20:59 in Paris (summer, UTC+2): not yet
        ("2026-07-01T19:00:00Z", "2026-07-02T06:00:00Z"), // 21:00: until 08:00 the next day
        ("2026-07-02T01:00:00Z", "2026-07-02T06:00:00Z"), // 03:00: until 08:00 the same day
        ("2026-07-02T06:00:00Z", "2026-07-02T06:00:00Z"), // 08:00: over
        ("2026-03-28T21:30:00Z", "2026-03-29T06:00:00Z"), // 22:30 winter time; 08:00 is summer time
        ("2026-12-24T20:00:00Z", "2026-12-25T07:00:00Z"), // 21:00 in winter (UTC+1)
    ] {
        assert_eq!(quiet_until(&app, "alice", at(when)).await, at(until), "at {when}");
    }
    let noon = json!({"timezone": "Asia/Tokyo", "quiet_hours": {"start": "12:00", "end": "13:30"}});
    assert_eq!(app.put_json(&alice, SETTINGS, noon).await.status(), StatusCode::OK);
    assert_eq!(quiet_until(&app, "alice", at("2026-07-01T03:15:00Z")).await, at("2026-07-01T04:30:00Z"));
    assert_eq!(quiet_until(&app, "alice", at("2026-07-01T04:30:00Z")).await, at("2026-07-01T04:30:00Z"));
    assert_eq!(quiet_until(&app, "bob", at("2026-07-01T03:15:00Z")).await, at("2026-07-01T03:15:00Z"), "none set");
    let bobs: Value = app.get(&token("t1", "bob"), SETTINGS).await.json().await.unwrap();
    assert_eq!(bobs, json!({"timezone": null, "quiet_hours": null, "digest": null}));

    for (body, why) in [
        (json!({"quiet_hours": {"start": "21:00", "end": "08:00"}}), "no time zone"),
        (json!({"timezone": "Mars/Olympus"}), "an unknown zone"),
        (json!({"timezone": "UTC", "quiet_hours": {"start": "9pm", "end": "08:00"}}), "not HH:MM"),
        (json!({"timezone": "UTC", "quiet_hours": {"start": "08:00", "end": "08:00"}}), "no length"),
    ] {
        let refused = app.put_json(&alice, SETTINGS, body).await;
        let problem = assert_problem(refused, StatusCode::UNPROCESSABLE_ENTITY, "invalid_preference").await;
        assert!(problem["detail"].is_string(), "{why}");
    }
    let cleared = app.put_json(&alice, SETTINGS, json!({"timezone": "UTC", "quiet_hours": null})).await;
    assert_eq!(cleared.status(), StatusCode::OK);
    assert_eq!(quiet_until(&app, "alice", at("2026-07-01T03:15:00Z")).await, at("2026-07-01T03:15:00Z"));
}

#[actix_web::test]
async fn within_quiet_hours_an_end_s_email_and_push_wait_for_their_end_and_a_required_one_goes_at_once() {
    let (mail, push) = (MailServer::start().await, PushService::start());
    let app =
        TestApp::builder().configure(email_to(mail.smtp_port)).configure(push_on).configure(with_alerts).spawn().await;
    let alice = token_for("t1", "alice", "alice@example.com");
    assert_eq!(app.post_json(&alice, "/me/push-subscriptions", push.subscription("phone").await).await.status(), 201);
    // Quiet from an hour ago to an hour from now, in UTC.
    let now = Utc::now();
    let hh_mm = |t: DateTime<Utc>| format!("{:02}:{:02}", t.hour(), t.minute());
    let (start, end) = (hh_mm(now - chrono::Duration::hours(1)), hh_mm(now + chrono::Duration::hours(1)));
    let quiet = json!({"timezone": "UTC", "quiet_hours": {"start": start, "end": end}});
    assert_eq!(app.put_json(&alice, SETTINGS, quiet).await.status(), StatusCode::OK);

    let held = app.create(&alice, "noop", json!({})).await;
    app.wait_until_finished(&alice, &held, WITHIN).await;
    let alert = app.create(&alice, "alert", json!({})).await;
    app.wait_until_finished(&alice, &alert, WITHIN).await;
    let emails = mail.wait_for(1, WITHIN).await;
    let pushes = push.wait_for(1, WITHIN).await;
    assert_eq!(pushes[0]["payload"]["job_id"], alert.as_str(), "the required one, at once");
    assert_eq!(emails.len(), 1);

    let waiting = "SELECT next_attempt_at, attempts FROM email_outbox WHERE job_id = $1::text::uuid
                   UNION ALL SELECT next_attempt_at, attempts FROM push_outbox WHERE job_id = $1::text::uuid";
    let db = app.db.client().await;
    let rows = db.query(waiting, &[&held]).await.unwrap();
    assert_eq!(rows.len(), 2, "an email and a push, written with the end");
    for row in &rows {
        let (due, attempts): (DateTime<Utc>, i32) = (row.get(0), row.get(1));
        assert_eq!(attempts, 0, "not tried while quiet");
        let end_of_quiet = (now + chrono::Duration::hours(1)).with_second(0).unwrap().with_nanosecond(0).unwrap();
        assert_eq!(due, end_of_quiet, "due when the quiet hours end");
    }

    // The quiet hours end (the rows' clock moved to now): both go.
    let ended = "UPDATE email_outbox SET next_attempt_at = now() WHERE job_id = $1::text::uuid";
    assert_eq!(db.execute(ended, &[&held]).await.unwrap(), 1);
    assert_eq!(db.execute(&ended.replace("email_outbox", "push_outbox"), &[&held]).await.unwrap(), 1);
    let emails = mail.wait_for(2, WITHIN).await;
    let pushes = push.wait_for(2, WITHIN).await;
    assert_eq!((emails.len(), pushes.len()), (2, 2));
    assert!(pushes.iter().any(|p| p["payload"]["job_id"] == held.as_str()));
}
