//! Webhook deliveries, from the WebhookSender's side: claim due deliveries
//! with their endpoint and job, record each endpoint's answer at once. Rows
//! are written only by the statements that end jobs (`errand_queue_webhooks`).
//! Every record is fenced on (state `sending`, this attempt), so a sender
//! whose lock expired and whose delivery was claimed again records nothing.

use std::collections::HashMap;
use std::time::Duration;

use deadpool_postgres::Pool;
use tokio_postgres::types::ToSql;
use uuid::Uuid;

use crate::domain::{Job, JobTrace};
use crate::store::StoreError;
use crate::store::jobs::job_from_row;
use crate::store::queue::lost_claims::LostClaim;

/// A delivery to make now.
#[derive(Debug)]
pub struct WebhookDelivery {
    /// Also its `webhook-id`.
    pub id: Uuid,
    pub endpoint: Uuid,
    pub event: String,
    pub url: String,
    pub secret: String,
    /// This attempt, 1-based.
    pub attempt: i32,
    pub about: DeliverySubject,
    /// The trace of the request that recorded the delivery's job, if any.
    pub trace: Option<JobTrace>,
}

/// What a delivery tells of.
#[derive(Debug)]
pub enum DeliverySubject {
    /// A job's end (`job.*`): the job as it is now.
    Job(Box<Job>),
    /// Another event (`type.paused`): what it says, as written when queued.
    Event(serde_json::Value),
}

/// What became of one attempt.
#[derive(Debug)]
pub enum DeliveryOutcome {
    /// A 2xx answer.
    Delivered,
    /// Any other answer (`status`), or none: due again after `delay`, or
    /// failed for good when `delay` is `None`.
    Failed { status: Option<u16>, error: String, delay: Option<Duration> },
}

/// [`RECORD`]'s parameters, a column each.
#[derive(Default)]
struct RecordColumns<'a> {
    ids: Vec<Uuid>,
    attempts: Vec<i32>,
    delivered: Vec<bool>,
    statuses: Vec<Option<i32>>,
    errors: Vec<Option<&'a str>>,
    latencies: Vec<i32>,
    delays: Vec<Option<f64>>,
}

/// Claims up to $1 due deliveries of enabled endpoints for a lock of $2 ms,
/// under the claim id $3 (see `lost_claims.rs`), at most $4 in flight per
/// endpoint counting those the sender has in flight already ($5 endpoints,
/// $6 how many each): `errand_claim_webhook_deliveries` (in
/// `migrations/V1__baseline.sql`, which says how it picks, and why it is a
/// function).
const CLAIM_DUE: &str = "
SELECT delivery_id, endpoint_id, event, attempts, job_id FROM errand_claim_webhook_deliveries($1, $2, $3, $4, $5, $6)";

/// The claimed deliveries `$1` (endpoints `$2`, jobs `$3`): each endpoint's
/// URL and secret and the job as the API shows it. A statement of its own,
/// after the claim: a join in the claim's statement read the job with that
/// statement's snapshot, taken before the function's own, so a delivery
/// whose job ended just then could carry the job as it was before its end.
/// A delivery of another event than a job's end has its `details` instead.
const CLAIMED: &str = "
SELECT d.delivery_id, e.url, e.secret, e.tenant_id AS endpoint_tenant, k.version AS key_version,
       k.wrapped AS key_wrapped, w.details,
       j.id, j.tenant_id, j.user_id, j.job_type, j.params, j.state, j.attempt, j.max_attempts, j.run_at,
       j.result, j.error_message, j.created_at, j.finished_at, j.progress, j.cancel_requested_by, j.schedule_id,
       j.scheduled_for, j.priority, j.format, j.resumed_from, j.traceparent, j.trace_linked
FROM unnest($1::uuid[], $2::uuid[], $3::uuid[]) AS d (delivery_id, endpoint_id, job_id)
JOIN webhook_endpoints e ON e.id = d.endpoint_id
JOIN webhook_deliveries w ON w.id = d.delivery_id
LEFT JOIN tenant_keys k ON k.tenant_id = e.tenant_id
LEFT JOIN jobs_live j ON j.id = d.job_id";

/// Records attempts, one statement for all: of each delivery in $1, attempt
/// $2: delivered ($3 true) or not, the status $4, the error $5, the latency
/// $6 ms; due again in $7 ms, or failed for good when that is null. Each is
/// fenced on its attempt (a sender whose lock ran out records nothing).
const RECORD: &str = "
UPDATE webhook_deliveries d
SET state = CASE WHEN i.delivered THEN 'delivered'::webhook_delivery_state
                 WHEN i.delay_ms IS NULL THEN 'failed'
                 ELSE 'pending' END,
    delivered_at = CASE WHEN i.delivered THEN now() END,
    last_status = i.status, last_error = i.error, last_latency_ms = i.latency_ms,
    next_attempt_at = now() + coalesce(i.delay_ms, 0) * interval '1 millisecond'
FROM unnest($1::uuid[], $2::integer[], $3::boolean[], $4::integer[], $5::text[], $6::integer[], $7::float8[])
     AS i (id, attempt, delivered, status, error, latency_ms, delay_ms)
WHERE d.id = i.id AND d.state = 'sending' AND d.attempts = i.attempt";

/// Disables endpoint $1 if its last $2 deliveries that ended all failed,
/// saying why ($3), and tells the tenant's admins in their feeds; answers
/// its URL if it did. Which admins: those errand knows of, the ones who
/// registered any of the tenant's endpoints (a token's scope is all errand
/// sees of who is an admin). Once per disable: only the statement that set
/// `disabled_at` writes the notices. Its deliveries still waiting fail (one
/// in flight is recorded as it ends, and a retry of it is never claimed).
const DISABLE_IF_FAILING: &str = "
WITH recent AS (
    SELECT state FROM webhook_deliveries
    WHERE endpoint_id = $1 AND state IN ('delivered', 'failed')
    ORDER BY id DESC LIMIT $2
), disabled AS (
    UPDATE webhook_endpoints
    SET disabled_at = now(), disabled_reason = $3
    WHERE id = $1 AND disabled_at IS NULL
      AND (SELECT count(*) FROM recent WHERE state = 'failed') = $2
    RETURNING id, tenant_id, url
), abandoned AS (  -- its queued deliveries end: a disabled endpoint gets nothing more
    UPDATE webhook_deliveries d
    SET state = 'failed', last_error = 'its endpoint was disabled: ' || $3::text, next_attempt_at = now()
    FROM disabled
    WHERE d.endpoint_id = disabled.id AND d.state = 'pending'
), notified AS (
    -- Each admin in the language of the endpoint they registered last.
    INSERT INTO notifications (tenant_id, user_id, kind, webhook_endpoint_id, details, locale)
    SELECT d.tenant_id, admins.created_by, 'webhook_disabled', d.id, jsonb_build_object('url', d.url, 'reason', $3::text),
           admins.locale
    FROM disabled d
    CROSS JOIN LATERAL (SELECT DISTINCT ON (created_by) created_by, locale FROM webhook_endpoints e
                        WHERE e.tenant_id = d.tenant_id ORDER BY created_by, created_at DESC) admins
    RETURNING tenant_id, user_id
)
SELECT url, (SELECT count(pg_notify('errand_notifications', errand_owner_tag(tenant_id, user_id))) FROM notified) AS told
FROM disabled";

/// The webhook deliveries.
pub struct WebhookOutbox<'a> {
    pub(in crate::store) pool: &'a Pool,
    /// What opens the endpoints' sealed secrets.
    pub(in crate::store) keys: Option<&'a crate::store::TenantKeys>,
    /// What opens the sealed params and results of the jobs told of.
    pub(in crate::store) sealer: &'a crate::store::Sealer,
}

impl WebhookOutbox<'_> {
    /// Claims up to `limit` due deliveries for `lock`: if this process dies
    /// while sending, a delivery is due again when its lock runs out. At most
    /// `per_endpoint` in flight per endpoint, `in_flight` counting those the
    /// caller has already.
    pub async fn claim_due(
        &self,
        limit: i64,
        lock: Duration,
        in_flight: &HashMap<Uuid, usize>,
        per_endpoint: usize,
    ) -> Result<Vec<WebhookDelivery>, StoreError> {
        let (busy, counts): (Vec<Uuid>, Vec<i32>) =
            in_flight.iter().map(|(endpoint, n)| (*endpoint, i32::try_from(*n).unwrap_or(i32::MAX))).unzip();
        let cap = i32::try_from(per_endpoint).unwrap_or(i32::MAX);
        let client = self.pool.get().await?;
        let statement = client.prepare_cached(CLAIM_DUE).await?;
        let claim = Uuid::new_v4();
        let params: [&(dyn ToSql + Sync); 6] = [&limit, &(lock.as_secs_f64() * 1000.0), &claim, &cap, &busy, &counts];
        let rows = client.query(&statement, &params).await;
        let claimed = LostClaim::Webhooks { claim, lock }.settle(self.pool, rows)?;
        if claimed.is_empty() {
            return Ok(Vec::new());
        }
        let column = |name: &str| claimed.iter().map(|row| row.try_get(name)).collect::<Result<Vec<Uuid>, _>>();
        let (ids, endpoints) = (column("delivery_id")?, column("endpoint_id")?);
        let jobs = claimed.iter().map(|row| row.try_get("job_id")).collect::<Result<Vec<Option<Uuid>>, _>>()?;
        // Were this read to fail, the deliveries come due again when their lock runs out.
        let details = client.query(&client.prepare_cached(CLAIMED).await?, &[&ids, &endpoints, &jobs]).await?;
        let mut details: HashMap<Uuid, &tokio_postgres::Row> =
            details.iter().map(|row| Ok((row.try_get("delivery_id")?, row))).collect::<Result<_, StoreError>>()?;
        let mut deliveries = claimed
            .iter()
            .filter_map(|row| {
                let id: Uuid = row.try_get("delivery_id").ok()?;
                // A delivery whose endpoint was deleted meanwhile has no details: it goes with it.
                details.remove(&id).map(|detail| (row, detail))
            })
            .map(|(row, detail)| {
                Ok(WebhookDelivery {
                    id: row.try_get("delivery_id")?,
                    endpoint: row.try_get("endpoint_id")?,
                    event: row.try_get("event")?,
                    url: detail.try_get("url")?,
                    secret: self.secret_of(detail)?,
                    attempt: row.try_get("attempts")?,
                    about: match detail.try_get::<_, Option<Uuid>>("id")? {
                        Some(_) => DeliverySubject::Job(Box::new(job_from_row(detail)?)),
                        None => DeliverySubject::Event(detail.try_get("details")?),
                    },
                    trace: crate::store::jobs::job_trace_from_row(detail)?,
                })
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        for delivery in &mut deliveries {
            if let DeliverySubject::Job(job) = &mut delivery.about {
                self.sealer.open_job(job).await?;
            }
        }
        Ok(deliveries)
    }

    /// The endpoint's secret, opened (see `sealed.rs`).
    fn secret_of(&self, detail: &tokio_postgres::Row) -> Result<String, StoreError> {
        let (tenant, stored): (&str, &str) = (detail.try_get("endpoint_tenant")?, detail.try_get("secret")?);
        let version: Option<&str> = detail.try_get("key_version")?;
        let wrapped: Option<&[u8]> = detail.try_get("key_wrapped")?;
        super::sealed::open_secret(self.keys, tenant, version.zip(wrapped), stored)
    }

    /// Disables `endpoint` if its last `failures` deliveries that ended all
    /// failed (`reason` says why, to its admins); answers its URL if it did.
    pub async fn disable_if_failing(
        &self,
        endpoint: Uuid,
        failures: u32,
        reason: &str,
    ) -> Result<Option<String>, StoreError> {
        let client = self.pool.get().await?;
        let statement = client.prepare_cached(DISABLE_IF_FAILING).await?;
        let row = client.query_opt(&statement, &[&endpoint, &i64::from(failures), &reason]).await?;
        Ok(row.map(|row| row.try_get("url")).transpose()?)
    }

    /// Records what became of each attempt (and how long it took), in one
    /// statement; answers how many were still their sender's (a lock that
    /// ran out records nothing).
    pub async fn record(&self, attempts: &[(&WebhookDelivery, &DeliveryOutcome, Duration)]) -> Result<u64, StoreError> {
        let mut columns = RecordColumns::default();
        for (delivery, outcome, latency) in attempts {
            let (delivered, status, error, delay_ms) = match outcome {
                DeliveryOutcome::Delivered => (true, None, None, None),
                DeliveryOutcome::Failed { status, error, delay } => {
                    (false, status.map(i32::from), Some(error.as_str()), delay.map(|d| d.as_secs_f64() * 1000.0))
                }
            };
            columns.ids.push(delivery.id);
            columns.attempts.push(delivery.attempt);
            columns.delivered.push(delivered);
            columns.statuses.push(status);
            columns.errors.push(error);
            columns.latencies.push(i32::try_from(latency.as_millis()).unwrap_or(i32::MAX));
            columns.delays.push(delay_ms);
        }
        let c = &columns;
        let params: [&(dyn ToSql + Sync); 7] =
            [&c.ids, &c.attempts, &c.delivered, &c.statuses, &c.errors, &c.latencies, &c.delays];
        let client = self.pool.get().await?;
        Ok(client.execute(&client.prepare_cached(RECORD).await?, &params).await?)
    }
}
