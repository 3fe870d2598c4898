//! `POST /jobs/{type}`: creation, replay, key reuse, and every way to get it wrong.

use futures_util::future::join_all;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

#[actix_web::test]
async fn a_new_key_creates_a_processing_job_and_answers_202_at_once() {
    let app = spawn_app().await;
    let alice = token("acme", "alice");
    let response = app.submit(&alice, "sleep", "key-1", json!({"ms": 10, "fail_times": 0})).await;
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    assert_eq!(response.headers()["retry-after"], "1");
    let location = response.headers()["location"].to_str().unwrap().to_owned();
    let job: Value = response.json().await.unwrap();
    assert_eq!(location, format!("/jobs/{}", job["id"].as_str().unwrap()));
    let id = uuid::Uuid::parse_str(job["id"].as_str().unwrap()).unwrap();
    assert_eq!(id.get_version_num(), 7);
    assert_eq!(job["status"], "processing");
    assert_eq!(job["type"], "sleep");
    assert_eq!(job["params"], json!({"ms": 10, "fail_times": 0}));
    assert_eq!(job["result_url"], Value::Null);
    assert_eq!(job["error_message"], Value::Null);
    assert_eq!(job["completed_at"], Value::Null);
    assert!(chrono::DateTime::parse_from_rfc3339(job["created_at"].as_str().unwrap()).is_ok());
}

#[actix_web::test]
async fn the_same_key_and_params_replay_the_job_whatever_the_key_order() {
    let app = spawn_app().await;
    let alice = token("acme", "alice");
    let first = app.submit(&alice, "sleep", "k", json!({"ms": 1, "fail_times": 0})).await;
    let first: Value = first.json().await.unwrap();
    let again = app.submit(&alice, "sleep", "k", json!({"fail_times": 0, "ms": 1})).await;
    assert_eq!(again.status(), StatusCode::OK);
    assert_eq!(again.headers()["idempotent-replayed"], "true");
    let again: Value = again.json().await.unwrap();
    assert_eq!(again["id"], first["id"]);
    let jobs: i64 = app.db.scalar("SELECT count(*) FROM jobs", &[]).await;
    assert_eq!(jobs, 1);
}

#[actix_web::test]
async fn a_replay_after_completion_shows_the_current_status_and_adds_no_work() {
    let app = spawn_app().await;
    let alice = token("acme", "alice");
    let id = app.create(&alice, "noop", json!({})).await;
    app.wait_until_finished(&alice, &id, std::time::Duration::from_secs(10)).await;
    let key: String = app.db.scalar("SELECT idempotency_key FROM jobs", &[]).await;
    let replay = app.submit(&alice, "noop", &key, json!({})).await;
    assert_eq!(replay.status(), StatusCode::OK);
    let replay: Value = replay.json().await.unwrap();
    assert_eq!((replay["id"].as_str().unwrap(), replay["status"].as_str().unwrap()), (id.as_str(), "completed"));
    assert_eq!(replay["attempts"], 1);
    assert_eq!(app.db.notifications_for(&id).await, 1);
}

#[actix_web::test]
async fn the_same_key_with_other_params_or_type_is_422_and_creates_nothing() {
    let app = spawn_app().await;
    let alice = token("acme", "alice");
    app.submit(&alice, "sleep", "k", json!({"ms": 1})).await;
    let other_params = app.submit(&alice, "sleep", "k", json!({"ms": 2})).await;
    assert_problem(other_params, StatusCode::UNPROCESSABLE_ENTITY, "idempotency_key_reused").await;
    let other_type = app.submit(&alice, "noop", "k", json!({"ms": 1})).await;
    assert_problem(other_type, StatusCode::UNPROCESSABLE_ENTITY, "idempotency_key_reused").await;
    let jobs: i64 = app.db.scalar("SELECT count(*) FROM jobs", &[]).await;
    assert_eq!(jobs, 1);
}

#[actix_web::test]
async fn one_key_from_other_users_and_tenants_is_an_unrelated_key() {
    let app = spawn_app().await;
    let callers = [token("acme", "alice"), token("acme", "bob"), token("globex", "alice")];
    let mut ids = Vec::new();
    for caller in &callers {
        let response = app.submit(caller, "sleep", "shared-key", json!({"ms": 1})).await;
        assert_eq!(response.status(), StatusCode::ACCEPTED);
        ids.push(id_of(response).await);
    }
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 3, "each caller got a job of their own");
    // Different params under the same key string are no conflict across callers either.
    let response = app.submit(&token("initech", "carol"), "noop", "shared-key", json!({})).await;
    assert_eq!(response.status(), StatusCode::ACCEPTED);
}

#[actix_web::test]
async fn a_hundred_concurrent_requests_with_one_key_make_one_job() {
    let app = spawn_app().await;
    let alice = token("acme", "alice");
    let requests = (0..100).map(|_| app.submit(&alice, "sleep", "double-click", json!({"ms": 50})));
    let responses = join_all(requests).await;
    let mut created = 0;
    let mut ids = Vec::new();
    for response in responses {
        match response.status() {
            StatusCode::ACCEPTED => created += 1,
            StatusCode::OK => assert_eq!(response.headers()["idempotent-replayed"], "true"),
            other => panic!("unexpected status {other}"),
        }
        ids.push(response.json::<Value>().await.unwrap()["id"].clone());
    }
    assert_eq!(created, 1);
    assert!(ids.iter().all(|id| *id == ids[0]));
    let jobs: i64 = app.db.scalar("SELECT count(*) FROM jobs", &[]).await;
    assert_eq!(jobs, 1);
    let job = app.wait_until_finished(&alice, ids[0].as_str().unwrap(), std::time::Duration::from_secs(10)).await;
    assert_eq!(job["attempts"], 1, "one piece of work");
    assert_eq!(app.db.notifications_for(ids[0].as_str().unwrap()).await, 1);
}

/// Submissions arriving together share one statement (the Intake); a key
/// repeated among them, or sent again for another request, must still make
/// one job, answer its reuse with 422, and never cross tenants.
#[actix_web::test]
async fn many_tenants_submitting_at_once_get_one_job_per_key_each_in_their_own_tenant() {
    let app = spawn_app().await;
    let tenants: Vec<(String, String)> =
        (0..24).map(|i| format!("tenant-{i}")).map(|tenant| (token(&tenant, "u"), tenant)).collect();
    // Each tenant sends "same" three times, and "other" twice for two different requests.
    let sends = [
        ("same", json!({})),
        ("same", json!({})),
        ("same", json!({})),
        ("other", json!({})),
        ("other", json!({"x": 1})),
    ];
    let mut labels = Vec::new();
    let mut requests = Vec::new();
    for (user, tenant) in &tenants {
        for (key, params) in &sends {
            labels.push((tenant.clone(), *key));
            requests.push(app.submit(user, "noop", key, params.clone()));
        }
    }
    let responses = join_all(requests).await;
    let mut ids = std::collections::HashMap::new();
    let mut reused = std::collections::HashMap::new();
    for ((tenant, key), response) in labels.into_iter().zip(responses) {
        let status = response.status();
        let body: Value = response.json().await.unwrap();
        match status {
            StatusCode::ACCEPTED | StatusCode::OK => {
                let id = body["id"].as_str().unwrap().to_owned();
                let first = ids.entry((tenant.clone(), key)).or_insert_with(|| id.clone());
                assert_eq!(*first, id, "{tenant}/{key}: one job per key");
            }
            StatusCode::UNPROCESSABLE_ENTITY => *reused.entry(tenant).or_insert(0) += 1,
            other => panic!("{tenant}/{key}: unexpected {other}: {body}"),
        }
    }
    // Whichever "other" came second is refused.
    assert!(reused.values().all(|&n| n == 1) && reused.len() == tenants.len(), "{reused:?}");
    let jobs: i64 = app.db.scalar("SELECT count(*) FROM jobs", &[]).await;
    assert_eq!(jobs, 2 * tenants.len() as i64);
    let distinct: std::collections::HashSet<&String> = ids.values().collect();
    assert_eq!(distinct.len(), 2 * tenants.len(), "no two tenants share a job");
    for ((tenant, _), id) in &ids {
        let own = app.get(&token(tenant, "u"), &format!("/jobs/{id}")).await;
        assert_eq!(own.status(), StatusCode::OK);
        let other = if tenant == "tenant-0" { "tenant-1" } else { "tenant-0" };
        assert_eq!(app.get(&token(other, "u"), &format!("/jobs/{id}")).await.status(), StatusCode::NOT_FOUND);
    }
}

#[actix_web::test]
async fn a_missing_or_malformed_key_is_400() {
    let app = spawn_app().await;
    let alice = token("acme", "alice");
    let missing =
        app.http.post(format!("{}/jobs/noop", app.address)).bearer_auth(&alice).json(&json!({})).send().await.unwrap();
    assert_problem(missing, StatusCode::BAD_REQUEST, "invalid_idempotency_key").await;
    for bad in ["", "has space", &"k".repeat(256)] {
        let response = app.submit(&alice, "noop", bad, json!({})).await;
        assert_problem(response, StatusCode::BAD_REQUEST, "invalid_idempotency_key").await;
    }
    let non_ascii = app
        .http
        .post(format!("{}/jobs/noop", app.address))
        .bearer_auth(&alice)
        .header("Idempotency-Key", reqwest::header::HeaderValue::from_bytes("clé".as_bytes()).unwrap())
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_problem(non_ascii, StatusCode::BAD_REQUEST, "invalid_idempotency_key").await;
    let jobs: i64 = app.db.scalar("SELECT count(*) FROM jobs", &[]).await;
    assert_eq!(jobs, 0);
}

#[actix_web::test]
async fn an_unknown_type_is_404() {
    let app = spawn_app().await;
    let response = app.submit(&token("acme", "alice"), "launch_rockets", "k", json!({})).await;
    assert_problem(response, StatusCode::NOT_FOUND, "unknown_job_type").await;
}

#[actix_web::test]
async fn a_body_that_is_not_a_json_object_is_400() {
    let app = spawn_app().await;
    let alice = token("acme", "alice");
    for body in ["not json", "[1, 2]", "42", "", "{\"unterminated\": "] {
        let response = app
            .http
            .post(format!("{}/jobs/noop", app.address))
            .bearer_auth(&alice)
            .header("Idempotency-Key", "k")
            .header("Content-Type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap();
        assert_problem(response, StatusCode::BAD_REQUEST, "bad_request").await;
    }
}

#[actix_web::test]
async fn params_failing_the_schema_are_422_naming_the_field() {
    let app = spawn_app().await;
    let alice = token("acme", "alice");
    let wrong_type = app.submit(&alice, "sleep", "k1", json!({"ms": "soon"})).await;
    let body = assert_problem(wrong_type, StatusCode::UNPROCESSABLE_ENTITY, "invalid_params").await;
    assert_eq!(body["field"], "/ms");
    assert!(body["detail"].as_str().unwrap().contains("/ms"));
    let unknown_field = app.submit(&alice, "sleep", "k2", json!({"ms": 1, "color": "red"})).await;
    let body = assert_problem(unknown_field, StatusCode::UNPROCESSABLE_ENTITY, "invalid_params").await;
    assert!(body["detail"].as_str().unwrap().contains("color"), "{body}");
    let negative = app.submit(&alice, "sleep", "k3", json!({"fail_times": -1})).await;
    let body = assert_problem(negative, StatusCode::UNPROCESSABLE_ENTITY, "invalid_params").await;
    assert_eq!(body["field"], "/fail_times");
}

#[actix_web::test]
async fn a_body_over_64_kib_is_413() {
    let app = spawn_app().await;
    let big = json!({ "padding": "x".repeat(64 * 1024) });
    let response = app.submit(&token("acme", "alice"), "noop", "k", big).await;
    assert_problem(response, StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large").await;
    let just_under = json!({ "padding": "x".repeat(60 * 1024) });
    let response = app.submit(&token("acme", "alice"), "noop", "k2", just_under).await;
    assert_eq!(response.status(), StatusCode::ACCEPTED);
}

#[actix_web::test]
async fn params_holding_nul_anywhere_are_422_naming_the_field_and_record_nothing() {
    let app = spawn_app().await;
    let alice = token("acme", "alice");
    let cases = [
        (json!({"note": "a\u{0}b"}), "/note"),
        (json!({"outer": {"list": ["ok", "bad\u{0}"]}}), "/outer/list/1"),
        (json!({"ke\u{0}y": 1}), "/ke\u{0}y"),
    ];
    for (i, (params, field)) in cases.into_iter().enumerate() {
        let response = app.submit(&alice, "noop", &format!("nul-{i}"), params).await;
        let problem = assert_problem(response, StatusCode::UNPROCESSABLE_ENTITY, "invalid_params").await;
        assert_eq!(problem["field"], field, "{problem}");
    }
    let jobs: i64 = app.db.scalar("SELECT count(*) FROM jobs", &[]).await;
    assert_eq!(jobs, 0);
}

#[actix_web::test]
async fn what_the_schema_accepts_runs_and_impossible_dates_are_refused_at_submit() {
    let app = spawn_app().await;
    let alice = token("acme", "alice");
    for (i, ms) in ["10.0", "1e1", "10.000"].into_iter().enumerate() {
        let params: Value = serde_json::from_str(&format!(r#"{{"ms": {ms}, "fail_times": 0}}"#)).unwrap();
        let id = app.create(&alice, "sleep", params).await;
        let job = app.wait_until_finished(&alice, &id, std::time::Duration::from_secs(20)).await;
        assert_eq!(job["status"], "completed", "ms = {ms} (#{i}): {job}");
    }
    for (i, date) in ["0000-00-00", "2026-02-30", "2026-13-01"].into_iter().enumerate() {
        let params = json!({"from": date, "to": "2026-12-31"});
        let response = app.submit(&alice, "export_sales_report", &format!("date-{i}"), params).await;
        let problem = assert_problem(response, StatusCode::UNPROCESSABLE_ENTITY, "invalid_params").await;
        assert_eq!(problem["field"], "/from", "{date}: {problem}");
    }
}

#[actix_web::test]
async fn a_number_that_could_not_be_read_back_is_422_and_the_queue_keeps_moving() {
    let app = spawn_app().await;
    let alice = token("acme", "alice");
    let huge: Value = serde_json::from_str(r#"{"nested": {"x": -1.7976931348623157e+308}}"#).unwrap();
    let response = app.submit(&alice, "noop", "huge", huge).await;
    let problem = assert_problem(response, StatusCode::UNPROCESSABLE_ENTITY, "invalid_params").await;
    assert_eq!(problem["field"], "/nested/x");
    let ordinary: Value = serde_json::from_str(r#"{"x": 1.5e300, "y": -0.25}"#).unwrap();
    let id = app.create(&alice, "noop", ordinary).await;
    assert_eq!(app.wait_until_finished(&alice, &id, std::time::Duration::from_secs(20)).await["status"], "completed");

    // Such a job stored by an older errand: it fails alone, the others run, the list still reads.
    let client = app.db.client().await;
    let poison = "01a22b18-0000-7000-8000-0000000000aa";
    client
        .batch_execute(&format!(
            "INSERT INTO jobs (id, tenant_id, user_id, idempotency_key, fingerprint, job_type, params, max_attempts) \
             VALUES ('{poison}', 'acme', 'alice', 'old', '\\x00', 'noop', '{{\"x\": -1.7976931348623157e+308}}', 3); \
             INSERT INTO job_queue (job_id, tenant_id, user_id, job_type, turn) VALUES ('{poison}', 'acme', 'alice', 'noop', 0);"
        ))
        .await
        .unwrap();
    let after = app.create(&alice, "noop", json!({})).await;
    assert_eq!(
        app.wait_until_finished(&alice, &after, std::time::Duration::from_secs(20)).await["status"],
        "completed"
    );
    let failed = app.wait_until_finished(&alice, poison, std::time::Duration::from_secs(20)).await;
    assert_eq!(failed["status"], "failed", "{failed}");
    assert_eq!(app.db.notifications_for(poison).await, 1);
    let list = app.get(&alice, "/jobs").await;
    assert_eq!(list.status(), StatusCode::OK);
}

/// What each submission of a batch became, as the words of its answer.
fn outcomes(answers: &[Result<errand::store::Submission, errand::store::StoreError>]) -> Vec<&'static str> {
    use errand::store::Submission;
    answers
        .iter()
        .map(|answer| match answer {
            Ok(Submission::Created(_)) => "created",
            Ok(Submission::Replayed(_)) => "replayed",
            Ok(Submission::KeyReused) => "reused",
            Ok(Submission::OverQuota(_)) => "over_quota",
            Ok(Submission::Joined(_) | Submission::Debounced(_) | Submission::AdmissionConflict(_)) => "admission",
            Err(_) => "error",
        })
        .collect()
}

#[actix_web::test]
async fn one_statement_records_many_callers_jobs_each_under_its_own_key() {
    let (db, store) = migrated_store().await;
    let submissions = store.submissions();
    let earlier = submissions.submit(&new_job("acme", "u", "k1", "noop", json!({}))).await.unwrap();
    let errand::store::Submission::Created(earlier) = earlier else { panic!("created") };
    submissions.submit(&new_job("acme", "u", "k3", "noop", json!({"a": 1}))).await.unwrap();

    let batch = [
        new_job("acme", "u", "k1", "noop", json!({})),   // the same request again
        new_job("acme", "u", "k2", "noop", json!({})),   // new
        new_job("globex", "u", "k1", "noop", json!({})), // another tenant's k1
        new_job("acme", "u", "k3", "noop", json!({"a": 2})), // k3 for another request
        new_job("acme", "other", "k1", "noop", json!({})), // another user's k1
    ];
    let answers = submissions.submit_many(&batch).await;
    assert_eq!(outcomes(&answers), ["replayed", "created", "created", "reused", "created"]);
    let id = |i: usize| match &answers[i] {
        Ok(errand::store::Submission::Created(job) | errand::store::Submission::Replayed(job)) => job.id,
        _ => panic!("no job"),
    };
    assert_eq!(id(0), earlier.id, "a replay names the job made before");
    let created = [id(1), id(2), id(4)];
    assert!(created.iter().all(|job| *job != earlier.id));
    for (i, (tenant, user)) in [(1, ("acme", "u")), (2, ("globex", "u")), (4, ("acme", "other"))] {
        let owner: (String, String) = {
            let row =
                db.client().await.query_one("SELECT tenant_id, user_id FROM jobs WHERE id = $1", &[&id(i).0]).await;
            let row = row.unwrap();
            (row.get(0), row.get(1))
        };
        assert_eq!(owner, (tenant.to_owned(), user.to_owned()), "each row is its own caller's");
    }
    let queued: i64 = db.scalar("SELECT count(*) FROM job_queue", &[]).await;
    assert_eq!(queued, 5, "the two earlier jobs and the three new ones wait to run");
}

#[actix_web::test]
async fn a_batch_the_database_refuses_is_submitted_job_by_job() {
    let (db, store) = migrated_store().await;
    // jsonb cannot hold NUL: the API refuses it before the store, so only a
    // direct call can put it in a batch, as a stand-in for any row the
    // database refuses.
    let batch = [
        new_job("acme", "u", "a", "noop", json!({})),
        new_job("acme", "u", "nul", "noop", json!({"text": "\u{0}"})),
        new_job("globex", "u", "b", "noop", json!({})),
    ];
    let answers = store.submissions().submit_many(&batch).await;
    assert_eq!(outcomes(&answers), ["created", "error", "created"]);
    let jobs: i64 = db.scalar("SELECT count(*) FROM jobs", &[]).await;
    assert_eq!(jobs, 2);
}

#[actix_web::test]
async fn a_key_repeated_within_one_batch_makes_one_job() {
    let (db, store) = migrated_store().await;
    let batch = [
        new_job("acme", "u", "twice", "noop", json!({})),
        new_job("acme", "u", "twice", "noop", json!({})),
        new_job("acme", "u", "twice", "noop", json!({"other": true})),
    ];
    let answers = store.submissions().submit_many(&batch).await;
    assert_eq!(outcomes(&answers), ["created", "replayed", "reused"]);
    let jobs: i64 = db.scalar("SELECT count(*) FROM jobs", &[]).await;
    assert_eq!(jobs, 1);
}
