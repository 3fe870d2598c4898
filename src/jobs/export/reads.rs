//! An export's reads of its query. A type with a resume key reads in
//! transactions of about `max_transaction`: once a read has lasted that
//! long, errand cuts it at its next checkpoint (a cancel request for its
//! `COPY`) and goes on from that checkpoint in a new transaction, so that a
//! long export holds its database's xmin horizon (and every vacuum of it)
//! for that long and one part more, not for its whole length. A type
//! without one reads once. A workbook, whose rows are read a page at a time,
//! is cut the same way after a page (it starts over when retried, so it
//! needs no checkpoint: its key only says where the next read goes on).
//!
//! A read is cut only at a checkpoint, because what is uploaded before one
//! is exactly the rows up to its key: nothing gathered is thrown away, and
//! a query slow to its first row (a sort) is never cut before it gets there.
//! The price is that query's start again on each read (a read lasts at
//! least four times its wait for the first row, so that the wait is at most
//! a quarter of it): give the resume key an index in its order and a read
//! goes on where the last stopped.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use deadpool_postgres::Client;
use futures_util::StreamExt;
use serde_json::json;
use tokio::sync::mpsc;
use tokio_postgres::error::SqlState;
use tokio_postgres::{CancelToken, Column};

use super::copy::TextCopy;
use super::errors::classify;
use super::part_buffer::PartBuffer;
use super::upload::{ExportCheckpoint, Uploading};
use super::xlsx;
use super::{ExportPlan, JobContext, JobError, PROGRESS_EVERY_ROWS, rows_written};
use crate::domain::{ExportFormat, LogLevel};

/// Rows read per round trip for a workbook.
const ROWS_PER_PAGE: i32 = 1000;

/// What a text export reads: the query's columns, its resume key's
/// positions among them, and the format.
pub(super) struct Source<'a> {
    pub columns: &'a [tokio_postgres::Column],
    pub keys: &'a [usize],
    pub format: ExportFormat,
}

/// Where a read of the query starts: after the key of a checkpoint's last
/// row, that many rows in (`after: None`: at the first row, the header first).
pub(super) struct ReadFrom {
    pub after: Option<Vec<String>>,
    pub rows: u64,
}

/// How a read ended.
enum Read {
    /// It read the rest of the query.
    Whole,
    /// It was cut at this checkpoint, to go on from it in a new
    /// transaction on a new connection (see [`Cut::Sent`]).
    Cut { checkpoint: ExportCheckpoint },
}

/// How a cut of a read's `COPY` went.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Cut {
    /// The cancel request could not be sent: the read goes on.
    NotSent,
    /// The cancel was sent, and the `COPY` ended: by the cancel, or before
    /// it came. A cancel is a signal to the connection's backend, not to a
    /// statement, and its request is answered before the signal is
    /// delivered; PostgreSQL's postmaster sends it twice (to the backend,
    /// then to its process group), so one may come after the other ended
    /// the `COPY`, and when the `COPY` ended first, both may still come. Either
    /// would cancel whatever the connection runs next, so the connection is
    /// not used again (nor given back to the pool, where it would cancel
    /// someone else's statement).
    Sent,
}

impl<'a> Source<'a> {
    /// The `COPY` of a read, from the first row or after `errand.key_…`.
    fn copy(&self, plan: &'a ExportPlan, after_key: bool) -> TextCopy<'a> {
        TextCopy {
            query: &plan.query,
            columns: self.columns,
            format: self.format,
            defuse: plan.defuse_formulas && self.format != ExportFormat::Ndjson,
            keys: self.keys,
            after_key,
        }
    }
}

/// How long a read has lasted, and how long its query took to its first row.
struct ReadTime {
    began: Instant,
    first_row: Option<Duration>,
}

impl ReadTime {
    fn start() -> Self {
        Self { began: Instant::now(), first_row: None }
    }

    /// Rows came: the first time, how long they took is noted.
    fn rows_came(&mut self) {
        self.first_row.get_or_insert(self.began.elapsed());
    }

    /// Whether a read of at most about `bound` may be cut now: past the
    /// bound, and past four times its wait for the first row (a query slow
    /// to its first row, a sort, pays that wait again on every read: so it
    /// is at most a quarter of each).
    fn is_over(&self, bound: Option<Duration>) -> bool {
        bound.is_some_and(|bound| self.began.elapsed() >= bound.max(self.first_row.unwrap_or_default() * 4))
    }
}

impl ReadFrom {
    /// The read's own settings: the key it reads after.
    pub(super) fn settings(&self) -> Vec<(String, String)> {
        let keys = self.after.iter().flatten().enumerate();
        keys.map(|(n, value)| (format!("errand.key_{}", n + 1), value.clone())).collect()
    }
}

impl ExportPlan {
    /// How long a read of the query lasts at most before it is cut: only
    /// with a resume key to go on after.
    pub(super) fn read_bound(&self, keys: &[usize]) -> Option<Duration> {
        if keys.is_empty() { None } else { self.max_transaction }
    }

    /// Reads the query into the upload: one read, or (a type with a resume
    /// key and a `max_transaction`) as many as it takes, each in a
    /// transaction of its own, each going on from the checkpoint the last
    /// was cut at.
    pub(super) async fn write_parts(
        &self,
        client: &mut Client,
        source: &Source<'_>,
        ctx: &JobContext,
        start: ReadFrom,
        uploading: &mut Uploading,
        rows: &Arc<AtomicU64>,
    ) -> Result<(), JobError> {
        let bound = self.read_bound(source.keys);
        let mut from = start;
        loop {
            match self.read(client, source, ctx, &from, bound, uploading, rows).await? {
                Read::Whole => return Ok(()),
                Read::Cut { checkpoint } => {
                    let fresh = self.connect(ctx.job_id).await?;
                    // Out of the pool, and closed when dropped (see `Cut::Sent`).
                    drop(deadpool_postgres::Object::take(std::mem::replace(client, fresh)));
                    ctx.log(
                        LogLevel::Info,
                        "read on in a new transaction",
                        Some(json!({"after_rows": checkpoint.rows})),
                    );
                    // The upload as the checkpoint names it: a part that
                    // went up after it (one a NULL key kept from being a
                    // checkpoint) is written again under its number.
                    uploading.upload = checkpoint.upload;
                    from = ReadFrom { after: Some(checkpoint.last_key), rows: checkpoint.rows };
                }
            }
        }
    }

    /// One read of the query, from `from`, in a transaction of its own; cut
    /// at its first checkpoint after `bound`.
    #[allow(clippy::too_many_arguments)]
    async fn read(
        &self,
        client: &mut Client,
        source: &Source<'_>,
        ctx: &JobContext,
        from: &ReadFrom,
        mut bound: Option<Duration>,
        uploading: &mut Uploading,
        rows: &Arc<AtomicU64>,
    ) -> Result<Read, JobError> {
        let job = ctx.job_id;
        let classify = |error| classify(job, error);
        let canceller = client.cancel_token();
        let tx = self.begin(client, ctx, from.settings()).await?;
        let mut time = ReadTime::start();
        let format = source.format;
        let spec = source.copy(self, from.after.is_some());
        let mut records = spec.records();
        let copy = tx.copy_out(spec.statement().as_str()).await.map_err(classify)?;
        let mut copy = std::pin::pin!(copy);
        let mut part = PartBuffer::new(format == ExportFormat::CsvGz, self.part_size);
        rows.store(from.rows, Ordering::Relaxed);
        let mut reported = from.rows;
        while let Some(chunk) = copy.next().await {
            records.feed(&chunk.map_err(classify)?, part.sink());
            if records.rows > 0 {
                time.rows_came();
            }
            part.settle().await.map_err(|e| self.save_failed(job, e.into()))?;
            let written = from.rows + records.rows;
            rows.store(written, Ordering::Relaxed);
            if part.len() >= self.part_size {
                let checkpoint =
                    self.flush_part(ctx, format, &mut part, uploading, source.keys, written, &records).await?;
                if let Some(checkpoint) = checkpoint
                    && time.is_over(bound)
                {
                    if self.cut(ctx, &canceller, copy.as_mut()).await? == Cut::Sent {
                        return Ok(Read::Cut { checkpoint });
                    }
                    // The cancel could not be sent: this read goes on to
                    // its end, without a warning at every part.
                    bound = None;
                }
            }
            // Every thousand rows or so, not every row: progress, and
            // whether the process is stopping.
            if written >= reported + PROGRESS_EVERY_ROWS {
                reported = written;
                ctx.progress.report(rows_written(written));
                if ctx.is_stopping() {
                    // SIGTERM: what was gathered goes up as a part, with its
                    // checkpoint, so the next attempt goes on from here (S3
                    // takes it only if it is big enough to be followed by
                    // more: else the last checkpoint stands).
                    if !source.keys.is_empty() && !part.is_empty() && self.storage.takes_part_of(part.len()) {
                        self.flush_part(ctx, format, &mut part, uploading, source.keys, written, &records).await?;
                    }
                    return Err(JobError::Retryable("stopped for a restart; it goes on shortly".into()));
                }
            }
        }
        // The last part (the first, if the export is that small; none if a
        // resumed attempt found no rows after its key).
        if !part.is_empty() || uploading.upload.parts.is_empty() {
            self.upload_part(ctx, &mut part, uploading).await?;
        }
        tx.commit().await.map_err(classify)?;
        Ok(Read::Whole)
    }

    /// A workbook's rows, read a page at a time and fed to its writer (an
    /// error of the writer's fails the upload): in one transaction, or (a
    /// resume key and a `max_transaction`) in transactions of about that
    /// long, each after the last page's key.
    pub(super) async fn read_pages(
        &self,
        client: &mut Client,
        ctx: &JobContext,
        columns: &[Column],
        keys: &[usize],
        feed: mpsc::Sender<xlsx::Feed>,
        rows: &AtomicU64,
    ) -> Result<(), JobError> {
        let classify = |error| classify(ctx.job_id, error);
        let bound = self.read_bound(keys);
        let (mut from, mut reported) = (ReadFrom { after: None, rows: 0 }, 0);
        loop {
            let tx = self.begin(client, ctx, from.settings()).await?;
            let mut time = ReadTime::start();
            let select = xlsx::select(&self.query, columns, keys, from.after.is_some());
            let statement = tx.prepare(&select).await.map_err(classify)?;
            let portal = tx.bind(&statement, &[]).await.map_err(classify)?;
            let cut_after = loop {
                let page = tx.query_portal(&portal, ROWS_PER_PAGE).await.map_err(classify)?;
                time.rows_came();
                let whole = page.len() < ROWS_PER_PAGE as usize;
                let last_key =
                    page.last().filter(|_| !whole).and_then(|row| xlsx::key_of(row, columns.len(), keys.len()));
                from.rows += page.len() as u64;
                rows.store(from.rows, Ordering::Relaxed);
                if from.rows >= reported + PROGRESS_EVERY_ROWS {
                    reported = from.rows;
                    ctx.progress.report(rows_written(from.rows));
                }
                // The writer stopped: its error fails the upload.
                if feed.send(xlsx::Feed::Rows(page)).await.is_err() || whole {
                    break None;
                }
                if time.is_over(bound) && last_key.is_some() {
                    break last_key;
                }
            };
            tx.commit().await.map_err(classify)?;
            let Some(key) = cut_after else {
                let _ = feed.send(xlsx::Feed::End).await;
                return Ok(());
            };
            ctx.log(LogLevel::Info, "read on in a new transaction", Some(json!({"after_rows": from.rows})));
            from.after = Some(key);
        }
    }

    /// Cuts a read's `COPY` short: asks its server to cancel it, and reads
    /// (and drops) what comes until the cancel or the end. A cancel request
    /// that cannot be sent leaves the read to go on. (A `COPY` that ended
    /// before the cancel came is cut all the same: what it sent after the
    /// checkpoint is read again.)
    async fn cut<S>(
        &self,
        ctx: &JobContext,
        canceller: &CancelToken,
        mut copy: std::pin::Pin<&mut S>,
    ) -> Result<Cut, JobError>
    where
        S: futures_util::Stream<Item = Result<actix_web::web::Bytes, tokio_postgres::Error>>,
    {
        if let Err(error) = canceller.cancel_query(self.source_tls.clone()).await {
            tracing::warn!(job = %ctx.job_id, %error, "export: could not cut a read short; it goes on");
            return Ok(Cut::NotSent);
        }
        while let Some(chunk) = copy.next().await {
            match chunk {
                Ok(_) => continue,
                Err(error) if error.code() == Some(&SqlState::QUERY_CANCELED) => return Ok(Cut::Sent),
                Err(error) => return Err(classify(ctx.job_id, error)),
            }
        }
        Ok(Cut::Sent)
    }
}
