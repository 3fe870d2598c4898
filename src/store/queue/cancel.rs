//! Cancelling a job (see `job_queue.cancel_requested_by` in `migrations/`): one
//! transaction that locks the job's queue row, so it is settled against a
//! claim, an end or a rescue of the same job by the row lock, not by timing.
//! A job still waiting ends at once; a running one is asked to stop, and the
//! process holding its lease hears of it through `NOTIFY errand_cancel`.

use deadpool_postgres::GenericClient;

use crate::domain::{Job, JobId, JobState};
use crate::store::StoreError;
use crate::store::jobs::CallerJobs;

/// Who asked for the cancel: it decides who is told (see `notifications.kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CancelledBy {
    Owner,
    Operator,
    /// A newer request with the job's admission key (`on_conflict = "supersede"`).
    Superseded,
}

impl CancelledBy {
    fn as_sql(self) -> &'static str {
        match self {
            Self::Owner => "owner",
            Self::Operator => "operator",
            Self::Superseded => "superseded",
        }
    }
}

/// What a cancel did.
#[derive(Debug)]
pub enum CancelOutcome {
    /// The job is cancelled (now, or by an earlier cancel).
    Cancelled(Job),
    /// The job is running: its worker was asked to stop and will end it `cancelled`.
    Stopping(Job),
    /// It had already completed or failed: nothing changed.
    AlreadyEnded(JobState),
    /// No such job (of the caller's).
    NotFound,
}

/// The caller's job's queue row, locked: `$1` tenant, `$2` user, `$3` job.
pub(in crate::store) const LOCK_OWN: &str = "
SELECT q.state FROM job_queue q JOIN jobs j ON j.id = q.job_id
WHERE q.job_id = $3 AND j.tenant_id = $1 AND j.user_id = $2
FOR UPDATE OF q";

/// Ends the waiting job `$1` as `cancelled` by `$2` (`owner`, `operator`
/// or `superseded`), with its notification (`errand_cancel_kind`: an
/// owner's cancel and a supersede are told to the owner's streams only; an
/// operator's is a `job_completed`, and an email when `$3` and Web Push
/// messages when `$5`, as far as the owner's preferences under the rules
/// `$4` allow), announced to the owner's streams.
const END_WAITING: &str = "
WITH dequeued AS (
    DELETE FROM job_queue WHERE job_id = $1 AND state IN ('available', 'retryable')
    RETURNING job_id, attempt
), finished AS (
    UPDATE jobs j
    SET state = 'cancelled', attempt = d.attempt, finished_at = clock_timestamp(),
        error_message = errand_cancel_error($2)
    FROM dequeued d
    WHERE j.id = d.job_id
    RETURNING j.id, j.tenant_id, j.user_id, j.user_email, j.locale, j.job_type, j.error_message, j.run, j.batch_id,
              errand_cancel_kind($2) AS kind
), wanted AS (
    SELECT f.*, w.in_app, w.email, w.push, w.digest, w.required
    FROM finished f
    CROSS JOIN LATERAL errand_channels(f.tenant_id, f.user_id, errand_category(f.job_type, $4), $4) w
), notified AS (
    INSERT INTO notifications (tenant_id, user_id, kind, job_id, run, job_type, job_status, error_message, locale)
    SELECT tenant_id, user_id, kind, id, run, job_type, 'cancelled', error_message, locale
    FROM wanted
    -- A streams-only kind is their signal, not a notification; a batch's
    -- children are told of together, by the batch's notification.
    WHERE kind <> 'job_completed' OR (in_app AND batch_id IS NULL)
    ON CONFLICT (job_id, run, kind) DO NOTHING
    RETURNING id, job_id, tenant_id, user_id
), emailed AS (
    INSERT INTO email_outbox (job_id, run, tenant_id, user_id, recipient, job_type, job_status, error_message,
                              next_attempt_at, state)
    SELECT w.id, w.run, w.tenant_id, w.user_id, w.user_email, w.job_type, 'cancelled', w.error_message,
           errand_send_at(w.required, ns.timezone, ns.quiet_start, ns.quiet_end), errand_email_state(w.digest)
    FROM wanted w
    LEFT JOIN notification_settings ns ON ns.tenant_id = w.tenant_id AND ns.user_id = w.user_id
    WHERE $3 AND kind = 'job_completed' AND user_email IS NOT NULL AND email AND batch_id IS NULL
    ON CONFLICT (job_id, run) DO NOTHING
), pushed AS (  -- one Web Push message per device the owner subscribed, when $5
    INSERT INTO push_outbox (subscription_id, job_id, run, tenant_id, user_id, notification_id, job_type, job_status,
                             next_attempt_at)
    SELECT s.id, w.id, w.run, w.tenant_id, w.user_id, n.id, w.job_type, 'cancelled',
           errand_send_at(w.required, ns.timezone, ns.quiet_start, ns.quiet_end)
    FROM wanted w
    JOIN push_subscriptions s ON s.tenant_id = w.tenant_id AND s.user_id = w.user_id
    LEFT JOIN notified n ON n.job_id = w.id
    LEFT JOIN notification_settings ns ON ns.tenant_id = w.tenant_id AND ns.user_id = w.user_id
    WHERE $5 AND w.push AND w.kind = 'job_completed' AND w.batch_id IS NULL
    ON CONFLICT (job_id, run, subscription_id) DO NOTHING
), hooked AS (  -- the tenant's webhook deliveries (see errand_queue_webhooks)
    SELECT errand_queue_webhooks(array_agg(tenant_id), array_agg(id), array_agg(run), array_agg('cancelled'::text),
                                 array_agg(errand_webhook_category(job_type, $4))) AS queued
    FROM finished
)
SELECT (SELECT count(pg_notify('errand_notifications', errand_owner_tag(tenant_id, user_id))) FROM notified) AS announced,
       (SELECT queued FROM hooked) AS webhooks";

/// Asks the worker of the running job `$1` to stop (the first to ask is
/// recorded), and tells every process: the one holding its lease stops it.
const ASK_TO_STOP: &str = "
WITH asked AS (
    UPDATE job_queue SET cancel_requested_by = coalesce(cancel_requested_by, $2)
    WHERE job_id = $1 AND state = 'running'
    RETURNING job_id
)
SELECT pg_notify('errand_cancel', job_id::text) FROM asked";

impl CallerJobs<'_> {
    /// Cancels the caller's job `id` (see [`CancelOutcome`]). Idempotent: a
    /// second call finds the job cancelled, or still stopping.
    pub async fn cancel(&self, id: JobId) -> Result<CancelOutcome, StoreError> {
        let (tenant, user) = (self.caller.tenant.as_str(), self.caller.user.as_str());
        {
            // Given back before the read below, which takes a connection of its own.
            let tx = self.pool.get().await?;
            cancel_locked(&*tx, LOCK_OWN, &[&tenant, &user, &id.0], id, CancelledBy::Owner, None).await?;
            tx.commit().await?;
        }
        Ok(match self.get(id).await? {
            None => CancelOutcome::NotFound,
            Some(job) if job.state == JobState::Cancelled => CancelOutcome::Cancelled(job),
            Some(job) if job.state.is_terminal() => CancelOutcome::AlreadyEnded(job.state),
            // Running (and asked to stop); or put back in the queue by an
            // operator's retry just after this cancel: the caller may ask again.
            Some(job) => CancelOutcome::Stopping(job),
        })
    }
}

/// Within the caller's transaction (which neither begins nor commits
/// here, so that an operator's door can write its audit row beside it):
/// locks the job's queue row with `lock` (scoped as its caller must be; it
/// returns the row's `state`), then ends a waiting job or asks a running one
/// to stop. Answers the state it found; `None`: the job has ended, or is not there.
pub(in crate::store) async fn cancel_locked(
    tx: &impl GenericClient,
    lock: &str,
    lock_params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    id: JobId,
    by: CancelledBy,
    // What an operator's cancel writes (an owner's writes no email, and its
    // `job_cancelled` ignores preferences).
    endings: Option<&crate::store::Endings>,
) -> Result<Option<JobState>, StoreError> {
    let lock = tx.prepare_cached(lock).await?;
    let state: Option<JobState> =
        tx.query_opt(&lock, lock_params).await?.map(|row| row.try_get("state")).transpose()?;
    match state {
        Some(JobState::Available | JobState::Retryable) => {
            let end = tx.prepare_cached(END_WAITING).await?;
            let (email_outbox, rules, push_outbox) =
                endings.map_or((false, None, false), |e| (e.email_outbox, Some(e.rules.as_sql()), e.push_outbox));
            tx.query(&end, &[&id.0, &by.as_sql(), &email_outbox, &rules, &push_outbox]).await?;
        }
        Some(JobState::Running) => {
            let ask = tx.prepare_cached(ASK_TO_STOP).await?;
            tx.query(&ask, &[&id.0, &by.as_sql()]).await?;
        }
        _ => {}
    }
    Ok(state)
}
