//! An export's formats: asked for with `?format=`, part of the request, and
//! the same rows whichever is written (CSV, csv.gz, XLSX).

use std::io::Read;
use std::time::Duration;

use calamine::{Data, Reader, Xlsx};
use reqwest::StatusCode;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::*;

const WITHIN: Duration = Duration::from_secs(60);
const SALES: &str = "/jobs/export_sales_report";

/// Exports the caller's 2000–2100 sales in `format` and answers the job and its file's bytes.
async fn export_in(app: &TestApp, token: &str, format: &str) -> (Value, Vec<u8>) {
    let params = json!({"from": "2000-01-01", "to": "2100-01-01"});
    let key = Uuid::new_v4().to_string();
    let response = app.submit_to(token, &format!("{SALES}?format={format}"), &key, params).await;
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    let id = id_of(response).await;
    let job = app.wait_until_finished(token, &id, WITHIN).await;
    assert_eq!(job["status"], "completed", "{job}");
    assert_eq!(job["format"], format);
    let file = app.fetch_signed(job["result_url"].as_str().unwrap()).await;
    assert_eq!(file.status(), StatusCode::OK);
    (job, file.bytes().await.unwrap().to_vec())
}

/// A CSV file's records, split naively (the sales rows quote nothing).
fn records(csv: &str) -> Vec<Vec<String>> {
    csv.lines().map(|line| line.split(',').map(str::to_owned).collect()).collect()
}

#[actix_web::test]
async fn csv_gz_and_xlsx_hold_the_rows_of_the_csv_numbers_as_numbers_and_dates_as_dates() {
    let (app, _dir) = spawn_exporting_app(|_| {}).await;
    let alice = token("demo-1", "alice");
    let (csv_job, csv) = export_in(&app, &alice, "csv").await;
    let (gz_job, gz) = export_in(&app, &alice, "csv.gz").await;
    let (xlsx_job, xlsx) = export_in(&app, &alice, "xlsx").await;
    let rows = csv_job["result"]["row_count"].as_i64().unwrap();
    assert!(rows > 100, "the demo's rows: {rows}");

    // csv.gz: the CSV's very bytes once decompressed.
    let mut gunzipped = Vec::new();
    flate2::read::GzDecoder::new(&gz[..]).read_to_end(&mut gunzipped).unwrap();
    assert_eq!(gunzipped, csv, "csv.gz decompresses to the CSV");
    assert_eq!(gz_job["result"]["row_count"], rows);
    assert!(gz_job["result"]["file_name"].as_str().unwrap().ends_with(".csv.gz"));
    assert_eq!(gz_job["result"]["content_type"], "application/gzip");

    // XLSX: one sheet, the header frozen, the same cells typed.
    assert_eq!(xlsx_job["result"]["row_count"], rows);
    assert!(xlsx_job["result"]["file_name"].as_str().unwrap().ends_with(".xlsx"));
    let mut workbook: Xlsx<_> = calamine::open_workbook_from_rs(std::io::Cursor::new(xlsx)).unwrap();
    let sheet = workbook.worksheet_range("Sheet1").unwrap();
    let expected = records(std::str::from_utf8(&csv).unwrap());
    assert_eq!(sheet.height(), expected.len(), "a header and every row");
    let cells: Vec<&[Data]> = sheet.rows().collect();
    for (col, name) in expected[0].iter().enumerate() {
        assert_eq!(cells[0][col], Data::String(name.clone()), "the header");
    }
    // Sale ID, Date, Customer, Product, Quantity, Unit price, Total, Status.
    for (row, record) in cells.iter().zip(&expected).skip(1) {
        assert_eq!(row[0], Data::Float(record[0].parse().unwrap()), "an id is a number");
        match &row[1] {
            Data::DateTime(date) => {
                // Excel's day 0 is 1899-12-30 (for dates after February 1900).
                let day = chrono::NaiveDate::from_ymd_opt(1899, 12, 30).unwrap();
                let shown = (day + chrono::Days::new(date.as_f64() as u64)).to_string();
                assert_eq!(shown, record[1], "the same date");
            }
            other => panic!("a date is a date: {other:?}"),
        }
        assert_eq!(row[2], Data::String(record[2].clone()));
        assert_eq!(row[4], Data::Float(record[4].parse().unwrap()));
        assert_eq!(row[6], Data::Float(record[6].parse().unwrap()), "a numeric is a number");
        assert_eq!(row[7], Data::String(record[7].clone()));
    }
}

#[actix_web::test]
async fn an_xlsx_cell_that_looks_like_a_formula_is_text_and_a_null_is_empty() {
    let query = "SELECT '=HYPERLINK(\"http://x\")' AS customer, '+1'::varchar AS note, NULL::int AS nothing, \
                 true AS paid, 'NaN'::float8 AS odd, '1899-01-01'::date AS old \
                 FROM sales WHERE tenant_id = :tenant LIMIT 1";
    let settings = export_settings(query, errand::domain::ExportFormat::Xlsx);
    let (app, _dir) = spawn_exporting_app(move |s| add_export_type(s, "export_cells", settings)).await;
    let alice = token("demo-1", "alice");
    // The type's only format is its default.
    let id = app.create(&alice, "export_cells", json!({})).await;
    let job = app.wait_until_finished(&alice, &id, WITHIN).await;
    assert_eq!(job["format"], "xlsx", "{job}");
    let file = app.fetch_signed(job["result_url"].as_str().unwrap()).await;
    let bytes = file.bytes().await.unwrap().to_vec();
    let mut workbook: Xlsx<_> = calamine::open_workbook_from_rs(std::io::Cursor::new(bytes)).unwrap();
    let formulas = workbook.worksheet_formula("Sheet1").unwrap();
    assert!(formulas.used_cells().all(|(_, _, f)| f.is_empty()), "no cell is a formula");
    let sheet = workbook.worksheet_range("Sheet1").unwrap();
    let row: Vec<Data> = sheet.rows().nth(1).unwrap().to_vec();
    assert_eq!(row[0], Data::String("=HYPERLINK(\"http://x\")".into()), "kept as the text it is");
    assert_eq!(row[1], Data::String("+1".into()));
    assert_eq!(row[2], Data::Empty);
    assert_eq!(row[3], Data::Bool(true));
    assert_eq!(row[4], Data::String("NaN".into()), "a number Excel cannot hold is its text");
    assert_eq!(row[5], Data::String("1899-01-01".into()), "a date Excel cannot show is its text");
}

#[actix_web::test]
async fn a_format_is_one_its_type_offers_and_part_of_the_request() {
    let app = spawn_app_with(|s| s.workers.global_limit = 0, errand::jobs::HandlerRegistry::builtin()).await;
    let alice = token("acme", "alice");
    let params = json!({"from": "2026-01-01", "to": "2026-02-01"});

    let asked = app.submit_to(&alice, &format!("{SALES}?format=xlsx"), "k1", params.clone()).await;
    assert_eq!(asked.status(), StatusCode::ACCEPTED);
    let job: Value = asked.json().await.unwrap();
    assert_eq!(job["format"], "xlsx");
    assert_eq!(job["priority"], 0);
    let again = app.submit_to(&alice, &format!("{SALES}?format=xlsx"), "k1", params.clone()).await;
    assert_eq!(again.status(), StatusCode::OK, "the same request, replayed");
    let other = app.submit_to(&alice, &format!("{SALES}?format=csv"), "k1", params.clone()).await;
    assert_problem(other, StatusCode::UNPROCESSABLE_ENTITY, "idempotency_key_reused").await;

    // No format: the type's first; asking for it is the same request.
    let default = app.submit_to(&alice, SALES, "k2", params.clone()).await;
    assert_eq!(default.json::<Value>().await.unwrap()["format"], "csv");
    let same = app.submit_to(&alice, &format!("{SALES}?format=csv"), "k2", params.clone()).await;
    assert_eq!(same.status(), StatusCode::OK);

    for bad in ["pdf", "ndjson", "CSV", ""] {
        let refused = app.submit_to(&alice, &format!("{SALES}?format={bad}"), "k3", params.clone()).await;
        let problem = assert_problem(refused, StatusCode::UNPROCESSABLE_ENTITY, "invalid_format").await;
        assert_eq!(problem["field"], "format", "{problem}");
    }
    let noop = app.submit_to(&alice, "/jobs/noop?format=csv", "k4", json!({})).await;
    assert_problem(noop, StatusCode::UNPROCESSABLE_ENTITY, "invalid_format").await;
    let plain = app.submit_to(&alice, "/jobs/noop", "k5", json!({})).await;
    let plain: Value = plain.json().await.unwrap();
    assert!(plain.get("format").is_none(), "a job of no file shows no format: {plain}");
    let stored: Vec<Option<String>> = app.db.column("SELECT format FROM jobs ORDER BY created_at", &[]).await;
    assert_eq!(stored, [Some("xlsx".to_owned()), Some("csv".to_owned()), None]);
}
