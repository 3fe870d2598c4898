//! A text export's reads of its query. A type with a resume key reads in
//! transactions of at most `max_transaction` (the read's own
//! `statement_timeout`), each from the last checkpoint on, so that a long
//! export never holds its database's xmin horizon (and every vacuum of it)
//! for longer; a type without one reads once. A checkpoint is the only
//! point a read goes on from, because what is uploaded before it is
//! exactly the rows up to its key.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use deadpool_postgres::Client;
use futures_util::StreamExt;
use serde_json::json;
use tokio_postgres::error::SqlState;

use super::copy::TextCopy;
use super::errors::classify;
use super::part_buffer::PartBuffer;
use super::upload::{ExportCheckpoint, Uploading};
use super::{ExportPlan, JobContext, JobError, PROGRESS_EVERY_ROWS, rows_written};
use crate::domain::{ExportFormat, LogLevel};
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
    /// It reached its bound, having recorded this checkpoint (the last) or
    /// none, its query's first row this long after it began (if it came).
    Bounded { checkpoint: Option<ExportCheckpoint>, first_row: Option<Duration> },
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

impl ReadFrom {
    /// The read's own settings: the key it reads after, and its bound.
    fn settings(&self, bound: Option<Duration>) -> Vec<(String, String)> {
        let keys = self.after.iter().flatten().enumerate();
        let mut settings: Vec<(String, String)> =
            keys.map(|(n, value)| (format!("errand.key_{}", n + 1), value.clone())).collect();
        if let Some(bound) = bound {
            settings.push(("statement_timeout".to_owned(), bound.as_millis().to_string()));
        }
        settings
    }
}

impl ExportPlan {
    /// Reads the query into the upload: one read, or (a type with a resume
    /// key and a `max_transaction`) as many as it takes, each in a
    /// transaction of its own that lasts at most that long (its
    /// `statement_timeout`), each going on after the last checkpoint.
    pub(super) async fn write_parts(
        &self,
        client: &mut Client,
        source: &Source<'_>,
        ctx: &JobContext,
        start: ReadFrom,
        uploading: &mut Uploading,
        rows: &Arc<AtomicU64>,
    ) -> Result<(), JobError> {
        let mut from = start;
        let mut bound = if source.keys.is_empty() { None } else { self.max_transaction };
        // The upload as it was at `from`.
        let mut upload_at_from = uploading.upload.clone();
        loop {
            let read = self.read(client, source, ctx, &from, bound, uploading, rows).await?;
            let Read::Bounded { checkpoint, first_row } = read else {
                return Ok(());
            };
            let cut = bound.unwrap_or_default();
            // A read whose query takes long to its first row (a sort, say)
            // spends that wait again on every read: the next is given four
            // times as long, so that the wait is at most a quarter of it.
            let at_least = first_row.map_or(Duration::ZERO, |wait| wait * 4);
            match checkpoint {
                Some(checkpoint) => {
                    ctx.log(
                        LogLevel::Info,
                        "read on in a new transaction",
                        Some(json!({"after_rows": checkpoint.rows})),
                    );
                    upload_at_from = checkpoint.upload.clone();
                    from = ReadFrom { after: Some(checkpoint.last_key), rows: checkpoint.rows };
                    bound = Some(cut.max(at_least));
                }
                // No checkpoint within the bound (a slow first row, or a
                // part that takes longer to gather): what this read wrote
                // goes, and it is read again with twice as long, so the
                // export always gets on.
                None => {
                    bound = Some((cut * 2).max(at_least));
                    ctx.log(
                        LogLevel::Warn,
                        "no checkpoint within max_transaction: read again with longer",
                        Some(json!({"after_rows": from.rows, "seconds": bound.map_or(0.0, |b| b.as_secs_f64())})),
                    );
                }
            }
            // What went up after `from` is written again, under the same
            // part numbers.
            uploading.upload = upload_at_from.clone();
        }
    }

    /// One read of the query, from `from`, in a transaction of its own
    /// lasting at most `bound`.
    #[allow(clippy::too_many_arguments)]
    async fn read(
        &self,
        client: &mut Client,
        source: &Source<'_>,
        ctx: &JobContext,
        from: &ReadFrom,
        bound: Option<Duration>,
        uploading: &mut Uploading,
        rows: &Arc<AtomicU64>,
    ) -> Result<Read, JobError> {
        let job = ctx.job_id;
        let classify = |error| classify(job, error);
        let tx = self.begin(client, ctx, from.settings(bound)).await?;
        let began = Instant::now();
        // The read's own bound, not a cancel by someone else or a shorter
        // timeout of the source's: those fail the attempt as before.
        let bound_reached = |error: &tokio_postgres::Error| {
            error.code() == Some(&SqlState::QUERY_CANCELED) && bound.is_some_and(|b| began.elapsed() >= b)
        };
        let format = source.format;
        let spec = source.copy(self, from.after.is_some());
        let mut records = spec.records();
        let (mut reached, mut first_row) = (None, None);
        let copy = match tx.copy_out(spec.statement().as_str()).await {
            Ok(copy) => copy,
            Err(error) if bound_reached(&error) => return Ok(Read::Bounded { checkpoint: None, first_row: None }),
            Err(error) => return Err(classify(error)),
        };
        let mut copy = std::pin::pin!(copy);
        let mut part = PartBuffer::new(format == ExportFormat::CsvGz, self.part_size);
        rows.store(from.rows, Ordering::Relaxed);
        let mut reported = from.rows;
        while let Some(chunk) = copy.next().await {
            let chunk = match chunk {
                Ok(chunk) => chunk,
                Err(error) if bound_reached(&error) => {
                    return Ok(Read::Bounded { checkpoint: reached, first_row });
                }
                Err(error) => return Err(classify(error)),
            };
            records.feed(&chunk, part.sink());
            if first_row.is_none() && records.rows > 0 {
                first_row = Some(began.elapsed());
            }
            part.settle().await.map_err(|e| self.save_failed(job, e.into()))?;
            let written = from.rows + records.rows;
            rows.store(written, Ordering::Relaxed);
            if part.len() >= self.part_size {
                let checkpoint =
                    self.flush_part(ctx, format, &mut part, uploading, source.keys, written, &records).await?;
                reached = checkpoint.or(reached);
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
}
