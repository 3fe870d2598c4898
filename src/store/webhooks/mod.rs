//! A tenant's webhook endpoints, through [`TenantWebhooks`] only, which
//! names its tenant in every statement: another tenant's endpoint is as
//! absent as one that never was.

pub mod deliveries;
pub mod preferences;
pub mod sealed;

use chrono::{DateTime, Utc};
use tokio_postgres::Row;
use uuid::Uuid;

use crate::domain::{Caller, TenantId};
use crate::store::StoreError;

/// An endpoint as its tenant's admins see it (its secret is shown once, when made).
#[derive(Debug, Clone)]
pub struct WebhookEndpoint {
    pub id: Uuid,
    pub url: String,
    pub events: Vec<String>,
    pub created_by: String,
    pub created_at: DateTime<Utc>,
    pub disabled_at: Option<DateTime<Utc>>,
    pub disabled_reason: Option<String>,
}

/// What registering an endpoint made of it.
#[derive(Debug)]
pub enum Registered {
    Created(WebhookEndpoint),
    /// The tenant already has its most endpoints.
    TooMany {
        limit: usize,
    },
}

/// Registers endpoint `$2` (`$3` events, secret `$4`, by `$5`) of tenant
/// `$1`, unless it has `$6` already. (Registrations of one tenant at the
/// same moment may each see room: the cap bounds what a tenant makes errand
/// call, give or take a few; it is not a quota.)
const REGISTER: &str = "
INSERT INTO webhook_endpoints (tenant_id, url, events, secret, created_by, locale)
SELECT $1, $2, $3, $4, $5, $7
WHERE (SELECT count(*) FROM webhook_endpoints WHERE tenant_id = $1) < $6
RETURNING id, url, events, created_by, created_at, disabled_at, disabled_reason";

/// Tenant `$1`'s endpoints, oldest first.
const LIST: &str = "
SELECT id, url, events, created_by, created_at, disabled_at, disabled_reason
FROM webhook_endpoints WHERE tenant_id = $1 ORDER BY id";

/// A delivery as its endpoint's log shows it.
#[derive(Debug, Clone)]
pub struct DeliveryRecord {
    pub id: Uuid,
    /// The job whose end it tells (`None`: another event, e.g. `type.paused`).
    pub job_id: Option<Uuid>,
    pub event: String,
    /// `pending`, `sending`, `delivered` or `failed`.
    pub state: String,
    pub attempts: i32,
    pub last_status: Option<i32>,
    pub last_error: Option<String>,
    pub last_latency_ms: Option<i32>,
    pub created_at: DateTime<Utc>,
    pub delivered_at: Option<DateTime<Utc>>,
    /// When a pending delivery is tried next.
    pub next_attempt_at: DateTime<Utc>,
}

/// Up to `$4` deliveries of tenant `$1`'s endpoint `$2`, newest first, older than `$3`.
const DELIVERIES: &str = "
SELECT d.id, d.job_id, d.event, d.state::text AS state, d.attempts, d.last_status, d.last_error,
       d.last_latency_ms, d.created_at, d.delivered_at, d.next_attempt_at
FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
WHERE e.tenant_id = $1 AND d.endpoint_id = $2 AND ($3::uuid IS NULL OR d.id < $3)
ORDER BY d.id DESC
LIMIT $4";

/// Makes delivery `$3` of tenant `$1`'s endpoint `$2` due again now, with
/// attempts anew, if it was delivered or failed and was not sent again in
/// the last `$4` ms (one pending or being sent is left as it is); answers it
/// either way, with how long until it may be sent again if it was too soon.
const REDELIVER: &str = "
WITH found AS (
    SELECT d.id, d.state, d.redelivered_at FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
    WHERE e.tenant_id = $1 AND d.endpoint_id = $2 AND d.id = $3
    FOR UPDATE OF d
), again AS (
    UPDATE webhook_deliveries d
    SET state = 'pending', attempts = 0, next_attempt_at = now(), delivered_at = NULL, redelivered_at = now()
    FROM found f
    WHERE d.id = f.id AND f.state IN ('delivered', 'failed')
      AND (f.redelivered_at IS NULL OR f.redelivered_at <= now() - $4 * interval '1 millisecond')
    RETURNING d.id, d.job_id, d.event, d.state::text AS state, d.attempts, d.last_status, d.last_error,
              d.last_latency_ms, d.created_at, d.delivered_at, d.next_attempt_at, NULL::float8 AS wait_ms
)
SELECT * FROM again
UNION ALL
SELECT d.id, d.job_id, d.event, d.state::text, d.attempts, d.last_status, d.last_error,
       d.last_latency_ms, d.created_at, d.delivered_at, d.next_attempt_at,
       CASE WHEN f.state IN ('delivered', 'failed')
            THEN 1000 * extract(epoch FROM f.redelivered_at + $4 * interval '1 millisecond' - now())::float8 END
FROM webhook_deliveries d JOIN found f ON f.id = d.id
WHERE NOT EXISTS (SELECT 1 FROM again)";

/// What a redelivery came to.
#[derive(Debug)]
pub enum Redelivery {
    /// Due now, or already on its way.
    Due(DeliveryRecord),
    /// Sent again too recently: it may be once this has passed.
    TooSoon { wait: std::time::Duration },
}

/// Removes tenant `$1`'s endpoint `$2`.
const REMOVE: &str = "DELETE FROM webhook_endpoints WHERE tenant_id = $1 AND id = $2";

/// The webhook endpoints of one tenant.
pub struct TenantWebhooks<'a> {
    pub(super) pool: crate::store::TenantPool,
    pub(super) tenant: &'a TenantId,
    pub(super) keys: Option<&'a crate::store::TenantKeys>,
}

impl TenantWebhooks<'_> {
    /// Registers an endpoint for the tenant admin `by`, if the tenant has
    /// fewer than `limit` (the notice that it was disabled is in `by`'s language).
    pub async fn register(
        &self,
        url: &str,
        events: &[String],
        secret: &str,
        by: &Caller,
        limit: usize,
    ) -> Result<Registered, StoreError> {
        let keys = self.keys.ok_or_else(|| StoreError::Corrupt("this store seals no secrets: no keyring".into()))?;
        let client = self.pool.get().await?;
        let sealed = sealed::seal_secret(keys, self.pool.unscoped(), self.tenant.as_str(), secret).await?;
        let statement = client.prepare_cached(REGISTER).await?;
        let cap = i64::try_from(limit).unwrap_or(i64::MAX);
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 7] =
            [&self.tenant.as_str(), &url, &events, &sealed, &by.user.as_str(), &cap, &by.locale.as_str()];
        let row = client.query_opt(&statement, &params).await?;
        client.commit().await?;
        Ok(match row {
            Some(row) => Registered::Created(endpoint_from_row(&row)?),
            None => Registered::TooMany { limit },
        })
    }

    /// The tenant's endpoints, oldest first.
    pub async fn list(&self) -> Result<Vec<WebhookEndpoint>, StoreError> {
        let client = self.pool.get().await?;
        let rows = client.query(&client.prepare_cached(LIST).await?, &[&self.tenant.as_str()]).await?;
        rows.iter().map(endpoint_from_row).collect()
    }

    /// Up to `limit` of endpoint `endpoint`'s deliveries, newest first, older than `before`.
    pub async fn deliveries(
        &self,
        endpoint: Uuid,
        before: Option<Uuid>,
        limit: i64,
    ) -> Result<Vec<DeliveryRecord>, StoreError> {
        let client = self.pool.get().await?;
        let statement = client.prepare_cached(DELIVERIES).await?;
        let rows = client.query(&statement, &[&self.tenant.as_str(), &endpoint, &before, &limit]).await?;
        rows.iter().map(delivery_from_row).collect()
    }

    /// Sends endpoint `endpoint`'s delivery `delivery` again, unless it was
    /// sent again less than `cooldown` ago (see [`REDELIVER`]); `None` if the
    /// tenant has no such delivery.
    pub async fn redeliver(
        &self,
        endpoint: Uuid,
        delivery: Uuid,
        cooldown: std::time::Duration,
    ) -> Result<Option<Redelivery>, StoreError> {
        let client = self.pool.get().await?;
        let statement = client.prepare_cached(REDELIVER).await?;
        let cooldown_ms = cooldown.as_secs_f64() * 1000.0;
        let row = client.query_opt(&statement, &[&self.tenant.as_str(), &endpoint, &delivery, &cooldown_ms]).await?;
        client.commit().await?;
        let Some(row) = row else { return Ok(None) };
        Ok(Some(match row.try_get::<_, Option<f64>>("wait_ms")? {
            Some(ms) => Redelivery::TooSoon { wait: std::time::Duration::from_secs_f64(ms.max(0.0) / 1000.0) },
            None => Redelivery::Due(delivery_from_row(&row)?),
        }))
    }

    /// Removes endpoint `id`; `false` if the tenant has none such.
    pub async fn remove(&self, id: Uuid) -> Result<bool, StoreError> {
        let client = self.pool.get().await?;
        let removed = client.execute(&client.prepare_cached(REMOVE).await?, &[&self.tenant.as_str(), &id]).await? == 1;
        client.commit().await?;
        Ok(removed)
    }
}

fn delivery_from_row(row: &Row) -> Result<DeliveryRecord, StoreError> {
    Ok(DeliveryRecord {
        id: row.try_get("id")?,
        job_id: row.try_get("job_id")?,
        event: row.try_get("event")?,
        state: row.try_get("state")?,
        attempts: row.try_get("attempts")?,
        last_status: row.try_get("last_status")?,
        last_error: row.try_get("last_error")?,
        last_latency_ms: row.try_get("last_latency_ms")?,
        created_at: row.try_get("created_at")?,
        delivered_at: row.try_get("delivered_at")?,
        next_attempt_at: row.try_get("next_attempt_at")?,
    })
}

fn endpoint_from_row(row: &Row) -> Result<WebhookEndpoint, StoreError> {
    Ok(WebhookEndpoint {
        id: row.try_get("id")?,
        url: row.try_get("url")?,
        events: row.try_get("events")?,
        created_by: row.try_get("created_by")?,
        created_at: row.try_get("created_at")?,
        disabled_at: row.try_get("disabled_at")?,
        disabled_reason: row.try_get("disabled_reason")?,
    })
}
