//! CSV, csv.gz and NDJSON: PostgreSQL writes the text with `COPY`, errand
//! uploads it in parts (`storage.part_size`) and, for a type that names a
//! resume key, records a checkpoint after each part: the upload, its parts,
//! the rows so far and the key of the last row in them. A later attempt (a
//! crash, a rescue, a failover, a deploy) goes on with the same upload from
//! the row after that key: no row written twice, none missing, and none
//! read again. (It reads the rows after the key as they are when it runs: a
//! newer snapshot than the first attempt's. docs/exports.md says how to pin one
//! for a source that changes.)

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use deadpool_postgres::Transaction;
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};

use super::copy::{TextCopy, can_be_key};
use super::errors::{COULD_NOT_SAVE, classify};
use super::part_buffer::PartBuffer;
use super::{ExportPlan, JobContext, JobError, PROGRESS_EVERY_ROWS, rows_written};
use crate::domain::ExportFormat;
use crate::storage::{ObjectKey, StorageError, StoredObject, Upload};

/// What a text export's checkpoint records.
#[derive(Debug, Serialize, Deserialize)]
struct ExportCheckpoint {
    format: ExportFormat,
    upload: Upload,
    /// Rows in the uploaded parts.
    rows: u64,
    /// The resume key of the last of them, as PostgreSQL writes it.
    last_key: Vec<String>,
}

/// An upload under way. Unless completed, or named by a checkpoint (a
/// later attempt goes on with it), it is dropped with the attempt, however
/// the attempt ends: an error, or its future dropped (a cancel, a timeout).
struct Uploading {
    storage: crate::storage::Storage,
    upload: Upload,
    named: bool,
    completed: bool,
}

impl Drop for Uploading {
    fn drop(&mut self) {
        if !self.completed && !self.named {
            self.storage.abort_upload_soon(&self.upload);
        }
    }
}

impl ExportPlan {
    pub(super) async fn text(
        &self,
        tx: &Transaction<'_>,
        format: ExportFormat,
        ctx: &JobContext,
        key: &ObjectKey,
        rows: &Arc<AtomicU64>,
    ) -> Result<StoredObject, JobError> {
        let job = ctx.job_id;
        let described = tx.prepare(&self.query).await.map_err(|e| classify(job, e))?;
        let columns = described.columns();
        let keys = self.key_columns(columns)?;
        let resumed = match keys.is_empty() {
            true => None,
            false => self.resume_point(ctx, format, keys.len()).await,
        };
        let upload = match &resumed {
            Some(checkpoint) => checkpoint.upload.clone(),
            None => {
                self.storage.begin_upload(key, format.content_type()).await.map_err(|e| self.save_failed(job, e))?
            }
        };
        let mut uploading =
            Uploading { storage: self.storage.clone(), upload, named: resumed.is_some(), completed: false };
        let written = self.write_parts(tx, format, ctx, columns, &keys, resumed.as_ref(), &mut uploading, rows).await;
        let stored = match written {
            Ok(()) => self.complete(ctx, &uploading, resumed.is_some()).await,
            Err(error) => Err(error),
        };
        match &stored {
            Ok(_) => uploading.completed = true,
            Err(error) => self.let_go(ctx, &mut uploading, error).await,
        }
        stored
    }

    /// The positions of the resume key's columns among the query's.
    fn key_columns(&self, columns: &[tokio_postgres::Column]) -> Result<Vec<usize>, JobError> {
        self.resume_key
            .iter()
            .map(|name| {
                let position = columns.iter().position(|c| c.name() == name);
                match position {
                    Some(i) if can_be_key(columns[i].type_()) => Ok(i),
                    found => {
                        let why = if found.is_some() {
                            "is not of a type a key can be"
                        } else {
                            "is not a column of the query"
                        };
                        tracing::error!(job_type = %self.job_type, column = %name, "export: resume_key {why}");
                        Err(JobError::Permanent(super::errors::COULD_NOT_RUN.into()))
                    }
                }
            })
            .collect()
    }

    /// The checkpoint this attempt goes on from, if it can: of this format
    /// and key, its parts all there, and part numbers left for the attempt.
    async fn resume_point(&self, ctx: &JobContext, format: ExportFormat, keys: usize) -> Option<ExportCheckpoint> {
        let checkpoint: ExportCheckpoint = serde_json::from_value(ctx.resumed()?.clone()).ok()?;
        let usable = checkpoint.format == format
            && checkpoint.last_key.len() == keys
            && checkpoint.upload.next_part_number().is_some()
            && self.storage.upload_is_whole(&checkpoint.upload).await.unwrap_or(false);
        if usable {
            tracing::info!(job = %ctx.job_id, rows = checkpoint.rows, "export: resuming after its checkpoint");
            Some(checkpoint)
        } else {
            tracing::info!(job = %ctx.job_id, "export: its checkpoint cannot be resumed; starting over");
            // Its upload goes with it (what is left of it).
            self.storage.abort_upload_soon(&checkpoint.upload);
            None
        }
    }

    #[allow(clippy::too_many_arguments)]
    async fn write_parts(
        &self,
        tx: &Transaction<'_>,
        format: ExportFormat,
        ctx: &JobContext,
        columns: &[tokio_postgres::Column],
        keys: &[usize],
        resumed: Option<&ExportCheckpoint>,
        uploading: &mut Uploading,
        rows: &Arc<AtomicU64>,
    ) -> Result<(), JobError> {
        let job = ctx.job_id;
        let classify = |error| classify(job, error);
        let before = resumed.map_or(0, |c| c.rows);
        rows.store(before, Ordering::Relaxed);
        if let Some(checkpoint) = resumed {
            let names: Vec<String> = (1..=keys.len()).map(|n| format!("errand.key_{n}")).collect();
            tx.execute(
                "SELECT set_config(name, value, true) FROM unnest($1::text[], $2::text[]) AS k(name, value)",
                &[&names, &checkpoint.last_key],
            )
            .await
            .map_err(classify)?;
        }
        let spec = TextCopy {
            query: &self.query,
            columns,
            format,
            defuse: self.defuse_formulas && format != ExportFormat::Ndjson,
            keys,
            after_key: resumed.is_some(),
        };
        let statement = spec.statement();
        let mut records = spec.records();
        let mut copy = std::pin::pin!(tx.copy_out(statement.as_str()).await.map_err(classify)?);
        let mut part = PartBuffer::new(format == ExportFormat::CsvGz, self.part_size);
        let mut reported = before;
        while let Some(chunk) = copy.next().await {
            let chunk = chunk.map_err(classify)?;
            records.feed(&chunk, part.sink());
            part.settle().await.map_err(|e| self.save_failed(job, e.into()))?;
            let written = before + records.rows;
            rows.store(written, Ordering::Relaxed);
            if part.len() >= self.part_size {
                self.flush_part(ctx, format, &mut part, uploading, keys, written, &records).await?;
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
                    if !keys.is_empty() && !part.is_empty() && self.storage.takes_part_of(part.len()) {
                        self.flush_part(ctx, format, &mut part, uploading, keys, written, &records).await?;
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
        Ok(())
    }

    async fn upload_part(
        &self,
        ctx: &JobContext,
        part: &mut PartBuffer,
        uploading: &mut Uploading,
    ) -> Result<(), JobError> {
        let job = ctx.job_id;
        if uploading.upload.next_part_number().is_none() {
            tracing::error!(%job, "export: more parts than S3 takes (10,000); raise storage.part_size");
            return Err(JobError::Permanent(COULD_NOT_SAVE.into()));
        }
        let bytes = part.take().await.map_err(|e| self.save_failed(job, e.into()))?;
        let content_type = "application/octet-stream";
        self.storage.upload_part(&mut uploading.upload, bytes, content_type).await.map_err(|e| self.save_failed(job, e))
    }

    /// Uploads the part gathered and, for a resumable export, records the
    /// checkpoint after it.
    #[allow(clippy::too_many_arguments)]
    async fn flush_part(
        &self,
        ctx: &JobContext,
        format: ExportFormat,
        part: &mut PartBuffer,
        uploading: &mut Uploading,
        keys: &[usize],
        rows: u64,
        records: &super::records::Records,
    ) -> Result<(), JobError> {
        self.upload_part(ctx, part, uploading).await?;
        if keys.is_empty() {
            return Ok(());
        }
        self.checkpoint(ctx, format, uploading, rows, &records.last_key()).await
    }

    /// Records the uploaded parts, and the last row's key, as the attempt's checkpoint.
    async fn checkpoint(
        &self,
        ctx: &JobContext,
        format: ExportFormat,
        uploading: &mut Uploading,
        rows: u64,
        last_key: &[Option<String>],
    ) -> Result<(), JobError> {
        // A NULL key cannot be resumed after: the checkpoint before stands.
        let Some(last_key) = last_key.iter().cloned().collect::<Option<Vec<String>>>() else {
            tracing::warn!(job = %ctx.job_id, "export: a row's resume key is NULL; no checkpoint after it");
            return Ok(());
        };
        let checkpoint = ExportCheckpoint { format, upload: uploading.upload.clone(), rows, last_key };
        let value = serde_json::to_value(&checkpoint).map_err(|e| JobError::Retryable(e.to_string()))?;
        ctx.checkpoint(&value, rows).await?;
        uploading.named = true;
        Ok(())
    }

    /// Completes the upload: the object appears under its key.
    async fn complete(&self, ctx: &JobContext, uploading: &Uploading, resumed: bool) -> Result<StoredObject, JobError> {
        if uploading.named {
            // Still this attempt's job? (One that lost its lease must not
            // complete an upload its successor goes on with.)
            ctx.checkpoints.still_held().await?;
        }
        match self.storage.complete_upload(&uploading.upload).await {
            Ok(stored) => Ok(stored),
            Err(error) => {
                if resumed {
                    // An upload gone (completed or aborted meanwhile) cannot
                    // be gone on with: the next attempt starts over.
                    let _ = ctx.forget_checkpoint().await;
                }
                Err(self.save_failed(ctx.job_id, error))
            }
        }
    }

    /// After a failed attempt: an upload a checkpoint names is kept for the
    /// next attempt, unless the job fails for good (and this attempt still
    /// holds it: one that lost its lease leaves it to its successor). One
    /// no checkpoint names is dropped (by `Uploading`'s drop).
    async fn let_go(&self, ctx: &JobContext, uploading: &mut Uploading, error: &JobError) {
        if matches!(error, JobError::Permanent(_)) && uploading.named && ctx.forget_checkpoint().await.is_ok() {
            uploading.named = false;
        }
    }

    fn save_failed(&self, job: crate::domain::JobId, error: StorageError) -> JobError {
        tracing::warn!(%job, %error, "export: storing the file failed");
        JobError::Retryable(COULD_NOT_SAVE.into())
    }
}
