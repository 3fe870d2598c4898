//! The worker side of the job table: claim runnable jobs fairly, renew leases,
//! end attempts, rescue jobs whose worker vanished, release jobs at shutdown.
//!
//! `started_at` and `finished_at` are `clock_timestamp()`: taken after the
//! statement's snapshot, not at transaction start, so that a job claimed
//! because another finished never appears to have started before it ended.
//!
//! Every write on a claimed job is fenced: `WHERE id = $1 AND state = 'running'
//! AND lease_id = $2`. A worker whose lease expired (and whose job was rescued,
//! re-claimed or finished by someone else) changes nothing.

use std::time::Duration;

use deadpool_postgres::Pool;
use serde_json::Value;
use tokio_postgres::Row;
use uuid::Uuid;

use super::{StoreError, WORK_CHANNEL};
use crate::domain::{JobId, JobState, LeaseId, TenantId, UserId};

/// Serialises claims across processes, so per-tenant limits hold exactly.
/// Claims are one short statement, so the wait is short too.
const CLAIM_LOCK: i64 = 0x6572_7261_6e64_0001;

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

/// How an attempt ended, as the worker reports it.
#[derive(Debug, Clone)]
pub enum Outcome {
    Completed {
        result: Option<Value>,
    },
    /// Try again after `delay`.
    Retry {
        error: String,
        delay: Duration,
    },
    /// No more attempts: the job fails.
    Failed {
        error: String,
    },
}

/// One attempt to end: which job, under which lease, how.
#[derive(Debug, Clone)]
pub struct Completion {
    pub id: JobId,
    pub lease: LeaseId,
    pub outcome: Outcome,
}

/// An attempt's recorded end: the job's new state (terminal, or waiting to
/// retry) and, for a terminal state, the notification written with it.
#[derive(Debug, Clone)]
pub struct EndedAttempt {
    pub job: JobId,
    pub tenant: TenantId,
    pub user: UserId,
    pub job_type: String,
    pub state: JobState,
    pub error_message: Option<String>,
    /// Set for a terminal state (unless a notification for the job already existed).
    pub notification: Option<Uuid>,
}

/// How much work the queue holds.
#[derive(Debug, Clone, Copy)]
pub struct QueueDepth {
    pub waiting: i64,
    pub running: i64,
    pub oldest_due_seconds: f64,
}

/// What a rescue pass did.
#[derive(Debug, Default)]
pub struct Rescued {
    /// Jobs put back to run again.
    pub requeued: u64,
    /// Jobs out of attempts, now failed and notified.
    pub failed: Vec<EndedAttempt>,
}

/// The rest of a statement that ends jobs, after its `finished AS (UPDATE …
/// RETURNING id, tenant_id, user_id, user_email, job_type, state, error_message)`:
/// each terminal job's one notification, announced on `errand_notifications`
/// ([`super::NOTIFICATION_CHANNEL`]; NOTIFY is sent at commit, so only what is
/// committed is announced), and, with `email`, its one outbox email when its
/// creator had an address. All in the same statement as the state change.
fn finish_and_notify(email: bool) -> String {
    let emailed = if email {
        ", emailed AS ( \
             INSERT INTO email_outbox (job_id, tenant_id, user_id, recipient, job_type, job_status, error_message) \
             SELECT id, tenant_id, user_id, user_email, job_type, state::text, error_message \
             FROM finished WHERE state IN ('completed', 'failed') AND user_email IS NOT NULL \
             ON CONFLICT (job_id) DO NOTHING \
         )"
    } else {
        ""
    };
    format!(
        "notified AS ( \
             INSERT INTO notifications (tenant_id, user_id, kind, job_id, job_type, job_status, error_message) \
             SELECT tenant_id, user_id, 'job_completed', id, job_type, state::text, error_message \
             FROM finished WHERE state IN ('completed', 'failed') \
             ON CONFLICT (job_id, kind) DO NOTHING \
             RETURNING job_id, id, \
                 pg_notify('errand_notifications', json_build_object('tenant', tenant_id, 'user', user_id)::text) \
         ){emailed} \
         SELECT f.id, f.tenant_id, f.user_id, f.job_type, f.state::text, f.error_message, n.id \
         FROM finished f LEFT JOIN notified n ON n.job_id = f.id"
    )
}

/// The worker side of the job table.
pub struct Queue<'a> {
    pool: &'a Pool,
    /// Whether ending a job also writes its completion email to the outbox.
    email_outbox: bool,
}

impl<'a> Queue<'a> {
    pub(super) fn new(pool: &'a Pool, email_outbox: bool) -> Self {
        Self { pool, email_outbox }
    }

    /// Claims up to `limit` runnable jobs for `owner`, at most `tenant_limit`
    /// running per tenant across all processes. Jobs are ranked by how many
    /// jobs their tenant would then have running (fewest first, oldest first
    /// within a rank), so a free slot goes to the tenant using the fewest:
    /// one tenant's burst cannot starve another tenant's single job.
    #[tracing::instrument(skip(self))]
    pub async fn claim(
        &self,
        owner: Uuid,
        limit: usize,
        tenant_limit: u32,
        lease: Duration,
    ) -> Result<Vec<ClaimedJob>, StoreError> {
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        let lock = tx.prepare_cached("SELECT pg_advisory_xact_lock($1)").await?;
        tx.execute(&lock, &[&CLAIM_LOCK]).await?;
        let claim = tx
            .prepare_cached(
                "WITH RECURSIVE tenants(tenant_id) AS ( \
                     (SELECT tenant_id FROM jobs WHERE state IN ('available', 'retryable') \
                      ORDER BY tenant_id LIMIT 1) \
                     UNION ALL \
                     SELECT (SELECT j.tenant_id FROM jobs j \
                             WHERE j.state IN ('available', 'retryable') AND j.tenant_id > t.tenant_id \
                             ORDER BY j.tenant_id LIMIT 1) \
                     FROM tenants t WHERE t.tenant_id IS NOT NULL \
                 ), busy AS ( \
                     SELECT t.tenant_id, (SELECT count(*) FROM jobs r \
                                          WHERE r.tenant_id = t.tenant_id AND r.state = 'running') AS running \
                     FROM tenants t WHERE t.tenant_id IS NOT NULL \
                 ), candidates AS ( \
                     SELECT c.id, c.run_at, b.running + c.rank AS rank FROM busy b \
                     CROSS JOIN LATERAL ( \
                         SELECT j.id, j.run_at, row_number() OVER (ORDER BY j.run_at, j.id) AS rank \
                         FROM jobs j \
                         WHERE j.tenant_id = b.tenant_id AND j.state IN ('available', 'retryable') \
                           AND j.run_at <= now() \
                         ORDER BY j.run_at, j.id \
                         LIMIT greatest(0, $1 - b.running) \
                     ) c \
                 ), picked AS ( \
                     SELECT id FROM candidates ORDER BY rank, run_at, id LIMIT $2 \
                 ) \
                 UPDATE jobs j SET state = 'running', attempt = j.attempt + 1, \
                     lease_id = gen_random_uuid(), lease_owner = $3, \
                     lease_expires_at = now() + $4 * interval '1 millisecond', started_at = clock_timestamp() \
                 FROM picked WHERE j.id = picked.id AND j.state IN ('available', 'retryable') \
                 RETURNING j.id, j.tenant_id, j.user_id, j.job_type, j.params, j.attempt, j.lease_id",
            )
            .await?;
        let rows = tx.query(&claim, &[&i64::from(tenant_limit), &(limit as i64), &owner, &millis(lease)]).await?;
        tx.commit().await?;
        rows.iter().map(claimed_from_row).collect()
    }

    /// Extends a lease; `false` means it is no longer ours and the attempt must stop.
    pub async fn heartbeat(&self, id: JobId, lease: LeaseId, duration: Duration) -> Result<bool, StoreError> {
        let client = self.pool.get().await?;
        let statement = client
            .prepare_cached(
                "UPDATE jobs SET lease_expires_at = now() + $3 * interval '1 millisecond' \
                 WHERE id = $1 AND state = 'running' AND lease_id = $2",
            )
            .await?;
        let n = client.execute(&statement, &[&id.0, &lease.0, &millis(duration)]).await?;
        Ok(n == 1)
    }

    /// Ends an attempt, if the lease is still ours. A terminal outcome writes the
    /// job's notification in the same statement. Returns `None` when fenced off.
    pub async fn finish_if_running(
        &self,
        id: JobId,
        lease: LeaseId,
        outcome: &Outcome,
    ) -> Result<Option<EndedAttempt>, StoreError> {
        let finished = self.finish_many_if_running(&[Completion { id, lease, outcome: outcome.clone() }]).await?;
        Ok(finished.into_iter().next())
    }

    /// Ends many attempts in one statement (one transaction), each fenced on
    /// its own lease; terminal ones get their notification in the same
    /// statement. Returns what was finished; fenced-off attempts are absent.
    #[tracing::instrument(skip_all, fields(n = batch.len()))]
    pub async fn finish_many_if_running(&self, batch: &[Completion]) -> Result<Vec<EndedAttempt>, StoreError> {
        let mut ids = Vec::with_capacity(batch.len());
        let mut leases = Vec::with_capacity(batch.len());
        let mut outcomes = Vec::with_capacity(batch.len());
        let mut results: Vec<Option<Value>> = Vec::with_capacity(batch.len());
        let mut errors: Vec<Option<&str>> = Vec::with_capacity(batch.len());
        let mut delays = Vec::with_capacity(batch.len());
        for c in batch {
            ids.push(c.id.0);
            leases.push(c.lease.0);
            let (name, result, error, delay) = match &c.outcome {
                Outcome::Completed { result } => ("completed", result.clone(), None, 0.0),
                Outcome::Retry { error, delay } => ("retryable", None, Some(error.as_str()), millis(*delay)),
                Outcome::Failed { error } => ("failed", None, Some(error.as_str()), 0.0),
            };
            outcomes.push(name);
            results.push(result);
            errors.push(error);
            delays.push(delay);
        }
        let client = self.pool.get().await?;
        let sql = format!(
            "WITH input AS ( \
                 SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::jsonb[], $5::text[], $6::float8[]) \
                     AS input(id, lease_id, outcome, result, error, delay_ms) \
             ), finished AS ( \
                 UPDATE jobs j SET \
                     state = input.outcome::job_state, \
                     result = CASE WHEN input.outcome = 'completed' THEN input.result ELSE j.result END, \
                     result_expires_at = CASE WHEN input.outcome = 'completed' \
                                              THEN (input.result->>'expires_at')::timestamptz END, \
                     error_message = input.error, \
                     run_at = CASE WHEN input.outcome = 'retryable' \
                                   THEN now() + input.delay_ms * interval '1 millisecond' ELSE j.run_at END, \
                     finished_at = CASE WHEN input.outcome = 'retryable' THEN NULL ELSE clock_timestamp() END, \
                     lease_id = NULL, lease_owner = NULL, lease_expires_at = NULL \
                 FROM input \
                 WHERE j.id = input.id AND j.state = 'running' AND j.lease_id = input.lease_id \
                 RETURNING j.id, j.tenant_id, j.user_id, j.user_email, j.job_type, j.state, j.error_message \
             ), {}",
            finish_and_notify(self.email_outbox)
        );
        let statement = client.prepare_cached(&sql).await?;
        let rows = client.query(&statement, &[&ids, &leases, &outcomes, &results, &errors, &delays]).await?;
        rows.iter().map(finished_from_row).collect()
    }

    /// Puts jobs whose lease expired back to run (or fails them, with their
    /// notification, when no attempts remain). Only an expired lease counts:
    /// a job that runs long but heartbeats is never rescued.
    pub async fn rescue_expired(&self, limit: i64) -> Result<Rescued, StoreError> {
        let client = self.pool.get().await?;
        let sql = format!(
            "WITH expired AS ( \
                 SELECT id FROM jobs WHERE state = 'running' AND lease_expires_at < now() \
                 ORDER BY lease_expires_at LIMIT $1 FOR UPDATE SKIP LOCKED \
             ), finished AS ( \
                 UPDATE jobs j SET \
                     state = CASE WHEN j.attempt < j.max_attempts THEN 'available'::job_state \
                                  ELSE 'failed'::job_state END, \
                     error_message = 'the worker running this job stopped responding', \
                     run_at = now(), \
                     finished_at = CASE WHEN j.attempt < j.max_attempts THEN NULL ELSE clock_timestamp() END, \
                     lease_id = NULL, lease_owner = NULL, lease_expires_at = NULL \
                 FROM expired WHERE j.id = expired.id AND j.state = 'running' \
                 RETURNING j.id, j.tenant_id, j.user_id, j.user_email, j.job_type, j.state, j.error_message \
             ), {}",
            finish_and_notify(self.email_outbox)
        );
        let rows = client.query(&client.prepare_cached(&sql).await?, &[&limit]).await?;
        let mut rescued = Rescued::default();
        for row in &rows {
            let finished = finished_from_row(row)?;
            if finished.state == JobState::Failed {
                rescued.failed.push(finished);
            } else {
                rescued.requeued += 1;
            }
        }
        Ok(rescued)
    }

    /// Hands back every job `owner` still holds, as if its attempt never
    /// started, so another process takes it at once. Only call this once the
    /// owner's workers for those jobs have been stopped.
    pub async fn release_all(&self, owner: Uuid) -> Result<u64, StoreError> {
        let client = self.pool.get().await?;
        let n = client
            .execute(
                "UPDATE jobs SET state = 'available', attempt = attempt - 1, run_at = now(), \
                 lease_id = NULL, lease_owner = NULL, lease_expires_at = NULL \
                 WHERE lease_owner = $1 AND state = 'running'",
                &[&owner],
            )
            .await?;
        if n > 0 {
            self.announce_work().await?;
        }
        Ok(n)
    }

    /// Completed jobs whose result file is past its retention: (job, storage key).
    pub async fn results_past_retention(&self, limit: i64) -> Result<Vec<(JobId, String)>, StoreError> {
        let client = self.pool.get().await?;
        let statement = client
            .prepare_cached(
                "SELECT id, result->>'storage_key' FROM jobs \
                 WHERE result_expires_at IS NOT NULL AND result_expires_at <= now() \
                 ORDER BY result_expires_at LIMIT $1",
            )
            .await?;
        let rows = client.query(&statement, &[&limit]).await?;
        Ok(rows.iter().filter_map(|r| Some((JobId(r.get(0)), r.get::<_, Option<String>>(1)?))).collect())
    }

    /// Records that a job's result file was deleted: the job now says so.
    pub async fn mark_result_expired(&self, id: JobId) -> Result<(), StoreError> {
        let client = self.pool.get().await?;
        let statement = client
            .prepare_cached(
                "UPDATE jobs SET result = jsonb_set(result, '{expired}', 'true'), result_expires_at = NULL \
                 WHERE id = $1",
            )
            .await?;
        client.execute(&statement, &[&id.0]).await?;
        Ok(())
    }

    /// Jobs waiting to run (now or after a backoff) and running, across all
    /// tenants, and how long the oldest due job has waited: for `/metrics`.
    pub async fn depth(&self) -> Result<QueueDepth, StoreError> {
        let client = self.pool.get().await?;
        let statement = client
            .prepare_cached(
                // One subquery per partial index, so each is an index scan of
                // the unfinished jobs, never a scan of the whole history.
                "SELECT (SELECT count(*) FROM jobs WHERE state IN ('available', 'retryable')), \
                        (SELECT count(*) FROM jobs WHERE state = 'running'), \
                        coalesce((SELECT extract(epoch FROM now() - min(run_at)) FROM jobs \
                                  WHERE state IN ('available', 'retryable') AND run_at <= now()), 0)::float8",
            )
            .await?;
        let row = client.query_one(&statement, &[]).await?;
        Ok(QueueDepth { waiting: row.get(0), running: row.get(1), oldest_due_seconds: row.get(2) })
    }

    /// Tells every errand process listening that there is work to claim.
    pub async fn announce_work(&self) -> Result<(), StoreError> {
        let client = self.pool.get().await?;
        client.execute("SELECT pg_notify($1, '')", &[&WORK_CHANNEL]).await?;
        Ok(())
    }
}

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn claimed_from_row(row: &Row) -> Result<ClaimedJob, StoreError> {
    let attempt: i32 = row.try_get(5)?;
    Ok(ClaimedJob {
        id: JobId(row.try_get(0)?),
        tenant: TenantId::parse(row.try_get::<_, String>(1)?).map_err(|e| StoreError::Corrupt(e.to_string()))?,
        user: UserId::parse(row.try_get::<_, String>(2)?).map_err(|e| StoreError::Corrupt(e.to_string()))?,
        job_type: row.try_get(3)?,
        params: row.try_get(4)?,
        attempt: u32::try_from(attempt).map_err(|_| StoreError::Corrupt(format!("attempt {attempt}")))?,
        lease: LeaseId(row.try_get(6)?),
    })
}

fn finished_from_row(row: &Row) -> Result<EndedAttempt, StoreError> {
    let state: String = row.try_get(4)?;
    Ok(EndedAttempt {
        job: JobId(row.try_get(0)?),
        tenant: TenantId::parse(row.try_get::<_, String>(1)?).map_err(|e| StoreError::Corrupt(e.to_string()))?,
        user: UserId::parse(row.try_get::<_, String>(2)?).map_err(|e| StoreError::Corrupt(e.to_string()))?,
        job_type: row.try_get(3)?,
        state: state.parse().map_err(|e: crate::domain::UnknownState| StoreError::Corrupt(e.to_string()))?,
        error_message: row.try_get(5)?,
        notification: row.try_get(6)?,
    })
}
