//! The operators' side of quotas: a tenant's override of the configured caps
//! (`tenant_quotas`, audited as every operator action), and who is nearest
//! to their caps. Submissions read the overrides in their own transaction
//! (`quota.rs`), so a change holds from the next submission on, everywhere.

use deadpool_postgres::{Client, Pool};

use crate::domain::{Operator, Quotas, TenantCaps, TenantId};
use crate::store::StoreError;
use crate::store::queue::quota::caps_from_row;

/// Sets (upserts) tenant `$1`'s override; `$4` the operator.
const SET: &str = "
INSERT INTO tenant_quotas (tenant_id, max_unfinished_per_user, max_unfinished_per_tenant, updated_by)
VALUES ($1, $2, $3, $4)
ON CONFLICT (tenant_id) DO UPDATE
SET max_unfinished_per_user = EXCLUDED.max_unfinished_per_user,
    max_unfinished_per_tenant = EXCLUDED.max_unfinished_per_tenant,
    updated_at = now(), updated_by = EXCLUDED.updated_by";

const CLEAR: &str = "DELETE FROM tenant_quotas WHERE tenant_id = $1";

const AUDIT: &str = "
INSERT INTO operator_actions (operator, action, filter, affected) VALUES ($1, 'set_quotas', $2, 1)";

/// Tenant `$1`'s override (no row: none) and its unfinished jobs.
const GET: &str = "
SELECT o.max_unfinished_per_user, o.max_unfinished_per_tenant,
       coalesce((SELECT u.jobs FROM unfinished_counts u WHERE u.tenant_id = $1 AND u.user_id = ''), 0) AS unfinished
FROM (SELECT 1) one LEFT JOIN tenant_quotas o ON o.tenant_id = $1";

/// The `$3` tenants (`$4` = 'tenant') or users (`$4` = 'user') with the most
/// unfinished jobs against their cap (`$1` per user, `$2` per tenant by
/// default; an override's where set). Those without a cap come last, by count.
const NEAREST: &str = "
WITH counted AS (
    SELECT tenant_id, nullif(user_id, '') AS user_id, jobs AS unfinished FROM unfinished_counts
    WHERE job_type = '' AND (user_id = '') = ($4::text = 'tenant') AND jobs > 0
), capped AS (
    SELECT c.tenant_id, c.user_id, c.unfinished,
           CASE WHEN $4::text = 'user' THEN coalesce(o.max_unfinished_per_user::bigint, $1::bigint)
                ELSE coalesce(o.max_unfinished_per_tenant::bigint, $2::bigint) END AS cap
    FROM counted c LEFT JOIN tenant_quotas o ON o.tenant_id = c.tenant_id
)
SELECT tenant_id, user_id, unfinished, cap
FROM capped
ORDER BY unfinished::float8 / greatest(cap, 1) DESC NULLS LAST, unfinished DESC
LIMIT $3";

/// A tenant's quotas as an operator sees them.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TenantQuota {
    pub tenant: String,
    /// The operator's override (`null` fields: the configured cap).
    #[serde(rename = "override")]
    pub override_caps: Caps,
    /// The caps that hold (`null`: no cap).
    pub caps: Caps,
    /// The tenant's unfinished jobs now.
    pub unfinished: i64,
}

/// Caps as the API shows them.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Caps {
    pub max_unfinished_per_user: Option<u32>,
    pub max_unfinished_per_tenant: Option<u32>,
}

impl From<TenantCaps> for Caps {
    fn from(caps: TenantCaps) -> Self {
        Self { max_unfinished_per_user: caps.per_user, max_unfinished_per_tenant: caps.per_tenant }
    }
}

impl From<Caps> for TenantCaps {
    fn from(caps: Caps) -> Self {
        Self { per_user: caps.max_unfinished_per_user, per_tenant: caps.max_unfinished_per_tenant }
    }
}

/// A tenant or a user near a cap.
#[derive(Debug, Clone, serde::Serialize)]
pub struct NearQuota {
    pub tenant: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    pub unfinished: i64,
    /// The cap that holds for them (`null`: none).
    pub limit: Option<i64>,
}

/// Who is nearest to their caps.
#[derive(Debug, Clone, serde::Serialize)]
pub struct NearestQuotas {
    pub tenants: Vec<NearQuota>,
    pub users: Vec<NearQuota>,
}

/// The operators' door to quotas.
pub struct QuotaOverrides<'a> {
    pub(in crate::store) pool: &'a Pool,
    pub(in crate::store) operator: &'a Operator,
    pub(in crate::store) quotas: &'a Quotas,
}

impl QuotaOverrides<'_> {
    /// Tenant `tenant`'s quotas.
    pub async fn get(&self, tenant: &TenantId) -> Result<TenantQuota, StoreError> {
        self.read(&self.pool.get().await?, tenant).await
    }

    /// Tenant `tenant`'s quotas, read on `client`.
    async fn read(&self, client: &Client, tenant: &TenantId) -> Result<TenantQuota, StoreError> {
        let row = client.query_one(&client.prepare_cached(GET).await?, &[&tenant.as_str()]).await?;
        let override_caps = caps_from_row(&row)?;
        Ok(TenantQuota {
            tenant: tenant.to_string(),
            caps: self.quotas.for_tenant(Some(override_caps)).into(),
            override_caps: override_caps.into(),
            unfinished: row.try_get("unfinished")?,
        })
    }

    /// Sets tenant `tenant`'s override (all fields `None`: removes it), with
    /// its audit row in the same transaction; answers the quotas now.
    pub async fn set(&self, tenant: &TenantId, caps: Caps) -> Result<TenantQuota, StoreError> {
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        let to_sql = |cap: Option<u32>| cap.map(|n| i32::try_from(n).unwrap_or(i32::MAX));
        if caps.max_unfinished_per_user.is_none() && caps.max_unfinished_per_tenant.is_none() {
            tx.execute(&tx.prepare_cached(CLEAR).await?, &[&tenant.as_str()]).await?;
        } else {
            let (user, all) = (to_sql(caps.max_unfinished_per_user), to_sql(caps.max_unfinished_per_tenant));
            tx.execute(&tx.prepare_cached(SET).await?, &[&tenant.as_str(), &user, &all, &self.operator.name.as_str()])
                .await?;
        }
        let filter = serde_json::json!({ "tenant": tenant.as_str(), "quotas": caps });
        tx.execute(&tx.prepare_cached(AUDIT).await?, &[&self.operator.name.as_str(), &filter]).await?;
        tx.commit().await?;
        self.read(&client, tenant).await
    }

    /// The `limit` tenants and the `limit` users nearest to their caps.
    pub async fn nearest(&self, limit: i64) -> Result<NearestQuotas, StoreError> {
        let client = self.pool.get().await?;
        let statement = client.prepare_cached(NEAREST).await?;
        let default = |cap: Option<u32>| cap.map(i64::from);
        let (per_user, per_tenant) = (default(self.quotas.defaults.per_user), default(self.quotas.defaults.per_tenant));
        let mut lists = Vec::with_capacity(2);
        for scope in ["tenant", "user"] {
            let rows = client.query(&statement, &[&per_user, &per_tenant, &limit, &scope]).await?;
            let near = rows
                .iter()
                .map(|row| {
                    Ok(NearQuota {
                        tenant: row.try_get("tenant_id")?,
                        user: row.try_get("user_id")?,
                        unfinished: row.try_get("unfinished")?,
                        limit: row.try_get("cap")?,
                    })
                })
                .collect::<Result<Vec<_>, StoreError>>()?;
            lists.push(near);
        }
        let users = lists.pop().unwrap_or_default();
        Ok(NearestQuotas { tenants: lists.pop().unwrap_or_default(), users })
    }
}
