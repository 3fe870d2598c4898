//! A long export reads in transactions of about `max_transaction`,
//! each cut at a checkpoint and the next going on from it: the file is the
//! one a single read writes, and no read holds its snapshot (and with it
//! the vacuum of its database) for much longer.

use std::time::Duration;

use calamine::{DataType, Reader};
use errand::config::ExportSettings;
use errand::domain::ExportFormat;
use serde_json::{Value, json};

use crate::helpers::*;

const WITHIN: Duration = Duration::from_secs(120);
const ROWS: i64 = 20_000;

/// The rows, each about 140 bytes, read at 0.2 ms or more each (a sleep
/// every tenth row: a 64 KiB part every 0.1 s or so). `{first_row}`: SQL
/// run once before the first row.
fn slow_query(first_row: &str) -> String {
    format!(
        "WITH first AS MATERIALIZED (SELECT {first_row} AS done) \
         SELECT n AS \"N\", t AS \"Text\" FROM slow_rows, first \
         WHERE :tenant <> '' AND first.done IS NOT NULL AND (n % 10 <> 0 OR pg_sleep(0.002)::text = '') ORDER BY n"
    )
}

/// A source database with `ROWS` rows, read in key order (no sort: the
/// whole of a sort would come before a read's first row).
async fn source() -> TestDb {
    let source = TestDb::create_empty().await;
    let client = source.client().await;
    client
        .batch_execute(&format!(
            "CREATE TABLE slow_rows (n int PRIMARY KEY, t text NOT NULL); \
             INSERT INTO slow_rows SELECT n, repeat(md5(n::text), 4) FROM generate_series(1, {ROWS}) AS n; \
             ANALYZE slow_rows; ALTER DATABASE {} SET enable_sort = off",
            source.name
        ))
        .await
        .unwrap();
    source
}

/// The export type `export_slow`: `query` from `source` in `format`, a
/// resume key, reads of about `most`.
async fn exporting_app(source: &TestDb, query: String, most: Duration, format: ExportFormat) -> (TestApp, TempDir) {
    let settings = ExportSettings {
        source_database_url: Some(source.url.clone().try_into().unwrap()),
        resume_key: vec!["N".into()],
        max_transaction: Some(most),
        ..export_settings(&query, format)
    };
    spawn_exporting_app(move |s| {
        s.storage.part_size = 64 * 1024;
        add_export_type(s, "export_slow", settings);
        s.job_types.get_mut("export_slow").unwrap().timeout = WITHIN;
    })
    .await
}

/// The CSV a single read writes, by PostgreSQL's own COPY.
async fn expected_csv(source: &TestDb) -> String {
    let copy =
        "COPY (SELECT n AS \"N\", t AS \"Text\" FROM slow_rows ORDER BY n) TO STDOUT WITH (FORMAT csv, HEADER true)";
    let client = source.client().await;
    let stream = client.copy_out(copy).await.unwrap();
    let chunks: Vec<_> = futures_util::TryStreamExt::try_collect(stream).await.unwrap();
    String::from_utf8(chunks.concat()).unwrap()
}

/// The job's file, once it completed.
async fn exported(app: &TestApp, token: &str, id: &str) -> (Value, Vec<u8>) {
    let job = app.wait_until_finished(token, id, WITHIN).await;
    assert_eq!(job["status"], "completed", "{job}");
    assert_eq!(job["attempts"], 1, "{job}");
    assert_eq!(job["result"]["row_count"], ROWS);
    let file = app.fetch_signed(job["result_url"].as_str().unwrap()).await;
    (job, file.bytes().await.unwrap().to_vec())
}

/// The messages its one attempt logged.
async fn logged(app: &TestApp, id: &str) -> Vec<String> {
    let detail: Value = app.get(&operator_token("olga"), &format!("/admin/jobs/{id}")).await.json().await.unwrap();
    let attempts = detail["history"]["attempts"].as_array().unwrap();
    let logs = attempts[0]["logs"].as_array().unwrap();
    logs.iter().map(|l| l["message"].as_str().unwrap().to_owned()).collect()
}

#[actix_web::test]
async fn a_long_export_reads_in_short_transactions_and_writes_every_row_once_in_order() {
    let source = source().await;
    let most = Duration::from_millis(500);
    let (app, _dir) = exporting_app(&source, slow_query("1"), most, ExportFormat::Csv).await;
    let alice = token("demo-1", "alice");
    let id = app.create(&alice, "export_slow", json!({})).await;

    // While it runs: the oldest open transaction of the source, at its
    // oldest, and the backends its reads ran on.
    let watcher = source.client().await;
    let mut oldest = Duration::ZERO;
    let mut seen = 0;
    let mut backends = std::collections::HashSet::new();
    loop {
        let row = watcher
            .query_one(
                "SELECT extract(epoch FROM max(clock_timestamp() - xact_start))::float8, array_agg(pid) \
                 FROM pg_stat_activity \
                 WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE 'COPY%'",
                &[],
            )
            .await
            .unwrap();
        if let Some(age) = row.get::<_, Option<f64>>(0) {
            seen += 1;
            oldest = oldest.max(Duration::from_secs_f64(age));
            backends.extend(row.get::<_, Vec<i32>>(1));
        }
        if app.job(&alice, &id).await["status"] != "processing" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (_, csv) = exported(&app, &alice, &id).await;
    assert!(csv == expected_csv(&source).await.into_bytes(), "the file is the one a single read writes");
    let reads_on = logged(&app, &id).await.iter().filter(|m| *m == "read on in a new transaction").count();
    // 20,000 rows at 0.2 ms or more: 4 s or more, in reads of 0.5 s.
    assert!(reads_on >= 3, "it read on {reads_on} times");
    assert!(seen > 0, "the export's reads were seen");
    // A cut read's connection is not used again: its cancel may still come.
    assert!(backends.len() >= 3, "the reads ran on {} connections", backends.len());
    assert!(oldest < most * 4, "a read's transaction was open {oldest:?}, past its bound of {most:?}");
}

#[actix_web::test]
async fn a_query_slow_to_its_first_row_is_cut_only_at_a_checkpoint_and_only_after_four_times_that_wait() {
    let source = source().await;
    // The first row comes 1 s after each read begins, past the bound of
    // 0.3 s: each read goes on to a checkpoint 4 s or more in.
    let (app, _dir) =
        exporting_app(&source, slow_query("pg_sleep(1)::text"), Duration::from_millis(300), ExportFormat::Csv).await;
    let alice = token("demo-1", "alice");
    let id = app.create(&alice, "export_slow", json!({})).await;
    let (_, csv) = exported(&app, &alice, &id).await;
    assert!(csv == expected_csv(&source).await.into_bytes(), "the file is the one a single read writes");
    let detail: Value = app.get(&operator_token("olga"), &format!("/admin/jobs/{id}")).await.json().await.unwrap();
    let logs = detail["history"]["attempts"][0]["logs"].as_array().unwrap().clone();
    let at = |l: &Value| chrono::DateTime::parse_from_rfc3339(l["at"].as_str().unwrap()).unwrap();
    let began = logs.iter().find(|l| l["message"] == "running the query").map(at).unwrap();
    let reads_on: Vec<&Value> = logs.iter().filter(|l| l["message"] == "read on in a new transaction").collect();
    assert!(!reads_on.is_empty(), "it read on: {logs:?}");
    let after: Vec<i64> = reads_on.iter().map(|l| l["fields"]["after_rows"].as_i64().unwrap()).collect();
    assert!(after[0] > 0 && after.windows(2).all(|w| w[0] < w[1]), "each read went on from further: {after:?}");
    // Each read lasted four times its 1 s wait, not the bound's 0.3 s.
    let ends: Vec<_> = std::iter::once(began).chain(reads_on.iter().map(|l| at(l))).collect();
    for read in ends.windows(2) {
        let lasted = (read[1] - read[0]).to_std().unwrap();
        assert!(lasted >= Duration::from_millis(3900), "a read lasted {lasted:?}: {logs:?}");
    }
}

#[actix_web::test]
async fn a_long_workbook_reads_in_short_transactions_each_after_the_last_pages_key() {
    let source = source().await;
    let (app, _dir) = exporting_app(&source, slow_query("1"), Duration::from_millis(500), ExportFormat::Xlsx).await;
    let alice = token("demo-1", "alice");
    let id = app.create(&alice, "export_slow", json!({})).await;
    let (_, xlsx) = exported(&app, &alice, &id).await;
    let mut workbook: calamine::Xlsx<_> = calamine::open_workbook_from_rs(std::io::Cursor::new(xlsx)).unwrap();
    let sheet = workbook.worksheet_range("Sheet1").unwrap();
    let cells: Vec<(f64, String)> =
        sheet.rows().skip(1).map(|row| (row[0].as_f64().unwrap(), row[1].as_string().unwrap())).collect();
    let expected: Vec<(f64, String)> = source
        .client()
        .await
        .query("SELECT n::float8, t FROM slow_rows ORDER BY n", &[])
        .await
        .unwrap()
        .iter()
        .map(|row| (row.get(0), row.get(1)))
        .collect();
    assert!(cells == expected, "every row once, in order ({} rows)", cells.len());
    let reads_on = logged(&app, &id).await.iter().filter(|m| *m == "read on in a new transaction").count();
    assert!(reads_on >= 3, "it read on {reads_on} times");
}

#[actix_web::test]
async fn a_read_whose_copy_ended_before_its_cut_goes_on_on_a_new_connection() {
    let source = source().await;
    // The third row comes past the bound and fills a part: the read is cut
    // after it, when the fourth row and the COPY's end were sent long
    // before (a part's upload and checkpoint come first). The cancel finds
    // no statement; it could hit the next one on that connection. (The
    // first rows are big so that the server's send buffer lets the first go
    // before the wait: a read is cut only past four times its first row's.)
    let query = "SELECT n AS \"N\", repeat('x', (ARRAY[20000, 20000, 70000, 1])[n]) AS \"Text\" \
                 FROM slow_rows WHERE n <= 4 AND :tenant <> '' AND (n <> 3 OR pg_sleep(0.5)::text = '') ORDER BY n";
    let (app, _dir) = exporting_app(&source, query.into(), Duration::from_millis(300), ExportFormat::Csv).await;
    let alice = token("demo-1", "alice");
    let id = app.create(&alice, "export_slow", json!({})).await;
    let job = app.wait_until_finished(&alice, &id, WITHIN).await;
    assert_eq!(job["status"], "completed", "{job}");
    assert_eq!(job["attempts"], 1, "{job}");
    let file = app.fetch_signed(job["result_url"].as_str().unwrap()).await.text().await.unwrap();
    let rows =
        [20_000, 20_000, 70_000, 1].iter().enumerate().map(|(n, len)| format!("{},{}\n", n + 1, "x".repeat(*len)));
    assert!(file == format!("N,Text\n{}", rows.collect::<String>()), "the file is the query's rows once each");

    let detail: Value = app.get(&operator_token("olga"), &format!("/admin/jobs/{id}")).await.json().await.unwrap();
    let logs = detail["history"]["attempts"][0]["logs"].as_array().unwrap().clone();
    let reads_on: Vec<&Value> = logs.iter().filter(|l| l["message"] == "read on in a new transaction").collect();
    assert_eq!(reads_on.len(), 1, "{logs:?}");
    assert_eq!(reads_on[0]["fields"], json!({"after_rows": 3}), "{logs:?}");
}
