//! The lifetime of what jobs leave behind: result files past their retention
//! (the Pruner deletes the file, then marks the job), uploads that never
//! became a result (deleted, then forgotten), and the history itself
//! (finished jobs, their notifications, outbox emails and idempotency keys),
//! deleted in batches once older than `history.retention`.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::domain::JobId;
use crate::store::{Queue, StoreError};

/// Completed jobs whose result file is past its retention: (job, storage key).
const RESULTS_PAST_RETENTION: &str = "
SELECT id, result->>'storage_key' AS storage_key FROM jobs
WHERE result_expires_at IS NOT NULL AND result_expires_at <= now()
ORDER BY result_expires_at
LIMIT $1";

/// Records that a job's result file was deleted: the job now says so.
const MARK_RESULT_EXPIRED: &str = "
UPDATE jobs SET result = jsonb_set(result, '{expired}', 'true'), result_expires_at = NULL
WHERE id = $1";

/// The statement deleting the jobs its `doomed` CTE (the argument, a
/// `SELECT id FROM jobs …`) picks, with everything a job leaves behind: the
/// one list of it, for the Pruner's history and for erasures alike.
macro_rules! forget_jobs {
    ($doomed:expr) => {
        concat!(
            "WITH doomed AS (",
            $doomed,
            "), forgotten_notifications AS (
    DELETE FROM notifications WHERE job_id IN (SELECT id FROM doomed)
), forgotten_emails AS (
    DELETE FROM email_outbox WHERE job_id IN (SELECT id FROM doomed)
), forgotten_pushes AS (
    DELETE FROM push_outbox WHERE job_id IN (SELECT id FROM doomed)
), forgotten_deliveries AS (
    DELETE FROM webhook_deliveries WHERE job_id IN (SELECT id FROM doomed)
), forgotten_errors AS (
    DELETE FROM job_attempt_errors WHERE job_id IN (SELECT id FROM doomed)
), forgotten_logs AS (
    DELETE FROM job_attempt_logs WHERE job_id IN (SELECT id FROM doomed)
)
DELETE FROM jobs WHERE id IN (SELECT id FROM doomed)"
        )
    };
}

pub(in crate::store) use forget_jobs;

/// The statement deleting up to `$3` finished jobs created before the UUID
/// v7 bound `$1` (`$7`'s only, with `$tenant_only`) and finished before
/// their cutoff: `$6` less their tenant's own retention for their type or
/// else for all its types (`tenant_retention`), else `$5[i]` for a type
/// `$4[i]` of a retention of its own, else `$2`; whose result file (if any)
/// is already deleted, with all they left. Their idempotency keys are free
/// again. Jobs still queued are never touched.
macro_rules! prune_history {
    ($tenant_only:literal) => {
        forget_jobs!(concat!(
            "
    SELECT id FROM jobs
    WHERE id < $1 AND ",
            $tenant_only,
            " AND state IN ('completed', 'failed', 'cancelled') AND result_expires_at IS NULL
      AND finished_at < coalesce((SELECT $6::timestamptz - t.retention FROM tenant_retention t
                                  WHERE t.tenant_id = jobs.tenant_id AND t.job_type IN ('', jobs.job_type)
                                    AND t.retention IS NOT NULL
                                  ORDER BY t.job_type DESC  -- the tenant × type's before the tenant's
                                  LIMIT 1),
                                 (SELECT r.cutoff FROM unnest($4::text[], $5::timestamptz[]) AS r (job_type, cutoff)
                                  WHERE r.job_type = jobs.job_type),
                                 $2)
    ORDER BY id
    LIMIT $3
    FOR UPDATE SKIP LOCKED
"
        ))
    };
}

/// Every tenant's history, walked along the primary key in creation order
/// up to the latest of the configured cutoffs (so no extra index is kept
/// for this).
const PRUNE_HISTORY: &str = prune_history!("true");

/// One tenant's (`$7`) history, up to its own cutoff: walked along
/// `jobs_tenant_newest`, so a tenant keeping its history shorter than the
/// rest does not make every pass walk everyone's kept history.
const PRUNE_TENANT_HISTORY: &str = prune_history!("tenant_id = $7");

/// When finished jobs are old enough to go ([`Queue::history_cutoffs`]).
pub struct HistoryCutoffs {
    now: DateTime<Utc>,
    cutoff: DateTime<Utc>,
    by_type: Vec<(String, DateTime<Utc>)>,
    /// The latest of the configured ones: the id bound of the walk of everyone's history.
    latest: DateTime<Utc>,
    /// The tenants whose own retention ends later than that: each its walk, to its bound.
    by_tenant: Vec<(String, DateTime<Utc>)>,
}

/// Each tenant's shortest own retention, in seconds.
const TENANT_RETENTIONS: &str = "
SELECT tenant_id, extract(epoch FROM min(retention))::float8 AS seconds FROM tenant_retention
WHERE retention IS NOT NULL GROUP BY tenant_id";

/// Deletes up to `$3` batches created before the UUID v7 bound `$1` and
/// finished before `$2` whose children are all pruned, with their
/// notifications; up to `$3` `webhook_disabled` and `schedule_paused`
/// notices made before `$1`; up to `$3` digests written before `$1` and
/// done with (what they listed forgets them, `digest_id` emptied);
/// and up to `$3` webhook deliveries of pauses (`type.paused`, of no job)
/// made before `$1`.
const PRUNE_BATCHES_AND_NOTICES: &str = "
WITH doomed AS (
    SELECT b.id FROM batches b
    WHERE b.id < $1 AND b.finished_at < $2 AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.batch_id = b.id)
    ORDER BY b.id
    LIMIT $3
    FOR UPDATE SKIP LOCKED
), forgotten_notifications AS (
    DELETE FROM notifications WHERE batch_id IN (SELECT id FROM doomed)
), forgotten_emails AS (
    DELETE FROM email_outbox WHERE batch_id IN (SELECT id FROM doomed)
), forgotten_notices AS (
    DELETE FROM notifications
    WHERE id IN (SELECT id FROM notifications WHERE kind IN ('webhook_disabled', 'schedule_paused') AND id < $1
                 ORDER BY id LIMIT $3)
), forgotten_digests AS (
    DELETE FROM email_outbox
    WHERE id IN (SELECT id FROM email_outbox WHERE digest_at IS NOT NULL AND id < $1 AND state IN ('sent', 'failed')
                 ORDER BY id LIMIT $3)
), forgotten_pause_deliveries AS (
    DELETE FROM webhook_deliveries
    WHERE id IN (SELECT id FROM webhook_deliveries WHERE pause_id IS NOT NULL AND id < $1 ORDER BY id LIMIT $3)
)
DELETE FROM batches WHERE id IN (SELECT id FROM doomed)";

/// Forgets up to `$1` quota counts (of any kind: per type, user or tenant)
/// of owners with no unfinished job left (rows at zero), so that the table
/// holds those with work rather than everyone who ever had some; answers how
/// many. A row counted up meanwhile stays: its lock re-checks `jobs = 0` on
/// the newest version, and one another statement holds is skipped, never
/// waited for.
const FORGET_IDLE_COUNTS: &str = "
WITH forgotten AS (
    DELETE FROM unfinished_counts
    WHERE (tenant_id, user_id, job_type) IN (
        SELECT tenant_id, user_id, job_type FROM unfinished_counts WHERE jobs = 0 LIMIT $1 FOR UPDATE SKIP LOCKED)
    RETURNING 1
)
SELECT count(*) FROM forgotten";

/// Files discarded by attempts that did not complete (see `discarded_files`) that may be
/// deleted now, longest due first.
const DISCARDED_FILES: &str = "
SELECT storage_key FROM discarded_files WHERE delete_after <= now() ORDER BY delete_after LIMIT $1";

/// Forgets discarded files once deleted from storage.
const FORGET_DISCARDED: &str = "
DELETE FROM discarded_files WHERE storage_key = ANY ($1)";

impl Queue<'_> {
    /// Up to `limit` storage keys of discarded uploads due for deletion.
    pub async fn discarded_files(&self, limit: i64) -> Result<Vec<String>, StoreError> {
        let client = self.pool.get().await?;
        let rows = client.query(&client.prepare_cached(DISCARDED_FILES).await?, &[&limit]).await?;
        rows.iter().map(|row| Ok(row.try_get("storage_key")?)).collect()
    }

    /// Forgets discarded files that were deleted from storage.
    pub async fn forget_discarded(&self, keys: &[String]) -> Result<(), StoreError> {
        let client = self.pool.get().await?;
        client.execute(&client.prepare_cached(FORGET_DISCARDED).await?, &[&keys]).await?;
        Ok(())
    }

    /// Completed jobs whose result file is past its retention: (job, storage key).
    pub async fn results_past_retention(&self, limit: i64) -> Result<Vec<(JobId, String)>, StoreError> {
        let client = self.pool.get().await?;
        let rows = client.query(&client.prepare_cached(RESULTS_PAST_RETENTION).await?, &[&limit]).await?;
        let mut due = Vec::with_capacity(rows.len());
        for row in &rows {
            if let Some(key) = row.try_get::<_, Option<String>>("storage_key")? {
                due.push((JobId(row.try_get("id")?), key));
            }
        }
        Ok(due)
    }

    /// Records that a job's result file was deleted: the job now says so.
    pub async fn mark_result_expired(&self, id: JobId) -> Result<(), StoreError> {
        let client = self.pool.get().await?;
        client.execute(&client.prepare_cached(MARK_RESULT_EXPIRED).await?, &[&id.0]).await?;
        Ok(())
    }

    /// Forgets up to `limit` quota counts at zero; returns how many.
    pub async fn forget_idle_counts(&self, limit: i64) -> Result<u64, StoreError> {
        let client = self.pool.get().await?;
        let row = client.query_one(&client.prepare_cached(FORGET_IDLE_COUNTS).await?, &[&limit]).await?;
        Ok(u64::try_from(row.try_get::<_, i64>(0)?).unwrap_or(0))
    }

    /// When finished jobs are old enough to go, as of `now`: before `cutoff`;
    /// for the types in `by_type`, before their own cutoff; for a tenant with
    /// a retention of its own, before `now` less it. Read once a pass.
    pub async fn history_cutoffs(
        &self,
        now: DateTime<Utc>,
        cutoff: DateTime<Utc>,
        by_type: Vec<(String, DateTime<Utc>)>,
    ) -> Result<HistoryCutoffs, StoreError> {
        let client = self.pool.get().await?;
        let latest = by_type.iter().map(|(_, at)| *at).fold(cutoff, DateTime::max);
        let mut by_tenant = Vec::new();
        for row in client.query(&client.prepare_cached(TENANT_RETENTIONS).await?, &[]).await? {
            let seconds: f64 = row.try_get("seconds")?;
            let Some(own) = chrono::Duration::try_milliseconds((seconds * 1000.0) as i64) else { continue };
            if now - own > latest {
                by_tenant.push((row.try_get("tenant_id")?, now - own));
            }
        }
        Ok(HistoryCutoffs { now, cutoff, by_type, latest, by_tenant })
    }

    /// Deletes finished jobs past `cutoffs` with all they left, up to
    /// `limit` from everyone's history and as many from each tenant's that
    /// keeps its own shorter; returns how many.
    pub async fn prune_history(&self, cutoffs: &HistoryCutoffs, limit: i64) -> Result<u64, StoreError> {
        let HistoryCutoffs { now, cutoff, by_type, latest, by_tenant } = cutoffs;
        let (types, at): (Vec<&str>, Vec<DateTime<Utc>>) = by_type.iter().map(|(t, at)| (t.as_str(), *at)).unzip();
        let client = self.pool.get().await?;
        let everyone = client.prepare_cached(PRUNE_HISTORY).await?;
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 6] =
            [&first_v7_at(*latest), cutoff, &limit, &types, &at, now];
        let mut deleted = client.execute(&everyone, &params).await?;
        if by_tenant.is_empty() {
            return Ok(deleted);
        }
        let one_tenant = client.prepare_cached(PRUNE_TENANT_HISTORY).await?;
        for (tenant, bound) in by_tenant {
            let params: [&(dyn tokio_postgres::types::ToSql + Sync); 7] =
                [&first_v7_at(*bound), cutoff, &limit, &types, &at, now, tenant];
            deleted += client.execute(&one_tenant, &params).await?;
        }
        Ok(deleted)
    }

    /// Deletes up to `limit` batches older than `cutoff` whose children are
    /// all gone, and notices of disabled webhooks older than it; answers how
    /// many batches.
    pub async fn prune_batches(&self, cutoff: DateTime<Utc>, limit: i64) -> Result<u64, StoreError> {
        let client = self.pool.get().await?;
        let statement = client.prepare_cached(PRUNE_BATCHES_AND_NOTICES).await?;
        Ok(client.execute(&statement, &[&first_v7_at(cutoff), &cutoff, &limit]).await?)
    }
}

/// Deletes up to `$2` operators' actions taken before `$1` (their ids are
/// UUID v7s: the primary key walks them in time order).
const PRUNE_OPERATOR_ACTIONS: &str = "
DELETE FROM operator_actions WHERE id IN (SELECT id FROM operator_actions WHERE id < $1 ORDER BY id LIMIT $2)";

impl Queue<'_> {
    /// Deletes up to `limit` operators' actions taken before `cutoff`; answers how many.
    pub async fn prune_operator_actions(&self, cutoff: DateTime<Utc>, limit: i64) -> Result<u64, StoreError> {
        let client = self.pool.get().await?;
        let statement = client.prepare_cached(PRUNE_OPERATOR_ACTIONS).await?;
        Ok(client.execute(&statement, &[&first_v7_at(cutoff), &limit]).await?)
    }
}

/// The smallest UUID v7 of the millisecond `at`: every job id made before
/// `at` sorts below it.
fn first_v7_at(at: DateTime<Utc>) -> Uuid {
    let millis = u64::try_from(at.timestamp_millis()).unwrap_or(0);
    let mut bytes = [0u8; 16];
    bytes[..6].copy_from_slice(&millis.to_be_bytes()[2..]);
    Uuid::from_bytes(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bound_sorts_between_ids_made_before_and_after() {
        let at = Utc::now();
        let before = Uuid::new_v7(uuid::Timestamp::from_unix(uuid::NoContext, at.timestamp() as u64 - 1, 0));
        let after = Uuid::new_v7(uuid::Timestamp::from_unix(uuid::NoContext, at.timestamp() as u64 + 1, 0));
        assert!(before < first_v7_at(at) && first_v7_at(at) < after);
    }
}
