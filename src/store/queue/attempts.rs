//! The worker side of the queue, apart from claims (`claim.rs`) and ends
//! (`finish.rs`): renew leases, write progress, keep an attempt's upload,
//! give jobs back at shutdown, measure the queue's depth.
//!
//! All of it reads and writes `job_queue`, the narrow table of unfinished
//! jobs (see `migrations/V1__baseline.sql` for who moves them between states).

use std::time::Duration;

use deadpool_postgres::Pool;
use serde_json::Value;
use uuid::Uuid;

use crate::domain::ProgressReport;
use crate::domain::{JobId, JobState, LeaseId, TenantId};
use crate::store::pool::server::horizon_holders;
use crate::store::queue::millis;
use crate::store::{Queue, StoreError, WORK_CHANNEL};

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

/// How much work the queue holds.
#[derive(Debug, Clone, Copy)]
pub struct QueueDepth {
    pub waiting: i64,
    pub running: i64,
    pub oldest_due_seconds: f64,
    /// How long the oldest transaction holding a snapshot of errand's
    /// database has been open.
    pub oldest_snapshot_seconds: f64,
    /// Pauses that hold now: operators', and the breakers'.
    pub paused_by_operators: i64,
    pub paused_by_breakers: i64,
}

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
       pg_notify('errand_progress', string_agg(DISTINCT errand_owner_tag(j.tenant_id, j.user_id), ','))
FROM written w JOIN jobs j ON j.id = w.job_id
HAVING count(*) > 0";

/// The running attempt of job `$1` under lease `$2`: its type, number,
/// tenant and any file uploaded (or to be uploaded) for it.
const RUNNING_ATTEMPT: &str = "
SELECT job_type, attempt, tenant_id, uploaded_result
FROM job_queue WHERE job_id = $1 AND lease_id = $2 AND state = 'running'";

/// Keeps the file `$3` uploaded for job `$1`'s attempt under lease `$2` (a
/// file it replaces under another key is discarded: see `errand_discard_upload`).
const KEEP_UPLOAD: &str = "
UPDATE job_queue SET uploaded_result = $3 WHERE job_id = $1 AND lease_id = $2 AND state = 'running'";

/// How job `$1` stands if an attempt under lease `$2` was already ended: the
/// job's end, or (an attempt that will run again) its queue row's state.
const ENDED_UNDER: &str = "
SELECT coalesce(q.state, j.state) AS state
FROM jobs j LEFT JOIN job_queue q ON q.job_id = j.id
WHERE j.id = $1 AND (j.ended_lease_id = $2 OR q.last_lease_id = $2)";

/// Records the checkpoint `$3` (its progress then: `$4`) of job `$1`'s
/// attempt under lease `$2`; a null `$3` forgets it (the next attempt starts over).
const WRITE_CHECKPOINT: &str = "
UPDATE job_queue
SET checkpoint = CASE WHEN $3::jsonb IS NULL THEN NULL
                      ELSE jsonb_build_object('value', $3::jsonb, 'done', $4::bigint, 'at', now()) END
WHERE job_id = $1 AND lease_id = $2 AND state = 'running'";

/// Gives back every job owner `$1` holds (only those claim `$2` took, unless
/// it is null; only those under the leases `$3`, unless null), as if its
/// attempt never started.
const RELEASE: &str = "
UPDATE job_queue
SET state = 'available', attempt = attempt - 1, run_at = now(), started_at = NULL,
    lease_id = NULL, lease_owner = NULL, lease_expires_at = NULL, claim_id = NULL,
    uploaded_result = NULL  -- the next attempt's result is its own (errand_discard_upload discards this one's)
WHERE lease_owner = $1 AND state = 'running' AND ($2::uuid IS NULL OR claim_id = $2)
  AND ($3::uuid[] IS NULL OR lease_id = ANY ($3))";

/// Jobs waiting (now or after a backoff), running, and the oldest due job's wait.
const DEPTH: &str = concat!(
    "
SELECT (SELECT count(*) FROM job_queue WHERE state IN ('available', 'retryable')) AS waiting,
       (SELECT count(*) FROM job_queue WHERE state = 'running') AS running,
       coalesce((SELECT extract(epoch FROM now() - min(run_at)) FROM job_queue
                 WHERE state IN ('available', 'retryable') AND run_at <= now()), 0)::float8 AS oldest_due_seconds,
       -- How long the oldest transaction holding a snapshot of this database
       -- has been open: what no vacuum may remove from then on stays, and
       -- every claim walks past the jobs ended since.
       greatest(0, coalesce((SELECT extract(epoch FROM now() - min(a.xact_start)) FROM ",
    horizon_holders!(),
    "), 0))::float8 AS oldest_snapshot_seconds,
       count(*) FILTER (WHERE p.paused_by <> 'errand:breaker') AS paused_by_operators,
       count(*) FILTER (WHERE p.paused_by = 'errand:breaker') AS paused_by_breakers
FROM job_pauses_now p"
);

impl Queue<'_> {
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

    /// Records `value` as how far job `id`'s attempt under `lease` has come
    /// (`done` its progress then), for the run's next attempt to resume
    /// from; `None` forgets it. `false` if the lease is no longer held.
    pub async fn write_checkpoint(
        &self,
        id: JobId,
        lease: LeaseId,
        value: Option<&Value>,
        done: u64,
    ) -> Result<bool, StoreError> {
        let client = self.pool.get().await?;
        let done = i64::try_from(done).unwrap_or(i64::MAX);
        let statement = client.prepare_cached(WRITE_CHECKPOINT).await?;
        Ok(client.execute(&statement, &[&id.0, &lease.0, &value, &done]).await? == 1)
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
        release(self.pool, owner, Released::All).await
    }

    /// Hands back the jobs `owner` holds under `leases` (claimed and not
    /// started), as if their attempts never started.
    pub async fn release_unstarted(&self, owner: Uuid, leases: &[LeaseId]) -> Result<u64, StoreError> {
        release(self.pool, owner, Released::Leases(leases)).await
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
            oldest_snapshot_seconds: row.try_get("oldest_snapshot_seconds")?,
            paused_by_operators: row.try_get("paused_by_operators")?,
            paused_by_breakers: row.try_get("paused_by_breakers")?,
        })
    }

    /// Tells every errand process listening that there is work to claim.
    pub async fn announce_work(&self) -> Result<(), StoreError> {
        announce_work(self.pool).await
    }
}

/// Which of an owner's jobs a release hands back.
#[derive(Debug, Clone, Copy)]
pub(in crate::store) enum Released<'a> {
    All,
    /// Those one claim took.
    Claim(Uuid),
    /// Those held under these leases.
    Leases(&'a [LeaseId]),
}

/// Hands back `which` of the jobs `owner` holds, as if their attempts never
/// started, and tells the processes.
pub(in crate::store) async fn release(pool: &Pool, owner: Uuid, which: Released<'_>) -> Result<u64, StoreError> {
    let (claim, leases) = match which {
        Released::All => (None, None),
        Released::Claim(claim) => (Some(claim), None),
        Released::Leases(leases) => (None, Some(leases.iter().map(|lease| lease.0).collect::<Vec<_>>())),
    };
    let client = pool.get().await?;
    let n = client.execute(&client.prepare_cached(RELEASE).await?, &[&owner, &claim, &leases]).await?;
    drop(client);
    if n > 0 {
        announce_work(pool).await?;
    }
    Ok(n)
}

/// Wakes every process's dispatcher: there is work to claim.
async fn announce_work(pool: &Pool) -> Result<(), StoreError> {
    let client = pool.get().await?;
    // One round trip (a parameterised statement would take two).
    client.batch_execute(&format!("NOTIFY {WORK_CHANNEL}")).await?;
    Ok(())
}
