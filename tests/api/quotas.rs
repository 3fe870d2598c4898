//! Quotas on unfinished work: a new job over a cap is refused with 429 and
//! leaves nothing behind, a replay is answered as ever, the cap holds across
//! processes, and an operator's override holds at once.

use futures_util::future::join_all;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;
use errand::config::{CountCap, Settings};

/// An API-only process (nothing runs, so every job stays unfinished) with these caps.
fn capped(per_user: u32, per_tenant: u32) -> impl FnOnce(&mut Settings) {
    move |s| {
        s.workers.global_limit = 0;
        s.quotas.max_unfinished_per_user = CountCap(Some(per_user));
        s.quotas.max_unfinished_per_tenant = CountCap(Some(per_tenant));
    }
}

async fn jobs_with_key(db: &TestDb, key: &str) -> i64 {
    db.scalar("SELECT count(*) FROM jobs WHERE idempotency_key = $1", &[&key]).await
}

#[actix_web::test]
async fn a_user_at_the_cap_is_refused_and_another_user_of_the_tenant_is_not() {
    let app = TestApp::builder().configure(capped(3, 100)).spawn().await;
    let (alice, bob) = (token("acme", "alice"), token("acme", "bob"));
    let first = app.submit(&alice, "noop", "first", json!({})).await;
    assert_eq!(first.status(), StatusCode::ACCEPTED);
    let first = id_of(first).await;
    for _ in 0..2 {
        app.create(&alice, "noop", json!({})).await;
    }

    let refused = app.submit(&alice, "noop", "fourth", json!({})).await;
    assert_eq!(refused.headers()["retry-after"], "30");
    let problem = assert_problem(refused, StatusCode::TOO_MANY_REQUESTS, "quota_exceeded").await;
    assert_eq!((&problem["scope"], &problem["limit"], &problem["count"]), (&json!("user"), &json!(3), &json!(3)));
    assert_eq!(jobs_with_key(&app.db, "fourth").await, 0, "a refusal leaves no row and no key");
    let notifications: i64 = app.db.scalar("SELECT count(*) FROM notifications", &[]).await;
    assert_eq!(notifications, 0);

    // Only new work is refused: the first key's replay is answered as ever.
    let replay = app.submit(&alice, "noop", "first", json!({})).await;
    assert_eq!(replay.status(), StatusCode::OK);
    assert_eq!(id_of(replay).await, first);

    app.create(&bob, "noop", json!({})).await;
}

#[actix_web::test]
async fn finished_jobs_free_their_room() {
    let app = TestApp::builder().configure(|s| s.quotas.max_unfinished_per_user = CountCap(Some(2))).spawn().await;
    let alice = token("acme", "alice");
    let ids = [app.create(&alice, "noop", json!({})).await, app.create(&alice, "noop", json!({})).await];
    for id in &ids {
        app.wait_until_finished(&alice, id, std::time::Duration::from_secs(10)).await;
    }
    app.create(&alice, "noop", json!({})).await;
    app.create(&alice, "noop", json!({})).await;
}

#[actix_web::test]
async fn the_tenant_cap_counts_every_user_and_a_type_cap_only_its_type() {
    let app = TestApp::builder()
        .configure(capped(100, 4))
        .configure(|s| s.job_types.get_mut("noop").unwrap().max_unfinished_per_user = Some(1))
        .spawn()
        .await;
    let (alice, bob) = (token("acme", "alice"), token("acme", "bob"));
    app.create(&alice, "noop", json!({})).await;
    let problem = assert_problem(
        app.submit(&alice, "noop", "second-noop", json!({})).await,
        StatusCode::TOO_MANY_REQUESTS,
        "quota_exceeded",
    )
    .await;
    assert_eq!((&problem["scope"], &problem["limit"]), (&json!("user_job_type"), &json!(1)));
    app.create(&alice, "sleep", json!({"ms": 1})).await;
    app.create(&bob, "noop", json!({})).await;
    app.create(&bob, "sleep", json!({"ms": 1})).await;

    let problem = assert_problem(
        app.submit(&bob, "sleep", "fifth", json!({"ms": 1})).await,
        StatusCode::TOO_MANY_REQUESTS,
        "quota_exceeded",
    )
    .await;
    assert_eq!((&problem["scope"], &problem["limit"], &problem["count"]), (&json!("tenant"), &json!(4), &json!(4)));
    app.create(&token("initech", "carol"), "sleep", json!({"ms": 1})).await;
}

#[actix_web::test]
async fn a_batch_of_concurrent_submissions_keeps_to_the_cap_and_repeats_of_a_key_make_one_job() {
    let app = TestApp::builder().configure(capped(5, 100)).spawn().await;
    let alice = token("acme", "alice");
    // 20 distinct keys, each sent twice, all at once: they share the Intake's batches.
    let keys: Vec<String> = (0..40).map(|i| format!("k{}", i % 20)).collect();
    let requests = keys.iter().map(|key| app.submit(&alice, "noop", key, json!({})));
    let statuses: Vec<StatusCode> = join_all(requests).await.iter().map(|r| r.status()).collect();
    let jobs: i64 = app.db.scalar("SELECT count(*) FROM jobs", &[]).await;
    assert_eq!(jobs, 5);
    let accepted = statuses.iter().filter(|s| **s == StatusCode::ACCEPTED).count();
    assert_eq!(accepted, 5, "{statuses:?}");
    assert!(statuses.iter().all(|s| [StatusCode::ACCEPTED, StatusCode::OK, StatusCode::TOO_MANY_REQUESTS].contains(s)));
}

#[actix_web::test]
async fn the_cap_holds_across_processes() {
    let db = TestDb::create().await;
    let env = [
        ("ERRAND_WORKERS__GLOBAL_LIMIT", "0"),
        ("ERRAND_QUOTAS__MAX_UNFINISHED_PER_USER", "10"),
        ("ERRAND_QUOTAS__MAX_UNFINISHED_PER_TENANT", "unlimited"),
    ];
    let (a, b) = (ErrandProcess::start(&db, &env), ErrandProcess::start(&db, &env));
    let alice = token("acme", "alice");
    let keys: Vec<String> = (0..64).map(|i| format!("edge-{i}")).collect();
    let requests = keys.iter().enumerate().map(|(i, key)| {
        let process = if i % 2 == 0 { &a } else { &b };
        process.submit(&alice, "noop", key, json!({}))
    });
    let responses = join_all(requests).await;
    let accepted = responses.iter().filter(|r| r.status() == StatusCode::ACCEPTED).count();
    let refused = responses.iter().filter(|r| r.status() == StatusCode::TOO_MANY_REQUESTS).count();
    assert_eq!((accepted, refused), (10, 54));
    let jobs: i64 = db.scalar("SELECT count(*) FROM jobs", &[]).await;
    assert_eq!(jobs, 10);
}

#[actix_web::test]
async fn an_operator_override_holds_at_once_and_is_audited() {
    let app = TestApp::builder().configure(capped(100, 1000)).spawn().await;
    let (olga, alice) = (operator_token("olga"), token("acme", "alice"));
    app.create(&alice, "noop", json!({})).await;

    let set = app
        .put_json(
            &olga,
            "/admin/tenants/acme/quotas",
            json!({"max_unfinished_per_user": 1, "max_unfinished_per_tenant": 2}),
        )
        .await;
    assert_eq!(set.status(), StatusCode::OK);
    let quotas: Value = set.json().await.unwrap();
    assert_eq!(quotas["override"], json!({"max_unfinished_per_user": 1, "max_unfinished_per_tenant": 2}));
    assert_eq!(quotas["caps"], json!({"max_unfinished_per_user": 1, "max_unfinished_per_tenant": 2}));
    assert_eq!(quotas["unfinished"], 1);

    let problem = assert_problem(
        app.submit(&alice, "noop", "k", json!({})).await,
        StatusCode::TOO_MANY_REQUESTS,
        "quota_exceeded",
    )
    .await;
    assert_eq!(problem["limit"], 1);
    app.create(&token("initech", "alice"), "noop", json!({})).await;

    let queues: Value = app.get(&olga, "/admin/queues").await.json().await.unwrap();
    let nearest = &queues["nearest_quotas"];
    assert_eq!(nearest["users"][0], json!({"tenant": "acme", "user": "alice", "unfinished": 1, "limit": 1}));
    assert_eq!(nearest["tenants"][0], json!({"tenant": "acme", "unfinished": 1, "limit": 2}));
    assert_eq!(nearest["tenants"][1], json!({"tenant": "initech", "unfinished": 1, "limit": 1000}));

    let audit: Value = app
        .db
        .scalar("SELECT filter FROM operator_actions WHERE action = 'set_quotas' AND operator = 'olga'", &[])
        .await;
    assert_eq!(audit["tenant"], "acme");

    // Both caps back to the configured ones: the override is gone.
    let cleared = app.put_json(&olga, "/admin/tenants/acme/quotas", json!({})).await;
    assert_eq!(cleared.json::<Value>().await.unwrap()["caps"]["max_unfinished_per_user"], 100);
    app.create(&alice, "noop", json!({})).await;

    // Only operators; a bad body is a 400.
    assert_problem(
        app.put_json(&alice, "/admin/tenants/acme/quotas", json!({})).await,
        StatusCode::FORBIDDEN,
        "forbidden",
    )
    .await;
    assert_problem(
        app.put_json(&olga, "/admin/tenants/acme/quotas", json!({"max_unfinished_per_user": -1})).await,
        StatusCode::BAD_REQUEST,
        "bad_request",
    )
    .await;
}

#[actix_web::test]
async fn the_database_itself_refuses_a_statement_that_would_go_over_a_cap() {
    let app = TestApp::builder().configure(capped(1, 100)).spawn().await;
    let first = app.create(&token("acme", "alice"), "noop", json!({})).await;
    let first = uuid::Uuid::parse_str(&first).unwrap();
    // A second job of alice's, recorded and queued by hand.
    let queue_another = "
        WITH j AS (
            INSERT INTO jobs (id, tenant_id, user_id, idempotency_key, fingerprint, job_type, params, max_attempts)
            SELECT gen_random_uuid(), tenant_id, user_id, 'by-hand', fingerprint, job_type, params, max_attempts
            FROM jobs WHERE id = $1
            RETURNING id, tenant_id, user_id, job_type)
        INSERT INTO job_queue (job_id, tenant_id, user_id, job_type, turn) SELECT id, tenant_id, user_id, job_type, 0 FROM j";
    let db = app.db.client().await;
    db.batch_execute("BEGIN; SELECT set_config('errand.quota_caps', '{\"user\": 1, \"tenant\": null}', true)")
        .await
        .unwrap();
    let refused = db.execute(queue_another, &[&first]).await.unwrap_err();
    assert_eq!(refused.code().map(|code| code.code()), Some("ER019"), "{refused}");
    db.batch_execute("ROLLBACK").await.unwrap();
    assert_eq!(jobs_with_key(&app.db, "by-hand").await, 0);

    // Where no caps are set (quotas off, an operator's retry), jobs are counted, not refused,
    // whatever an operator's override says.
    db.execute(
        "INSERT INTO tenant_quotas (tenant_id, max_unfinished_per_user, updated_by) VALUES ('acme', 1, 'olga')",
        &[],
    )
    .await
    .unwrap();
    assert_eq!(db.execute(queue_another, &[&first]).await.unwrap(), 1);
    assert_eq!(miscounted(&app.db).await, 0);
}

#[actix_web::test]
async fn with_quotas_off_an_operators_override_refuses_nothing_either() {
    let app = TestApp::builder()
        .configure(|s| {
            s.workers.global_limit = 0;
            s.quotas.enabled = false;
        })
        .spawn()
        .await;
    // An override set while quotas were on (or by another process's operator).
    app.db
        .client()
        .await
        .execute(
            "INSERT INTO tenant_quotas (tenant_id, max_unfinished_per_user, max_unfinished_per_tenant, updated_by)
             VALUES ('acme', 1, 1, 'olga')",
            &[],
        )
        .await
        .unwrap();
    let alice = token("acme", "alice");
    for _ in 0..3 {
        app.create(&alice, "noop", json!({})).await;
    }
    assert_eq!(miscounted(&app.db).await, 0);
}

/// Rows where the triggers' counts (per type, user and tenant) and the queue itself disagree.
async fn miscounted(db: &TestDb) -> i64 {
    db.scalar(
        "SELECT count(*)
         FROM (SELECT tenant_id, coalesce(user_id, '') AS user_id, coalesce(job_type, '') AS job_type, count(*) AS jobs
               FROM job_queue GROUP BY GROUPING SETS ((tenant_id), (tenant_id, user_id), (tenant_id, user_id, job_type))) q
         FULL JOIN (SELECT * FROM unfinished_counts WHERE jobs > 0) u USING (tenant_id, user_id, job_type)
         WHERE q.jobs IS DISTINCT FROM u.jobs",
        &[],
    )
    .await
}

/// Count rows of every kind, at zero or not.
async fn count_rows(db: &TestDb) -> i64 {
    db.scalar("SELECT count(*) FROM unfinished_counts", &[]).await
}

#[actix_web::test]
async fn the_counts_follow_every_way_a_job_enters_or_leaves_the_queue() {
    let app = TestApp::builder().spawn().await;
    let (alice, olga) = (token("acme", "alice"), operator_token("olga"));
    let done = app.create(&alice, "noop", json!({})).await;
    let failing = app.create(&alice, "sleep", json!({"ms": 1, "fail_times": 100})).await;
    let long = app.create(&alice, "sleep", json!({"ms": 60_000})).await;
    let waiting = app.create(&token("acme", "bob"), "sleep", json!({"ms": 1})).await;
    assert_eq!(miscounted(&app.db).await, 0, "queued");
    for id in [&done, &failing] {
        app.wait_until_finished(&alice, id, std::time::Duration::from_secs(20)).await;
    }
    assert_eq!(app.post(&alice, &format!("/jobs/{long}/cancel")).await.status().as_u16() / 100, 2);
    app.wait_until_finished(&alice, &long, std::time::Duration::from_secs(20)).await;
    app.wait_until_finished(&token("acme", "bob"), &waiting, std::time::Duration::from_secs(20)).await;
    assert_eq!(miscounted(&app.db).await, 0, "completed, failed, cancelled");
    let unfinished: i64 = app.db.scalar("SELECT coalesce(sum(jobs), 0)::bigint FROM unfinished_counts", &[]).await;
    assert_eq!(unfinished, 0);

    // An operator's retry queues the failed job again: counted again.
    assert_eq!(app.post(&olga, &format!("/admin/jobs/{failing}/retry")).await.status(), StatusCode::OK);
    assert_eq!(miscounted(&app.db).await, 0, "retried");
    app.wait_until_finished(&alice, &failing, std::time::Duration::from_secs(20)).await;
    assert_eq!(miscounted(&app.db).await, 0, "failed again");

    // The pruner forgets the counts at zero; a new job is counted afresh.
    assert!(count_rows(&app.db).await >= 3);
    app.ticks.prune.send(errand::actors::Prune).await.unwrap();
    assert_eq!(count_rows(&app.db).await, 0);
    app.create(&alice, "sleep", json!({"ms": 60_000})).await;
    assert_eq!(miscounted(&app.db).await, 0, "counted afresh");
}

/// The database's second, the generation a count written now belongs to.
async fn count_gen(db: &TestDb) -> i64 {
    db.scalar("SELECT errand_count_gen()", &[]).await
}

/// Waits until the database's clock is in a later second than `gen`.
async fn next_gen(db: &TestDb, after: i64) {
    eventually(std::time::Duration::from_secs(5), "the next second", || async move { count_gen(db).await > after })
        .await;
}

/// Keys with more than one row visible: a count must live in one row.
async fn split_counts(db: &TestDb) -> i64 {
    db.scalar(
        "SELECT count(*) FROM (SELECT 1 FROM unfinished_counts GROUP BY tenant_id, user_id, job_type
                               HAVING count(*) > 1) s",
        &[],
    )
    .await
}

#[actix_web::test]
async fn a_count_written_in_a_later_second_moves_to_a_new_row_with_its_count_and_line_head() {
    let app = TestApp::builder().configure(|s| s.workers.global_limit = 0).spawn().await;
    let alice = token("acme", "alice");
    let first = app.create(&alice, "noop", json!({})).await;
    let second = app.create(&alice, "noop", json!({})).await;
    // An end moves the tenant's line head to the turn it ended (the second
    // job's: 1).
    assert_eq!(app.post(&alice, &format!("/jobs/{second}/cancel")).await.status().as_u16() / 100, 2);
    let tenant_row = "SELECT gen, jobs, line_head FROM unfinished_counts WHERE tenant_id = 'acme' AND user_id = ''";
    let row = app.db.client().await.query_one(tenant_row, &[]).await.unwrap();
    let (then, head): (i64, i64) = (row.get("gen"), row.get("line_head"));
    assert_eq!((row.get::<_, i64>("jobs"), head), (1, 1));

    next_gen(&app.db, then).await;
    app.create(&token("acme", "bob"), "noop", json!({})).await;
    let row = app.db.client().await.query_one(tenant_row, &[]).await.unwrap();
    assert!(row.get::<_, i64>("gen") > then, "moved to the second it was written in");
    assert_eq!((row.get::<_, i64>("jobs"), row.get::<_, i64>("line_head")), (2, head), "carried");
    assert_eq!(split_counts(&app.db).await, 0);
    assert_eq!(miscounted(&app.db).await, 0);

    // An end in a later second moves a key too, and a key at 0 stays a row.
    next_gen(&app.db, count_gen(&app.db).await).await;
    assert_eq!(app.post(&alice, &format!("/jobs/{first}/cancel")).await.status().as_u16() / 100, 2);
    assert_eq!(split_counts(&app.db).await, 0);
    assert_eq!(miscounted(&app.db).await, 0);
    let alices: i64 = app
        .db
        .scalar(
            "SELECT jobs FROM unfinished_counts WHERE tenant_id = 'acme' AND user_id = 'alice' AND job_type = ''",
            &[],
        )
        .await;
    assert_eq!(alices, 0);
}

#[actix_web::test]
async fn counts_stay_exact_when_processes_queue_and_end_jobs_across_seconds() {
    let db = TestDb::create().await;
    let env = [
        ("ERRAND_WORKERS__GLOBAL_LIMIT", "0"),
        ("ERRAND_QUOTAS__MAX_UNFINISHED_PER_USER", "unlimited"),
        ("ERRAND_QUOTAS__MAX_UNFINISHED_PER_TENANT", "unlimited"),
    ];
    let (a, b) = (ErrandProcess::start(&db, &env), ErrandProcess::start(&db, &env));
    let users = [token("acme", "alice"), token("acme", "bob"), token("globex", "gina")];
    let until = count_gen(&db).await + 2;
    let mut round = 0;
    // Rounds of submissions from both processes at once, with every other job
    // of the round before cancelled beside them, until the clock has passed
    // two seconds: every key is moved while others write it.
    let mut earlier: Vec<(usize, String)> = Vec::new();
    while count_gen(&db).await <= until {
        let submissions = (0..12).map(|i| {
            let process = if i % 2 == 0 { &a } else { &b };
            let (user, key) = (&users[i % 3], format!("r{round}-{i}"));
            async move { process.submit(user, "noop", &key, json!({})).await }
        });
        let cancels = earlier.iter().step_by(2).enumerate().map(|(i, (user, id))| {
            let process = if i % 2 == 0 { &b } else { &a };
            let (user, path) = (&users[*user], format!("/jobs/{id}/cancel"));
            async move { process.post(user, &path).await }
        });
        let (submitted, cancelled) = futures_util::join!(join_all(submissions), join_all(cancels));
        assert!(cancelled.iter().all(|r| r.status().is_success()));
        earlier = Vec::new();
        for (i, response) in submitted.into_iter().enumerate() {
            assert_eq!(response.status(), StatusCode::ACCEPTED);
            let body: Value = response.json().await.unwrap();
            earlier.push((i % 3, body["id"].as_str().unwrap().to_owned()));
        }
        round += 1;
    }
    assert_eq!(miscounted(&db).await, 0);
    assert_eq!(split_counts(&db).await, 0);
    let queued: i64 = db.scalar("SELECT count(*) FROM job_queue", &[]).await;
    let counted: i64 = db.scalar("SELECT sum(jobs)::bigint FROM unfinished_counts WHERE user_id = ''", &[]).await;
    assert_eq!((counted, queued), (queued, 12 * round - 6 * (round - 1)));
}
