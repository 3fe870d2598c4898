//! The operators' routes: across tenants, for operator tokens only, every
//! action audited in its own transaction.

use std::time::Duration;

use errand::jobs::HandlerRegistry;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

const WITHIN: Duration = Duration::from_secs(20);

async fn json_of(response: reqwest::Response) -> Value {
    assert_eq!(response.status(), StatusCode::OK, "{}", response.url());
    response.json().await.unwrap()
}

/// An app whose sleep jobs fail fast and for good (three quick attempts).
async fn failing_app(configure: impl FnOnce(&mut errand::config::Settings)) -> TestApp {
    spawn_app_with(
        |s| {
            s.job_types.get_mut("sleep").unwrap().max_attempts = nonzero(3);
            configure(s);
        },
        HandlerRegistry::builtin(),
    )
    .await
}

#[actix_web::test]
async fn operator_and_user_tokens_each_keep_to_their_own_routes() {
    let app = spawn_app().await;
    let (alice, ops) = (token("acme", "alice"), operator_token("olga"));
    assert_problem(app.get(&alice, "/admin/jobs").await, StatusCode::FORBIDDEN, "forbidden").await;
    assert_problem(app.post(&alice, "/admin/jobs/retry").await, StatusCode::FORBIDDEN, "forbidden").await;
    assert_problem(app.get_without_token("/admin/queues").await, StatusCode::UNAUTHORIZED, "unauthorized").await;
    for path in ["/jobs", "/notifications"] {
        let refused = assert_problem(app.get(&ops, path).await, StatusCode::FORBIDDEN, "forbidden").await;
        assert!(refused["detail"].as_str().unwrap().contains("operator"), "{refused}");
    }
    assert_problem(app.submit(&ops, "noop", "k", json!({})).await, StatusCode::FORBIDDEN, "forbidden").await;
    assert_eq!(app.get(&ops, "/admin/queues").await.status(), StatusCode::OK);

    // `errand token --operator` makes one.
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_errand"))
        .args(["token", "--operator", "--user", "olga"])
        .env("ERRAND_AUTH__JWT_SECRET", SECRET)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let made = String::from_utf8(output.stdout).unwrap();
    assert_eq!(app.get(made.trim(), "/admin/queues").await.status(), StatusCode::OK);
    assert_eq!(app.get(made.trim(), "/jobs").await.status(), StatusCode::FORBIDDEN);
}

#[actix_web::test]
async fn an_operator_lists_any_tenants_jobs_by_filter_newest_first_in_pages() {
    let app = spawn_app_with(|s| s.workers.global_limit = 0, HandlerRegistry::builtin()).await;
    let ops = operator_token("olga");
    let (alice, bob) = (token("acme", "alice"), token("globex", "bob"));
    let mut acme = Vec::new();
    for _ in 0..3 {
        acme.push(app.create(&alice, "noop", json!({})).await);
    }
    let globex = app.create(&bob, "sleep", json!({"ms": 1})).await;
    let all = json_of(app.get(&ops, "/admin/jobs").await).await;
    let ids: Vec<&str> = all["jobs"].as_array().unwrap().iter().map(|j| j["id"].as_str().unwrap()).collect();
    assert_eq!(ids, [globex.as_str(), &acme[2], &acme[1], &acme[0]], "every tenant's, newest first");
    assert_eq!((all["jobs"][0]["tenant"].as_str(), all["jobs"][0]["user"].as_str()), (Some("globex"), Some("bob")));

    let page = json_of(app.get(&ops, "/admin/jobs?tenant=acme&limit=2").await).await;
    assert_eq!(page["jobs"].as_array().unwrap().len(), 2);
    let cursor = page["next_cursor"].as_str().unwrap();
    let rest = json_of(app.get(&ops, &format!("/admin/jobs?tenant=acme&limit=2&cursor={cursor}")).await).await;
    assert_eq!(rest["jobs"][0]["id"], acme[0].as_str());
    assert!(rest["next_cursor"].is_null());
    let sleeps = json_of(app.get(&ops, "/admin/jobs?type=sleep&status=processing").await).await;
    assert_eq!(sleeps["jobs"].as_array().unwrap().len(), 1);
    let future = json_of(app.get(&ops, "/admin/jobs?created_after=2999-01-01T00:00:00Z").await).await;
    assert!(future["jobs"].as_array().unwrap().is_empty());
    let past = json_of(app.get(&ops, "/admin/jobs?created_before=2000-01-01T00:00:00Z").await).await;
    assert!(past["jobs"].as_array().unwrap().is_empty());
    assert_problem(app.get(&ops, "/admin/jobs?created_after=yesterday").await, StatusCode::BAD_REQUEST, "bad_request")
        .await;

    let queues = json_of(app.get(&ops, "/admin/queues").await).await;
    let count = |job_type: &str| {
        queues["queues"]
            .as_array()
            .unwrap()
            .iter()
            .find(|q| q["job_type"] == job_type && q["state"] == "available")
            .cloned()
    };
    assert_eq!(count("noop").unwrap()["jobs"], 3);
    assert_eq!(count("sleep").unwrap()["jobs"], 1);
    assert!(count("noop").unwrap()["oldest_due_seconds"].as_f64().unwrap() >= 0.0);
}

#[actix_web::test]
async fn an_operator_retry_runs_a_failed_job_again_and_it_ends_with_a_notification_of_its_own() {
    let app = failing_app(|_| {}).await;
    let (alice, ops) = (token("acme", "alice"), operator_token("olga"));
    let response = app.submit(&alice, "sleep", "the-one-intent", json!({"ms": 1, "fail_times": 100})).await;
    let id = id_of(response).await;
    assert_eq!(app.wait_until_finished(&alice, &id, WITHIN).await["status"], "failed");
    let detail = json_of(app.get(&ops, &format!("/admin/jobs/{id}")).await).await;
    let errors: Vec<&str> =
        detail["attempt_errors"].as_array().unwrap().iter().map(|e| e["error"].as_str().unwrap()).collect();
    assert_eq!(errors, ["planned failure 1 of 100", "planned failure 2 of 100", "planned failure 3 of 100"]);

    let retried = json_of(app.post(&ops, &format!("/admin/jobs/{id}/retry")).await).await;
    assert_eq!((retried["id"].as_str(), retried["status"].as_str()), (Some(id.as_str()), Some("processing")));
    let again = app.wait_until_finished(&alice, &id, WITHIN).await;
    assert_eq!((again["status"].as_str(), again["attempts"].as_i64()), (Some("failed"), Some(3)), "a fresh budget");
    let replay = app.submit(&alice, "sleep", "the-one-intent", json!({"ms": 1, "fail_times": 100})).await;
    assert_eq!(id_of(replay).await, id, "the same job under the same key");
    let feed: Value = app.get(&alice, "/notifications").await.json().await.unwrap();
    let ends: Vec<&str> =
        feed["notifications"].as_array().unwrap().iter().map(|n| n["job_id"].as_str().unwrap()).collect();
    assert_eq!(ends, [id.as_str(), id.as_str()], "the new end, and the old one kept");
    let detail = json_of(app.get(&ops, &format!("/admin/jobs/{id}")).await).await;
    assert_eq!(detail["attempt_errors"].as_array().unwrap().len(), 6, "both runs' attempts");

    let done = app.create(&alice, "noop", json!({})).await;
    app.wait_until_finished(&alice, &done, WITHIN).await;
    assert_problem(
        app.post(&ops, &format!("/admin/jobs/{done}/retry")).await,
        StatusCode::CONFLICT,
        "job_not_retryable",
    )
    .await;
    let missing = uuid::Uuid::now_v7();
    assert_problem(app.post(&ops, &format!("/admin/jobs/{missing}/retry")).await, StatusCode::NOT_FOUND, "not_found")
        .await;
    let audit: Vec<(String, String, i32)> = app
        .db
        .client()
        .await
        .query("SELECT operator, action, affected FROM operator_actions ORDER BY id", &[])
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect();
    let olga = |affected| ("olga".to_owned(), "retry".to_owned(), affected);
    assert_eq!(audit, [olga(1), olga(0), olga(0)], "every action, done or not");
}

#[actix_web::test]
async fn an_operators_cancel_tells_the_owner_once_in_app_and_by_email() {
    let mail = MailServer::start().await;
    let app = spawn_app_with(
        |s| {
            email_to(mail.smtp_port)(s);
            s.workers.global_limit = 0;
        },
        HandlerRegistry::builtin(),
    )
    .await;
    let (alice, ops) = (token_for("acme", "alice", "alice@example.com"), operator_token("olga"));
    let id = app.create(&alice, "noop", json!({})).await;
    let cancelled = json_of(app.post(&ops, &format!("/admin/jobs/{id}/cancel")).await).await;
    assert_eq!(cancelled["status"], "cancelled");
    assert_eq!(app.post(&ops, &format!("/admin/jobs/{id}/cancel")).await.status(), StatusCode::OK, "idempotent");
    let feed: Value = app.get(&alice, "/notifications").await.json().await.unwrap();
    assert_eq!(feed["unread_count"], 1);
    let notification = &feed["notifications"][0];
    assert_eq!(
        (notification["job_status"].as_str(), notification["title"].as_str()),
        (Some("cancelled"), Some("Your test job was cancelled"))
    );
    let emails = mail.wait_for(1, WITHIN).await;
    assert_eq!(emails[0]["subject"], "Your test job was cancelled");
    mail.assert_all_sent(&app.db, 1).await;
    let audited: i64 =
        app.db.scalar("SELECT count(*) FROM operator_actions WHERE action = 'cancel' AND operator = 'olga'", &[]).await;
    assert_eq!(audited, 2);
}

#[actix_web::test]
async fn a_bulk_retry_takes_the_failed_jobs_its_filter_names_in_batches_as_its_dry_run_counted() {
    let app = spawn_app_with(|s| s.workers.global_limit = 0, HandlerRegistry::builtin()).await;
    let ops = operator_token("olga");
    // More failed jobs than one batch holds, written directly: 1,201 of acme's exports, one of globex's.
    let client = app.db.client().await;
    client
        .batch_execute(
            "INSERT INTO jobs (id, tenant_id, user_id, idempotency_key, fingerprint, job_type, params, state,
                               max_attempts, attempt, finished_at, error_message)
             SELECT errand_uuid_v7(), t, 'alice', 'k' || g, '\\x00', 'sleep', '{}', 'failed', 3, 3, now(), 'boom'
             FROM generate_series(1, 1201) AS g, unnest(ARRAY['acme']) AS t;
             INSERT INTO jobs (id, tenant_id, user_id, idempotency_key, fingerprint, job_type, params, state,
                               max_attempts, attempt, finished_at, error_message)
             VALUES (errand_uuid_v7(), 'globex', 'bob', 'k', '\\x00', 'sleep', '{}', 'failed', 3, 3, now(), 'boom')",
        )
        .await
        .unwrap();
    assert_problem(app.post_json(&ops, "/admin/jobs/retry", json!({})).await, StatusCode::BAD_REQUEST, "bad_request")
        .await;
    // A dry run counts what the retry will take, and changes nothing.
    let dry = json!({"tenant": "acme", "type": "sleep", "dry_run": true});
    let counted = json_of(app.post_json(&ops, "/admin/jobs/retry", dry).await).await;
    assert_eq!(counted, json!({"would_retry": 1201}));
    let untouched: i64 = app.db.scalar("SELECT count(*) FROM job_queue", &[]).await;
    let audited: i64 = app.db.scalar("SELECT count(*) FROM operator_actions", &[]).await;
    assert_eq!((untouched, audited), (0, 0));
    let answer =
        json_of(app.post_json(&ops, "/admin/jobs/retry", json!({"tenant": "acme", "type": "sleep"})).await).await;
    assert_eq!(answer["retried"], counted["would_retry"]);
    let queued: i64 = app.db.scalar("SELECT count(*) FROM job_queue WHERE tenant_id = 'acme'", &[]).await;
    assert_eq!(queued, 1201);
    let globex: String = app.db.scalar("SELECT state::text FROM jobs WHERE tenant_id = 'globex'", &[]).await;
    assert_eq!(globex, "failed", "outside the filter");
    // A step of 500 jobs per transaction, each with its audit row.
    let steps: Vec<(Value, i32)> = client
        .query("SELECT filter, affected FROM operator_actions WHERE action = 'bulk_retry' ORDER BY id", &[])
        .await
        .unwrap()
        .iter()
        .map(|row| (row.get(0), row.get(1)))
        .collect();
    let affected: Vec<i32> = steps.iter().map(|(_, n)| *n).collect();
    assert_eq!(affected, [500, 500, 201]);
    let filter = &steps[0].0;
    assert_eq!(*filter, json!({"tenant": "acme", "job_type": "sleep"}));
    let again = json_of(app.post_json(&ops, "/admin/jobs/retry", json!({"tenant": "acme"})).await).await;
    assert_eq!(again["retried"], 0, "nothing failed is left");
}

#[actix_web::test]
async fn an_operators_cancel_of_a_running_job_stops_it_and_notifies_its_owner_once() {
    let (app, gate) = spawn_app_with_gate(|_| {}).await;
    let (alice, ops) = (token("acme", "alice"), operator_token("olga"));
    let id = app.create(&alice, "held", json!({})).await;
    gate.started(1, WITHIN).await;
    assert_stopping(app.post(&ops, &format!("/admin/jobs/{id}/cancel")).await).await;
    let job = app.wait_until_finished(&alice, &id, WITHIN).await;
    assert_eq!(job["status"], "cancelled");
    let feed: Value = app.get(&alice, "/notifications").await.json().await.unwrap();
    let statuses: Vec<&str> =
        feed["notifications"].as_array().unwrap().iter().map(|n| n["job_status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["cancelled"], "one notification, in the feed");
}

#[actix_web::test]
async fn a_read_only_operator_sees_everything_and_every_action_is_refused() {
    let app = failing_app(|_| {}).await;
    let alice = token("acme", "alice");
    let failed = app.create(&alice, "sleep", json!({"ms": 0, "fail_times": 5})).await;
    let waiting = app.create(&alice, "sleep", json!({"ms": 60000})).await;
    app.wait_until_finished(&alice, &failed, WITHIN).await;

    // `errand token --operator --read-only` makes one.
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_errand"))
        .args(["token", "--operator", "--read-only", "--user", "vera"])
        .env("ERRAND_AUTH__JWT_SECRET", SECRET)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let viewer = String::from_utf8(output.stdout).unwrap().trim().to_owned();

    for path in [
        "/admin/jobs".to_owned(),
        format!("/admin/jobs/{failed}"),
        "/admin/queues".to_owned(),
        "/admin/tenants/acme/quotas".to_owned(),
    ] {
        assert_eq!(app.get(&viewer, &path).await.status(), StatusCode::OK, "{path}");
    }
    let refusals = [
        app.post(&viewer, &format!("/admin/jobs/{failed}/retry")).await,
        app.post(&viewer, &format!("/admin/jobs/{waiting}/cancel")).await,
        app.post_json(&viewer, "/admin/jobs/retry", json!({"type": "sleep"})).await,
        app.post_json(&viewer, "/admin/jobs/cancel", json!({"type": "sleep"})).await,
        app.put_json(&viewer, "/admin/tenants/acme/quotas", json!({"max_unfinished_per_user": 1})).await,
    ];
    for refused in refusals {
        let problem = assert_problem(refused, StatusCode::FORBIDDEN, "forbidden").await;
        assert!(problem["detail"].as_str().unwrap().contains("operator:read"), "{problem}");
    }
    // Nothing changed, and nothing was audited.
    assert_eq!(app.job(&alice, &failed).await["status"], "failed");
    assert_ne!(app.job(&alice, &waiting).await["status"], "cancelled");
    let (actions, overrides): (i64, i64) = (
        app.db.scalar("SELECT count(*) FROM operator_actions", &[]).await,
        app.db.scalar("SELECT count(*) FROM tenant_quotas", &[]).await,
    );
    assert_eq!((actions, overrides), (0, 0));
    // A full operator's token still acts.
    assert_eq!(
        app.post(&operator_token("olga"), &format!("/admin/jobs/{failed}/retry")).await.status(),
        StatusCode::OK
    );
}

#[actix_web::test]
async fn the_audit_trail_shows_who_did_what_to_which_jobs_filtered_and_in_pages() {
    let app = failing_app(|_| {}).await;
    let alice = token("acme", "alice");
    let (olga, omar) = (operator_token("olga"), operator_token("omar"));
    let mut failed = Vec::new();
    for _ in 0..3 {
        failed.push(app.create(&alice, "sleep", json!({"ms": 0, "fail_times": 5})).await);
    }
    for id in &failed {
        app.wait_until_finished(&alice, id, WITHIN).await;
    }
    json_of(app.post(&olga, &format!("/admin/jobs/{}/retry", failed[0])).await).await;
    json_of(app.post(&olga, &format!("/admin/jobs/{}/retry", failed[1])).await).await;
    json_of(app.put_json(&omar, "/admin/tenants/acme/quotas", json!({"max_unfinished_per_user": 50})).await).await;

    let all = json_of(app.get(&olga, "/admin/actions").await).await;
    let seen: Vec<(&str, &str)> = all["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["operator"].as_str().unwrap(), a["action"].as_str().unwrap()))
        .collect();
    assert_eq!(seen, [("omar", "set_quotas"), ("olga", "retry"), ("olga", "retry")], "newest first");
    assert_eq!(all["actions"][1]["job_id"], failed[1].as_str());
    assert_eq!(all["actions"][1]["affected"], 1);

    let olgas = json_of(app.get(&omar, "/admin/actions?operator=olga&limit=1").await).await;
    assert_eq!(olgas["actions"][0]["job_id"], failed[1].as_str());
    let cursor = olgas["next_cursor"].as_str().unwrap();
    let next = json_of(app.get(&omar, &format!("/admin/actions?operator=olga&limit=1&cursor={cursor}")).await).await;
    assert_eq!(next["actions"][0]["job_id"], failed[0].as_str());
    assert!(next["next_cursor"].is_null());
    let on_job = json_of(app.get(&omar, &format!("/admin/actions?job={}", failed[0])).await).await;
    assert_eq!(on_job["actions"].as_array().unwrap().len(), 1);
    let quotas = json_of(app.get(&omar, "/admin/actions?action=set_quotas").await).await;
    assert_eq!(quotas["actions"][0]["filter"]["tenant"], "acme", "{quotas}");

    assert_problem(app.get(&omar, "/admin/actions?action=delete").await, StatusCode::BAD_REQUEST, "bad_request").await;
    assert_problem(app.get(&omar, "/admin/actions?job=nope").await, StatusCode::BAD_REQUEST, "bad_request").await;
    assert_problem(app.get(&omar, "/admin/actions?operator=%00").await, StatusCode::BAD_REQUEST, "bad_request").await;
    assert_problem(app.get(&alice, "/admin/actions").await, StatusCode::FORBIDDEN, "forbidden").await;
}

#[actix_web::test]
async fn the_overview_counts_the_queue_caps_the_history_and_names_the_largest_backlogs() {
    // An API-only process: what is submitted waits.
    let app = spawn_app_with(|s| s.workers.global_limit = 0, HandlerRegistry::builtin()).await;
    let viewer = operator_viewer_token("vera");
    for (tenant, jobs) in [("acme", 3), ("globex", 1)] {
        let caller = token(tenant, "alice");
        for _ in 0..jobs {
            app.create(&caller, "noop", json!({})).await;
        }
    }
    app.db
        .client()
        .await
        .batch_execute(
            "INSERT INTO jobs (id, tenant_id, user_id, idempotency_key, fingerprint, job_type, params, state,
                               max_attempts, attempt, finished_at, error_message)
             SELECT errand_uuid_v7(), 'initech', 'bob', 'k' || g, '\\x00', 'noop', '{}',
                    (CASE WHEN g <= 2 THEN 'failed' WHEN g = 3 THEN 'cancelled' ELSE 'completed' END)::job_state,
                    3, 1, now(), CASE WHEN g <= 2 THEN 'boom' END
             FROM generate_series(1, 10010) AS g",
        )
        .await
        .unwrap();

    let overview = json_of(app.get(&viewer, "/admin/overview").await).await;
    assert_eq!(overview["unfinished"], json!({"available": 4}));
    assert!(overview["oldest_due_seconds"].as_f64().is_some_and(|s| s >= 0.0), "{overview}");
    let cap = overview["finished_count_cap"].as_i64().unwrap();
    assert_eq!(overview["finished"], json!({"completed": cap + 1, "failed": 2, "cancelled": 1}), "capped past {cap}");
    assert_eq!(
        overview["largest_backlogs"],
        json!([{"tenant": "acme", "unfinished": 3}, {"tenant": "globex", "unfinished": 1}])
    );
    assert_eq!((overview["emails_waiting"].as_i64(), overview["webhooks_waiting"].as_i64()), (Some(0), Some(0)));
    assert_eq!((overview["running"].as_i64(), overview["writable"].as_bool()), (Some(0), Some(true)));
    assert!(overview["processes"].as_i64().is_some_and(|n| n >= 1), "{overview}");
    assert!(overview["database"].as_str().unwrap().ends_with(&format!("/{}", app.db.name)), "{overview}");
    assert_eq!(overview["listening"], true);
    let processes = overview["process_list"].as_array().unwrap();
    assert!(processes.iter().any(|p| p["name"].as_str().unwrap().starts_with("errand/")), "{overview}");
    assert_eq!(overview["running_by_owner"], json!([]));
    assert_eq!(overview["recent_failures_by_type"], json!([{"job_type": "noop", "failed": 2}]));
    // Rates come from PostgreSQL's own counters, which it publishes within a second or so.
    let created = || async { json_of(app.get(&viewer, "/admin/overview").await).await["totals"]["created"] == 10_014 };
    eventually(WITHIN, "the statistics to count every job created", created).await;
    assert_problem(app.get(&token("acme", "alice"), "/admin/overview").await, StatusCode::FORBIDDEN, "forbidden").await;
}

#[actix_web::test]
async fn an_operator_finds_jobs_by_user_error_text_and_a_params_field() {
    let app = spawn_app_with(|s| s.workers.global_limit = 0, HandlerRegistry::builtin()).await;
    let ops = operator_viewer_token("vera");
    app.db
        .client()
        .await
        .batch_execute(
            "INSERT INTO jobs (id, tenant_id, user_id, idempotency_key, fingerprint, job_type, params, state,
                               max_attempts, attempt, finished_at, error_message)
             VALUES (errand_uuid_v7(), 'acme', 'alice', 'a', '\\x00', 'sleep', '{\"customer\": {\"id\": 42}}', 'failed', 3, 3, now(), 'SMTP said 550_mailbox'),
                    (errand_uuid_v7(), 'acme', 'bob', 'b', '\\x00', 'sleep', '{\"customer\": {\"id\": 7}}', 'failed', 3, 3, now(), 'timeout 100%'),
                    (errand_uuid_v7(), 'acme', 'bob', 'c', '\\x00', 'sleep', '{\"customer\": {\"id\": 42}}', 'completed', 3, 1, now(), NULL)",
        )
        .await
        .unwrap();
    let keys = |page: Value| -> Vec<String> {
        page["jobs"].as_array().unwrap().iter().map(|j| j["user"].as_str().unwrap().to_owned()).collect()
    };
    let by = |query: &'static str| {
        let (app, ops) = (&app, &ops);
        async move { json_of(app.get(ops, &format!("/admin/jobs?{query}")).await).await }
    };
    assert_eq!(keys(by("user=bob").await), ["bob", "bob"]);
    assert_eq!(keys(by("error=smtp").await), ["alice"], "any case");
    assert_eq!(keys(by("error=100%25").await), ["bob"], "% is text, not a wildcard");
    assert!(keys(by("error=550%5F").await).len() == 1 && keys(by("error=0_m").await).len() == 1);
    assert!(keys(by("error=5_0").await).is_empty(), "_ is text, not a wildcard");
    assert_eq!(keys(by("param=customer.id%3D42").await).len(), 2);
    assert_eq!(keys(by("param=customer.id%3D42&status=failed").await), ["alice"]);
    for bad in ["param=customer.id", "param=.id%3D1", "error=%00", "user=%00", "tenant=%00"] {
        assert_problem(app.get(&ops, &format!("/admin/jobs?{bad}")).await, StatusCode::BAD_REQUEST, "bad_request")
            .await;
    }
}
