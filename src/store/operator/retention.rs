//! A tenant's own history retention (`tenant_retention`), set by operators
//! (`/admin/tenants/{tenant}/retention`): its finished jobs are kept this
//! long instead of their type's `retention` or `history.retention`. The
//! pruner reads it (`queue::history`).

use deadpool_postgres::Pool;
use std::time::Duration;

use crate::domain::{Operator, TenantId};
use crate::store::StoreError;

const GET: &str = "SELECT extract(epoch FROM retention)::float8 FROM tenant_retention WHERE tenant_id = $1";

const SET: &str = "
INSERT INTO tenant_retention (tenant_id, retention, updated_by)
VALUES ($1, $2 * interval '1 second', $3)
ON CONFLICT (tenant_id) DO UPDATE SET retention = EXCLUDED.retention, updated_at = now(), updated_by = EXCLUDED.updated_by";

const CLEAR: &str = "DELETE FROM tenant_retention WHERE tenant_id = $1";

const AUDIT: &str = "
INSERT INTO operator_actions (operator, action, filter, affected)
VALUES ($1, 'set_retention', jsonb_build_object('tenant', $2::text, 'retention_seconds', $3::float8), 1)";

/// Tenants' retentions, for an operator.
pub struct TenantRetentions<'a> {
    pub(in crate::store) pool: &'a Pool,
    pub(in crate::store) operator: &'a Operator,
}

impl TenantRetentions<'_> {
    /// The tenant's own retention, if it has one.
    pub async fn get(&self, tenant: &TenantId) -> Result<Option<Duration>, StoreError> {
        let client = self.pool.get().await?;
        let row = client.query_opt(&client.prepare_cached(GET).await?, &[&tenant.as_str()]).await?;
        Ok(row.map(|row| row.try_get::<_, f64>(0)).transpose()?.map(Duration::from_secs_f64))
    }

    /// Sets the tenant's own retention (`None`: the type's or the history's again), audited.
    pub async fn set(&self, tenant: &TenantId, retention: Option<Duration>) -> Result<(), StoreError> {
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        let seconds = retention.map(|r| r.as_secs_f64());
        match seconds {
            Some(seconds) => {
                let by = self.operator.name.as_str();
                tx.execute(&tx.prepare_cached(SET).await?, &[&tenant.as_str(), &seconds, &by]).await?
            }
            None => tx.execute(&tx.prepare_cached(CLEAR).await?, &[&tenant.as_str()]).await?,
        };
        let audit = tx.prepare_cached(AUDIT).await?;
        tx.execute(&audit, &[&self.operator.name.as_str(), &tenant.as_str(), &seconds]).await?;
        tx.commit().await?;
        Ok(())
    }
}
