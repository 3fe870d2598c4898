//! Holding one job: an operator keeps a waiting job from being claimed (a
//! report whose params look wrong, a job that would hit a source under
//! repair) without cancelling it, and releases it later. The hold is
//! `job_queue.held_by`, which every claim reads; audited like every action.

use crate::domain::{Job, JobId, JobState};
use crate::store::{StoreError, WORK_CHANNEL};

use super::OperatorJobs;

/// Holds waiting job `$1` for operator `$2`; with `$2` NULL, releases it if
/// held (a held job is always waiting: no claim takes it).
const SET_HOLD: &str = "
UPDATE job_queue SET held_by = $2::text
WHERE job_id = $1 AND state IN ('available', 'retryable') AND ($2::text IS NOT NULL OR held_by IS NOT NULL)
RETURNING job_id";

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
        Ok(match self.set_hold(id, Some(self.operator.name.as_str())).await? {
            None => HoldOutcome::NotFound,
            Some(job) if matches!(job.state, JobState::Available | JobState::Retryable) => {
                HoldOutcome::Done(Box::new(job))
            }
            Some(job) => HoldOutcome::NotWaiting(job.state),
        })
    }

    /// Releases a held job: claims may take it again, at once.
    pub async fn release(&self, id: JobId) -> Result<HoldOutcome, StoreError> {
        Ok(match self.set_hold(id, None).await? {
            None => HoldOutcome::NotFound,
            Some(job) => HoldOutcome::Done(Box::new(job)),
        })
    }

    /// Sets (`holder`) or clears the job's hold, audited in the same
    /// transaction; answers the job as it then is.
    async fn set_hold(&self, id: JobId, holder: Option<&str>) -> Result<Option<Job>, StoreError> {
        {
            let mut client = self.pool.get().await?;
            let tx = client.transaction().await?;
            let changed = tx.query_opt(&tx.prepare_cached(SET_HOLD).await?, &[&id.0, &holder]).await?.is_some();
            let action = if holder.is_some() { "hold" } else { "release" };
            self.audit(&tx, action, Some(id), None, u64::from(changed)).await?;
            if changed && holder.is_none() {
                // Sent at commit: a woken claim sees the job released.
                tx.batch_execute(&format!("NOTIFY {WORK_CHANNEL}")).await?;
            }
            tx.commit().await?;
        }
        Ok(self.get(id).await?.map(|(job, _)| job))
    }
}
