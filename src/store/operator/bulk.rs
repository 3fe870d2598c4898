//! An operator's action on every job a filter matches: retry the failed
//! ones, or cancel the unfinished ones. It runs in steps of a few hundred
//! jobs, each its own transaction with its own audit row, so that a
//! million-job action never holds a million row locks, a step's work is
//! never lost to a later one's failure, and a page can show the progress
//! (it asks for one step at a time, after the last job the previous took).

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::domain::{JobId, JobState};
use crate::store::StoreError;
use crate::store::operator::{OperatorJobs, like_escaped, planned_for_its_filters, requeue};
use crate::store::queue::cancel::{CancelledBy, cancel_locked};

/// Which jobs a bulk action takes: the operators' list filters, less the
/// state, which the action decides (failed for a retry, unfinished for a cancel).
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct BulkFilter {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job_type: Option<String>,
    /// Jobs whose error message holds this text (any case).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Jobs whose params hold `value` (as text) at this path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub param: Option<(Vec<String>, String)>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_after: Option<DateTime<Utc>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_before: Option<DateTime<Utc>>,
    /// Job types whose params `param` does not search (they are kept from this operator).
    #[serde(skip)]
    pub params_unsearchable: Vec<String>,
}

/// What a bulk action does to each job it takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BulkAction {
    /// A failed job goes back to the queue as a new run (as one job's retry).
    Retry,
    /// An unfinished job is cancelled, or its worker asked to stop (as one job's cancel).
    Cancel,
}

impl BulkAction {
    /// Its name in the audit trail.
    fn audited_as(self) -> &'static str {
        match self {
            Self::Retry => "bulk_retry",
            Self::Cancel => "bulk_cancel",
        }
    }
}

/// What one step did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BulkStep {
    /// Jobs retried, or cancelled (or asked to stop).
    pub done: u64,
    /// The last job the step took, when it took as many as it could: the
    /// next step starts after it. `None`: nothing matching is left.
    pub next_after: Option<JobId>,
}

/// Jobs taken per step of a bulk action run whole.
pub const BULK_STEP: u32 = 500;

/// The filter's conditions on `jobs j`, written once for every statement
/// here: tenant `$1`, type `$2`, created in [`$3`, `$4`), user `$5`, error
/// text `$6` (in the given column, LIKE's characters escaped), params
/// holding `$8` at the path `$7` (never in jobs of the types `$9`).
macro_rules! matching {
    ($error:literal) => {
        concat!(
            "($1::text IS NULL OR j.tenant_id = $1)
  AND ($2::text IS NULL OR j.job_type = $2)
  AND ($3::timestamptz IS NULL OR j.created_at >= $3)
  AND ($4::timestamptz IS NULL OR j.created_at < $4)
  AND ($5::text IS NULL OR j.user_id = $5)
  AND ($6::text IS NULL OR ",
            $error,
            " ILIKE '%' || $6 || '%')
  AND ($7::text[] IS NULL OR (j.params #>> $7 = $8 AND j.job_type <> ALL ($9)))"
        )
    };
}

/// The next `$11` failed jobs after `$10` (id order) that match, locked.
const NEXT_FAILED: &str = concat!(
    "SELECT j.id FROM jobs j WHERE j.unsuccessful_state = 'failed' AND j.id > $10 AND ",
    matching!("j.error_message"),
    " ORDER BY j.id LIMIT $11 FOR UPDATE SKIP LOCKED"
);

const COUNT_FAILED: &str =
    concat!("SELECT count(*) FROM jobs j WHERE j.unsuccessful_state = 'failed' AND ", matching!("j.error_message"));

/// The next `$11` unfinished jobs after `$10` (id order) that match, their
/// queue rows locked (the error of an unfinished job is its last attempt's).
const NEXT_UNFINISHED: &str = concat!(
    "SELECT q.job_id AS id FROM job_queue q JOIN jobs j ON j.id = q.job_id WHERE q.job_id > $10 AND ",
    matching!("q.last_error"),
    " ORDER BY q.job_id LIMIT $11 FOR UPDATE OF q SKIP LOCKED"
);

const COUNT_UNFINISHED: &str =
    concat!("SELECT count(*) FROM job_queue q JOIN jobs j ON j.id = q.job_id WHERE ", matching!("q.last_error"));

/// The queue row of a job the step already holds, for `cancel_locked`.
const LOCK_QUEUED: &str = "SELECT state FROM job_queue WHERE job_id = $1 FOR UPDATE";

impl OperatorJobs<'_> {
    /// How many jobs `action` would take now.
    pub async fn count_for(&self, action: BulkAction, filter: &BulkFilter) -> Result<u64, StoreError> {
        let client = self.pool.get().await?;
        let statement = match action {
            BulkAction::Retry => COUNT_FAILED,
            BulkAction::Cancel => COUNT_UNFINISHED,
        };
        let (error, (path, value)) = (filter.error.as_deref().map(like_escaped), filter.param.clone().unzip());
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 9] = [
            &filter.tenant,
            &filter.job_type,
            &filter.created_after,
            &filter.created_before,
            &filter.user,
            &error,
            &path,
            &value,
            &filter.params_unsearchable,
        ];
        let statement = planned_for_its_filters(&client, statement).await?;
        let count: i64 = client.query_one(&statement, &params).await?.try_get(0)?;
        Ok(u64::try_from(count).unwrap_or(0))
    }

    /// One step: up to `limit` matching jobs after `after`, acted on and
    /// audited in one transaction.
    pub async fn bulk_step(
        &self,
        action: BulkAction,
        filter: &BulkFilter,
        after: Option<JobId>,
        limit: u32,
    ) -> Result<BulkStep, StoreError> {
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        let next = planned_for_its_filters(
            &tx,
            match action {
                BulkAction::Retry => NEXT_FAILED,
                BulkAction::Cancel => NEXT_UNFINISHED,
            },
        )
        .await?;
        let (error, (path, value)) = (filter.error.as_deref().map(like_escaped), filter.param.clone().unzip());
        let first = after.is_none();
        let (after, fetch) = (after.map_or(Uuid::nil(), |id| id.0), i64::from(limit));
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 11] = [
            &filter.tenant,
            &filter.job_type,
            &filter.created_after,
            &filter.created_before,
            &filter.user,
            &error,
            &path,
            &value,
            &filter.params_unsearchable,
            &after,
            &fetch,
        ];
        let ids: Vec<Uuid> =
            tx.query(&next, &params).await?.iter().map(|r| r.try_get("id")).collect::<Result<_, _>>()?;
        let done = match action {
            BulkAction::Retry => requeue(&tx, &ids).await?,
            BulkAction::Cancel => {
                let mut cancelled = 0;
                for id in &ids {
                    let by = CancelledBy::Operator;
                    let found = cancel_locked(&tx, LOCK_QUEUED, &[id], JobId(*id), by, Some(self.endings)).await?;
                    cancelled +=
                        u64::from(matches!(found, Some(JobState::Available | JobState::Retryable | JobState::Running)));
                }
                cancelled
            }
        };
        // Audited when it took jobs, or found none to take at all (an
        // action, done or not); the empty end of a longer run is not.
        if !ids.is_empty() || first {
            let filter_json = serde_json::to_value(filter).unwrap_or_default();
            self.audit(&tx, action.audited_as(), None, Some(&filter_json), done).await?;
        }
        tx.commit().await?;
        let full = ids.len() == limit as usize;
        Ok(BulkStep { done, next_after: ids.last().filter(|_| full).map(|id| JobId(*id)) })
    }

    /// The whole action (after the job `after`, if given), step after step
    /// of [`BULK_STEP`] jobs; returns how many it took.
    pub async fn bulk(&self, action: BulkAction, filter: &BulkFilter, after: Option<JobId>) -> Result<u64, StoreError> {
        let (mut after, mut done) = (after, 0);
        loop {
            let step = self.bulk_step(action, filter, after, BULK_STEP).await?;
            done += step.done;
            match step.next_after {
                Some(last) => after = Some(last),
                None => return Ok(done),
            }
        }
    }
}
