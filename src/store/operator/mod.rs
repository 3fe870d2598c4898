//! The operators' door (see `operator_actions` in `migrations/`): any tenant's
//! jobs, read and acted on by someone who runs errand. Only an [`Operator`]
//! (proved by an operator token) opens it, and every action writes its audit
//! row in the transaction that does it.

pub mod actions;
pub mod bulk;
pub mod erasures;
pub mod holds;
pub mod overview;
pub mod pauses;
pub mod quotas;
pub mod retention;
pub mod timeline;

use chrono::{DateTime, Utc};
use deadpool_postgres::{Pool, Transaction};
use tokio_postgres::Row;
use uuid::Uuid;

use crate::domain::{Job, JobId, JobState, JobStatus, Operator};
use crate::store::StoreError;
use crate::store::jobs::{JobPage, held_back, held_job_from_row};
use crate::store::queue::cancel::{CancelOutcome, CancelledBy, cancel_locked};

/// Which jobs an operator lists: any filter may be left out.
#[derive(Debug, Clone, Default)]
pub struct JobQuery {
    pub tenant: Option<String>,
    pub user: Option<String>,
    /// Jobs whose error message holds this text (any case).
    pub error: Option<String>,
    /// Jobs whose params hold `value` (as text) at this path (`["customer", "id"]`).
    pub param: Option<(Vec<String>, String)>,
    pub job_type: Option<String>,
    pub status: Option<JobStatus>,
    pub created_after: Option<DateTime<Utc>>,
    pub created_before: Option<DateTime<Utc>>,
    /// Only jobs older than this one (the previous page's last).
    pub before: Option<JobId>,
    pub limit: u32,
    /// Job types whose params `param` does not search (they are kept from this operator).
    pub params_unsearchable: Vec<String>,
}

/// Why an attempt failed.
#[derive(Debug, Clone, serde::Serialize)]
pub struct AttemptError {
    pub run: i32,
    pub attempt: i32,
    pub error: String,
    pub ended_at: DateTime<Utc>,
}

/// What a retry did.
#[derive(Debug)]
pub enum RetryOutcome {
    /// Back in the queue, as a new run with a fresh attempt budget.
    Retried(Box<Job>),
    /// Only failed or cancelled jobs are retried; this one is in this state.
    NotRetryable(JobState),
    NotFound,
}

/// Jobs waiting, retrying and running, per job type and state.
#[derive(Debug, Clone, serde::Serialize)]
pub struct QueueCount {
    pub job_type: String,
    pub state: String,
    pub jobs: i64,
    /// How long the oldest due job of the type has waited (waiting states only).
    pub oldest_due_seconds: Option<f64>,
}

/// Any tenant's jobs, newest first, by tenant `$1`, type `$2`, states `$3`,
/// created in [`$4`, `$5`), older than the job `$6`; `$7` rows at most; by
/// user `$8`, error text `$9` (a case-insensitive substring, LIKE's own
/// characters escaped), and params holding `$11` at the path `$10` (never
/// in jobs of the types `$12`). `$14` repeats `$3` when every state in it
/// is failed or cancelled, which `unsuccessful_state` says through an index
/// (`jobs_unsuccessful` in `migrations/V1__baseline.sql`); else `$13` does
/// when every one is an end: the record's own state then says it (see
/// `recorded_state` at `jobs_live`, in the same file).
const LIST_ANY: &str = concat!(
    "
SELECT id, tenant_id, user_id, job_type, params, state, attempt, max_attempts, run_at, result, error_message,
       created_at, finished_at, progress, cancel_requested_by, schedule_id, scheduled_for,
       priority, format, resumed_from, ",
    held_back!(),
    "
FROM jobs_live l
WHERE ($1::text IS NULL OR tenant_id = $1)
  AND ($2::text IS NULL OR job_type = $2)
  AND ($3::job_state[] IS NULL OR state = ANY ($3))
  AND ($13::job_state[] IS NULL OR recorded_state = ANY ($13))
  AND ($14::job_state[] IS NULL OR unsuccessful_state = ANY ($14))
  AND ($4::timestamptz IS NULL OR created_at >= $4)
  AND ($5::timestamptz IS NULL OR created_at < $5)
  AND ($6::uuid IS NULL OR id < $6)
  AND ($8::text IS NULL OR user_id = $8)
  AND ($9::text IS NULL OR error_message ILIKE '%' || $9 || '%')
  AND ($10::text[] IS NULL OR (params #>> $10 = $11 AND job_type <> ALL ($12)))
ORDER BY id DESC
LIMIT $7"
);

/// Any tenant's job, with whether an operator keeps it waiting and who holds it.
const GET_ANY: &str = concat!(
    "
SELECT id, tenant_id, user_id, job_type, params, state, attempt, max_attempts, run_at, result, error_message,
       created_at, finished_at, progress, cancel_requested_by, schedule_id, scheduled_for,
       priority, format, resumed_from, held_by, acted_by, ",
    held_back!(),
    "
FROM jobs_live l WHERE id = $1"
);

const ATTEMPT_ERRORS: &str = "
SELECT run, attempt, error, ended_at FROM job_attempt_errors WHERE job_id = $1 ORDER BY run, attempt";

/// Puts the failed or cancelled jobs `$1` back in the queue as a new run with
/// a fresh attempt budget, same id and key; tells the workers.
const REQUEUE: &str = "
WITH reset AS (
    UPDATE jobs j
    SET state = 'available', run = j.run + 1, attempt = 0, run_at = now(), result = NULL,
        result_expires_at = NULL, error_message = NULL, started_at = NULL, finished_at = NULL,
        ended_by = NULL
    WHERE j.id = ANY ($1) AND j.state IN ('failed', 'cancelled')
    RETURNING j.id, j.tenant_id, j.user_id, j.job_type, j.run_at, j.priority
), queued AS (
    INSERT INTO job_queue (job_id, tenant_id, user_id, job_type, run_at, priority, turn)
    SELECT id, tenant_id, user_id, job_type, run_at, priority,
           t.turn + row_number() OVER (PARTITION BY tenant_id, user_id ORDER BY id) - 1
    FROM reset CROSS JOIN LATERAL errand_turn(tenant_id, user_id) t
    RETURNING job_id
)
SELECT (SELECT count(*) FROM queued) AS retried,
       (SELECT pg_notify('errand_jobs', '') FROM queued LIMIT 1) IS NOT NULL AS announced";

/// The job `$1`, locked, if it exists.
const LOCK_JOB: &str = "SELECT state FROM jobs WHERE id = $1 FOR UPDATE";

/// The queue's running job's row, locked, for a cancel.
const LOCK_QUEUED: &str = "SELECT state FROM job_queue WHERE job_id = $1 FOR UPDATE";

const AUDIT: &str = "
INSERT INTO operator_actions (operator, action, job_id, filter, affected) VALUES ($1, $2, $3, $4, $5)";

/// Per type and state, from the queue table alone (it holds unfinished jobs
/// only, so this does not grow with history).
const QUEUES: &str = "
SELECT job_type, state::text AS state, count(*) AS jobs,
       extract(epoch FROM now() - min(run_at) FILTER (WHERE state IN ('available', 'retryable') AND run_at <= now()))::float8
           AS oldest_due_seconds
FROM job_queue
GROUP BY job_type, state
ORDER BY job_type, state";

/// Every tenant's jobs, for an operator.
pub struct OperatorJobs<'a> {
    pub(super) pool: &'a Pool,
    pub(super) operator: &'a Operator,
    pub(super) endings: &'a crate::store::Endings,
    pub(super) sealer: &'a crate::store::Sealer,
}

impl OperatorJobs<'_> {
    /// A page of any tenant's jobs, newest first.
    pub async fn list(&self, query: &JobQuery) -> Result<JobPage, StoreError> {
        let client = self.pool.get().await?;
        let states: Option<Vec<JobState>> = query.status.map(|s| s.states().to_vec());
        let fetch = i64::from(query.limit) + 1;
        let statement = planned_for_its_filters(&client, LIST_ANY).await?;
        let error = query.error.as_deref().map(like_escaped);
        let (path, value) = query.param.clone().unzip();
        // One of the two, not both: the planner would take their selectivities
        // as independent and count on a handful of rows.
        let unsuccessful = states.as_ref().filter(|s| s.iter().all(|state| state.is_unsuccessful()));
        let ended = states.as_ref().filter(|s| unsuccessful.is_none() && s.iter().all(|state| state.is_terminal()));
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 14] = [
            &query.tenant,
            &query.job_type,
            &states,
            &query.created_after,
            &query.created_before,
            &query.before.map(|id| id.0),
            &fetch,
            &query.user,
            &error,
            &path,
            &value,
            &query.params_unsearchable,
            &ended,
            &unsuccessful,
        ];
        let rows = client.query(&statement, &params).await?;
        let mut jobs = rows.iter().map(held_job_from_row).collect::<Result<Vec<_>, _>>()?;
        self.sealer.open_jobs(&mut jobs).await?;
        Ok(JobPage::of(jobs, query.limit))
    }

    /// Any tenant's job, with why each of its failed attempts failed.
    pub async fn get(&self, id: JobId) -> Result<Option<(Job, Vec<AttemptError>)>, StoreError> {
        let client = self.pool.get().await?;
        let Some(row) = client.query_opt(&client.prepare_cached(GET_ANY).await?, &[&id.0]).await? else {
            return Ok(None);
        };
        let errors = client.query(&client.prepare_cached(ATTEMPT_ERRORS).await?, &[&id.0]).await?;
        let errors = errors.iter().map(attempt_error_from_row).collect::<Result<_, _>>()?;
        let mut job =
            Job { held_by: row.try_get("held_by")?, acted_by: row.try_get("acted_by")?, ..held_job_from_row(&row)? };
        self.sealer.open_job(&mut job).await?;
        Ok(Some((job, errors)))
    }

    /// Puts a failed or cancelled job back in the queue (see [`RetryOutcome`]).
    pub async fn retry(&self, id: JobId) -> Result<RetryOutcome, StoreError> {
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        let state: Option<JobState> = tx
            .query_opt(&tx.prepare_cached(LOCK_JOB).await?, &[&id.0])
            .await?
            .map(|r| r.try_get("state"))
            .transpose()?;
        let retried = match state {
            Some(JobState::Failed | JobState::Cancelled) => requeue(&tx, &[id.0]).await?,
            _ => 0,
        };
        self.audit(&tx, "retry", Some(id), None, retried).await?;
        tx.commit().await?;
        Ok(match (state, self.get(id).await?) {
            (_, None) | (None, _) => RetryOutcome::NotFound,
            (Some(JobState::Failed | JobState::Cancelled), Some((job, _))) => RetryOutcome::Retried(Box::new(job)),
            (Some(state), Some(_)) => RetryOutcome::NotRetryable(state),
        })
    }

    /// Cancels any tenant's job (as its owner's cancel does, but the owner
    /// is notified, in-app and by email, once it has stopped).
    pub async fn cancel(&self, id: JobId) -> Result<CancelOutcome, StoreError> {
        {
            // Given back before the read below, which takes a connection of its own.
            let mut client = self.pool.get().await?;
            let tx = client.transaction().await?;
            let found =
                cancel_locked(&tx, LOCK_QUEUED, &[&id.0], id, CancelledBy::Operator, Some(self.endings)).await?;
            self.audit(&tx, "cancel", Some(id), None, u64::from(found.is_some())).await?;
            tx.commit().await?;
        }
        Ok(match self.get(id).await? {
            None => CancelOutcome::NotFound,
            Some((job, _)) if job.state == JobState::Cancelled => CancelOutcome::Cancelled(job),
            Some((job, _)) if job.state.is_terminal() => CancelOutcome::AlreadyEnded(job.state),
            Some((job, _)) => CancelOutcome::Stopping(job),
        })
    }

    /// Counts of unfinished jobs per type and state.
    pub async fn queues(&self) -> Result<Vec<QueueCount>, StoreError> {
        let client = self.pool.get().await?;
        let rows = client.query(&client.prepare_cached(QUEUES).await?, &[]).await?;
        rows.iter()
            .map(|row| {
                Ok(QueueCount {
                    job_type: row.try_get("job_type")?,
                    state: row.try_get("state")?,
                    jobs: row.try_get("jobs")?,
                    oldest_due_seconds: row.try_get("oldest_due_seconds")?,
                })
            })
            .collect()
    }

    /// Writes the action's audit row, in the action's own transaction.
    pub(super) async fn audit(
        &self,
        tx: &Transaction<'_>,
        action: &str,
        job: Option<JobId>,
        filter: Option<&serde_json::Value>,
        affected: u64,
    ) -> Result<(), StoreError> {
        let statement = tx.prepare_cached(AUDIT).await?;
        let affected = i32::try_from(affected).unwrap_or(i32::MAX);
        tx.execute(&statement, &[&self.operator.name.as_str(), &action, &job.map(|j| j.0), &filter, &affected]).await?;
        Ok(())
    }
}

/// Prepares an operator's filtered statement for this call alone, where the
/// rest of the store caches its statements: a cached statement gets a
/// generic plan after a few runs, made for any filter, and that plan walks
/// the whole history newest first. Planned for the filters at hand,
/// `status=failed` walks only the unsuccessful jobs' index, a tenant's filter
/// that tenant's index: milliseconds at a million finished jobs instead of a
/// scan. An operator's request is rare; one more round trip is nothing.
pub(super) async fn planned_for_its_filters(
    client: &impl deadpool_postgres::GenericClient,
    sql: &str,
) -> Result<tokio_postgres::Statement, tokio_postgres::Error> {
    client.prepare(sql).await
}

pub(super) async fn requeue(tx: &Transaction<'_>, ids: &[Uuid]) -> Result<u64, StoreError> {
    let row = tx.query_one(&tx.prepare_cached(REQUEUE).await?, &[&ids]).await?;
    Ok(u64::try_from(row.try_get::<_, i64>("retried")?).unwrap_or(0))
}

fn attempt_error_from_row(row: &Row) -> Result<AttemptError, StoreError> {
    Ok(AttemptError {
        run: row.try_get("run")?,
        attempt: row.try_get("attempt")?,
        error: row.try_get("error")?,
        ended_at: row.try_get("ended_at")?,
    })
}

/// `text` as a LIKE pattern matching itself: `%`, `_` and the escape `\` escaped.
pub(super) fn like_escaped(text: &str) -> String {
    text.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_")
}
