//! CSV, csv.gz and NDJSON: PostgreSQL writes the text with `COPY`, errand
//! uploads it in parts (`storage.part_size`) and, for a type that names a
//! resume key, records a checkpoint after each part: the upload, its parts,
//! the rows so far and the key of the last row in them. A later attempt (a
//! crash, a rescue, a failover, a deploy) goes on with the same upload from
//! the row after that key: no row written twice, none missing, and none
//! read again. (It reads the rows after the key as they are when it runs: a
//! newer snapshot than the first attempt's. docs/exports.md says how to pin one
//! for a source that changes.)
//!
//! The same goes within an attempt: a long export reads in transactions of
//! its own, each going on after the last checkpoint (`reads`).

use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use deadpool_postgres::Client;

use super::copy::can_be_key;
use super::reads::{ReadFrom, Source};
use super::upload::{ExportCheckpoint, Uploading};
use super::{ExportPlan, JobContext, JobError};
use crate::domain::ExportFormat;
use crate::storage::{ObjectKey, StoredObject};

impl ExportPlan {
    pub(super) async fn text(
        &self,
        client: &mut Client,
        format: ExportFormat,
        ctx: &JobContext,
        key: &ObjectKey,
        rows: &Arc<AtomicU64>,
    ) -> Result<StoredObject, JobError> {
        let job = ctx.job_id;
        let described = self.describe(client, ctx).await?;
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
        let start =
            ReadFrom { after: resumed.as_ref().map(|c| c.last_key.clone()), rows: resumed.map_or(0, |c| c.rows) };
        let resumed_at_start = start.after.is_some();
        let mut uploading =
            Uploading { storage: self.storage.clone(), upload, named: resumed_at_start, completed: false };
        let source = Source { columns, keys: &keys, format };
        let written = self.write_parts(client, &source, ctx, start, &mut uploading, rows).await;
        let stored = match written {
            Ok(()) => self.complete(ctx, &uploading, resumed_at_start).await,
            Err(error) => Err(error),
        };
        match &stored {
            Ok(_) => uploading.completed = true,
            Err(error) => self.let_go(ctx, &mut uploading, error).await,
        }
        stored
    }

    /// The positions of the resume key's columns among the query's.
    pub(super) fn key_columns(&self, columns: &[tokio_postgres::Column]) -> Result<Vec<usize>, JobError> {
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
}
