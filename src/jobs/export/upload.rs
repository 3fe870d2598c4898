//! The upload of a text export under way: its parts, and the checkpoint
//! recorded after each (the upload, its parts, the rows so far and the key
//! of the last row in them), from which a later read or attempt goes on.

use serde::{Deserialize, Serialize};

use super::errors::COULD_NOT_SAVE;
use super::part_buffer::PartBuffer;
use super::{ExportPlan, JobContext, JobError};
use crate::domain::ExportFormat;
use crate::storage::{StorageError, Upload};

/// What a text export's checkpoint records.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct ExportCheckpoint {
    pub format: ExportFormat,
    pub upload: Upload,
    /// Rows in the uploaded parts.
    pub rows: u64,
    /// The resume key of the last of them, as PostgreSQL writes it.
    pub last_key: Vec<String>,
}

/// An upload under way. Unless completed, or named by a checkpoint (a
/// later attempt goes on with it), it is dropped with the attempt, however
/// the attempt ends: an error, or its future dropped (a cancel, a timeout).
pub(super) struct Uploading {
    pub storage: crate::storage::Storage,
    pub upload: Upload,
    pub named: bool,
    pub completed: bool,
}

impl Drop for Uploading {
    fn drop(&mut self) {
        if !self.completed && !self.named {
            self.storage.abort_upload_soon(&self.upload);
        }
    }
}

impl ExportPlan {
    pub(super) async fn upload_part(
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
    /// checkpoint after it (answered: `None` without one).
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn flush_part(
        &self,
        ctx: &JobContext,
        format: ExportFormat,
        part: &mut PartBuffer,
        uploading: &mut Uploading,
        keys: &[usize],
        rows: u64,
        records: &super::records::Records,
    ) -> Result<Option<ExportCheckpoint>, JobError> {
        self.upload_part(ctx, part, uploading).await?;
        if keys.is_empty() {
            return Ok(None);
        }
        self.checkpoint(ctx, format, uploading, rows, &records.last_key()).await
    }

    /// Records the uploaded parts, and the last row's key, as the attempt's
    /// checkpoint; answers it (`None`: a NULL key, after which nothing can
    /// be read on).
    async fn checkpoint(
        &self,
        ctx: &JobContext,
        format: ExportFormat,
        uploading: &mut Uploading,
        rows: u64,
        last_key: &[Option<String>],
    ) -> Result<Option<ExportCheckpoint>, JobError> {
        // A NULL key cannot be resumed after: the checkpoint before stands.
        let Some(last_key) = last_key.iter().cloned().collect::<Option<Vec<String>>>() else {
            tracing::warn!(job = %ctx.job_id, "export: a row's resume key is NULL; no checkpoint after it");
            return Ok(None);
        };
        let checkpoint = ExportCheckpoint { format, upload: uploading.upload.clone(), rows, last_key };
        let value = serde_json::to_value(&checkpoint).map_err(|e| JobError::Retryable(e.to_string()))?;
        ctx.checkpoint(&value, rows).await?;
        uploading.named = true;
        Ok(Some(checkpoint))
    }

    pub(super) fn save_failed(&self, job: crate::domain::JobId, error: StorageError) -> JobError {
        tracing::warn!(%job, %error, "export: storing the file failed");
        JobError::Retryable(COULD_NOT_SAVE.into())
    }
}
