//! Holding one job: an operator keeps a waiting job from being claimed (a
//! report whose params look wrong, a job that would hit a source under
//! repair) without cancelling it, and releases it later. The hold is
//! `job_queue.held_by`, which every claim reads; audited like every action.

use crate::domain::{Job, JobId, JobState};
use crate::store::{StoreError, WORK_CHANNEL};

use super::OperatorJobs;

/// Holds job `$1` for operator `$2`, if it is waiting.
const HOLD: &str = "
UPDATE job_queue SET held_by = $2 WHERE job_id = $1 AND state IN ('available', 'retryable') RETURNING job_id";

/// Releases job `$1`, if it is held.
const RELEASE: &str = "UPDATE job_queue SET held_by = NULL WHERE job_id = $1 AND held_by IS NOT NULL RETURNING job_id";

/// What holding or releasing a job did.
#[derive(Debug)]
pub enum HoldOutcome {
    /// Done (or nothing to do: held already, or not held): the job as it is.
    Done(Box<Job>),
    /// Only a waiting job is held: this one is running or ended.
    NotWaiting(JobState),
    NotFound,
}

impl OperatorJobs<'_> {
    /// Holds a waiting job: no claim takes it until it is released.
    pub async fn hold(&self, id: JobId) -> Result<HoldOutcome, StoreError> {
        {
            let mut client = self.pool.get().await?;
            let tx = client.transaction().await?;
            let held = tx.query_opt(&tx.prepare_cached(HOLD).await?, &[&id.0, &self.operator.name.as_str()]).await?;
            self.audit(&tx, "hold", Some(id), None, u64::from(held.is_some())).await?;
            tx.commit().await?;
        }
        Ok(match self.get(id).await? {
            None => HoldOutcome::NotFound,
            Some((job, _)) if matches!(job.state, JobState::Available | JobState::Retryable) => {
                HoldOutcome::Done(Box::new(job))
            }
            Some((job, _)) => HoldOutcome::NotWaiting(job.state),
        })
    }

    /// Releases a held job: claims may take it again, at once.
    pub async fn release(&self, id: JobId) -> Result<HoldOutcome, StoreError> {
        {
            let mut client = self.pool.get().await?;
            let tx = client.transaction().await?;
            let released = tx.query_opt(&tx.prepare_cached(RELEASE).await?, &[&id.0]).await?;
            self.audit(&tx, "release", Some(id), None, u64::from(released.is_some())).await?;
            if released.is_some() {
                // Sent at commit: a woken claim sees the job released.
                tx.batch_execute(&format!("NOTIFY {WORK_CHANNEL}")).await?;
            }
            tx.commit().await?;
        }
        Ok(match self.get(id).await? {
            None => HoldOutcome::NotFound,
            Some((job, _)) => HoldOutcome::Done(Box::new(job)),
        })
    }
}
