//! Reads of one caller's jobs: tenant and user are bound into
//! every statement from the [`Caller`], never from request input.

use tokio_postgres::Row;
use uuid::Uuid;

use super::StoreError;
use crate::domain::{Caller, Job, JobId, JobState, JobStatus, JobTrace, ScheduleId, TenantId, TraceParent, UserId};

/// Whether a waiting job `l` (of `jobs_live`) is kept waiting by an
/// operator: its scope paused (`errand_pauses_holding`) or the job held
/// (`held_by`). Read for its owner's views and the operators', where it
/// shows as the state `paused`.
macro_rules! held_back {
    () => {
        "(l.state IN ('available', 'retryable')
          AND (l.held_by IS NOT NULL OR EXISTS (SELECT 1 FROM errand_pauses_holding(l.tenant_id, l.job_type))))
          AS held_back"
    };
}
pub(super) use held_back;

/// One of the caller's jobs, with its live state.
const GET_OWN: &str = concat!(
    "
SELECT id, tenant_id, user_id, job_type, params, state, attempt, max_attempts, run_at, result, error_message,
       created_at, finished_at, progress, cancel_requested_by, schedule_id, scheduled_for,
       priority, format, resumed_from, ",
    held_back!(),
    "
FROM jobs_live l
WHERE tenant_id = $1 AND user_id = $2 AND id = $3"
);

/// A page of the caller's jobs, newest first, optionally of some states (`$3`)
/// and one type (`$4`), older than the job `$5`; `$6` rows at most.
const LIST_OWN: &str = concat!(
    "
SELECT id, tenant_id, user_id, job_type, params, state, attempt, max_attempts, run_at, result, error_message,
       created_at, finished_at, progress, cancel_requested_by, schedule_id, scheduled_for,
       priority, format, resumed_from, ",
    held_back!(),
    "
FROM jobs_live l
WHERE tenant_id = $1 AND user_id = $2
  AND ($3::job_state[] IS NULL OR state = ANY ($3))
  AND ($4::text IS NULL OR job_type = $4)
  AND ($5::uuid IS NULL OR id < $5)
ORDER BY id DESC
LIMIT $6"
);

/// The progress of the caller's running jobs that reported some (a walk of
/// the tenant's running queue rows: it does not grow with history).
const RUNNING_PROGRESS: &str = "
SELECT q.job_id, q.progress
FROM job_queue q JOIN jobs j ON j.id = q.job_id
WHERE q.tenant_id = $1 AND q.state = 'running' AND q.progress IS NOT NULL AND j.user_id = $2";

/// Filters and page of a job list.
#[derive(Debug, Clone, Default)]
pub struct JobFilter {
    pub status: Option<JobStatus>,
    pub job_type: Option<String>,
    /// Only jobs older than this one (the previous page's last job).
    pub before: Option<JobId>,
    pub limit: u32,
}

/// One page of a job list, newest first.
#[derive(Debug)]
pub struct JobPage {
    pub jobs: Vec<Job>,
    /// The last job of this page, when there may be more.
    pub next_before: Option<JobId>,
}

impl JobPage {
    /// A page of `limit` jobs from up to `limit + 1` fetched: one more than
    /// the page holds says another page follows.
    pub(super) fn of(jobs: Vec<Job>, limit: u32) -> Self {
        let (jobs, next_before) = crate::store::jobs::keyset_page(jobs, limit, |job| job.id);
        Self { jobs, next_before }
    }
}

/// The jobs of one user of one tenant.
pub struct CallerJobs<'a> {
    pub(super) pool: crate::store::TenantPool,
    pub(super) caller: &'a Caller,
    pub(super) sealer: &'a crate::store::Sealer,
}

impl<'a> CallerJobs<'a> {
    pub(super) fn new(pool: crate::store::TenantPool, caller: &'a Caller, sealer: &'a crate::store::Sealer) -> Self {
        Self { pool, caller, sealer }
    }

    /// The caller's job `id`, or `None` whether it is missing or someone else's.
    pub async fn get(&self, id: JobId) -> Result<Option<Job>, StoreError> {
        super::retry_if_connection_lost(|| self.get_once(id)).await
    }

    async fn get_once(&self, id: JobId) -> Result<Option<Job>, StoreError> {
        let rows = self.pool.read(GET_OWN, &[&self.caller.tenant.as_str(), &self.caller.user.as_str(), &id.0]).await?;
        let mut job = rows.first().map(held_job_from_row).transpose()?;
        self.sealer.open_jobs(job.as_mut_slice()).await?;
        Ok(job)
    }

    /// The latest progress of each of the caller's running jobs that reported any.
    pub async fn running_progress(&self) -> Result<Vec<(JobId, serde_json::Value)>, StoreError> {
        let client = self.pool.get().await?;
        let statement = client.prepare_cached(RUNNING_PROGRESS).await?;
        let rows = client.query(&statement, &[&self.caller.tenant.as_str(), &self.caller.user.as_str()]).await?;
        rows.iter().map(|row| Ok((JobId(row.try_get("job_id")?), row.try_get("progress")?))).collect()
    }

    /// A page of the caller's jobs, newest first (keyset pagination on the v7 id).
    pub async fn list(&self, filter: &JobFilter) -> Result<JobPage, StoreError> {
        super::retry_if_connection_lost(|| self.list_once(filter)).await
    }

    async fn list_once(&self, filter: &JobFilter) -> Result<JobPage, StoreError> {
        let client = self.pool.get().await?;
        let states: Option<Vec<JobState>> = filter.status.map(|s| s.states().to_vec());
        // One extra row tells whether another page follows.
        let fetch = i64::from(filter.limit) + 1;
        let statement = client.prepare_cached(LIST_OWN).await?;
        let rows = client
            .query(
                &statement,
                &[
                    &self.caller.tenant.as_str(),
                    &self.caller.user.as_str(),
                    &states,
                    &filter.job_type,
                    &filter.before.map(|id| id.0),
                    &fetch,
                ],
            )
            .await?;
        let mut jobs = rows.iter().map(held_job_from_row).collect::<Result<Vec<_>, _>>()?;
        self.sealer.open_jobs(&mut jobs).await?;
        Ok(JobPage::of(jobs, filter.limit))
    }
}

/// A job read with [`held_back!`]: whether an operator keeps it waiting.
pub(super) fn held_job_from_row(row: &Row) -> Result<Job, StoreError> {
    Ok(Job { held_back: row.try_get("held_back")?, ..job_from_row(row)? })
}

/// A job's trace, from a row's `traceparent` and `trace_linked`
/// (`errand_trace_linked` in `migrations/`); the column's
/// CHECK holds `traceparent` to the form errand writes, anything else is no trace.
pub(super) fn job_trace_from_row(row: &Row) -> Result<Option<JobTrace>, StoreError> {
    let Some(parent) = row.try_get::<_, Option<&str>>("traceparent")?.and_then(TraceParent::parse) else {
        return Ok(None);
    };
    Ok(Some(JobTrace { parent, linked: row.try_get::<_, Option<bool>>("trace_linked")?.unwrap_or(false) }))
}

pub(super) fn job_from_row(row: &Row) -> Result<Job, StoreError> {
    Ok(Job {
        id: JobId(row.try_get::<_, Uuid>("id")?),
        tenant: TenantId::parse(row.try_get::<_, String>("tenant_id")?)?,
        user: UserId::parse(row.try_get::<_, String>("user_id")?)?,
        job_type: row.try_get("job_type")?,
        // Params that no longer decode (stored before errand refused them)
        // show as null rather than making the caller's whole list fail.
        params: row.try_get("params").unwrap_or_else(|error| {
            tracing::warn!(%error, "a job's params cannot be read");
            serde_json::Value::Null
        }),
        state: row.try_get("state")?,
        attempt: row.try_get("attempt")?,
        max_attempts: row.try_get("max_attempts")?,
        run_at: row.try_get("run_at")?,
        result: row.try_get("result")?,
        error_message: row.try_get("error_message")?,
        created_at: row.try_get("created_at")?,
        finished_at: row.try_get("finished_at")?,
        progress: row.try_get("progress")?,
        cancel_requested: row.try_get::<_, Option<&str>>("cancel_requested_by")?.is_some(),
        schedule: match row.try_get::<_, Option<Uuid>>("schedule_id")? {
            Some(id) => Some((ScheduleId(id), row.try_get("scheduled_for")?)),
            None => None,
        },
        priority: row.try_get("priority")?,
        // The column's CHECK holds it to the formats errand writes.
        format: row.try_get::<_, Option<&str>>("format")?.and_then(|f| f.parse().ok()),
        resumed_from: row.try_get::<_, Option<i64>>("resumed_from")?.and_then(|n| u64::try_from(n).ok()),
        held_back: false,
        held_by: None,
        acted_by: None,
    })
}

/// A page of at most `limit` rows, from up to `limit + 1` fetched (one more
/// than the page holds says another page follows): the page, and its last
/// row's key when another follows.
pub(super) fn keyset_page<T, K>(mut rows: Vec<T>, limit: u32, key: impl Fn(&T) -> K) -> (Vec<T>, Option<K>) {
    if rows.len() <= limit as usize {
        return (rows, None);
    }
    rows.truncate(limit as usize);
    let next = rows.last().map(key);
    (rows, next)
}
