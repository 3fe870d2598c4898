//! The worker side of the queue: claim due jobs fairly and within limits,
//! renew leases, give jobs back at shutdown, measure the queue's depth. (How
//! attempts end is in `finish.rs`.)
//!
//! All of it reads and writes `job_queue`, the narrow table of unfinished
//! jobs (see `migrations/V5__job_queue.sql`), and touches `jobs` only to read
//! a claimed job's params: the history of finished jobs never sits in the
//! claim path.
//!
//! A claim is two statements in one transaction. The first walks a bounded
//! number of tenants with waiting work, from a cursor the caller keeps, and
//! try-locks each one (and each job type with a cluster-wide concurrency)
//! with a transaction-scoped advisory lock; a tenant another claim holds is
//! skipped, never waited for. The second runs with a snapshot taken after
//! those locks were granted, so its count of the tenant's running jobs
//! includes every claim committed before: per-tenant and per-type limits hold
//! exactly across processes, and claims for different tenants never wait on
//! each other.

use std::time::Duration;

use deadpool_postgres::Pool;
use serde_json::Value;
use tokio_postgres::Row;
use uuid::Uuid;

use super::{Completion, Ender, Outcome, StoreError, WORK_CHANNEL};
use crate::domain::{JobId, LeaseId, TenantId, UserId};

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

/// Claim, first statement: the next `$2` tenants with waiting work after `$1`
/// (a loose index scan of `job_queue_due`, one index probe per tenant), each
/// with whether this transaction got its advisory lock; then the limited job
/// types `$3` with the same. Lock key spaces: 0x65720001 tenants, 0x65720002 types.
const LOCK_TENANTS_AND_TYPES: &str = "
WITH RECURSIVE waiting (tenant_id, n) AS (
    (SELECT tenant_id, 1 FROM job_queue
     WHERE state IN ('available', 'retryable') AND tenant_id > $1
     ORDER BY tenant_id LIMIT 1)
    UNION ALL
    SELECT (SELECT q.tenant_id FROM job_queue q
            WHERE q.state IN ('available', 'retryable') AND q.tenant_id > w.tenant_id
            ORDER BY q.tenant_id LIMIT 1),
           w.n + 1
    FROM waiting w
    WHERE w.tenant_id IS NOT NULL AND w.n < $2
)
SELECT 'tenant' AS kind, tenant_id AS name, pg_try_advisory_xact_lock(1701969921, hashtext(tenant_id)) AS locked
FROM waiting WHERE tenant_id IS NOT NULL
UNION ALL
SELECT 'type', job_type, pg_try_advisory_xact_lock(1701969922, hashtext(job_type))
FROM unnest($3::text[]) AS limited (job_type)";

/// Claim, second statement, under the locks of the first: for each locked
/// tenant `$1`, its next due jobs up to its free room (`$2` minus its running
/// jobs), leaving out limited types (`$3`, limits `$4`, locked `$5`) without
/// room; ranked by how many jobs their tenant would then run (fewest first,
/// oldest first within a rank), so a free slot goes to the tenant using the
/// fewest; at most `$6`, and within each limited type's room. Leased to `$7`
/// for `$8` ms. (The `ANY (ARRAY (…))` forms are computed once, before the
/// scans: they keep each tenant's scan an ordered walk of `job_queue_due`
/// that stops at its limit, and the update and the read of params primary-key
/// lookups. As joins, a cached generic plan, which cannot know how few rows
/// `$6` allows, chose to hash-join and sort the whole queue.)
const CLAIM_LOCKED: &str = "
WITH tenants AS MATERIALIZED (  -- counted once per tenant, not per candidate row
    SELECT t.tenant_id,
           (SELECT count(*) FROM job_queue r WHERE r.tenant_id = t.tenant_id AND r.state = 'running') AS running
    FROM unnest($1::text[]) AS t (tenant_id)
), type_room AS (
    SELECT l.job_type,
           CASE WHEN l.locked
                THEN l.concurrency - (SELECT count(*) FROM job_queue r
                                      WHERE r.job_type = l.job_type AND r.state = 'running')
                ELSE 0 END AS room
    FROM unnest($3::text[], $4::int[], $5::bool[]) AS l (job_type, concurrency, locked)
), candidates AS (
    SELECT c.job_id, c.job_type, c.run_at, t.running + c.position AS rank
    FROM tenants t
    CROSS JOIN LATERAL (
        SELECT q.job_id, q.job_type, q.run_at, row_number() OVER (ORDER BY q.run_at, q.job_id) AS position
        FROM job_queue q
        WHERE q.tenant_id = t.tenant_id AND q.state IN ('available', 'retryable') AND q.run_at <= now()
          AND q.job_type <> ALL (ARRAY (SELECT job_type FROM type_room WHERE room <= 0))
        ORDER BY q.run_at, q.job_id
        LIMIT least($6, greatest(0, $2::bigint - t.running))
    ) c
), within_type_room AS (
    SELECT c.job_id, c.run_at, c.rank, f.room,
           row_number() OVER (PARTITION BY c.job_type ORDER BY c.rank, c.run_at, c.job_id) AS nth_of_type
    FROM candidates c LEFT JOIN type_room f ON f.job_type = c.job_type
), picked AS (
    SELECT job_id FROM within_type_room
    WHERE room IS NULL OR nth_of_type <= room
    ORDER BY rank, run_at, job_id
    LIMIT $6
), claimed AS (
    UPDATE job_queue q
    SET state = 'running', attempt = q.attempt + 1, lease_id = gen_random_uuid(), lease_owner = $7,
        lease_expires_at = now() + $8 * interval '1 millisecond', started_at = clock_timestamp()
    WHERE q.job_id = ANY (ARRAY (SELECT job_id FROM picked)) AND q.state IN ('available', 'retryable')
    RETURNING q.job_id, q.attempt, q.lease_id
)
SELECT j.id, j.tenant_id, j.user_id, j.job_type, j.params, c.attempt, c.lease_id
FROM jobs j JOIN claimed c ON c.job_id = j.id
WHERE j.id = ANY (ARRAY (SELECT job_id FROM claimed))";

/// Opens a claim's transaction. Its two statements take their parameters as
/// arrays, whose length the planner cannot see in a generic plan, so a
/// custom plan has the same shape; yet PostgreSQL, finding custom plans
/// cheaper for a claim of one tenant, would re-plan the claim on every call
/// (0.5 ms of a 2 ms idle submission-to-start). Generic plans are made once.
const BEGIN_GENERIC: &str = "BEGIN; SET LOCAL plan_cache_mode = force_generic_plan";

/// Extends the leases `$1` (fenced on lease ids `$2`) by `$3` ms; returns the
/// jobs whose lease was still theirs. Rows are locked in job order, as
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
RETURNING q.job_id";

/// Gives back every job `$1` holds, as if its attempt never started.
const RELEASE_OWNED: &str = "
UPDATE job_queue
SET state = 'available', attempt = attempt - 1, run_at = now(), started_at = NULL,
    lease_id = NULL, lease_owner = NULL, lease_expires_at = NULL
WHERE lease_owner = $1 AND state = 'running'";

/// Jobs waiting (now or after a backoff), running, and the oldest due job's wait.
const DEPTH: &str = "
SELECT (SELECT count(*) FROM job_queue WHERE state IN ('available', 'retryable')) AS waiting,
       (SELECT count(*) FROM job_queue WHERE state = 'running') AS running,
       coalesce((SELECT extract(epoch FROM now() - min(run_at)) FROM job_queue
                 WHERE state IN ('available', 'retryable') AND run_at <= now()), 0)::float8 AS oldest_due_seconds";

/// A pooled connection while a claim's transaction may be open. If the claim
/// is dropped half-way (its future cancelled, say at shutdown), the
/// connection leaves the pool rather than going back to it inside the
/// transaction, advisory locks held, for the next borrower's statements to
/// run in; closing it makes the server roll the transaction back.
struct InTransaction(Option<deadpool_postgres::Client>);

impl InTransaction {
    fn client(&self) -> &deadpool_postgres::Client {
        self.0.as_ref().expect("open until closed")
    }

    /// The transaction has ended (committed or rolled back): back to the pool.
    fn close(mut self) {
        drop(self.0.take());
    }
}

impl Drop for InTransaction {
    fn drop(&mut self) {
        if let Some(client) = self.0.take() {
            drop(deadpool_postgres::Client::take(client));
        }
    }
}

/// The worker side of the queue.
pub struct Queue<'a> {
    pub(super) pool: &'a Pool,
    /// Whether ending a job also writes its completion email to the outbox.
    pub(super) email_outbox: bool,
}

impl Queue<'_> {
    /// Claims up to `request.limit` due jobs (see the module doc for how
    /// limits and fairness hold).
    #[tracing::instrument(skip_all, fields(limit = request.limit))]
    pub async fn claim(&self, request: &ClaimRequest<'_>) -> Result<Claim, StoreError> {
        let open = InTransaction(Some(self.pool.get().await?));
        let claimed = self.claim_in_transaction(open.client(), request).await;
        if claimed.is_err() {
            // Never hand the pool a connection inside a transaction. (After a
            // failed statement the pipelined COMMIT already rolled back, and
            // this only warns.)
            let _ = open.client().batch_execute("ROLLBACK").await;
        }
        open.close();
        claimed
    }

    /// The claim's transaction in two round trips: BEGIN is pipelined with the
    /// locking statement, and COMMIT with the claiming one (each sent without
    /// waiting for the answer to the one before; on a failed statement
    /// PostgreSQL turns the COMMIT into a rollback).
    async fn claim_in_transaction(
        &self,
        client: &deadpool_postgres::Client,
        request: &ClaimRequest<'_>,
    ) -> Result<Claim, StoreError> {
        let lock = client.prepare_cached(LOCK_TENANTS_AND_TYPES).await?;
        let claim = client.prepare_cached(CLAIM_LOCKED).await?;
        let tenants = i32::try_from(request.tenants).unwrap_or(i32::MAX);
        let limits = request.type_limits;
        let lock_params: [&(dyn tokio_postgres::types::ToSql + Sync); 3] =
            [&request.after_tenant, &tenants, &limits.names];
        // `biased`: sent in this order (a statement is sent when first polled).
        let (begun, rows) =
            tokio::join!(biased; client.batch_execute(BEGIN_GENERIC), client.query(&lock, &lock_params));
        begun?;
        let rows = rows?;
        let (mut considered, mut last_tenant, mut locked_tenants) = (0, String::new(), Vec::new());
        let mut locked_types = vec![false; limits.names.len()];
        for row in &rows {
            let (kind, name, locked): (&str, String, bool) =
                (row.try_get("kind")?, row.try_get("name")?, row.try_get("locked")?);
            if kind == "type" {
                if let Some(i) = limits.names.iter().position(|n| *n == name) {
                    locked_types[i] = locked;
                }
                continue;
            }
            considered += 1;
            last_tenant.clone_from(&name);
            if locked {
                locked_tenants.push(name);
            }
        }
        let next_after_tenant = if considered < request.tenants { String::new() } else { last_tenant };
        if locked_tenants.is_empty() {
            client.batch_execute("COMMIT").await?;
            return Ok(Claim { jobs: Vec::new(), next_after_tenant });
        }
        let tenant_limit = i64::from(request.tenant_limit);
        let (limit, lease) = (request.limit as i64, millis(request.lease));
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 8] = [
            &locked_tenants,
            &tenant_limit,
            &limits.names,
            &limits.limits,
            &locked_types,
            &limit,
            &request.owner,
            &lease,
        ];
        let (rows, committed) = tokio::join!(biased; client.query(&claim, &params), client.batch_execute("COMMIT"));
        let rows = rows?;
        committed?;
        let mut jobs = Vec::with_capacity(rows.len());
        let mut unreadable = Vec::new();
        for row in &rows {
            match claimed_from_row(row) {
                Ok(job) => jobs.push(job),
                Err(error) => unreadable.push((row, error)),
            }
        }
        if !unreadable.is_empty() {
            self.fail_unreadable(&unreadable).await;
        }
        Ok(Claim { jobs, next_after_tenant })
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
    /// lease was still theirs. Any other has lost its lease and must stop.
    #[tracing::instrument(skip_all, fields(n = held.len()))]
    pub async fn renew_leases(&self, held: &[(JobId, LeaseId)], duration: Duration) -> Result<Vec<JobId>, StoreError> {
        let (ids, leases): (Vec<Uuid>, Vec<Uuid>) = held.iter().map(|(job, lease)| (job.0, lease.0)).unzip();
        let client = self.pool.get().await?;
        let statement = client.prepare_cached(RENEW_LEASES).await?;
        let rows = client.query(&statement, &[&ids, &leases, &millis(duration)]).await?;
        rows.iter().map(|row| Ok(JobId(row.try_get("job_id")?))).collect()
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
    })
}
