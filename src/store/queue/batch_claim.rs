//! Claims beside submissions: a batch of new jobs recorded and, in the same
//! transaction, the due jobs of the batch's tenants claimed for slots the
//! dispatcher lent (see the `Intake` actor). A quiet process then starts a
//! new job without a second transaction and commit of its own.
//!
//! The claim is [`CLAIM_FOR_TENANTS`], not the dispatcher's `errand_claim_due`:
//! it need not walk the tenants (the batch names them), and it leaves out
//! job types with a cluster-wide limit, whose jobs run long and can wait for
//! the dispatcher, and so types ramping after a pause of every tenant (which
//! are limited while they ramp). Limits hold as in the dispatcher's claim: the tenants are
//! locked by one statement, and their running jobs counted by the next,
//! whose snapshot is taken after the locks were granted. Here the locks are
//! waited for (in tenant order) rather than tried: the transaction holds no
//! lock that a claim could be waiting for, and a wait is as long as one claim.

use crate::store::queue::claim::{BatchClaim, ClaimedJob};
use crate::store::queue::lost_claims::LostClaim;
use crate::store::queue::millis;
use crate::store::queue::quota::{self, BEGIN, COMMIT};
use crate::store::queue::submit::{
    INSERT_OR_FIND, INSERT_OR_FIND_CAPPED, InsertBatch, NewJob, Submission, Submissions,
};
use crate::store::{Queue, StoreError};
use deadpool_postgres::Client;
use futures_util::future::{join, join3};

/// Takes the tenant locks of claims (key space 0x65720001, as in
/// `errand_claim_due`) for each of the tenants in $1, in tenant order; held
/// until the transaction ends. Also has the claim after it planned
/// generically, as `errand_claim_due` is: PostgreSQL would otherwise
/// find a custom plan cheaper for one tenant and plan the claim anew on every
/// call, which took longer than running it (0.2 ms of an idle submission).
const LOCK_TENANTS: &str = "
SELECT count(pg_advisory_xact_lock(1701969921, hashtext(t.tenant_id))) AS locked,
       set_config('plan_cache_mode', 'force_generic_plan', true) AS plans
FROM (SELECT DISTINCT tenant_id FROM unnest($1::text[]) AS u (tenant_id) ORDER BY tenant_id) t";

/// For each tenant in $1 (locked by [`LOCK_TENANTS`] before this statement
/// began), its next due jobs of the types in $3, as `errand_tenant_next`
/// takes them for the dispatcher (its line's order, within its room of $2
/// running jobs and $8 of one user's), at most $4 in all, claimed under the
/// lease of owner $5 for $6 ms, under the claim id $7 (see `lost_claims.rs`).
/// Rows as `errand_claim_due`'s of kind `job`.
const CLAIM_FOR_TENANTS: &str = "
WITH picked AS (
    SELECT c.job_id
    FROM (SELECT DISTINCT tenant_id FROM unnest($1::text[]) AS u (tenant_id)) t
    CROSS JOIN (SELECT ARRAY (SELECT r.job_type FROM job_ramps_now r WHERE r.tenant_id IS NULL) AS types) ramping
    CROSS JOIN LATERAL errand_tenant_next(t.tenant_id, $2::bigint, $8::bigint, $4::bigint, ramping.types, $3::text[]) c
    ORDER BY c.rank, c.run_at, c.job_id
    LIMIT $4
), claimed AS (
    UPDATE job_queue q
    SET state = 'running', attempt = q.attempt + 1, lease_id = gen_random_uuid(), lease_owner = $5, claim_id = $7,
        resumed_from = (q.checkpoint ->> 'done')::bigint,
        lease_expires_at = now() + $6::float8 * interval '1 millisecond', started_at = clock_timestamp()
    WHERE q.job_id = ANY (ARRAY (SELECT p.job_id FROM picked p)) AND q.state IN ('available', 'retryable')
      AND q.held_by IS NULL AND q.run_at <= now()  -- rechecked: a hold or a debounce may have committed since
    RETURNING q.job_id, q.attempt, q.lease_id, q.run_at, q.checkpoint -> 'value' AS checkpoint
)
SELECT 'job' AS kind, j.id, j.tenant_id, j.user_id, j.job_type, j.params, c.attempt, c.lease_id, c.run_at AS due_at,
       j.format, j.scheduled_for, c.checkpoint, j.traceparent,
       errand_trace_linked(j.run, j.scheduled_for) AS trace_linked
FROM jobs j JOIN claimed c ON c.job_id = j.id
WHERE j.id = ANY (ARRAY (SELECT c2.job_id FROM claimed c2))";

impl Submissions<'_> {
    /// [`Self::submit_many`], and in the same transaction a claim of the due
    /// jobs of the batch's tenants (see the module doc), if any job of the
    /// batch is of a type it takes. Answers the submissions and the jobs
    /// claimed. If the transaction fails, the submissions are recorded alone
    /// (and claimed later, as any other job).
    #[tracing::instrument(skip_all, fields(jobs = jobs.len(), limit = claim.limit))]
    pub async fn submit_and_claim(
        &self,
        jobs: &[NewJob],
        claim: &BatchClaim<'_>,
    ) -> (Vec<Result<Submission, StoreError>>, Vec<ClaimedJob>) {
        // A batch of exports or external jobs only: nothing of it to claim here.
        if !jobs.iter().any(|job| claim.types.contains(&job.job_type)) {
            return (self.submit_many(jobs).await, Vec::new());
        }
        let (answers, claimed) = match self.pool.get().await {
            Ok(client) => self.insert_or_find_and_claim(&client, jobs, claim).await,
            Err(error) => (Err(error.into()), Ok(Vec::new())),
        };
        let claimed = claimed.unwrap_or_else(|error| {
            tracing::warn!(%error, "a claim beside a batch of submissions failed");
            Vec::new()
        });
        let answers = match answers {
            Ok(answers) => answers,
            Err(error) => {
                tracing::info!(%error, "recording submissions with a claim failed; recording them alone");
                self.submit_many(jobs).await
            }
        };
        (answers, claimed)
    }

    /// `BEGIN`, [`INSERT_OR_FIND_CAPPED`] (when quotas are kept; else
    /// [`INSERT_OR_FIND`]), the claim's locks, the claim and `COMMIT`, sent
    /// together (pipelined: one wait for the server). The claim's jobs are
    /// ours if it and the commit succeeded; the submissions are recorded if
    /// every statement succeeded (any failure rolls back). A batch over a cap
    /// is then recorded job by job, in a transaction of its own, and nothing claimed.
    async fn insert_or_find_and_claim(
        &self,
        client: &Client,
        jobs: &[NewJob],
        claim: &BatchClaim<'_>,
    ) -> (Result<Vec<Result<Submission, StoreError>>, StoreError>, Result<Vec<ClaimedJob>, StoreError>) {
        let quotas = self.quotas.enforced();
        let prepared = async {
            Ok::<_, StoreError>((
                client.prepare_cached(BEGIN).await?,
                client.prepare_cached(if quotas { INSERT_OR_FIND_CAPPED } else { INSERT_OR_FIND }).await?,
                client.prepare_cached(LOCK_TENANTS).await?,
                client.prepare_cached(CLAIM_FOR_TENANTS).await?,
                client.prepare_cached(COMMIT).await?,
            ))
        };
        let (begin, insert, lock, take, commit) = match prepared.await {
            Ok(statements) => statements,
            Err(error) => return (Err(error), Ok(Vec::new())),
        };
        let all: Vec<&NewJob> = jobs.iter().collect();
        let batch = InsertBatch::new(&all);
        let insert_params = if quotas { batch.params_with(self.batch_caps) } else { batch.params().to_vec() };
        let tenants = quota::distinct(jobs.iter().map(|job| job.caller.tenant.as_str()));
        let (tenant_limit, user_limit) = (i64::from(claim.tenant_limit), i64::from(claim.user_limit));
        let limit = i64::try_from(claim.limit).unwrap_or(i64::MAX);
        let lease_ms = millis(claim.lease);
        let claim_id = uuid::Uuid::new_v4();
        // join polls its futures in order, and each sends its statement when
        // first polled: the server receives them in this order.
        let ((begun, inserted), (locked, claimed, committed)) = join(
            join(client.execute(&begin, &[]), client.query(&insert, &insert_params)),
            join3(
                client.query(&lock, &[&tenants]),
                client.query(
                    &take,
                    &[&tenants, &tenant_limit, &claim.types, &limit, &claim.owner, &lease_ms, &claim_id, &user_limit],
                ),
                client.execute(&commit, &[]),
            ),
        )
        .await;
        let rows = match inserted {
            // Rolled back whole, the claim with it.
            Err(error) if quota::is_over_quota(&error) => {
                return (self.insert_or_find_one_by_one(client, jobs).await, Ok(Vec::new()));
            }
            inserted => inserted,
        };
        let claimed = match (begun, locked, claimed, committed) {
            (Ok(_), Ok(_), Ok(rows), Ok(_)) => rows,
            (Err(error), ..) | (_, Err(error), _, _) | (.., Err(error), _) | (.., Err(error)) => {
                let lost = LostClaim::Jobs { owner: claim.owner, claim: claim_id, lease: claim.lease };
                return (Err(lost.settle_error(self.pool, error.into())), Ok(Vec::new()));
            }
        };
        let queue = Queue { pool: self.pool, endings: self.endings, sealer: self.sealer };
        let claimed = queue.claimed_jobs(&claimed).await;
        let answers = match rows {
            Ok(rows) => batch.answers(client, rows).await,
            Err(error) => Err(error.into()),
        };
        (answers, claimed)
    }
}
