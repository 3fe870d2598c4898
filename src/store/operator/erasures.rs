//! Erasure: everything errand keeps of one person (a tenant's user), or of
//! a whole tenant, counted (a dry run) or deleted.
//!
//! Deleted in steps, each its own short transaction of at most [`STEP`]
//! rows, so a big tenant never holds a long transaction over the queue:
//! first the unfinished jobs' queue rows (which fences their running
//! attempts out: an attempt whose row is gone can record no end, so it
//! writes no notification, email or webhook), then the result files
//! (deleted by the caller from storage, [`Erasures::live_files`]), then the
//! jobs with everything they left (notifications, emails, webhook
//! deliveries, attempt errors and logs), their batches, and the rest kept
//! per person (schedules, preferences, stream tickets, the webhook
//! endpoints they registered, whose author is forgotten). A tenant's erasure
//! also deletes its own rows: endpoints, webhook choices, quotas, pauses.
//!
//! Idempotent: a second run finds nothing. Audited with a SHA-256 of the
//! user id, never the id itself.

use deadpool_postgres::Pool;
use serde::Serialize;
use sha2::{Digest, Sha256};
use uuid::Uuid;

use crate::domain::{TenantId, UserId};
use crate::store::StoreError;
use crate::store::queue::history::forget_jobs;

/// Rows one step deletes at most: a short transaction each.
const STEP: i64 = 1000;

/// Whose data: a tenant's user, or the whole tenant.
#[derive(Debug, Clone)]
pub struct ErasureScope {
    pub tenant: TenantId,
    pub user: Option<UserId>,
}

impl ErasureScope {
    fn params(&self) -> (&str, Option<&str>) {
        (self.tenant.as_str(), self.user.as_ref().map(UserId::as_str))
    }

    /// What the audit keeps of the scope: the tenant, and a hash of the user.
    pub fn audited(&self) -> serde_json::Value {
        let user = self.user.as_ref().map(|user| hex::encode(Sha256::digest(user.as_str().as_bytes())));
        serde_json::json!({"tenant": self.tenant.as_str(), "user_sha256": user})
    }
}

/// What errand keeps of a scope, by kind.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct Inventory {
    /// Jobs waiting or running (their attempts are fenced out).
    pub unfinished_jobs: i64,
    /// Jobs, finished or not, with their params, results and idempotency keys.
    pub jobs: i64,
    /// The idempotency keys among them all (a job's, a batch's, a schedule's each).
    pub idempotency_keys: i64,
    /// Result files still kept in storage.
    pub files: i64,
    pub attempt_logs: i64,
    pub notifications: i64,
    /// Completion emails, sent or waiting in the outbox.
    pub emails: i64,
    pub webhook_deliveries: i64,
    /// Web Push messages, sent or waiting.
    pub push_messages: i64,
    /// Devices subscribed to Web Push.
    pub push_subscriptions: i64,
    pub batches: i64,
    pub schedules: i64,
    /// Notification preferences, one per category chosen, and the time zone and quiet hours if set.
    pub preferences: i64,
    pub stream_tickets: i64,
    /// When they last signed in, with their email (`people`).
    pub sign_ins: i64,
    /// Webhook endpoints: a user's registered ones (kept for the tenant,
    /// their author forgotten), or all of a tenant's (deleted).
    pub webhook_endpoints: i64,
}

impl Inventory {
    /// How many rows, of every kind.
    pub fn total(&self) -> i64 {
        [
            self.jobs,
            self.attempt_logs,
            self.notifications,
            self.emails,
            self.webhook_deliveries,
            self.push_messages,
            self.push_subscriptions,
            self.batches,
            self.schedules,
            self.preferences,
            self.stream_tickets,
            self.sign_ins,
            self.webhook_endpoints,
        ]
        .iter()
        .sum()
    }
}

/// The rows of tenant `$1` (of user `$2`, or every user when NULL), by kind.
const INVENTORY: &str = "
WITH owned AS (SELECT id, result_expires_at FROM jobs WHERE tenant_id = $1 AND ($2::text IS NULL OR user_id = $2))
SELECT
    (SELECT count(*) FROM job_queue WHERE tenant_id = $1 AND ($2::text IS NULL OR user_id = $2)) AS unfinished_jobs,
    (SELECT count(*) FROM owned) AS jobs,
    (SELECT count(*) FROM owned)
      + (SELECT count(*) FROM batches WHERE tenant_id = $1 AND ($2::text IS NULL OR user_id = $2))
      + (SELECT count(*) FROM schedules WHERE tenant_id = $1 AND ($2::text IS NULL OR user_id = $2))
        AS idempotency_keys,
    (SELECT count(*) FROM owned WHERE result_expires_at IS NOT NULL) AS files,
    (SELECT count(*) FROM job_attempt_logs WHERE job_id IN (SELECT id FROM owned)) AS attempt_logs,
    (SELECT count(*) FROM notifications WHERE tenant_id = $1 AND ($2::text IS NULL OR user_id = $2)) AS notifications,
    (SELECT count(*) FROM email_outbox WHERE job_id IN (SELECT id FROM owned))
      + (SELECT count(*) FROM email_outbox
         WHERE digest_at IS NOT NULL AND tenant_id = $1 AND ($2::text IS NULL OR user_id = $2)) AS emails,
    (SELECT count(*) FROM webhook_deliveries WHERE job_id IN (SELECT id FROM owned)) AS webhook_deliveries,
    (SELECT count(*) FROM push_outbox WHERE job_id IN (SELECT id FROM owned)) AS push_messages,
    (SELECT count(*) FROM push_subscriptions WHERE tenant_id = $1 AND ($2::text IS NULL OR user_id = $2))
        AS push_subscriptions,
    (SELECT count(*) FROM batches WHERE tenant_id = $1 AND ($2::text IS NULL OR user_id = $2)) AS batches,
    (SELECT count(*) FROM schedules WHERE tenant_id = $1 AND ($2::text IS NULL OR user_id = $2)) AS schedules,
    (SELECT count(*) FROM notification_preferences WHERE tenant_id = $1 AND ($2::text IS NULL OR user_id = $2))
      + (SELECT count(*) FROM notification_settings WHERE tenant_id = $1 AND ($2::text IS NULL OR user_id = $2))
      + (SELECT count(*) FROM tenant_notification_defaults WHERE tenant_id = $1 AND $2::text IS NULL)
        AS preferences,
    (SELECT count(*) FROM stream_tickets WHERE tenant_id = $1 AND ($2::text IS NULL OR user_id = $2)) AS stream_tickets,
    (SELECT count(*) FROM people WHERE tenant_id = $1 AND ($2::text IS NULL OR user_id = $2)) AS sign_ins,
    (SELECT count(*) FROM webhook_endpoints WHERE tenant_id = $1 AND ($2::text IS NULL OR created_by = $2))
        AS webhook_endpoints";

/// Step 1: up to `$3` unfinished jobs of the scope leave the queue (the
/// counting trigger uncounts them; a running attempt can no longer end).
const DEQUEUE: &str = "
DELETE FROM job_queue
WHERE job_id IN (SELECT job_id FROM job_queue WHERE tenant_id = $1 AND ($2::text IS NULL OR user_id = $2) LIMIT $3)";

/// Step 2: up to `$3` jobs of the scope whose result file is still kept: (job, storage key).
const LIVE_FILES: &str = "
SELECT id, result->>'storage_key' AS storage_key FROM jobs
WHERE tenant_id = $1 AND ($2::text IS NULL OR user_id = $2) AND result_expires_at IS NOT NULL
ORDER BY id LIMIT $3";

/// Records that the files of jobs `$1` were deleted.
const FILES_DELETED: &str = "
UPDATE jobs SET result_expires_at = NULL, result = jsonb_set(result, '{expired}', 'true') WHERE id = ANY ($1)";

/// Step 3: up to `$3` jobs of the scope out of the queue and without a kept
/// file, with everything they left behind (as the Pruner deletes history).
const DELETE_JOBS: &str = forget_jobs!(
    "
    SELECT id FROM jobs j
    WHERE tenant_id = $1 AND ($2::text IS NULL OR user_id = $2) AND result_expires_at IS NULL
      AND NOT EXISTS (SELECT 1 FROM job_queue q WHERE q.job_id = j.id)
    ORDER BY id
    LIMIT $3
    FOR UPDATE
"
);

/// Step 4: up to `$3` batches of the scope whose children are gone, with their notifications.
const DELETE_BATCHES: &str = "
WITH doomed AS (
    SELECT b.id FROM batches b
    WHERE b.tenant_id = $1 AND ($2::text IS NULL OR b.user_id = $2)
      AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.batch_id = b.id)
    LIMIT $3
), forgotten_notifications AS (
    DELETE FROM notifications WHERE batch_id IN (SELECT id FROM doomed)
), forgotten_emails AS (
    DELETE FROM email_outbox WHERE batch_id IN (SELECT id FROM doomed)
)
DELETE FROM batches WHERE id IN (SELECT id FROM doomed)";

/// Step 5: the rest kept per person (notices, digests, schedules, preferences,
/// push devices, tickets, when they last signed in; the endpoints they registered keep working, their author
/// forgotten), and for a whole tenant its own rows.
const DELETE_REST: &str = "
WITH notices AS (
    DELETE FROM notifications WHERE tenant_id = $1 AND ($2::text IS NULL OR user_id = $2)
), digests AS (
    DELETE FROM email_outbox WHERE digest_at IS NOT NULL AND tenant_id = $1 AND ($2::text IS NULL OR user_id = $2)
), schedules AS (
    DELETE FROM schedules WHERE tenant_id = $1 AND ($2::text IS NULL OR user_id = $2)
), preferences AS (
    DELETE FROM notification_preferences WHERE tenant_id = $1 AND ($2::text IS NULL OR user_id = $2)
), settings AS (
    DELETE FROM notification_settings WHERE tenant_id = $1 AND ($2::text IS NULL OR user_id = $2)
), devices AS (
    DELETE FROM push_subscriptions WHERE tenant_id = $1 AND ($2::text IS NULL OR user_id = $2)
), tickets AS (
    DELETE FROM stream_tickets WHERE tenant_id = $1 AND ($2::text IS NULL OR user_id = $2)
), sign_ins AS (
    DELETE FROM people WHERE tenant_id = $1 AND ($2::text IS NULL OR user_id = $2)
), authors AS (
    UPDATE webhook_endpoints SET created_by = '(erased)' WHERE tenant_id = $1 AND created_by = $2
), endpoints AS (  -- a tenant's: their deliveries go with them
    DELETE FROM webhook_endpoints WHERE tenant_id = $1 AND $2::text IS NULL
), webhook_choices AS (
    DELETE FROM webhook_preferences WHERE tenant_id = $1 AND $2::text IS NULL
), tenant_defaults AS (
    DELETE FROM tenant_notification_defaults WHERE tenant_id = $1 AND $2::text IS NULL
), branding AS (
    DELETE FROM tenant_branding WHERE tenant_id = $1 AND $2::text IS NULL
), quotas AS (
    DELETE FROM tenant_quotas WHERE tenant_id = $1 AND $2::text IS NULL
), pauses AS (
    DELETE FROM job_pauses WHERE tenant_id = $1 AND $2::text IS NULL
), data_key AS (  -- what was sealed under it is unreadable from now on, backups too
    DELETE FROM tenant_keys WHERE tenant_id = $1 AND $2::text IS NULL
)
DELETE FROM unfinished_counts WHERE tenant_id = $1 AND ($2::text IS NULL OR user_id = $2) AND jobs = 0";

/// The audit row: who erased (`$1`), the scope as audited (`$2`), how many rows (`$3`).
const AUDIT: &str = "
INSERT INTO operator_actions (operator, action, filter, affected) VALUES ($1, 'erase', $2, $3)";

/// The erasure of one scope, by someone allowed it: an operator (any
/// tenant's, `Store::erasure_by_operator`) or a tenant admin (one user of
/// their own tenant, `Store::erasure_by_tenant_admin`): the scope is fixed
/// when the door is opened.
pub struct Erasure<'a> {
    pub(in crate::store) pool: &'a Pool,
    /// Told that a tenant's data key is shredded.
    pub(in crate::store) keys: Option<&'a crate::store::TenantKeys>,
    /// Who erases, as the audit names them.
    pub(in crate::store) by: String,
    pub(in crate::store) scope: ErasureScope,
}

impl Erasure<'_> {
    /// What errand keeps of the scope (a dry run).
    pub async fn inventory(&self) -> Result<Inventory, StoreError> {
        let (tenant, user) = self.scope.params();
        let client = self.pool.get().await?;
        let row = client.query_one(&client.prepare_cached(INVENTORY).await?, &[&tenant, &user]).await?;
        Ok(Inventory {
            unfinished_jobs: row.try_get("unfinished_jobs")?,
            jobs: row.try_get("jobs")?,
            idempotency_keys: row.try_get("idempotency_keys")?,
            files: row.try_get("files")?,
            attempt_logs: row.try_get("attempt_logs")?,
            notifications: row.try_get("notifications")?,
            emails: row.try_get("emails")?,
            webhook_deliveries: row.try_get("webhook_deliveries")?,
            push_messages: row.try_get("push_messages")?,
            push_subscriptions: row.try_get("push_subscriptions")?,
            batches: row.try_get("batches")?,
            schedules: row.try_get("schedules")?,
            preferences: row.try_get("preferences")?,
            stream_tickets: row.try_get("stream_tickets")?,
            sign_ins: row.try_get("sign_ins")?,
            webhook_endpoints: row.try_get("webhook_endpoints")?,
        })
    }

    /// Step 1: every unfinished job of the scope leaves the queue.
    pub async fn dequeue(&self) -> Result<(), StoreError> {
        self.repeat(DEQUEUE).await
    }

    /// Step 2, a batch at a time: the result files of the scope still kept,
    /// as (job, storage key); delete them, then [`Self::files_deleted`].
    pub async fn live_files(&self) -> Result<Vec<(Uuid, Option<String>)>, StoreError> {
        let (tenant, user) = self.scope.params();
        let client = self.pool.get().await?;
        let rows = client.query(&client.prepare_cached(LIVE_FILES).await?, &[&tenant, &user, &STEP]).await?;
        rows.iter().map(|row| Ok((row.try_get("id")?, row.try_get("storage_key")?))).collect()
    }

    /// The files of `jobs` (of the scope) are deleted from storage.
    pub async fn files_deleted(&self, jobs: &[Uuid]) -> Result<(), StoreError> {
        let client = self.pool.get().await?;
        client.execute(&client.prepare_cached(FILES_DELETED).await?, &[&jobs]).await?;
        Ok(())
    }

    /// Steps 3 to 5, then the audit row: what was `found` is gone.
    pub async fn delete_rows(&self, found: &Inventory) -> Result<(), StoreError> {
        self.repeat(DELETE_JOBS).await?;
        self.repeat(DELETE_BATCHES).await?;
        let (tenant, user) = self.scope.params();
        let client = self.pool.get().await?;
        client.execute(&client.prepare_cached(DELETE_REST).await?, &[&tenant, &user]).await?;
        if let (Some(keys), None) = (self.keys, user) {
            keys.forget(tenant);
        }
        let (audited, affected) = (self.scope.audited(), i32::try_from(found.total()).unwrap_or(i32::MAX));
        client.execute(&client.prepare_cached(AUDIT).await?, &[&self.by, &audited, &affected]).await?;
        Ok(())
    }

    /// Runs `statement` on the scope until it deletes fewer than a step's rows.
    async fn repeat(&self, statement: &str) -> Result<(), StoreError> {
        let (tenant, user) = self.scope.params();
        let client = self.pool.get().await?;
        let prepared = client.prepare_cached(statement).await?;
        while client.execute(&prepared, &[&tenant, &user, &STEP]).await? == STEP.unsigned_abs() {}
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_audit_keeps_a_hash_of_the_user_never_the_id() {
        let scope =
            ErasureScope { tenant: TenantId::parse("acme").unwrap(), user: Some(UserId::parse("alice").unwrap()) };
        let audited = scope.audited().to_string();
        assert!(!audited.contains("alice"), "{audited}");
        // sha256("alice")
        assert!(audited.contains("2bd806c97f0e00af1a1fc3328fa763a9269723c8db8fac4f93af71db186d6e90"), "{audited}");
    }
}
