//! Exports end to end on the local storage backend: streamed COPY, bound
//! params, tenant scope, signed URLs, the result endpoint and retention.

use std::time::Duration;

use errand::config::ExportSettings;
use errand::domain::ExportFormat;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

const WITHIN: Duration = Duration::from_secs(30);
const YEAR: (&str, &str) = ("2000-01-01", "2100-01-01");

async fn export(app: &TestApp, token: &str, job_type: &str, params: Value) -> Value {
    let id = app.create(token, job_type, params).await;
    let job = app.wait_until_finished(token, &id, WITHIN).await;
    assert_eq!(job["status"], "completed", "{job}");
    job
}

async fn download(app: &TestApp, job: &Value) -> String {
    let response = app.fetch_signed(job["result_url"].as_str().expect("a result_url")).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "text/csv; charset=utf-8");
    let disposition = response.headers()["content-disposition"].to_str().unwrap().to_owned();
    assert!(disposition.contains(job["result"]["file_name"].as_str().unwrap()), "{disposition}");
    response.text().await.unwrap()
}

#[actix_web::test]
async fn a_sales_export_round_trips_byte_for_byte_with_the_tenants_rows() {
    let (app, _dir) = spawn_exporting_app(|_| {}).await;
    let alice = token("demo-1", "alice");
    let job = export(&app, &alice, "export_sales_report", json!({"from": YEAR.0, "to": YEAR.1})).await;
    let csv = download(&app, &job).await;

    // The same query run directly, with this test's own literals.
    let client = app.db.client().await;
    let expected_rows: i64 = app.db.scalar("SELECT count(*) FROM sales WHERE tenant_id = 'demo-1'", &[]).await;
    let copy = client
        .copy_out(
            "COPY (SELECT id AS \"Sale ID\", sold_at AS \"Date\", customer AS \"Customer\", product AS \"Product\", \
             quantity AS \"Quantity\", unit_price AS \"Unit price\", quantity * unit_price AS \"Total\", status AS \"Status\" \
             FROM sales WHERE tenant_id = 'demo-1' ORDER BY sold_at, id) TO STDOUT WITH (FORMAT csv, HEADER true)",
        )
        .await
        .unwrap();
    use futures_util::TryStreamExt;
    let expected: Vec<u8> = copy.map_ok(|b| b.to_vec()).try_concat().await.unwrap();
    assert_eq!(csv.as_bytes(), &expected[..], "byte for byte");
    assert_eq!(job["result"]["row_count"], expected_rows);
    assert_eq!(job["result"]["size_bytes"], expected.len());
    assert!(csv.starts_with("Sale ID,Date,Customer,Product,Quantity,Unit price,Total,Status\n"));
    let name = job["result"]["file_name"].as_str().unwrap();
    assert!(name.starts_with("export_sales_report-") && name.ends_with(".csv"), "{name}");
    assert!(job["result"]["storage_key"].as_str().unwrap().starts_with("tenants/"));
}

#[actix_web::test]
async fn params_that_look_like_sql_are_just_values_and_never_reach_another_tenant() {
    let (app, _dir) = spawn_exporting_app(|_| {}).await;
    let alice = token("demo-1", "alice");
    let sneaky = json!({"from": YEAR.0, "to": YEAR.1, "creator_id": "x' OR '1'='1"});
    let job = export(&app, &alice, "export_creator_earnings", sneaky).await;
    assert_eq!(job["result"]["row_count"], 0);
    assert_eq!(download(&app, &job).await, "Creator,Date,Source,Amount,Currency,Entry ID\n");

    let job = export(&app, &alice, "export_creator_earnings", json!({"from": YEAR.0, "to": YEAR.1})).await;
    let demo1: i64 = app.db.scalar("SELECT count(*) FROM creator_earnings WHERE tenant_id = 'demo-1'", &[]).await;
    assert_eq!(job["result"]["row_count"], demo1);
    // A tenant param, or any unknown param, is refused before a job exists.
    let tenant_param = app
        .submit(&alice, "export_creator_earnings", "t", json!({"from": YEAR.0, "to": YEAR.1, "tenant": "demo-2"}))
        .await;
    assert_problem(tenant_param, StatusCode::UNPROCESSABLE_ENTITY, "invalid_params").await;
}

#[actix_web::test]
async fn tampered_or_expired_links_are_refused_and_serve_nothing() {
    let (app, _dir) = spawn_exporting_app(|s| s.storage.url_expiry = Duration::from_secs(1)).await;
    let alice = token("demo-1", "alice");
    let job = export(&app, &alice, "export_sales_report", json!({"from": YEAR.0, "to": YEAR.1})).await;
    let url = job["result_url"].as_str().unwrap().to_owned();
    let other =
        export(&app, &token("demo-2", "bob"), "export_sales_report", json!({"from": YEAR.0, "to": YEAR.1})).await;
    let other_key = other["result"]["storage_key"].as_str().unwrap();
    let own_key = job["result"]["storage_key"].as_str().unwrap();

    let last = url.chars().last().unwrap();
    let tampered_sig = format!("{}{}", &url[..url.len() - 1], if last == 'a' { 'b' } else { 'a' });
    let other_object = url.replace(own_key, other_key);
    let longer = url.replace("expires=", "expires=9");
    let renamed = url.replace("name=export", "name=evil");
    for bad in [tampered_sig, other_object, longer, renamed] {
        let response = app.fetch_signed(&bad).await;
        assert_problem(response, StatusCode::FORBIDDEN, "forbidden").await;
    }
    assert_eq!(app.fetch_signed(&url).await.status(), StatusCode::OK);
    eventually(Duration::from_secs(10), "the link expires", || async {
        app.fetch_signed(&url).await.status() == StatusCode::FORBIDDEN
    })
    .await;
    // Reading the job again signs a fresh link.
    let fresh = app.job(&alice, job["id"].as_str().unwrap()).await;
    assert_eq!(app.fetch_signed(fresh["result_url"].as_str().unwrap()).await.status(), StatusCode::OK);
}

#[actix_web::test]
async fn the_result_endpoint_redirects_its_owner_and_nobody_else() {
    let (app, _dir) = spawn_exporting_app(|_| {}).await;
    let alice = token("demo-1", "alice");
    let job = export(&app, &alice, "export_sales_report", json!({"from": YEAR.0, "to": YEAR.1})).await;
    let id = job["id"].as_str().unwrap();
    let response = app.result_redirect(&alice, id).await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let location = response.headers()["location"].to_str().unwrap().to_owned();
    assert_eq!(app.fetch_signed(&location).await.status(), StatusCode::OK);

    for stranger in [token("demo-1", "bob"), token("demo-2", "alice")] {
        assert_problem(app.result_redirect(&stranger, id).await, StatusCode::NOT_FOUND, "not_found").await;
    }
    let running = app.create(&alice, "sleep", json!({"ms": 60000})).await;
    assert_problem(app.result_redirect(&alice, &running).await, StatusCode::CONFLICT, "result_not_ready").await;
    let noop = app.create(&alice, "noop", json!({})).await;
    app.wait_until_finished(&alice, &noop, WITHIN).await;
    assert_problem(app.result_redirect(&alice, &noop).await, StatusCode::NOT_FOUND, "no_result").await;
}

#[actix_web::test]
async fn after_its_retention_a_result_is_deleted_and_says_so() {
    let (app, dir) = spawn_exporting_app(|s| {
        s.storage.retention = Duration::from_secs(1);
        s.storage.prune_interval = Duration::from_millis(200);
    })
    .await;
    let alice = token("demo-1", "alice");
    let job = export(&app, &alice, "export_sales_report", json!({"from": YEAR.0, "to": YEAR.1})).await;
    let id = job["id"].as_str().unwrap().to_owned();
    let url = job["result_url"].as_str().unwrap().to_owned();
    assert_eq!(files_under(&dir).len(), 1);
    eventually(WITHIN, "the result is pruned", || async { app.job(&alice, &id).await["result"]["expired"] == true })
        .await;
    assert!(files_under(&dir).is_empty(), "the file is deleted");
    let job = app.job(&alice, &id).await;
    assert_eq!(job["result_url"], Value::Null);
    assert_problem(app.result_redirect(&alice, &id).await, StatusCode::GONE, "result_expired").await;
    assert_problem(app.fetch_signed(&url).await, StatusCode::GONE, "result_expired").await;
}

#[actix_web::test]
async fn a_failure_mid_stream_leaves_no_partial_file() {
    let failing = export_settings(
        // Fails with division by zero 150 rows in (demo-1 has the odd ids), after data has streamed.
        "SELECT id, 1 / (id - 301) AS boom FROM sales WHERE tenant_id = :tenant ORDER BY id",
        ExportFormat::Csv,
    );
    let (app, dir) = spawn_exporting_app(move |s| {
        add_export_type(s, "export_boom", failing);
    })
    .await;
    let alice = token("demo-1", "alice");
    let id = app.create(&alice, "export_boom", json!({})).await;
    let job = app.wait_until_finished(&alice, &id, WITHIN).await;
    assert_eq!(job["status"], "failed");
    assert!(job["error_message"].as_str().unwrap().contains("division by zero"), "{job}");
    assert_eq!(job["attempts"], 1, "bad data is not retried");
    assert!(files_under(&dir).is_empty(), "no partial object: {:?}", files_under(&dir));
}

#[actix_web::test]
async fn a_value_an_export_cannot_read_is_named_by_kind_never_quoted() {
    let failing = export_settings(
        // PostgreSQL's own message quotes the value: invalid input syntax for type integer: "secret-301".
        "SELECT ('secret-' || id)::integer AS n FROM sales WHERE tenant_id = :tenant ORDER BY id",
        ExportFormat::Csv,
    );
    let (app, _dir) = spawn_exporting_app(move |s| add_export_type(s, "export_cast", failing)).await;
    let alice = token("demo-1", "alice");
    let id = app.create(&alice, "export_cast", json!({})).await;
    let job = app.wait_until_finished(&alice, &id, WITHIN).await;
    let error = job["error_message"].as_str().unwrap();
    assert_eq!(job["status"], "failed");
    assert!(error.contains("not written as the type"), "{job}");
    assert!(!error.contains("secret"), "a row's value is quoted: {error}");
}

#[actix_web::test]
async fn ndjson_exports_one_object_per_line_from_a_separate_source_database() {
    let source = TestDb::create().await;
    let source_store = errand::store::Store::connect(&source.url, 2).unwrap();
    errand::store::demo::seed(&source_store, 1, 50).await.unwrap();
    let ndjson = ExportSettings {
        source_database_url: Some(source.url.clone().try_into().unwrap()),
        ..export_settings(
            "SELECT id, customer, unit_price FROM sales WHERE tenant_id = :tenant ORDER BY id",
            ExportFormat::Ndjson,
        )
    };
    let (app, _dir) = spawn_exporting_app(move |s| {
        add_export_type(s, "export_lines", ndjson);
    })
    .await;
    // The app's own database has demo-1 rows too (500); the source has 50.
    let alice = token("demo-1", "alice");
    let job = export(&app, &alice, "export_lines", json!({})).await;
    assert_eq!(job["result"]["row_count"], 50);
    let response = app.fetch_signed(job["result_url"].as_str().unwrap()).await;
    assert_eq!(response.headers()["content-type"], "application/x-ndjson");
    let body = response.text().await.unwrap();
    let lines: Vec<Value> = body.lines().map(|l| serde_json::from_str(l).expect("a JSON line")).collect();
    assert_eq!(lines.len(), 50);
    assert!(lines.iter().all(|l| l["id"].is_i64() && l["customer"].is_string() && l.get("unit_price").is_some()));
}

#[actix_web::test]
async fn an_attempt_that_breaks_off_mid_stream_is_retried_from_a_clean_slate() {
    let flaky = export_settings(
        // The first attempt is cancelled 150 rows in (a transient error); the second runs through.
        "SELECT id, customer, errand_test_flaky(id, :attempt::int) AS ok FROM sales \
                WHERE tenant_id = :tenant ORDER BY id",
        ExportFormat::Csv,
    );
    let (app, dir) = spawn_exporting_app(move |s| {
        add_export_type(s, "export_flaky", flaky);
    })
    .await;
    app.db
        .client()
        .await
        .batch_execute(
            "CREATE FUNCTION errand_test_flaky(id bigint, attempt int) RETURNS boolean LANGUAGE plpgsql AS $$ \
             BEGIN IF attempt = 1 AND id > 301 THEN RAISE EXCEPTION 'cancelled' USING ERRCODE = '57014'; END IF; \
             RETURN true; END $$",
        )
        .await
        .unwrap();
    let alice = token("demo-1", "alice");
    let job = export(&app, &alice, "export_flaky", json!({})).await;
    assert_eq!(job["attempts"], 2);
    let rows: i64 = app.db.scalar("SELECT count(*) FROM sales WHERE tenant_id = 'demo-1'", &[]).await;
    assert_eq!(job["result"]["row_count"], rows);
    let csv = download(&app, &job).await;
    assert_eq!(csv.lines().count() as i64, rows + 1, "the whole export, once");
    assert_eq!(files_under(&dir).len(), 1, "one object, no partial leftovers: {:?}", files_under(&dir));
}

#[actix_web::test]
async fn an_export_failing_on_errands_side_tells_the_user_so_without_internals() {
    let broken = export_settings("SELECT * FROM no_such_table WHERE tenant_id = :tenant", ExportFormat::Csv);
    let (app, _dir) = spawn_exporting_app(move |s| add_export_type(s, "export_broken", broken)).await;
    let alice = token("demo-1", "alice");
    let id = app.create(&alice, "export_broken", json!({})).await;
    let job = app.wait_until_finished(&alice, &id, WITHIN).await;
    assert_eq!(job["status"], "failed");
    let message = job["error_message"].as_str().unwrap();
    assert!(message.contains("problem on our side"), "{message}");
    assert!(!message.contains("no_such_table") && !message.contains("relation"), "internals leaked: {message}");
    let feed = app.get(&alice, "/notifications").await;
    let feed = feed.text().await.unwrap();
    assert!(!feed.contains("no_such_table"), "internals leaked into the feed: {feed}");
}

#[actix_web::test]
async fn text_cells_a_spreadsheet_would_run_are_defused_and_typed_cells_are_not() {
    let query = "SELECT id AS \"Sale \"\"ID\"\"\", '=HYPERLINK(\"http://x\")' AS customer, '-5'::varchar AS note, \
                 -id AS negative, '@sum' AS at, 'plain' AS plain FROM sales WHERE tenant_id = :tenant ORDER BY id LIMIT 1";
    let settings = |defuse_formulas| ExportSettings { defuse_formulas, ..export_settings(query, ExportFormat::Csv) };
    let (app, _dir) = spawn_exporting_app(move |s| {
        add_export_type(s, "export_defused", settings(true));
        add_export_type(s, "export_raw", settings(false));
    })
    .await;
    let alice = token("demo-1", "alice");
    let defused = download(&app, &export(&app, &alice, "export_defused", json!({})).await).await;
    let raw = download(&app, &export(&app, &alice, "export_raw", json!({})).await).await;
    let id: i64 = app.db.scalar("SELECT min(id) FROM sales WHERE tenant_id = 'demo-1'", &[]).await;
    let header = "\"Sale \"\"ID\"\"\",customer,note,negative,at,plain\n";
    assert_eq!(defused, format!("{header}{id},\"'=HYPERLINK(\"\"http://x\"\")\",'-5,-{id},'@sum,plain\n"));
    assert_eq!(raw, format!("{header}{id},\"=HYPERLINK(\"\"http://x\"\")\",-5,-{id},@sum,plain\n"));
}

#[actix_web::test]
async fn under_a_read_only_role_with_row_level_security_an_export_sees_its_tenant_s_rows_only() {
    let (app, _dir) = spawn_exporting_app(|_| {}).await;
    // The host app's own scoping: a role of its own, subject to a policy
    // that reads the tenant from a setting of the app's.
    let setup = "DO $$ BEGIN CREATE ROLE errand_test_reader LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$;
                 GRANT SELECT ON sales TO errand_test_reader;
                 ALTER TABLE sales ENABLE ROW LEVEL SECURITY;
                 CREATE POLICY by_tenant ON sales USING (tenant_id = current_setting('app.current_tenant', true))";
    app.db.client().await.batch_execute(setup).await.unwrap();
    let reader_url = app.db.url.replacen("postgres@", "errand_test_reader@", 1);
    let scoped = ExportSettings {
        source_database_url: Some(reader_url.try_into().unwrap()),
        resume_key: vec!["id".into()],
        tenant_setting: Some("app.current_tenant".into()),
        // No :tenant: the policy holds the rows to the job's tenant.
        ..export_settings("SELECT id, tenant_id FROM sales ORDER BY id", ExportFormat::Csv)
    };
    let app = TestApp::builder()
        .on(app.db.shared())
        .configure(|s| {
            s.storage.local_dir = _dir.to_path_buf();
            add_export_type(s, "export_scoped", scoped);
        })
        .spawn()
        .await;
    let alice = token("demo-2", "alice");
    let job = export(&app, &alice, "export_scoped", json!({})).await;
    let csv = download(&app, &job).await;
    let expected: i64 = app.db.scalar("SELECT count(*) FROM sales WHERE tenant_id = 'demo-2'", &[]).await;
    assert!(expected > 0);
    assert_eq!(job["result"]["row_count"], expected);
    assert!(csv.lines().skip(1).all(|line| line.ends_with(",demo-2")), "another tenant's row: {csv}");
    // A query that says nothing of its tenant without the setting is refused at start-up.
    let mut settings = test_settings(&app.db);
    let mut unscoped = job_type("sql_export");
    unscoped.export = Some(export_settings("SELECT id FROM sales", ExportFormat::Csv));
    settings.job_types.insert("export_unscoped".into(), unscoped);
    let built = errand::startup::Application::build(settings, errand::jobs::HandlerRegistry::builtin()).await;
    let refused = built.err().expect("refused at start-up").to_string();
    assert!(refused.contains("job_types.export_unscoped.export.query"), "{refused}");
}
