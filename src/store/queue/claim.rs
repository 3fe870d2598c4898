//! Claiming due jobs, fairly and within limits.
//!
//! All of it reads and writes `job_queue`, the narrow table of unfinished
//! jobs, and touches `jobs` only to read a claimed job's params: the history
//! of finished jobs never sits in the claim path.
//!
//! A claim is one call of a PL/pgSQL function, one round trip, of two
//! statements. The first walks a bounded number of tenants with waiting work,
//! from a cursor the caller keeps, and try-locks each one (and each job type
//! with a cluster-wide concurrency) with a transaction-scoped advisory lock;
//! a tenant another claim holds is skipped, never waited for. The second runs
//! with a snapshot taken after those locks were granted, so its count of the
//! tenant's running jobs includes every claim committed before: per-tenant
//! and per-type limits hold exactly across processes, and claims for
//! different tenants never wait on each other. Inside a tenant, its jobs
//! are taken in its line's order (users in turn) and no user runs more than
//! the claim's `user_limit` (`errand_turn`, `errand_tenant_next`).
//!
//! Every claimer (the dispatcher, the Intake beside a batch of submissions,
//! the worker API's pulls) claims through one [`ClaimSpec`].

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::Value;
use tokio_postgres::Row;
use uuid::Uuid;

use crate::domain::{ExportFormat, JobId, JobTrace, LeaseId, Outcome, TenantId, UserId};
use crate::store::queue::finish::{Completion, Ender};
use crate::store::queue::lost_claims::LostClaim;
use crate::store::queue::millis;
use crate::store::{Queue, StoreError};

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
    /// An export's file format, as asked for.
    pub format: Option<ExportFormat>,
    /// The occurrence it was made for, if a schedule made it.
    pub scheduled_for: Option<DateTime<Utc>>,
    /// The checkpoint an earlier attempt of the run recorded: this one resumes there.
    pub checkpoint: Option<Value>,
    /// The trace of the request that recorded it (`telemetry::traces`).
    pub trace: Option<JobTrace>,
}

impl ClaimedJob {
    /// Each job's type and trace, for the claim's span (`telemetry::traces::record_claim`).
    pub fn traces(jobs: &[Self]) -> impl ExactSizeIterator<Item = (&str, Option<&JobTrace>)> {
        jobs.iter().map(|job| (job.job_type.as_str(), job.trace.as_ref()))
    }
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
    /// Of those, most jobs of one user (see `errand_tenant_next`).
    pub user_limit: u32,
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

/// What to claim beside a batch of submissions.
#[derive(Debug, Clone)]
pub struct BatchClaim<'a> {
    pub owner: Uuid,
    /// Most jobs to claim.
    pub limit: usize,
    /// Most jobs one tenant may have running, across all processes.
    pub tenant_limit: u32,
    /// Of those, most jobs of one user (see `errand_tenant_next`).
    pub user_limit: u32,
    pub lease: std::time::Duration,
    /// Claim only jobs of these types (run in this process, no cluster-wide limit).
    pub types: &'a [String],
}

/// What every claim of one claimer asks, whoever sends it: the lease owner
/// it claims for, the limits, and the job types it takes.
#[derive(Debug, Clone)]
pub struct ClaimSpec {
    pub owner: Uuid,
    /// Most jobs one tenant may have running, across all processes.
    pub tenant_limit: u32,
    /// Of those, most jobs of one user (see `errand_tenant_next`).
    pub user_limit: u32,
    pub lease: Duration,
    pub type_limits: Arc<TypeLimits>,
    /// The job types this claimer takes.
    pub types: Arc<Vec<String>>,
    /// Of those, the types without a cluster-wide limit: those a claim
    /// beside a batch of submissions takes.
    unlimited_types: Arc<Vec<String>>,
}

/// Fewest tenants one claim considers: enough that one tenant at its limit
/// does not leave a small claim empty-handed.
const MIN_TENANTS_PER_CLAIM: usize = 16;
/// Most tenants one claim considers, however many jobs it asks for.
const MAX_TENANTS_PER_CLAIM: usize = 256;

impl ClaimSpec {
    pub fn new(
        owner: Uuid,
        (tenant_limit, user_limit): (u32, u32),
        lease: Duration,
        type_limits: Arc<TypeLimits>,
        types: Vec<String>,
    ) -> Self {
        let unlimited_types = types.iter().filter(|name| !type_limits.is_limited(name)).cloned().collect();
        Self {
            owner,
            tenant_limit,
            user_limit,
            lease,
            type_limits,
            types: Arc::new(types),
            unlimited_types: Arc::new(unlimited_types),
        }
    }

    /// The same terms for another lease owner, taking only `types`.
    pub fn for_owner(&self, owner: Uuid, types: Vec<String>) -> Self {
        Self::new(owner, (self.tenant_limit, self.user_limit), self.lease, self.type_limits.clone(), types)
    }

    /// A claim of up to `limit` jobs, walking the tenants after `after_tenant`.
    pub fn request<'a>(&'a self, limit: usize, after_tenant: &'a str) -> ClaimRequest<'a> {
        ClaimRequest {
            owner: self.owner,
            limit,
            tenant_limit: self.tenant_limit,
            user_limit: self.user_limit,
            lease: self.lease,
            after_tenant,
            tenants: limit.clamp(MIN_TENANTS_PER_CLAIM, MAX_TENANTS_PER_CLAIM),
            type_limits: &self.type_limits,
            only_types: Some(&self.types),
        }
    }

    /// A claim of up to `limit` jobs beside a batch of submissions, of the
    /// types it may take there.
    pub fn beside_submissions(&self, limit: usize) -> BatchClaim<'_> {
        BatchClaim {
            owner: self.owner,
            limit,
            tenant_limit: self.tenant_limit,
            user_limit: self.user_limit,
            lease: self.lease,
            types: &self.unlimited_types,
        }
    }
}

/// Claims, in one call of the function `errand_claim_due` (see
/// `migrations/` for its parameters and rows, and how it locks before it
/// counts), under the claim id $11 (see `lost_claims.rs`).
const CLAIM: &str = "SELECT * FROM errand_claim_due($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)";

impl Queue<'_> {
    /// Claims up to `request.limit` due jobs (see the module doc for how
    /// limits and fairness hold), in one round trip. If the connection breaks
    /// before the answer, what the claim took, if it committed, is given
    /// back (see `lost_claims.rs`).
    #[tracing::instrument(skip_all, fields(limit = request.limit))]
    pub async fn claim(&self, request: &ClaimRequest<'_>) -> Result<Claim, StoreError> {
        let client = self.pool.get().await?;
        let claim = client.prepare_cached(CLAIM).await?;
        let limits = request.type_limits;
        let tenants = i32::try_from(request.tenants).unwrap_or(i32::MAX);
        let (tenant_limit, user_limit) = (i64::from(request.tenant_limit), i64::from(request.user_limit));
        let (limit, lease) = (i64::try_from(request.limit).unwrap_or(i64::MAX), millis(request.lease));
        let claim_id = Uuid::new_v4();
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 11] = [
            &request.after_tenant,
            &tenants,
            &tenant_limit,
            &user_limit,
            &limits.names,
            &limits.limits,
            &limit,
            &request.owner,
            &lease,
            &request.only_types,
            &claim_id,
        ];
        let rows = client.query(&claim, &params).await;
        drop(client);
        let lost = LostClaim::Jobs { owner: request.owner, claim: claim_id, lease: request.lease };
        let rows = lost.settle(self.pool, rows)?;
        let cursor = rows.iter().find(|row| row.try_get::<_, &str>("kind").is_ok_and(|kind| kind == "cursor"));
        let next_after_tenant = cursor
            .map(|row| row.try_get("next_after_tenant"))
            .transpose()?
            .ok_or_else(|| StoreError::Corrupt("a claim returned no cursor".into()))?;
        Ok(Claim { jobs: self.claimed_jobs(&rows).await?, next_after_tenant })
    }

    /// The jobs in a claim's rows of kind `job`, their sealed params opened.
    /// One that cannot be read (or whose params do not open) is failed (see
    /// `fail_unreadable`) rather than failing the claim.
    pub(in crate::store) async fn claimed_jobs(&self, rows: &[Row]) -> Result<Vec<ClaimedJob>, StoreError> {
        let mut jobs = Vec::with_capacity(rows.len());
        let mut unreadable = Vec::new();
        for row in rows {
            if row.try_get::<_, &str>("kind")? != "job" {
                continue;
            }
            match claimed_from_row(row) {
                Ok(mut job) => match self
                    .sealer
                    .open(job.tenant.as_str(), std::mem::take(&mut job.params), crate::domain::sealing::Purpose::Params)
                    .await
                {
                    Ok(params) => jobs.push(ClaimedJob { params, ..job }),
                    Err(error @ StoreError::Corrupt(_)) => unreadable.push((row, error)),
                    Err(error) => return Err(error),
                },
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
        // The column's CHECK holds it to the formats errand writes.
        format: row.try_get::<_, Option<&str>>("format")?.and_then(|f| f.parse().ok()),
        scheduled_for: row.try_get("scheduled_for")?,
        checkpoint: row.try_get("checkpoint")?,
        trace: crate::store::jobs::job_trace_from_row(row)?,
    })
}
