//! Checkpoints: how far an attempt has come, recorded so that the run's next
//! attempt (after a crash, a rescue, a failover or a deploy) resumes there
//! instead of from the start. A checkpoint is written to the job's queue row
//! fenced on the attempt's lease, like its progress and its end: an attempt
//! that lost its lease records nothing, and learns so.

use serde_json::Value;

use super::JobError;
use crate::domain::{JobId, LeaseId};
use crate::store::Store;

/// Where an attempt records its checkpoints.
#[derive(Clone)]
pub struct Checkpoints {
    /// `None`: nowhere (a handler run outside a worker).
    store: Option<Store>,
    job: JobId,
    lease: LeaseId,
}

impl std::fmt::Debug for Checkpoints {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Checkpoints").field("job", &self.job).field("lease", &self.lease).finish()
    }
}

impl Checkpoints {
    /// The checkpoints of job `job`'s attempt under `lease`.
    pub fn new(store: Store, job: JobId, lease: LeaseId) -> Self {
        Self { store: Some(store), job, lease }
    }

    /// Checkpoints kept nowhere: recording one succeeds and is forgotten.
    pub fn nowhere(job: JobId, lease: LeaseId) -> Self {
        Self { store: None, job, lease }
    }

    /// Records `value` (`None`: forgets the checkpoint), `done` the attempt's
    /// progress then. An error means the attempt must stop: its lease is
    /// lost (another attempt may be running), or the database is away (the
    /// next attempt resumes from the checkpoint before).
    pub(super) async fn record(&self, value: Option<&Value>, done: u64) -> Result<(), JobError> {
        let Some(store) = &self.store else { return Ok(()) };
        match store.queue().write_checkpoint(self.job, self.lease, value, done).await {
            Ok(true) => Ok(()),
            Ok(false) => Err(JobError::Retryable("the attempt lost its lease; another attempt takes over".into())),
            Err(error) => {
                tracing::warn!(job = %self.job, %error, "could not record a checkpoint");
                Err(JobError::Retryable("the job's progress could not be saved; it resumes shortly".into()))
            }
        }
    }

    /// Whether the attempt still holds its lease (`Err` as for [`Self::record`] if not).
    pub async fn still_held(&self) -> Result<(), JobError> {
        let Some(store) = &self.store else { return Ok(()) };
        match store.queue().running_attempt(self.job, self.lease).await {
            Ok(Some(_)) => Ok(()),
            Ok(None) => Err(JobError::Retryable("the attempt lost its lease; another attempt takes over".into())),
            Err(error) => {
                tracing::warn!(job = %self.job, %error, "could not check the attempt's lease");
                Err(JobError::Retryable("the job's progress could not be saved; it resumes shortly".into()))
            }
        }
    }
}
