//! The `sql_export` job kind: a configured query whose rows are streamed with
//! PostgreSQL's `COPY (…) TO STDOUT` straight into storage, in constant memory
//! whatever the row count.
//!
//! Values never enter the SQL text. The query's `:name` placeholders are
//! rewritten once, at start-up, to `current_setting('errand.p.name')`, and each
//! attempt binds the values as parameters of `set_config` in its own read-only
//! transaction. `:tenant`, `:user` (and `:attempt`, 1-based) come from the
//! job record, never from params, so no param can steer a query to another
//! tenant's rows.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use actix_web::web::Bytes;
use chrono::Utc;
use deadpool_postgres::Pool;
use futures_util::StreamExt;
use serde_json::Value;

use super::{HandlerFuture, JobContext, JobError, JobHandler, JobOutput};
use crate::domain::{FORMULA_STARTS, ProgressReport};

/// Rows between two progress reports of an export.
const PROGRESS_EVERY_ROWS: u64 = 1000;
use crate::config::{ExportFormat, ExportSettings};
use crate::storage::{ObjectKey, ResultFile, Storage};

/// One configured export job type (cheap to share between attempts).
#[derive(Clone)]
pub struct SqlExport(Arc<ExportPlan>);

/// What an export job type does, prepared once at start-up.
struct ExportPlan {
    job_type: String,
    copy: Copy,
    /// Placeholder names the query uses, in the order they are bound.
    placeholders: Vec<String>,
    format: ExportFormat,
    source: Pool,
    storage: Storage,
    retention: std::time::Duration,
}

impl SqlExport {
    /// Prepares the query of `settings`; `Err` names what is wrong with it.
    pub fn new(
        job_type: &str,
        settings: &ExportSettings,
        source: Pool,
        storage: Storage,
        retention: std::time::Duration,
    ) -> Result<Self, String> {
        let (query, placeholders) = bind_placeholders(&settings.query)?;
        let query = query.trim().trim_end_matches(';');
        let copy = match settings.format {
            ExportFormat::Csv if settings.defuse_formulas => Copy::DefusedCsv { query: query.to_owned() },
            ExportFormat::Csv => Copy::Fixed(csv_copy(query)),
            // CSV quoting with a quote and a delimiter that JSON text never holds
            // raw (it escapes control characters) writes each object verbatim.
            ExportFormat::Ndjson => Copy::Fixed(format!(
                "COPY (SELECT row_to_json(q) FROM ({query}) q) TO STDOUT \
                 WITH (FORMAT csv, QUOTE e'\\x01', DELIMITER e'\\x02', ENCODING 'UTF8')"
            )),
        };
        Ok(Self(Arc::new(ExportPlan {
            job_type: job_type.to_owned(),
            copy,
            placeholders,
            format: settings.format,
            source,
            storage,
            retention,
        })))
    }
}

impl ExportPlan {
    fn value_of(&self, name: &str, ctx: &JobContext) -> String {
        match name {
            "tenant" => ctx.tenant.to_string(),
            "user" => ctx.user.to_string(),
            "attempt" => ctx.attempt.to_string(),
            param => match ctx.params.get(param) {
                None | Some(Value::Null) => String::new(),
                Some(Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
            },
        }
    }

    async fn export(&self, ctx: JobContext) -> Result<JobOutput, JobError> {
        let (extension, content_type) = match self.format {
            ExportFormat::Csv => ("csv", "text/csv; charset=utf-8"),
            ExportFormat::Ndjson => ("ndjson", "application/x-ndjson"),
        };
        let key = ObjectKey::for_job(&ctx.tenant, ctx.job_id, extension);
        let job = ctx.job_id;
        let classify = |error| classify(job, error);
        let mut client = self.source.get().await.map_err(|error| {
            tracing::warn!(%job, %error, "export: no connection to the source database");
            JobError::Retryable(COULD_NOT_RUN.into())
        })?;
        let tx = client.build_transaction().read_only(true).start().await.map_err(classify)?;
        let names: Vec<String> = self.placeholders.iter().map(|n| format!("errand.p.{n}")).collect();
        let values: Vec<String> = self.placeholders.iter().map(|n| self.value_of(n, &ctx)).collect();
        tx.execute(
            "SELECT set_config(name, value, true) FROM unnest($1::text[], $2::text[]) AS p(name, value)",
            &[&names, &values],
        )
        .await
        .map_err(classify)?;
        let rows = Arc::new(AtomicU64::new(0));
        let mut counter = RowCounter::new(self.format, rows.clone());
        let copy_sql: std::borrow::Cow<'_, str> = match &self.copy {
            Copy::Fixed(sql) => sql.as_str().into(),
            // The query's columns and types, described within the attempt's
            // transaction (one round trip; the source's schema may change
            // between attempts).
            Copy::DefusedCsv { query } => {
                let described = tx.prepare(query).await.map_err(classify)?;
                defused_csv_copy(query, described.columns()).into()
            }
        };
        let copy = tx.copy_out(copy_sql.as_ref()).await.map_err(classify)?;
        // The database's own error, kept to decide whether a retry can help.
        let source_error = Arc::new(Mutex::new(None));
        let seen = source_error.clone();
        let (counted, progress, mut reported) = (rows.clone(), ctx.progress.clone(), 0);
        let body = Box::pin(copy.map(move |chunk| match chunk {
            Ok(bytes) => {
                counter.count(&bytes);
                // COPY sends a chunk per row: report every thousand or so.
                let written = counted.load(Ordering::Relaxed);
                if written >= reported + PROGRESS_EVERY_ROWS {
                    reported = written;
                    let message = Some("rows written".to_owned());
                    progress.report(ProgressReport { done: written, total: None, message });
                }
                Ok(bytes)
            }
            Err(error) => {
                let message = error.to_string();
                *seen.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(error);
                Err(message)
            }
        }));
        let stored = match self.storage.put(&key, content_type, body).await {
            Ok(stored) => stored,
            Err(error) => {
                let from_source = source_error.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take();
                return Err(from_source.map(classify).unwrap_or_else(|| {
                    tracing::warn!(%job, %error, "export: storing the file failed");
                    JobError::Retryable(COULD_NOT_SAVE.into())
                }));
            }
        };
        tx.commit().await.map_err(classify)?;
        let finished = Utc::now();
        let file_name = format!("{}-{}.{extension}", self.job_type, finished.format("%Y-%m-%d"));
        let expires_at = finished + chrono::Duration::from_std(self.retention).unwrap_or(chrono::Duration::days(7));
        let file = ResultFile {
            storage_key: key.as_str().to_owned(),
            size_bytes: stored.size_bytes,
            row_count: rows.load(Ordering::Relaxed),
            content_type: content_type.to_owned(),
            file_name,
            expires_at,
            expired: false,
        };
        let result = serde_json::to_value(file).map_err(|e| JobError::Permanent(e.to_string()))?;
        Ok(JobOutput { result: Some(result) })
    }
}

/// How an attempt's `COPY` is made.
enum Copy {
    /// The same statement every attempt.
    Fixed(String),
    /// CSV whose text cells are defused (see `ExportSettings::defuse_formulas`):
    /// which columns are text is known once the query is described.
    DefusedCsv { query: String },
}

fn csv_copy(query: &str) -> String {
    format!("COPY ({query}) TO STDOUT WITH (FORMAT csv, HEADER true, ENCODING 'UTF8')")
}

/// The CSV `COPY` of `query` with each text column's cells that begin like
/// a formula (`domain::FORMULA_STARTS`) prefixed with `'`, so that no
/// spreadsheet runs them; other columns as they are, and the header the
/// query's own column names (the columns are renamed positionally inside,
/// so duplicate or odd names are kept as they were). A text cell is written
/// as `text`: a `char(n)` cell loses its trailing padding.
fn defused_csv_copy(query: &str, columns: &[tokio_postgres::Column]) -> String {
    if columns.is_empty() {
        return csv_copy(query);
    }
    let aliases: Vec<String> = (1..=columns.len()).map(|i| format!("c{i}")).collect();
    // The first characters of a formula (`domain::FORMULA_STARTS`), as an
    // SQL array of chr() calls, so no quoting can slip.
    let starts = format!(
        "ARRAY[{}]",
        FORMULA_STARTS.iter().map(|c| format!("chr({})", u32::from(*c))).collect::<Vec<_>>().join(", ")
    );
    let select: Vec<String> = columns
        .iter()
        .enumerate()
        .map(|(i, column)| {
            let (cell, name) = (format!("q.c{}", i + 1), quote_identifier(column.name()));
            if is_text(column.type_()) {
                format!(
                    "CASE WHEN left({cell}::text, 1) = ANY ({starts}) THEN '''' || {cell}::text ELSE {cell}::text END \
                     AS {name}"
                )
            } else {
                format!("{cell} AS {name}")
            }
        })
        .collect();
    csv_copy(&format!("SELECT {} FROM ({query}) AS q ({})", select.join(", "), aliases.join(", ")))
}

/// Whether a column's cells are text a person typed (a number, a date or a
/// JSON document never starts a formula by being written out).
fn is_text(column: &tokio_postgres::types::Type) -> bool {
    use tokio_postgres::types::{Kind, Type};
    match column.kind() {
        Kind::Enum(_) => true,
        Kind::Domain(inner) => is_text(inner),
        _ => {
            matches!(*column, Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN)
                || column.name() == "citext"
        }
    }
}

fn quote_identifier(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

impl JobHandler for SqlExport {
    fn run(&self, ctx: JobContext) -> HandlerFuture {
        let plan = self.0.clone();
        Box::pin(async move { plan.export(ctx).await })
    }
}

/// What the person who asked reads when the export fails on errand's side
/// (the cause, which may name tables and servers, goes to the log).
const COULD_NOT_RUN: &str = "the export could not be produced because of a problem on our side";
const COULD_NOT_SAVE: &str = "the export's file could not be saved because of a problem on our side";

/// Data errors (a bad date, a failed cast) will fail again: permanent, and
/// said by kind, never in PostgreSQL's words, which quote the value (one of
/// the exported rows', perhaps, which the error message would carry into
/// emails, webhooks and logs others read); the whole message is logged for
/// operators. Anything else (connection lost, server restarting, a broken
/// query) is worth a retry, and is told in words meant for the person, with
/// the cause logged.
fn classify(job: crate::domain::JobId, error: tokio_postgres::Error) -> JobError {
    match error.as_db_error() {
        Some(db) if db.code().code().starts_with("22") => {
            tracing::info!(%job, sqlstate = db.code().code(), error = db.message(), "export refused its data");
            JobError::Permanent(format!("the export's input is invalid: {}", data_error_kind(db.code().code())))
        }
        _ => {
            tracing::warn!(%job, error = %crate::store::StoreError::from(error), "export failed");
            JobError::Retryable(COULD_NOT_RUN.into())
        }
    }
}

/// What a data error (SQLSTATE class 22) is, in words that quote nothing.
fn data_error_kind(sqlstate: &str) -> String {
    match sqlstate {
        "22P02" => "a value is not written as the type it is read as".into(),
        "22007" | "22008" => "a date or time is invalid or out of range".into(),
        "22003" => "a number is out of range".into(),
        "22012" => "a division by zero".into(),
        "22001" => "a value is too long for its type".into(),
        "22023" => "a parameter's value is invalid".into(),
        other => format!("a value is invalid (SQLSTATE {other})"),
    }
}

/// Counts records as the bytes stream past: newlines outside quotes, less the
/// CSV header. Quoted CSV fields may hold newlines; NDJSON lines never do.
struct RowCounter {
    format: ExportFormat,
    rows: Arc<AtomicU64>,
    in_quotes: bool,
    header_pending: bool,
}

impl RowCounter {
    fn new(format: ExportFormat, rows: Arc<AtomicU64>) -> Self {
        Self { format, rows, in_quotes: false, header_pending: format == ExportFormat::Csv }
    }

    fn count(&mut self, bytes: &Bytes) {
        let mut lines = 0u64;
        for &b in bytes.iter() {
            match b {
                b'"' if self.format == ExportFormat::Csv => self.in_quotes = !self.in_quotes,
                b'\n' if !self.in_quotes => {
                    if std::mem::take(&mut self.header_pending) {
                        continue;
                    }
                    lines += 1;
                }
                _ => {}
            }
        }
        self.rows.fetch_add(lines, Ordering::Relaxed);
    }
}

/// Rewrites `:name` placeholders (outside string literals, quoted identifiers
/// and comments, and not `::` casts) to `current_setting('errand.p.name')`;
/// returns the query and the names in order of first use.
fn bind_placeholders(query: &str) -> Result<(String, Vec<String>), String> {
    let chars: Vec<char> = query.chars().collect();
    let mut out = String::with_capacity(query.len() + 64);
    let mut names: Vec<String> = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        match c {
            '\'' | '"' => {
                // Copy a literal or quoted identifier whole; a doubled quote escapes.
                out.push(c);
                i += 1;
                while i < chars.len() {
                    out.push(chars[i]);
                    if chars[i] == c {
                        if chars.get(i + 1) == Some(&c) {
                            out.push(c);
                            i += 2;
                            continue;
                        }
                        break;
                    }
                    i += 1;
                }
                if i >= chars.len() {
                    return Err(format!("unterminated {c} in the query"));
                }
                i += 1;
            }
            '-' if next == Some('-') => {
                while i < chars.len() && chars[i] != '\n' {
                    out.push(chars[i]);
                    i += 1;
                }
            }
            '/' if next == Some('*') => {
                let end = query_find(&chars, i + 2, "*/").ok_or("unterminated comment in the query")?;
                out.extend(&chars[i..end + 2]);
                i = end + 2;
            }
            ':' if next == Some(':') => {
                out.push_str("::");
                i += 2;
            }
            ':' if next.is_some_and(|n| n.is_ascii_lowercase() || n == '_') => {
                let start = i + 1;
                let mut end = start;
                while end < chars.len() && (chars[end].is_ascii_alphanumeric() || chars[end] == '_') {
                    end += 1;
                }
                let name: String = chars[start..end].iter().collect();
                out.push_str(&format!("current_setting('errand.p.{name}')"));
                if !names.contains(&name) {
                    names.push(name);
                }
                i = end;
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    if !names.iter().any(|n| n == "tenant") {
        return Err("the query must restrict rows to the job's tenant with :tenant".into());
    }
    Ok((out, names))
}

fn query_find(chars: &[char], from: usize, needle: &str) -> Option<usize> {
    let needle: Vec<char> = needle.chars().collect();
    (from..chars.len().saturating_sub(needle.len() - 1)).find(|&i| chars[i..i + needle.len()] == needle[..])
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn placeholders_become_settings_and_casts_literals_and_comments_stay() {
        let (sql, names) = bind_placeholders(
            "SELECT ':not' AS \"a:b\", x::int FROM t -- :comment\nWHERE tenant_id = :tenant AND d >= :from::date /* :c */",
        )
        .unwrap();
        assert_eq!(
            sql,
            "SELECT ':not' AS \"a:b\", x::int FROM t -- :comment\nWHERE tenant_id = current_setting('errand.p.tenant') \
             AND d >= current_setting('errand.p.from')::date /* :c */"
        );
        assert_eq!(names, ["tenant", "from"]);
    }

    #[test]
    fn a_query_without_tenant_scope_is_refused() {
        assert!(bind_placeholders("SELECT * FROM sales WHERE sold_at >= :from::date").is_err());
        assert!(bind_placeholders("SELECT 'unterminated FROM t WHERE :tenant = 1").is_err());
    }

    #[test]
    fn quoted_newlines_do_not_count_as_rows() {
        let rows = Arc::new(AtomicU64::new(0));
        let mut counter = RowCounter::new(ExportFormat::Csv, rows.clone());
        counter.count(&Bytes::from_static(b"a,b\n1,\"two\nlines\"\n"));
        counter.count(&Bytes::from_static(b"2,\"split "));
        counter.count(&Bytes::from_static(b"quote\"\n"));
        assert_eq!(rows.load(Ordering::Relaxed), 2);
    }

    proptest! {
        #[test]
        fn text_without_colons_is_unchanged(body in "[a-zA-Z0-9 ,()*=<>_.\n]{0,200}") {
            let query = format!("{body} :tenant");
            let (sql, names) = bind_placeholders(&query).unwrap();
            prop_assert_eq!(sql, format!("{body} current_setting('errand.p.tenant')"));
            prop_assert_eq!(names, vec!["tenant".to_owned()]);
        }

        #[test]
        fn rows_count_the_same_however_the_stream_is_cut(rows in 0usize..40, cut in 1usize..64) {
            let mut csv = String::from("id,note\n");
            for i in 0..rows {
                csv.push_str(&format!("{i},\"line\nbreak, and \"\"quotes\"\"\"\n"));
            }
            let total = Arc::new(AtomicU64::new(0));
            let mut counter = RowCounter::new(ExportFormat::Csv, total.clone());
            for piece in csv.as_bytes().chunks(cut) {
                counter.count(&Bytes::copy_from_slice(piece));
            }
            prop_assert_eq!(total.load(Ordering::Relaxed), rows as u64);
        }
    }
}
