//! How attempts end: recorded in batches by the Completer (workers' ends) and
//! the Rescuer (expired leases), one statement per batch.
//!
//! Every end is fenced: it changes a job only while that job's queue row is
//! `running` under the lease the ender names (and, for a rescue, only once
//! that lease has expired). A worker whose lease was taken away changes
//! nothing. A terminal end deletes the queue row, writes the job record's
//! final state, its one notification, (with email on) its one outbox email
//! and (with Web Push on) its one message per subscribed device, all in the
//! same statement; and the statement announces the batch's
//! notifications with one NOTIFY per 400 distinct owners (NOTIFY takes a
//! cluster-wide lock at commit, so never one per job).

use std::time::Duration;

use serde_json::Value;
use tokio_postgres::Row;

use crate::domain::{JobId, JobState, LeaseId, Outcome, TenantId, UserId};
use crate::store::queue::millis;
use crate::store::{Queue, StoreError};

/// Who ends an attempt: its worker, or the rescuer once its lease expired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ender {
    Worker,
    /// Ends only attempts whose lease has expired (a heartbeat may have
    /// renewed it since the rescuer looked).
    Rescuer,
}

/// One attempt to end: which job, under which lease, how.
#[derive(Debug, Clone)]
pub struct Completion {
    pub id: JobId,
    pub lease: LeaseId,
    pub outcome: Outcome,
    pub ender: Ender,
}

/// An attempt's recorded end: the job's new state (terminal, or waiting to
/// run again). A terminal state's notification is written in the same
/// statement; the Notifier, told of the end, wakes the owner's streams.
#[derive(Debug, Clone)]
pub struct EndedAttempt {
    pub job: JobId,
    pub tenant: TenantId,
    pub user: UserId,
    pub job_type: String,
    pub state: JobState,
    pub error_message: Option<String>,
    /// The statement that ended it wrote an email, or a Web Push message,
    /// due now (not held for quiet hours or a digest): the sender has work.
    pub outbox_due: OutboxDue,
}

/// Whether an ending statement left the senders something to send now.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OutboxDue {
    pub emails: bool,
    pub pushes: bool,
}

/// What a rescue pass did.
#[derive(Debug, Default)]
pub struct Rescued {
    /// Jobs put back to run again.
    pub requeued: u64,
    /// Jobs out of attempts, now failed and notified.
    pub failed: Vec<EndedAttempt>,
}

/// Ends the attempts `$1` (leases `$2`) with the states `$3`, results `$4`,
/// errors `$5`, retry delays `$6` ms; `$7` marks rescues; `$8` whether to
/// write outbox emails; `$9` the notification preferences' rules (each
/// owner's choices are read here, so a change counts from the next end on);
/// `$10` the job types with a breaker and `$11` their `breaker_after` (see
/// `job_breakers`); `$12` whether to write Web Push messages. Returns each
/// attempt that was still its ender's, and whether the statement wrote an
/// email or a push due now (what the senders are woken for).
/// The owner tag is `OwnerTag` in `domain/ids.rs`: who to wake, not what happened.
///
/// A job whose cancel was asked for (`cancel_requested_by`) never runs
/// again: any end but a completion ends it `cancelled` (see `job_queue.cancel_requested_by`). An owner's
/// cancel and a supersede are told to their streams only (`errand_cancel_kind`:
/// kept out of the feed, no email); an operator's is a `job_completed` like any end.
const FINISH_FENCED: &str = "
WITH input AS (
    SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::job_state[], $4::jsonb[], $5::text[], $6::float8[], $7::bool[])
        AS input (job_id, lease_id, state, result, error, delay_ms, rescue)
), ended AS (
    SELECT q.job_id, q.attempt, q.started_at, q.lease_owner, q.resumed_from,
           -- A file uploaded for the attempt (worker API) is its result, the
           -- ender's fields beside it (the file's own win).
           CASE WHEN q.uploaded_result IS NOT NULL AND i.state = 'completed'
                THEN coalesce(i.result, '{}') || q.uploaded_result ELSE i.result END AS result,
           i.delay_ms, j.tenant_id, j.user_id, j.user_email, j.job_type,
           j.run, q.cancel_requested_by, i.error AS attempt_error,
           -- A worker's end is remembered under its lease (a retried call
           -- finds it); a rescue's is not: the worker never ended it.
           CASE WHEN i.rescue THEN NULL ELSE i.lease_id END AS ended_lease_id,
           CASE WHEN q.cancel_requested_by IS NOT NULL AND i.state <> 'completed' THEN 'cancelled' ELSE i.state END
               AS state,
           CASE WHEN q.cancel_requested_by IS NOT NULL AND i.state <> 'completed'
                THEN errand_cancel_error(q.cancel_requested_by) ELSE i.error END AS error
    FROM job_queue q
    JOIN input i ON i.job_id = q.job_id
    JOIN jobs j ON j.id = q.job_id
    WHERE q.state = 'running' AND q.lease_id = i.lease_id AND (NOT i.rescue OR q.lease_expires_at < now())
    ORDER BY q.job_id  -- locked in job order, as RENEW_LEASES locks: no deadlock between them
    FOR UPDATE OF q
), breaker_counts AS (
    -- Failed attempts (to run again or not) and completions, per type with
    -- a breaker; what a process handed back or a cancel ended is neither.
    SELECT e.job_type, t.after,
           count(*) FILTER (WHERE e.state IN ('retryable', 'failed')) AS failed,
           count(*) FILTER (WHERE e.state = 'completed') AS completed,
           (array_agg(e.attempt_error ORDER BY e.job_id) FILTER (WHERE e.state IN ('retryable', 'failed')))[1]
               AS last_error
    FROM ended e JOIN unnest($10::text[], $11::integer[]) AS t (job_type, after) ON t.job_type = e.job_type
    WHERE e.state IN ('retryable', 'failed', 'completed')
    GROUP BY e.job_type, t.after
), breakers AS (
    -- A completion among them starts the count again (the order of a
    -- statement's ends is not kept); locked in type order: no deadlock.
    INSERT INTO job_breakers AS b (job_type, failures, last_error)
    SELECT c.job_type, CASE WHEN c.completed > 0 THEN 0 ELSE c.failed END, c.last_error
    FROM breaker_counts c ORDER BY c.job_type
    ON CONFLICT (job_type) DO UPDATE
    SET failures = CASE WHEN EXCLUDED.failures = 0 THEN 0 ELSE b.failures + EXCLUDED.failures END,
        last_error = coalesce(EXCLUDED.last_error, b.last_error)
    RETURNING b.job_type, b.failures, b.last_error
), tripped AS (
    INSERT INTO job_pauses (job_type, reason, paused_by)
    SELECT b.job_type,
           left(format('%s attempts in a row failed; the last: %s', b.failures, coalesce(b.last_error, '-')), 500),
           'errand:breaker'
    FROM breakers b JOIN breaker_counts c ON c.job_type = b.job_type
    WHERE b.failures >= c.after
    -- A pause of the type that holds stays as it is; in place of one that
    -- ended (its scope ramping), a new one.
    ON CONFLICT (coalesce(tenant_id, ''), coalesce(job_type, '')) DO UPDATE
    SET id = EXCLUDED.id, reason = EXCLUDED.reason, paused_by = EXCLUDED.paused_by, paused_at = now(),
        until = NULL, resumed_at = NULL, ramp = NULL
    WHERE NOT EXISTS (SELECT 1 FROM job_pauses_now n WHERE n.id = job_pauses.id)
    RETURNING id, job_type, paused_at
), told_paused AS (  -- the tenants' endpoints that asked for `type.paused`
    SELECT errand_queue_pause_webhooks(t.id, t.job_type, NULL, t.paused_at, NULL, 'errand:breaker') AS queued
    FROM tripped t
), again AS (
    UPDATE job_queue q
    SET state = e.state, run_at = now() + e.delay_ms * interval '1 millisecond', last_error = e.error,
        lease_id = NULL, lease_owner = NULL, lease_expires_at = NULL, last_lease_id = e.ended_lease_id,
        uploaded_result = NULL  -- the next attempt's result is its own (errand_discard_upload discards this one's)
    FROM ended e
    WHERE q.job_id = e.job_id AND e.state IN ('available', 'retryable')
), dequeued AS (
    DELETE FROM job_queue q USING ended e
    WHERE q.job_id = e.job_id AND e.state IN ('completed', 'failed', 'cancelled')
), finished AS (
    UPDATE jobs j
    SET state = e.state, attempt = e.attempt,
        result = CASE WHEN f.expires_at < (e.result->>'expires_at')::timestamptz
                      THEN jsonb_set(e.result, '{expires_at}', to_jsonb(f.expires_at)) ELSE e.result END,
        result_expires_at = f.expires_at,
        error_message = e.error,
        started_at = e.started_at, finished_at = clock_timestamp(), ended_lease_id = e.ended_lease_id,
        ended_by = e.lease_owner, resumed_from = e.resumed_from
    FROM ended e
    -- Only a file errand stored has an expiry (its record holds the key):
    -- the record's, or sooner where its tenant keeps files shorter
    -- (`tenant_retention`: the shortest of the tenant's and the tenant × type's).
    CROSS JOIN LATERAL (
        SELECT CASE WHEN e.result ? 'storage_key' THEN
                   least((e.result->>'expires_at')::timestamptz,
                         now() + (SELECT min(t.result_retention) FROM tenant_retention t
                                  WHERE t.tenant_id = e.tenant_id AND t.job_type IN ('', e.job_type)))
               END AS expires_at
    ) f
    WHERE j.id = e.job_id AND e.state IN ('completed', 'failed', 'cancelled')
    RETURNING j.id, j.tenant_id, j.user_id, j.user_email, j.locale, j.job_type, j.state, j.error_message, j.run, j.batch_id,
              CASE WHEN j.state = 'cancelled' THEN errand_cancel_kind(e.cancel_requested_by) ELSE 'job_completed' END
                  AS kind
), wanted AS (
    SELECT f.*, w.in_app, w.email, w.push, w.digest, w.required
    FROM finished f
    CROSS JOIN LATERAL errand_channels(f.tenant_id, f.user_id, errand_category(f.job_type, $9), $9) w
), errors_kept AS (
    INSERT INTO job_attempt_errors (job_id, run, attempt, error, started_at, lease_id, lease_owner, resumed_from)
    SELECT e.job_id, e.run, e.attempt, e.attempt_error, e.started_at, i.lease_id, e.lease_owner, e.resumed_from
    FROM ended e JOIN input i ON i.job_id = e.job_id
    WHERE e.attempt_error IS NOT NULL AND e.state <> 'cancelled'
    ON CONFLICT DO NOTHING
), notified AS (
    INSERT INTO notifications (tenant_id, user_id, kind, job_id, run, job_type, job_status, error_message, locale)
    SELECT tenant_id, user_id, kind, id, run, job_type, state::text, error_message, locale
    FROM wanted
    -- A streams-only kind (an owner's own cancel, a supersede) is their
    -- streams' signal, not a notification; a batch's children are told of
    -- together, by the batch's notification.
    WHERE (in_app AND batch_id IS NULL) OR kind <> 'job_completed'
    ON CONFLICT (job_id, run, kind) DO NOTHING
    RETURNING id, job_id, tenant_id, user_id
), emailed AS (
    INSERT INTO email_outbox (job_id, run, tenant_id, user_id, recipient, job_type, job_status, error_message,
                              next_attempt_at, state)
    SELECT w.id, w.run, w.tenant_id, w.user_id, w.user_email, w.job_type, w.state::text, w.error_message,
           errand_send_at(w.required, ns.timezone, ns.quiet_start, ns.quiet_end), errand_email_state(w.digest)
    FROM wanted w
    LEFT JOIN notification_settings ns ON ns.tenant_id = w.tenant_id AND ns.user_id = w.user_id
    WHERE $8 AND email AND user_email IS NOT NULL AND kind = 'job_completed' AND batch_id IS NULL
    ON CONFLICT (job_id, run) DO NOTHING
    RETURNING state = 'pending' AND next_attempt_at <= now() AS due
), pushed AS (  -- one Web Push message per device the owner subscribed, when $12
    INSERT INTO push_outbox (subscription_id, job_id, run, tenant_id, user_id, notification_id, job_type, job_status,
                             next_attempt_at)
    SELECT s.id, w.id, w.run, w.tenant_id, w.user_id, n.id, w.job_type, w.state::text,
           errand_send_at(w.required, ns.timezone, ns.quiet_start, ns.quiet_end)
    FROM wanted w
    JOIN push_subscriptions s ON s.tenant_id = w.tenant_id AND s.user_id = w.user_id
    LEFT JOIN notified n ON n.job_id = w.id
    LEFT JOIN notification_settings ns ON ns.tenant_id = w.tenant_id AND ns.user_id = w.user_id
    WHERE $12 AND w.push AND w.kind = 'job_completed' AND w.batch_id IS NULL
    ON CONFLICT (job_id, run, subscription_id) DO NOTHING
    RETURNING next_attempt_at <= now() AS due
), hooked AS (  -- the tenant's webhook deliveries (see errand_queue_webhooks)
    SELECT errand_queue_webhooks(array_agg(tenant_id), array_agg(id), array_agg(run), array_agg(state::text),
                                 array_agg(errand_webhook_category(job_type, $9))) AS queued
    FROM finished
), announced AS (
    SELECT pg_notify('errand_notifications', string_agg(tag, ','))
    FROM (SELECT tag, (row_number() OVER (ORDER BY tag) - 1) / 400 AS chunk
          FROM (SELECT DISTINCT errand_owner_tag(tenant_id, user_id) AS tag
                FROM notified) owners) tags
    GROUP BY chunk
)
-- (`announced` and `hooked` are read here because a CTE that writes nothing
-- runs only when something reads it.)
SELECT e.job_id, e.tenant_id, e.user_id, e.job_type, e.state, e.error,
       (SELECT count(*) FROM announced) AS announcements,
       (SELECT queued FROM hooked) + (SELECT coalesce(sum(queued), 0) FROM told_paused) AS webhooks,
       (SELECT coalesce(bool_or(due), false) FROM emailed) AS emails_due,
       (SELECT coalesce(bool_or(due), false) FROM pushed) AS pushes_due
FROM ended e";

/// Running attempts whose lease expired, oldest expiry first.
const EXPIRED_LEASES: &str = "
SELECT q.job_id, q.lease_id, q.attempt, j.max_attempts
FROM job_queue q JOIN jobs j ON j.id = q.job_id
WHERE q.state = 'running' AND q.lease_expires_at < now() - $2 * interval '1 millisecond'
ORDER BY q.lease_expires_at
LIMIT $1";

/// What the rescuer writes on a job whose worker vanished.
const VANISHED: &str = "the worker running this job stopped responding";

impl Queue<'_> {
    /// Ends many attempts in one statement, each fenced on its own lease;
    /// terminal ones get their notification in the same statement. Returns
    /// what was ended; fenced-off attempts are absent.
    #[tracing::instrument(skip_all, fields(n = batch.len()))]
    pub async fn finish_many_if_running(&self, batch: &[Completion]) -> Result<Vec<EndedAttempt>, StoreError> {
        let n = batch.len();
        let (mut ids, mut leases, mut states) = (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
        let (mut results, mut errors, mut delays) =
            (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
        let mut rescues = Vec::with_capacity(n);
        for c in batch {
            let (state, result, error, delay): (_, Option<&Value>, Option<&str>, _) = match &c.outcome {
                Outcome::Completed { result } => (JobState::Completed, result.as_ref(), None, 0.0),
                Outcome::Retry { error, delay } => (JobState::Retryable, None, Some(error), millis(*delay)),
                Outcome::Requeue { error } => (JobState::Available, None, Some(error), 0.0),
                Outcome::Failed { error } => (JobState::Failed, None, Some(error), 0.0),
                Outcome::Cancelled => (JobState::Cancelled, None, None, 0.0),
            };
            ids.push(c.id.0);
            leases.push(c.lease.0);
            states.push(state);
            results.push(result);
            errors.push(error);
            delays.push(delay);
            rescues.push(c.ender == Ender::Rescuer);
        }
        let client = self.pool.get().await?;
        let statement = client.prepare_cached(FINISH_FENCED).await?;
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 12] = [
            &ids,
            &leases,
            &states,
            &results,
            &errors,
            &delays,
            &rescues,
            &self.endings.email_outbox,
            self.endings.rules.as_sql(),
            &self.endings.breaker_types,
            &self.endings.breaker_after,
            &self.endings.push_outbox,
        ];
        let rows = client.query(&statement, &params).await?;
        rows.iter().map(ended_from_row).collect()
    }

    /// Ends the attempts whose lease expired more than `grace` ago (their
    /// worker died, or lost the database for longer): run again, or failed
    /// with their notification when no attempts remain. A job that runs long
    /// but heartbeats is never rescued; nor is one whose process lost the
    /// database for less than the lease and `grace` together: once back, it
    /// renews its leases (and records the ends it kept) before they are due.
    pub async fn rescue_expired(&self, limit: i64, grace: Duration) -> Result<Rescued, StoreError> {
        let expired = {
            let client = self.pool.get().await?;
            client.query(&client.prepare_cached(EXPIRED_LEASES).await?, &[&limit, &millis(grace)]).await?
        };
        let mut batch = Vec::with_capacity(expired.len());
        for row in &expired {
            let (attempt, max_attempts): (i32, i32) = (row.try_get("attempt")?, row.try_get("max_attempts")?);
            let error = VANISHED.to_owned();
            batch.push(Completion {
                id: JobId(row.try_get("job_id")?),
                lease: LeaseId(row.try_get("lease_id")?),
                outcome: if attempt < max_attempts { Outcome::Requeue { error } } else { Outcome::Failed { error } },
                ender: Ender::Rescuer,
            });
        }
        if batch.is_empty() {
            return Ok(Rescued::default());
        }
        let mut rescued = Rescued::default();
        for ended in self.finish_many_if_running(&batch).await? {
            if ended.state.is_terminal() {
                rescued.failed.push(ended);
            } else {
                rescued.requeued += 1;
            }
        }
        Ok(rescued)
    }
}

fn ended_from_row(row: &Row) -> Result<EndedAttempt, StoreError> {
    Ok(EndedAttempt {
        job: JobId(row.try_get("job_id")?),
        tenant: TenantId::parse(row.try_get::<_, String>("tenant_id")?)?,
        user: UserId::parse(row.try_get::<_, String>("user_id")?)?,
        job_type: row.try_get("job_type")?,
        state: row.try_get("state")?,
        error_message: row.try_get("error")?,
        outbox_due: OutboxDue { emails: row.try_get("emails_due")?, pushes: row.try_get("pushes_due")? },
    })
}
