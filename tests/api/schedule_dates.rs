//! Scheduled jobs whose dates move: `{"$date": …}` in a schedule's params
//! becomes each job's date of its occurrence, in the schedule's zone; and a
//! scheduled export's format.

use chrono::{DateTime, Days, TimeDelta, Utc};
use chrono_tz::Europe::Paris;
use reqwest::StatusCode;
use serde_json::{Value, json};

use super::schedules::{at, fire, scheduling_app};
use crate::helpers::*;

/// `POST /schedules/{job_type}` of `body` under a fresh key.
async fn schedule_of_type(app: &TestApp, token: &str, job_type: &str, body: Value) -> reqwest::Response {
    let url = format!("{}/schedules/{job_type}", app.address);
    let key = uuid::Uuid::new_v4().to_string();
    app.http.post(url).bearer_auth(token).header("Idempotency-Key", key).json(&body).send().await.unwrap()
}

/// The params and format of the job made for `occurrence`.
async fn job_made_for(app: &TestApp, occurrence: DateTime<Utc>) -> (Value, Option<String>) {
    let row = app
        .db
        .client()
        .await
        .query_one("SELECT params, format FROM jobs WHERE scheduled_for = $1", &[&occurrence])
        .await
        .unwrap();
    (row.get(0), row.get(1))
}

#[actix_web::test]
async fn a_scheduled_export_gets_last_week_s_dates_of_each_occurrence_in_its_format() {
    let app = scheduling_app(|_| {}).await;
    let alice = token("acme", "alice");
    let last_week = json!({"from": {"$date": "start_of_previous_week"}, "to": {"$date": "end_of_previous_week"}});
    let body = json!({"params": last_week, "format": "xlsx", "cron": "0 8 * * 1", "timezone": "Europe/Paris",
                      "overlap": "queue"});
    let made = schedule_of_type(&app, &alice, "export_sales_report", body).await;
    assert_eq!(made.status(), StatusCode::CREATED);
    let made: Value = made.json().await.unwrap();
    assert_eq!(made["params"], last_week, "the schedule keeps its expressions");
    assert_eq!(made["format"], "xlsx");

    let first = at(&made["next_run_at"]);
    for week in 0..2 {
        let occurrence = first + TimeDelta::weeks(week);
        assert_eq!(fire(&app, occurrence).await, 1);
        let monday = occurrence.with_timezone(&Paris).date_naive();
        let (params, format) = job_made_for(&app, occurrence).await;
        let day = |back: u64| (monday - Days::new(back)).format("%Y-%m-%d").to_string();
        assert_eq!(params, json!({"from": day(7), "to": day(1)}), "the week before {monday}");
        assert_eq!(format.as_deref(), Some("xlsx"));
    }
    let jobs: Value = app.get(&alice, "/jobs?type=export_sales_report").await.json().await.unwrap();
    assert_eq!(jobs["jobs"][0]["format"], "xlsx");
    assert_eq!(jobs["jobs"][0]["priority"], -10, "scheduled work's class");
}

#[actix_web::test]
async fn a_date_is_the_occurrence_s_on_the_zone_s_wall_clock_across_a_clock_change() {
    let app = scheduling_app(|s| {
        let noop = s.job_types.get_mut("noop").unwrap();
        noop.schedulable = true;
    })
    .await;
    let alice = token("acme", "alice");
    // 00:30 in Paris on 1 April, in summer time whatever the year, and still
    // 31 March in UTC; a week before, 25 March, in winter time whatever the
    // year (the clocks go forward on the last Sunday of March, 25 to 31, at 02:00).
    let params = json!({"day": {"$date": "today"}, "at": {"$datetime": "now"},
                        "eve": {"$datetime": "today-7d"}, "week": [{"$date": "start_of_week"}]});
    let body = json!({"params": params, "cron": "30 0 1 4 *", "timezone": "Europe/Paris"});
    let made: Value = schedule_of_type(&app, &alice, "noop", body).await.json().await.unwrap();
    let occurrence = at(&made["next_run_at"]);
    let local = occurrence.with_timezone(&Paris);
    assert_eq!(occurrence.format("%H:%M").to_string(), "22:30", "00:30 summer time is 22:30 UTC the day before");
    assert_eq!(fire(&app, occurrence).await, 1);
    let (made_with, format) = job_made_for(&app, occurrence).await;
    let date = local.date_naive();
    let monday = date - Days::new(u64::from(chrono::Datelike::weekday(&date).num_days_from_monday()));
    assert_eq!(made_with["day"], date.format("%Y-%m-%d").to_string(), "the wall clock's date, not UTC's");
    assert_eq!(made_with["at"], local.to_rfc3339());
    assert!(made_with["at"].as_str().unwrap().ends_with("+02:00"), "summer time: {made_with}");
    let eve = (date - Days::new(7)).format("%Y-%m-%dT00:00:00+01:00").to_string();
    assert_eq!(made_with["eve"], eve, "the week before began in winter time");
    assert_eq!(made_with["week"], json!([monday.format("%Y-%m-%d").to_string()]));
    assert_eq!(format, None, "a type that writes no file has no format");
}

#[actix_web::test]
async fn a_bad_expression_or_a_date_the_schema_refuses_is_a_422_naming_its_field() {
    let app = scheduling_app(|_| {}).await;
    let alice = token("acme", "alice");
    let body = |from: Value, format: &str| json!({"params": {"from": from, "to": {"$date": "today"}}, "format": format, "cron": "0 8 * * 1", "timezone": "UTC"});
    let cases = [
        (body(json!({"$date": "today-7x"}), "csv"), "invalid_params", Some("/params/from")),
        (body(json!({"$date": "yesterday"}), "csv"), "invalid_params", Some("/params/from")),
        // A datetime where the type's schema wants a date.
        (body(json!({"$datetime": "now"}), "csv"), "invalid_params", Some("/params/from")),
        (body(json!({"$date": "today-7d"}), "pdf"), "invalid_format", Some("format")),
    ];
    for (request, code, field) in cases {
        let refused = schedule_of_type(&app, &alice, "export_sales_report", request.clone()).await;
        let problem = assert_problem(refused, StatusCode::UNPROCESSABLE_ENTITY, code).await;
        assert_eq!(problem["field"].as_str(), field, "{request}: {problem}");
    }
    let count: i64 = app.db.scalar("SELECT count(*) FROM schedules", &[]).await;
    assert_eq!(count, 0);
}

#[actix_web::test]
async fn each_job_s_dates_are_checked_against_the_schema_and_an_occurrence_they_fail_is_skipped() {
    // Daily at 08:00 UTC; the type takes only the first occurrence's date.
    let now = Utc::now();
    let first_day = if chrono::Timelike::hour(&now) < 8 { now } else { now + TimeDelta::days(1) };
    let only = first_day.format("%Y-%m-%d").to_string();
    let schema = json!({"type": "object", "properties": {"day": {"type": "string", "pattern": format!("^{only}$")}}});
    let app = scheduling_app(move |s| {
        let noop = s.job_types.get_mut("noop").unwrap();
        noop.schedulable = true;
        noop.params_schema = Some(schema);
    })
    .await;
    let alice = token("acme", "alice");
    let body =
        json!({"params": {"day": {"$date": "today"}}, "cron": "0 8 * * *", "timezone": "UTC", "overlap": "queue"});
    let made = schedule_of_type(&app, &alice, "noop", body).await;
    assert_eq!(made.status(), StatusCode::CREATED, "the next occurrence's date passes");
    let first = at(&made.json::<Value>().await.unwrap()["next_run_at"]);
    assert_eq!(first.format("%Y-%m-%d").to_string(), only);
    assert_eq!(fire(&app, first).await, 1);
    assert_eq!(fire(&app, first + TimeDelta::days(1)).await, 0, "the next day's date fails the schema: skipped");
    assert_eq!(job_made_for(&app, first).await.0, json!({"day": only}));
}
