//! Web Push in the store: the devices one caller subscribed
//! ([`CallerPushSubscriptions`], scoped like their jobs), and the push
//! outbox from the PushSender's side ([`PushOutbox`]). Messages are written
//! only by the statements that end jobs (`finish.rs`, `cancel.rs`), one per
//! end and subscribed device; every record is fenced on (state `sending`,
//! this attempt), as the email outbox's are, and a batch's are one statement.

use std::time::Duration;

use chrono::{DateTime, Utc};
use deadpool_postgres::Pool;
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;
use uuid::Uuid;

use crate::domain::{Caller, JobId, JobState, Locale, TenantId, UserId};
use crate::store::StoreError;
use crate::store::pool::tenant_scope::TenantPool;
use crate::store::queue::lost_claims::LostClaim;

/// A device the caller subscribed.
#[derive(Debug, Clone)]
pub struct PushSubscription {
    pub id: Uuid,
    pub endpoint: String,
    pub user_agent: Option<String>,
    pub created_at: DateTime<Utc>,
}

/// A subscription to record, its keys checked (`outbound::web_push`).
#[derive(Debug, Clone, Copy)]
pub struct NewPushSubscription<'a> {
    pub endpoint: &'a str,
    pub p256dh: &'a str,
    pub auth: &'a str,
    pub user_agent: Option<&'a str>,
}

/// What subscribing did.
#[derive(Debug, Clone)]
pub enum Subscribed {
    /// A new device.
    Created(PushSubscription),
    /// A device already subscribed (the same endpoint): its keys as given now.
    Renewed(PushSubscription),
    /// The caller has the most devices allowed.
    TooMany,
}

/// Serialises one user's subscribing (`$1` tenant, `$2` user), so that two
/// at once cannot both pass the count below: held to the transaction's end.
const LOCK_USER: &str = "SELECT pg_advisory_xact_lock(hashtextextended('errand.push:' || $1 || ':' || $2, 0))";

/// Records the subscription `$3` (keys `$4`, `$5`; user agent `$6`) of user
/// `$2` of tenant `$1`, unless they have `$7` others already; the same
/// endpoint again is the same row, with the keys it has now.
const SUBSCRIBE: &str = "
INSERT INTO push_subscriptions AS s (tenant_id, user_id, endpoint, p256dh, auth, user_agent)
SELECT $1, $2, $3, $4, $5, $6
WHERE (SELECT count(*) FROM push_subscriptions
       WHERE tenant_id = $1 AND user_id = $2 AND endpoint <> $3) < $7
ON CONFLICT (tenant_id, user_id, endpoint) DO UPDATE
SET p256dh = EXCLUDED.p256dh, auth = EXCLUDED.auth, user_agent = EXCLUDED.user_agent
RETURNING id, endpoint, user_agent, created_at, (xmax = 0) AS created";

/// The caller's (`$1`, `$2`) subscriptions, oldest first.
const LIST: &str = "
SELECT id, endpoint, user_agent, created_at FROM push_subscriptions
WHERE tenant_id = $1 AND user_id = $2 ORDER BY id";

/// Deletes the caller's subscription `$3`.
const UNSUBSCRIBE: &str = "DELETE FROM push_subscriptions WHERE tenant_id = $1 AND user_id = $2 AND id = $3";

/// The Web Push subscriptions of the caller's user in the caller's tenant.
pub struct CallerPushSubscriptions<'a> {
    pub(in crate::store) pool: TenantPool,
    pub(in crate::store) caller: &'a Caller,
}

impl CallerPushSubscriptions<'_> {
    /// Subscribes a device, keeping the caller to `limit` devices.
    pub async fn subscribe(&self, new: NewPushSubscription<'_>, limit: usize) -> Result<Subscribed, StoreError> {
        let client = self.pool.get().await?;
        let (tenant, user) = (self.caller.tenant.as_str(), self.caller.user.as_str());
        client.execute(&client.prepare_cached(LOCK_USER).await?, &[&tenant, &user]).await?;
        let others = i64::try_from(limit).unwrap_or(i64::MAX);
        let params: [&(dyn ToSql + Sync); 7] =
            [&tenant, &user, &new.endpoint, &new.p256dh, &new.auth, &new.user_agent, &others];
        let row = client.query_opt(&client.prepare_cached(SUBSCRIBE).await?, &params).await?;
        client.commit().await?;
        let Some(row) = row else { return Ok(Subscribed::TooMany) };
        let subscription = subscription_from_row(&row)?;
        Ok(if row.try_get("created")? { Subscribed::Created(subscription) } else { Subscribed::Renewed(subscription) })
    }

    /// The caller's devices, oldest first.
    pub async fn list(&self) -> Result<Vec<PushSubscription>, StoreError> {
        let client = self.pool.get().await?;
        let (tenant, user) = (self.caller.tenant.as_str(), self.caller.user.as_str());
        let rows = client.query(&client.prepare_cached(LIST).await?, &[&tenant, &user]).await?;
        rows.iter().map(subscription_from_row).collect()
    }

    /// Unsubscribes the caller's device `id`; `false` if they have no such device.
    pub async fn unsubscribe(&self, id: Uuid) -> Result<bool, StoreError> {
        let client = self.pool.get().await?;
        let (tenant, user) = (self.caller.tenant.as_str(), self.caller.user.as_str());
        let deleted = client.execute(&client.prepare_cached(UNSUBSCRIBE).await?, &[&tenant, &user, &id]).await?;
        client.commit().await?;
        Ok(deleted == 1)
    }
}

fn subscription_from_row(row: &Row) -> Result<PushSubscription, StoreError> {
    Ok(PushSubscription {
        id: row.try_get("id")?,
        endpoint: row.try_get("endpoint")?,
        user_agent: row.try_get("user_agent")?,
        created_at: row.try_get("created_at")?,
    })
}

/// A message to send now: to which device, and what it tells of its job.
/// (Its key: the job, the run and the subscription.)
#[derive(Debug, Clone)]
pub struct OutboxPush {
    pub run: i32,
    pub subscription: Uuid,
    /// This delivery attempt, 1-based.
    pub attempt: i32,
    /// The device, while it is subscribed: its endpoint and keys.
    pub device: Option<PushDevice>,
    pub job: JobId,
    pub tenant: TenantId,
    pub user: UserId,
    /// The in-app notification of the same end, when there is one.
    pub notification: Option<Uuid>,
    pub job_type: String,
    pub job_status: JobState,
    pub error_message: Option<String>,
    pub result: Option<serde_json::Value>,
    pub finished_at: Option<DateTime<Utc>>,
    /// The language its job was asked for in.
    pub locale: Locale,
}

/// A subscribed device's endpoint and keys, as stored (its id is the
/// message's `subscription`).
#[derive(Debug, Clone)]
pub struct PushDevice {
    pub endpoint: String,
    pub p256dh: String,
    pub auth: String,
}

/// Claims due messages (locked by state and lock time, as emails are), with
/// their device and their job's end. The claim's id is $3 (`lost_claims.rs`).
const CLAIM_DUE: &str = "
WITH due AS (
    SELECT job_id, run, subscription_id FROM push_outbox
    WHERE state IN ('pending', 'sending') AND next_attempt_at <= now()
    ORDER BY next_attempt_at LIMIT $1
    FOR UPDATE SKIP LOCKED
), claimed AS (
    UPDATE push_outbox o
    SET state = 'sending', attempts = o.attempts + 1, next_attempt_at = now() + $2 * interval '1 millisecond',
        claim_id = $3
    FROM due
    WHERE o.job_id = due.job_id AND o.run = due.run AND o.subscription_id = due.subscription_id
    RETURNING o.job_id, o.run, o.subscription_id, o.notification_id, o.job_type, o.job_status, o.attempts
)
SELECT c.job_id, c.run, c.subscription_id, c.notification_id, c.job_type, c.job_status, c.attempts,
       s.endpoint, s.p256dh, s.auth, j.tenant_id, j.user_id, j.error_message, j.result, j.finished_at, j.locale
FROM claimed c JOIN jobs j ON j.id = c.job_id
LEFT JOIN push_subscriptions s ON s.id = c.subscription_id";

/// Ends the sends of messages (`$1` jobs, `$2` runs, `$3` subscriptions;
/// numbers `$4`) still this sender's, each as `$5` (`sent`, `pending` again
/// in `$8` ms, or `failed`), with the push service's status `$6` and the
/// error `$7`.
const RECORD: &str = "
UPDATE push_outbox o
SET state = i.state::email_state, response_status = i.status, last_error = i.error,
    sent_at = CASE WHEN i.state = 'sent' THEN now() END,
    next_attempt_at = now() + coalesce(i.delay_ms, 0) * interval '1 millisecond'
FROM unnest($1::uuid[], $2::integer[], $3::uuid[], $4::integer[], $5::text[], $6::integer[], $7::text[],
            $8::float8[])
    AS i (job_id, run, subscription_id, attempt, state, status, error, delay_ms)
WHERE o.job_id = i.job_id AND o.run = i.run AND o.subscription_id = i.subscription_id
  AND o.state = 'sending' AND o.attempts = i.attempt";

/// The push service no longer knows the devices `$1`: forget them (their
/// messages still waiting find no device when claimed, and are given up on).
const FORGET_DEVICES: &str = "DELETE FROM push_subscriptions WHERE id = ANY ($1)";

/// What became of one attempt of a message.
#[derive(Debug, Clone)]
pub enum PushOutcome {
    /// The push service took it (201), answering `status`.
    Sent { status: u16 },
    /// Try again after `delay`.
    Retry { status: Option<u16>, error: String, delay: Duration },
    /// Given up on: refused, out of attempts, or its device gone.
    Failed { status: Option<u16>, error: String },
}

/// The push outbox.
pub struct PushOutbox<'a> {
    pub(in crate::store) pool: &'a Pool,
    pub(in crate::store) sealer: &'a crate::store::Sealer,
}

impl PushOutbox<'_> {
    /// Claims up to `limit` due messages for `lock` (see `Outbox::claim_due`).
    pub async fn claim_due(&self, limit: i64, lock: Duration) -> Result<Vec<OutboxPush>, StoreError> {
        let client = self.pool.get().await?;
        let statement = client.prepare_cached(CLAIM_DUE).await?;
        let claim = Uuid::new_v4();
        let rows = client.query(&statement, &[&limit, &(lock.as_secs_f64() * 1000.0), &claim]).await;
        let rows = LostClaim::Pushes { claim, lock }.settle(self.pool, rows)?;
        let mut pushes = rows.iter().map(push_from_row).collect::<Result<Vec<_>, _>>()?;
        for push in &mut pushes {
            if let Some(result) = &mut push.result {
                use crate::domain::sealing::Purpose;
                self.sealer.open_for_view(push.tenant.as_str(), result, Purpose::Result).await?;
            }
        }
        Ok(pushes)
    }

    /// Records what became of each attempt, in one statement; those no
    /// longer this sender's (their lock ran out and another took them) are
    /// left as they are.
    pub async fn record(&self, attempts: &[(OutboxPush, PushOutcome)]) -> Result<(), StoreError> {
        let n = attempts.len();
        let (mut jobs, mut runs, mut devices) = (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
        let (mut numbers, mut states) = (Vec::with_capacity(n), Vec::with_capacity(n));
        let (mut statuses, mut errors, mut delays) =
            (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
        for (push, outcome) in attempts {
            let (state, status, error, delay_ms) = match outcome {
                PushOutcome::Sent { status } => ("sent", Some(*status), None, None),
                PushOutcome::Retry { status, error, delay } => {
                    ("pending", *status, Some(error.as_str()), Some(delay.as_secs_f64() * 1000.0))
                }
                PushOutcome::Failed { status, error } => ("failed", *status, Some(error.as_str()), None),
            };
            jobs.push(push.job.0);
            runs.push(push.run);
            devices.push(push.subscription);
            numbers.push(push.attempt);
            states.push(state);
            statuses.push(status.map(i32::from));
            errors.push(error);
            delays.push(delay_ms);
        }
        let client = self.pool.get().await?;
        let statement = client.prepare_cached(RECORD).await?;
        let params: [&(dyn ToSql + Sync); 8] = [&jobs, &runs, &devices, &numbers, &states, &statuses, &errors, &delays];
        client.execute(&statement, &params).await?;
        Ok(())
    }

    /// Forgets the devices `subscriptions`: their push service said they are gone.
    pub async fn forget_devices(&self, subscriptions: &[Uuid]) -> Result<(), StoreError> {
        let client = self.pool.get().await?;
        client.execute(&client.prepare_cached(FORGET_DEVICES).await?, &[&subscriptions]).await?;
        Ok(())
    }
}

fn push_from_row(row: &Row) -> Result<OutboxPush, StoreError> {
    let device = match row.try_get::<_, Option<String>>("endpoint")? {
        Some(endpoint) => Some(PushDevice { endpoint, p256dh: row.try_get("p256dh")?, auth: row.try_get("auth")? }),
        None => None,
    };
    Ok(OutboxPush {
        run: row.try_get("run")?,
        subscription: row.try_get("subscription_id")?,
        attempt: row.try_get("attempts")?,
        device,
        job: JobId(row.try_get("job_id")?),
        tenant: TenantId::parse(row.try_get::<_, String>("tenant_id")?)?,
        user: UserId::parse(row.try_get::<_, String>("user_id")?)?,
        notification: row.try_get("notification_id")?,
        job_type: row.try_get("job_type")?,
        job_status: row.try_get::<_, String>("job_status")?.parse::<JobState>()?,
        error_message: row.try_get("error_message")?,
        result: row.try_get("result")?,
        finished_at: row.try_get("finished_at")?,
        locale: Locale::parse(&row.try_get::<_, String>("locale")?).unwrap_or(Locale::ENGLISH),
    })
}
