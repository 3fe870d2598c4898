//! The worker side of the queue: claim due jobs fairly and within limits,
//! renew leases, give jobs back at shutdown, measure the queue's depth. (How
//! attempts end is in `finish.rs`.)
//!
//! All of it reads and writes `job_queue`, the narrow table of unfinished
//! jobs (see `migrations/V5__job_queue.sql`), and touches `jobs` only to read
//! a claimed job's params: the history of finished jobs never sits in the
//! claim path.
//!
//! A claim is one call of a PL/pgSQL function, one round trip, of two
//! statements. The first walks a bounded number of tenants with waiting work,
//! from a cursor the caller keeps, and try-locks each one (and each job type
//! with a cluster-wide concurrency) with a transaction-scoped advisory lock;
//! a tenant another claim holds is skipped, never waited for. The second runs
//! with a snapshot taken after those locks were granted, so its count of the
//! tenant's running jobs includes every claim committed before: per-tenant
//! and per-type limits hold exactly across processes, and claims for
//! different tenants never wait on each other.

use std::time::Duration;

use chrono::{DateTime, Utc};
use deadpool_postgres::Pool;
use serde_json::Value;
use tokio_postgres::Row;
use uuid::Uuid;

use super::{Completion, Ender, Outcome, StoreError, WORK_CHANNEL};
use crate::domain::{JobId, JobState, LeaseId, TenantId, UserId};
use crate::jobs::ProgressReport;

/// A job this process now holds a lease on.
#[derive(Debug, Clone)]
pub struct ClaimedJob {
    pub id: JobId,
    pub tenant: TenantId,
    pub user: UserId,
    pub job_type: String,
    pub params: Value,
    /// This attempt's number, 1-based.
    pub attempt: u32,
    pub lease: LeaseId,
    /// When the attempt became due (the database's clock): how long it
    /// waited for a worker is measured from here.
    pub due_at: DateTime<Utc>,
}

/// An attempt running under a lease, as the worker API checks it.
#[derive(Debug, Clone)]
pub struct RunningAttempt {
    pub job_type: String,
    /// 1-based.
    pub attempt: u32,
    pub tenant: TenantId,
    /// The file kept for this attempt (a `ResultFile`; `pending` while a
    /// presigned upload has not been checked yet).
    pub uploaded: Option<Value>,
}

/// Job types whose running jobs are limited across all processes.
#[derive(Debug, Clone, Default)]
pub struct TypeLimits {
    names: Vec<String>,
    limits: Vec<i32>,
}

impl TypeLimits {
    /// The limits, as (job type, most running at once).
    pub fn new(limits: impl IntoIterator<Item = (String, u32)>) -> Self {
        let (names, limits) = limits.into_iter().map(|(n, l)| (n, i32::try_from(l).unwrap_or(i32::MAX))).unzip();
        Self { names, limits }
    }

    /// Whether jobs of type `name` are limited across processes.
    pub fn is_limited(&self, name: &str) -> bool {
        self.names.iter().any(|limited| limited == name)
    }
}

/// What to claim.
#[derive(Debug, Clone)]
pub struct ClaimRequest<'a> {
    pub owner: Uuid,
    /// Most jobs to claim.
    pub limit: usize,
    /// Most jobs one tenant may have running, across all processes.
    pub tenant_limit: u32,
    pub lease: Duration,
    /// Consider tenants after this one in tenant order ("" for the first).
    pub after_tenant: &'a str,
    /// How many tenants with waiting work to consider at most.
    pub tenants: usize,
    pub type_limits: &'a TypeLimits,
    /// Claim only jobs of these types (`None`: any).
    pub only_types: Option<&'a [String]>,
}

/// What a claim took, and where the next claim should start looking.
#[derive(Debug)]
pub struct Claim {
    pub jobs: Vec<ClaimedJob>,
    /// The last tenant considered, or "" when the walk reached the end of
    /// the tenants (the next claim starts from the first again).
    pub next_after_tenant: String,
}

/// How much work the queue holds.
#[derive(Debug, Clone, Copy)]
pub struct QueueDepth {
    pub waiting: i64,
    pub running: i64,
    pub oldest_due_seconds: f64,
}

/// Claims, in one call of the function `errand_claim_due` (see
/// `migrations/V7__claim_function.sql` for its parameters and rows, and how
/// it locks before it counts; V12 added the column `due_at`).
const CLAIM: &str = "SELECT * FROM errand_claim_due($1, $2, $3, $4, $5, $6, $7, $8, $9)";

/// Extends the leases `$1` (fenced on lease ids `$2`) by `$3` ms; returns the
/// jobs whose lease was still theirs, and whether a cancel was asked for. Rows are locked in job order, as
/// `FINISH_FENCED` locks them, so a renewal and a batch of ends sharing
/// rows wait for each other instead of deadlocking.
const RENEW_LEASES: &str = "
WITH held AS (
    SELECT q.job_id
    FROM job_queue q JOIN unnest($1::uuid[], $2::uuid[]) AS h (job_id, lease_id) ON h.job_id = q.job_id
    WHERE q.state = 'running' AND q.lease_id = h.lease_id
    ORDER BY q.job_id
    FOR UPDATE OF q
)
UPDATE job_queue q SET lease_expires_at = now() + $3 * interval '1 millisecond'
FROM held
WHERE q.job_id = held.job_id
RETURNING q.job_id, q.cancel_requested_by IS NOT NULL AS cancel_requested";

/// Writes the progress `$3` of the running attempts `$1` (fenced on their
/// leases `$2`), stamped with the time, locking rows in job order as every
/// other write of running rows does; tells the owners' streams with one
/// NOTIFY (a process runs at most a few hundred jobs: one payload holds
/// their owners' tags).
const WRITE_PROGRESS: &str = "
WITH held AS (
    SELECT q.job_id, p.progress
    FROM job_queue q JOIN unnest($1::uuid[], $2::uuid[], $3::jsonb[]) AS p (job_id, lease_id, progress)
        ON p.job_id = q.job_id
    WHERE q.state = 'running' AND q.lease_id = p.lease_id
    ORDER BY q.job_id
    FOR UPDATE OF q
), written AS (
    UPDATE job_queue q
    SET progress = held.progress || jsonb_build_object('updated_at', now())
    FROM held
    WHERE q.job_id = held.job_id
    RETURNING q.job_id
)
SELECT count(*) AS written,
       pg_notify('errand_progress', string_agg(DISTINCT left(encode(sha256(convert_to(j.tenant_id || chr(31) || j.user_id, 'UTF8')), 'hex'), 16), ','))
FROM written w JOIN jobs j ON j.id = w.job_id
HAVING count(*) > 0";

/// The running attempt of job `$1` under lease `$2`: its type, number,
/// tenant and any file uploaded (or to be uploaded) for it.
const RUNNING_ATTEMPT: &str = "
SELECT job_type, attempt, tenant_id, uploaded_result
FROM job_queue WHERE job_id = $1 AND lease_id = $2 AND state = 'running'";

/// Keeps the file `$3` uploaded for job `$1`'s attempt under lease `$2` (a
/// file it replaces under another key is discarded: see V13).
const KEEP_UPLOAD: &str = "
UPDATE job_queue SET uploaded_result = $3 WHERE job_id = $1 AND lease_id = $2 AND state = 'running'";

/// How job `$1` stands if an attempt under lease `$2` was already ended: the
/// job's end, or (an attempt that will run again) its queue row's state.
const ENDED_UNDER: &str = "
SELECT coalesce(q.state, j.state) AS state
FROM jobs j LEFT JOIN job_queue q ON q.job_id = j.id
WHERE j.id = $1 AND (j.ended_lease_id = $2 OR q.last_lease_id = $2)";

/// Gives back every job `$1` holds, as if its attempt never started.
const RELEASE_OWNED: &str = "
UPDATE job_queue
SET state = 'available', attempt = attempt - 1, run_at = now(), started_at = NULL,
    lease_id = NULL, lease_owner = NULL, lease_expires_at = NULL,
    uploaded_result = NULL  -- the next attempt's result is its own (V13 discards this one's)
WHERE lease_owner = $1 AND state = 'running'";

/// Jobs waiting (now or after a backoff), running, and the oldest due job's wait.
const DEPTH: &str = "
SELECT (SELECT count(*) FROM job_queue WHERE state IN ('available', 'retryable')) AS waiting,
       (SELECT count(*) FROM job_queue WHERE state = 'running') AS running,
       coalesce((SELECT extract(epoch FROM now() - min(run_at)) FROM job_queue
                 WHERE state IN ('available', 'retryable') AND run_at <= now()), 0)::float8 AS oldest_due_seconds";

/// The worker side of the queue.
pub struct Queue<'a> {
    pub(super) pool: &'a Pool,
    /// Whether ending a job also writes its completion email to the outbox.
    pub(super) email_outbox: bool,
}

impl Queue<'_> {
    /// Claims up to `request.limit` due jobs (see the module doc for how
    /// limits and fairness hold), in one round trip.
    #[tracing::instrument(skip_all, fields(limit = request.limit))]
    pub async fn claim(&self, request: &ClaimRequest<'_>) -> Result<Claim, StoreError> {
        let client = self.pool.get().await?;
        let claim = client.prepare_cached(CLAIM).await?;
        let limits = request.type_limits;
        let tenants = i32::try_from(request.tenants).unwrap_or(i32::MAX);
        let tenant_limit = i64::from(request.tenant_limit);
        let (limit, lease) = (i64::try_from(request.limit).unwrap_or(i64::MAX), millis(request.lease));
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 9] = [
            &request.after_tenant,
            &tenants,
            &tenant_limit,
            &limits.names,
            &limits.limits,
            &limit,
            &request.owner,
            &lease,
            &request.only_types,
        ];
        let rows = client.query(&claim, &params).await?;
        drop(client);
        let cursor = rows.iter().find(|row| row.try_get::<_, &str>("kind").is_ok_and(|kind| kind == "cursor"));
        let next_after_tenant = cursor
            .map(|row| row.try_get("next_after_tenant"))
            .transpose()?
            .ok_or_else(|| StoreError::Corrupt("a claim returned no cursor".into()))?;
        Ok(Claim { jobs: self.claimed_jobs(&rows).await?, next_after_tenant })
    }

    /// The jobs in a claim's rows of kind `job`. One that cannot be read is
    /// failed (see `fail_unreadable`) rather than failing the claim.
    pub(super) async fn claimed_jobs(&self, rows: &[Row]) -> Result<Vec<ClaimedJob>, StoreError> {
        let mut jobs = Vec::with_capacity(rows.len());
        let mut unreadable = Vec::new();
        for row in rows {
            if row.try_get::<_, &str>("kind")? != "job" {
                continue;
            }
            match claimed_from_row(row) {
                Ok(job) => jobs.push(job),
                Err(error) => unreadable.push((row, error)),
            }
        }
        if !unreadable.is_empty() {
            self.fail_unreadable(&unreadable).await;
        }
        Ok(jobs)
    }

    /// Ends claimed jobs whose record cannot be read back (a job stored by an
    /// older errand that this one cannot decode): failed with their
    /// notification, rather than failing the whole claim and, through
    /// rescues, every later one.
    async fn fail_unreadable(&self, unreadable: &[(&Row, StoreError)]) {
        let mut batch = Vec::with_capacity(unreadable.len());
        for (row, error) in unreadable {
            let (Ok(id), Ok(lease)) = (row.try_get("id"), row.try_get("lease_id")) else { continue };
            tracing::error!(job = %JobId(id), %error, "a claimed job cannot be read; failing it");
            let outcome = Outcome::Failed { error: "the job's record could not be read".into() };
            batch.push(Completion { id: JobId(id), lease: LeaseId(lease), outcome, ender: Ender::Worker });
        }
        if let Err(error) = self.finish_many_if_running(&batch).await {
            tracing::warn!(%error, "could not fail unreadable jobs; their leases will expire");
        }
    }

    /// Extends the leases of `held` in one statement; returns the jobs whose
    /// lease was still theirs, each with whether a cancel was asked for. Any
    /// other has lost its lease and must stop.
    #[tracing::instrument(skip_all, fields(n = held.len()))]
    pub async fn renew_leases(
        &self,
        held: &[(JobId, LeaseId)],
        duration: Duration,
    ) -> Result<Vec<(JobId, bool)>, StoreError> {
        let (ids, leases): (Vec<Uuid>, Vec<Uuid>) = held.iter().map(|(job, lease)| (job.0, lease.0)).unzip();
        let client = self.pool.get().await?;
        let statement = client.prepare_cached(RENEW_LEASES).await?;
        let rows = client.query(&statement, &[&ids, &leases, &millis(duration)]).await?;
        rows.iter().map(|row| Ok((JobId(row.try_get("job_id")?), row.try_get("cancel_requested")?))).collect()
    }

    /// Writes the latest progress of running attempts, each fenced on its
    /// lease, in one statement (see `WRITE_PROGRESS`).
    #[tracing::instrument(skip_all, fields(n = changed.len()))]
    /// Returns how many of them were still held under their lease.
    pub async fn write_progress(&self, changed: &[(JobId, LeaseId, ProgressReport)]) -> Result<u64, StoreError> {
        let ids: Vec<Uuid> = changed.iter().map(|(job, _, _)| job.0).collect();
        let leases: Vec<Uuid> = changed.iter().map(|(_, lease, _)| lease.0).collect();
        let reports: Vec<Value> =
            changed.iter().map(|(_, _, report)| serde_json::to_value(report).unwrap_or(Value::Null)).collect();
        let client = self.pool.get().await?;
        let statement = client.prepare_cached(WRITE_PROGRESS).await?;
        let row = client.query_opt(&statement, &[&ids, &leases, &reports]).await?;
        Ok(match row {
            Some(row) => u64::try_from(row.try_get::<_, i64>("written")?).unwrap_or(0),
            None => 0,
        })
    }

    /// Job `id`'s attempt running under `lease`, if any.
    pub async fn running_attempt(&self, id: JobId, lease: LeaseId) -> Result<Option<RunningAttempt>, StoreError> {
        let client = self.pool.get().await?;
        let row = client.query_opt(&client.prepare_cached(RUNNING_ATTEMPT).await?, &[&id.0, &lease.0]).await?;
        row.map(|row| {
            let attempt: i32 = row.try_get("attempt")?;
            Ok(RunningAttempt {
                job_type: row.try_get("job_type")?,
                attempt: u32::try_from(attempt).unwrap_or(0),
                tenant: TenantId::parse(row.try_get::<_, String>("tenant_id")?)?,
                uploaded: row.try_get("uploaded_result")?,
            })
        })
        .transpose()
    }

    /// Keeps `file` as what job `id`'s attempt under `lease` uploaded;
    /// `false` if the lease is no longer held.
    pub async fn keep_upload(&self, id: JobId, lease: LeaseId, file: &Value) -> Result<bool, StoreError> {
        let client = self.pool.get().await?;
        Ok(client.execute(&client.prepare_cached(KEEP_UPLOAD).await?, &[&id.0, &lease.0, file]).await? == 1)
    }

    /// How job `id` stands if its attempt under `lease` already ended (a
    /// worker's retried call); `None` if that lease never ended it.
    pub async fn ended_under(&self, id: JobId, lease: LeaseId) -> Result<Option<JobState>, StoreError> {
        let client = self.pool.get().await?;
        let row = client.query_opt(&client.prepare_cached(ENDED_UNDER).await?, &[&id.0, &lease.0]).await?;
        Ok(row.map(|row| row.try_get("state")).transpose()?)
    }

    /// Hands back every job `owner` still holds, as if its attempt never
    /// started, so another process takes it at once. Only call this once the
    /// owner's workers for those jobs have been stopped.
    pub async fn release_all(&self, owner: Uuid) -> Result<u64, StoreError> {
        let client = self.pool.get().await?;
        let n = client.execute(RELEASE_OWNED, &[&owner]).await?;
        if n > 0 {
            self.announce_work().await?;
        }
        Ok(n)
    }

    /// Jobs waiting and running across all tenants, and how long the oldest
    /// due job has waited: for `/metrics`.
    pub async fn depth(&self) -> Result<QueueDepth, StoreError> {
        let client = self.pool.get().await?;
        let row = client.query_one(&client.prepare_cached(DEPTH).await?, &[]).await?;
        Ok(QueueDepth {
            waiting: row.try_get("waiting")?,
            running: row.try_get("running")?,
            oldest_due_seconds: row.try_get("oldest_due_seconds")?,
        })
    }

    /// Tells every errand process listening that there is work to claim.
    pub async fn announce_work(&self) -> Result<(), StoreError> {
        let client = self.pool.get().await?;
        // One round trip (a parameterised statement would take two).
        client.batch_execute(&format!("NOTIFY {WORK_CHANNEL}")).await?;
        Ok(())
    }
}

pub(super) fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn claimed_from_row(row: &Row) -> Result<ClaimedJob, StoreError> {
    let attempt: i32 = row.try_get("attempt")?;
    Ok(ClaimedJob {
        id: JobId(row.try_get("id")?),
        tenant: TenantId::parse(row.try_get::<_, String>("tenant_id")?)?,
        user: UserId::parse(row.try_get::<_, String>("user_id")?)?,
        job_type: row.try_get("job_type")?,
        params: row.try_get("params")?,
        attempt: u32::try_from(attempt).map_err(|_| StoreError::Corrupt(format!("attempt {attempt}")))?,
        lease: LeaseId(row.try_get("lease_id")?),
        due_at: row.try_get("due_at")?,
    })
}
