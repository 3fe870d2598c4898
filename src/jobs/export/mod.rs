//! The `sql_export` job kind: a configured query whose rows are streamed
//! straight into storage, in constant memory whatever the row count, in the
//! format the job asked for among its type's: CSV and NDJSON with
//! PostgreSQL's `COPY (…) TO STDOUT`, csv.gz that CSV compressed as it
//! streams, uploaded in parts and resumable from a checkpoint (`text`,
//! `upload`), read in transactions of about `max_transaction` (`reads`);
//! XLSX from the rows read in pages (`xlsx`, `reads`), which starts over
//! when retried.
//!
//! Values never enter the SQL text. The query's `:name` placeholders are
//! rewritten once, at start-up, to `current_setting('errand.p.name')`, and each
//! attempt binds the values as parameters of `set_config` in its own read-only
//! transaction. `:tenant`, `:user` (and `:attempt`, 1-based, and
//! `:scheduled_for`, the occurrence a schedule made the job for) come from
//! the job record, never from params, so no param can steer a query to
//! another tenant's rows.

mod copy;
mod errors;
mod part_buffer;
mod query;
mod reads;
mod records;
mod text;
mod upload;
mod xlsx;

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use actix_web::web::Bytes;
use chrono::Utc;
use deadpool_postgres::{Client, Pool, Transaction};
use futures_util::Stream;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_postgres::Statement;
use tokio_postgres_rustls::MakeRustlsConnect;
use tracing::Instrument;
use tracing::field::Empty;

use super::{HandlerFuture, JobContext, JobError, JobHandler, JobOutput};
use crate::config::ExportSettings;
use crate::domain::{ExportFormat, JobId, LogLevel, ProgressReport};
use crate::storage::{ObjectKey, ResultFile, Storage, StoredObject};
use crate::store::Store;
use errors::{COULD_NOT_RUN, COULD_NOT_SAVE, classify};

/// Rows between two progress reports of an export.
const PROGRESS_EVERY_ROWS: u64 = 1000;

/// What `sql_export` job types need: where to write, what to read by default.
pub struct ExportEnv {
    pub storage: Storage,
    /// errand's own database, read when a type names no `source_database_url`.
    pub default_source: Store,
    pub retention: std::time::Duration,
    /// Bytes per uploaded part (`storage.part_size`).
    pub part_size: usize,
}

/// One configured export job type (cheap to share between attempts).
#[derive(Clone)]
pub struct SqlExport(Arc<ExportPlan>);

/// What an export job type does, prepared once at start-up.
struct ExportPlan {
    job_type: String,
    /// The query, its placeholders bound to settings.
    query: String,
    /// Placeholder names the query uses, in the order they are bound.
    placeholders: Vec<String>,
    /// The formats it writes, the default first.
    formats: Vec<ExportFormat>,
    defuse_formulas: bool,
    /// The query's columns a text export resumes after (none: it starts over).
    resume_key: Vec<String>,
    /// How long one read of a text export with a resume key lasts before
    /// it is cut at its next checkpoint (`max_transaction`; `None`: one read).
    max_transaction: Option<std::time::Duration>,
    /// The source's own setting that its row-level security reads the tenant from.
    tenant_setting: Option<String>,
    source: Pool,
    /// How to reach the source's server to cut a read short (a cancel
    /// request goes over a connection of its own, with the pool's TLS).
    source_tls: MakeRustlsConnect,
    storage: Storage,
    retention: std::time::Duration,
    /// Bytes per uploaded part, and between checkpoints.
    part_size: usize,
}

/// The bytes of an export's file as they are produced.
type Body = Pin<Box<dyn Stream<Item = Result<Bytes, String>> + Send>>;

impl SqlExport {
    /// Prepares the query of `settings`, its files kept for `retention`;
    /// `Err` names what is wrong with it.
    pub fn new(
        job_type: &str,
        settings: &ExportSettings,
        source: &Store,
        env: &ExportEnv,
        retention: std::time::Duration,
    ) -> Result<Self, String> {
        let (query, placeholders) = query::bind_placeholders(&settings.query)?;
        query::scoped_to_tenant(&placeholders, settings.tenant_setting.as_deref())?;
        Ok(Self(Arc::new(ExportPlan {
            job_type: job_type.to_owned(),
            query: query.trim().trim_end_matches(';').to_owned(),
            placeholders,
            formats: settings.formats.clone(),
            defuse_formulas: settings.defuse_formulas,
            resume_key: settings.resume_key.clone(),
            max_transaction: settings.max_transaction,
            tenant_setting: settings.tenant_setting.clone(),
            source: source.pool().clone(),
            source_tls: source.connection().tls.clone(),
            storage: env.storage.clone(),
            retention,
            part_size: env.part_size,
        })))
    }
}

impl SqlExport {
    /// Whether `name` can be an export's `tenant_setting`.
    pub fn is_custom_setting(name: &str) -> bool {
        query::is_custom_setting(name)
    }
}

impl ExportPlan {
    fn value_of(&self, name: &str, ctx: &JobContext) -> String {
        match name {
            "tenant" => ctx.tenant.to_string(),
            "user" => ctx.user.to_string(),
            "attempt" => ctx.attempt.to_string(),
            // Empty for a job no schedule made: `NULLIF(:scheduled_for, '')::timestamptz`.
            "scheduled_for" => ctx.scheduled_for.map(|at| at.to_rfc3339()).unwrap_or_default(),
            param => match ctx.params.get(param) {
                None | Some(Value::Null) => String::new(),
                Some(Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
            },
        }
    }

    async fn export(&self, ctx: JobContext) -> Result<JobOutput, JobError> {
        // A job recorded without a format (before its type had formats) is
        // written in the type's default.
        let default = self.formats.first().copied().unwrap_or(ExportFormat::Csv);
        let format = ctx.format.filter(|f| self.formats.contains(f)).unwrap_or(default);
        let key = ObjectKey::for_job(&ctx.tenant, ctx.job_id, format.extension());
        let job = ctx.job_id;
        let mut client = self.connect(job).await?;
        let rows = Arc::new(AtomicU64::new(0));
        let resuming = ctx.resumed().is_some();
        let phase = if resuming { "resuming the query from its checkpoint" } else { "running the query" };
        ctx.log(LogLevel::Info, phase, Some(json!({"format": format.as_str()})));
        // The query, the file written and uploaded: a span of the attempt's trace.
        let span = tracing::info_span!("export", otel.name = format!("export {}", format.as_str()), rows = Empty);
        let stored = match format {
            ExportFormat::Xlsx => self.workbook(&mut client, &ctx, &key, &rows).instrument(span.clone()).await,
            text => self.text(&mut client, text, &ctx, &key, &rows).instrument(span.clone()).await,
        };
        span.record("rows", rows.load(Ordering::Relaxed));
        let stored = stored.inspect_err(|error| {
            let rows = rows.load(Ordering::Relaxed);
            ctx.log(LogLevel::Error, &format!("stopped: {error}"), Some(json!({"rows": rows})));
        })?;
        ctx.log(
            LogLevel::Info,
            "file stored",
            Some(json!({"rows": rows.load(Ordering::Relaxed), "bytes": stored.size_bytes})),
        );
        let finished = Utc::now();
        let file_name = format!("{}-{}.{}", self.job_type, finished.format("%Y-%m-%d"), format.extension());
        let expires_at = finished + chrono::Duration::from_std(self.retention).unwrap_or(chrono::Duration::days(7));
        let file = ResultFile {
            storage_key: key.as_str().to_owned(),
            size_bytes: stored.size_bytes,
            row_count: rows.load(Ordering::Relaxed),
            content_type: format.content_type().to_owned(),
            file_name,
            expires_at,
            expired: false,
        };
        let result = serde_json::to_value(file).map_err(|e| JobError::Permanent(e.to_string()))?;
        Ok(JobOutput { result: Some(result) })
    }

    /// A connection of the source database, for the export's reads.
    async fn connect(&self, job: JobId) -> Result<Client, JobError> {
        self.source.get().await.map_err(|error| {
            tracing::warn!(%job, %error, "export: no connection to the source database");
            JobError::Retryable(COULD_NOT_RUN.into())
        })
    }

    /// A read-only transaction of the source with the job's values set
    /// (the query's placeholders, the tenant's setting), and `more`
    /// settings (`name`, `value`) for this read.
    async fn begin<'c>(
        &self,
        client: &'c mut Client,
        ctx: &JobContext,
        more: Vec<(String, String)>,
    ) -> Result<Transaction<'c>, JobError> {
        let classify = |error| classify(ctx.job_id, error);
        let tx = client.build_transaction().read_only(true).start().await.map_err(classify)?;
        // Dates as the workbook reads them back (the default, unless the
        // source's own configuration says otherwise).
        let mut names = vec!["DateStyle".to_owned()];
        let mut values = vec!["ISO, YMD".to_owned()];
        names.extend(self.placeholders.iter().map(|n| format!("errand.p.{n}")));
        values.extend(self.placeholders.iter().map(|n| self.value_of(n, ctx)));
        if let Some(setting) = &self.tenant_setting {
            names.push(setting.clone());
            values.push(ctx.tenant.to_string());
        }
        let (more_names, more_values): (Vec<String>, Vec<String>) = more.into_iter().unzip();
        names.extend(more_names);
        values.extend(more_values);
        tx.execute(
            "SELECT set_config(name, value, true) FROM unnest($1::text[], $2::text[]) AS p(name, value)",
            &[&names, &values],
        )
        .await
        .map_err(classify)?;
        Ok(tx)
    }

    /// The query's columns, as its source describes them. (Describing
    /// runs nothing: no transaction or settings of its own; each read
    /// has its own.)
    async fn describe(&self, client: &mut Client, ctx: &JobContext) -> Result<Statement, JobError> {
        client.prepare(&self.query).await.map_err(|error| classify(ctx.job_id, error))
    }

    /// XLSX: rows read a page at a time (`reads`), written by `xlsx::write`
    /// on a blocking thread, its bytes uploaded as they come.
    async fn workbook(
        &self,
        client: &mut Client,
        ctx: &JobContext,
        key: &ObjectKey,
        rows: &Arc<AtomicU64>,
    ) -> Result<StoredObject, JobError> {
        let job = ctx.job_id;
        let described = self.describe(client, ctx).await?;
        let columns = described.columns();
        // A workbook starts over when retried: its key only bounds its reads.
        let keys = if self.max_transaction.is_some() { self.key_columns(columns)? } else { Vec::new() };
        let header: Vec<String> = columns.iter().map(|c| c.name().to_owned()).collect();
        let kinds = xlsx::kinds(columns);
        let (feed, fed) = mpsc::channel(2);
        let (bytes, mut uploaded) = mpsc::channel(4);
        let writer = tokio::task::spawn_blocking(move || xlsx::write(header, kinds, fed, bytes));
        let reading = self.read_pages(client, ctx, columns, &keys, feed, rows);
        let body: Body = Box::pin(futures_util::stream::poll_fn(move |cx| uploaded.poll_recv(cx)));
        let (read, stored) =
            futures_util::future::join(reading, self.storage.put(key, ExportFormat::Xlsx.content_type(), body)).await;
        read?;
        let written = writer.await.map_err(|e| e.to_string()).and_then(|w| w);
        match (written, stored) {
            (Ok(()), Ok(stored)) => Ok(stored),
            (Err(error), _) => {
                tracing::warn!(%job, %error, "export: writing the workbook failed");
                Err(JobError::Retryable(COULD_NOT_SAVE.into()))
            }
            (_, Err(error)) => {
                tracing::warn!(%job, %error, "export: storing the file failed");
                Err(JobError::Retryable(COULD_NOT_SAVE.into()))
            }
        }
    }
}

fn rows_written(done: u64) -> ProgressReport {
    ProgressReport { done, total: None, message: Some("rows written".to_owned()) }
}

impl JobHandler for SqlExport {
    fn run(&self, ctx: JobContext) -> HandlerFuture {
        let plan = self.0.clone();
        Box::pin(async move { plan.export(ctx).await })
    }

    /// A text export uploads what it gathered and checkpoints (`text.rs`).
    fn stops_when_asked(&self) -> bool {
        true
    }
}
