//! A tenant's webhook endpoints, through [`TenantWebhooks`] only, which
//! names its tenant in every statement: another tenant's endpoint is as
//! absent as one that never was.

use chrono::{DateTime, Utc};
use deadpool_postgres::Pool;
use tokio_postgres::Row;
use uuid::Uuid;

use super::StoreError;
use crate::domain::{TenantId, UserId};

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
INSERT INTO webhook_endpoints (tenant_id, url, events, secret, created_by)
SELECT $1, $2, $3, $4, $5
WHERE (SELECT count(*) FROM webhook_endpoints WHERE tenant_id = $1) < $6
RETURNING id, url, events, created_by, created_at, disabled_at, disabled_reason";

/// Tenant `$1`'s endpoints, oldest first.
const LIST: &str = "
SELECT id, url, events, created_by, created_at, disabled_at, disabled_reason
FROM webhook_endpoints WHERE tenant_id = $1 ORDER BY id";

/// Removes tenant `$1`'s endpoint `$2`.
const REMOVE: &str = "DELETE FROM webhook_endpoints WHERE tenant_id = $1 AND id = $2";

/// The webhook endpoints of one tenant.
pub struct TenantWebhooks<'a> {
    pub(super) pool: &'a Pool,
    pub(super) tenant: &'a TenantId,
}

impl TenantWebhooks<'_> {
    /// Registers an endpoint, if the tenant has fewer than `limit`.
    pub async fn register(
        &self,
        url: &str,
        events: &[String],
        secret: &str,
        by: &UserId,
        limit: usize,
    ) -> Result<Registered, StoreError> {
        let client = self.pool.get().await?;
        let statement = client.prepare_cached(REGISTER).await?;
        let cap = i64::try_from(limit).unwrap_or(i64::MAX);
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 6] =
            [&self.tenant.as_str(), &url, &events, &secret, &by.as_str(), &cap];
        Ok(match client.query_opt(&statement, &params).await? {
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

    /// Removes endpoint `id`; `false` if the tenant has none such.
    pub async fn remove(&self, id: Uuid) -> Result<bool, StoreError> {
        let client = self.pool.get().await?;
        Ok(client.execute(&client.prepare_cached(REMOVE).await?, &[&self.tenant.as_str(), &id]).await? == 1)
    }
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
