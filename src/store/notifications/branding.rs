//! A tenant's branding: how its users' emails present it (sender name,
//! name, logo, colour, footer). Scoped to one tenant, whose admins set it;
//! each change is audited in `operator_actions` in its transaction. The
//! Mailer reads it with each email it claims (`emails.rs`), so a change
//! counts from the next email on.

use crate::domain::{Branding, TenantId};
use crate::store::StoreError;

/// The branding of `row`'s `brand_*` columns (all NULL: none).
pub(in crate::store) fn branding_from_row(row: &tokio_postgres::Row) -> Result<Branding, StoreError> {
    Ok(Branding {
        name: row.try_get("brand_name")?,
        logo_url: row.try_get("brand_logo_url")?,
        primary_color: row.try_get("brand_primary_color")?,
        from_name: row.try_get("brand_from_name")?,
        footer: row.try_get("brand_footer")?,
    })
}

/// Tenant `$1`'s branding.
const READ: &str = "
SELECT name AS brand_name, logo_url AS brand_logo_url, primary_color AS brand_primary_color,
       from_name AS brand_from_name, footer AS brand_footer
FROM tenant_branding WHERE tenant_id = $1";

/// Sets tenant `$1`'s branding whole (`$2` name, `$3` logo, `$4` colour,
/// `$5` sender name, `$6` footer), audited as `$7` did it.
const WRITE: &str = "
WITH written AS (
    INSERT INTO tenant_branding AS b (tenant_id, name, logo_url, primary_color, from_name, footer)
    VALUES ($1, $2, $3, $4, $5, $6)
    ON CONFLICT (tenant_id) DO UPDATE
    SET name = EXCLUDED.name, logo_url = EXCLUDED.logo_url, primary_color = EXCLUDED.primary_color,
        from_name = EXCLUDED.from_name, footer = EXCLUDED.footer, updated_at = now()
    RETURNING tenant_id, name, logo_url, primary_color, from_name, footer
)
INSERT INTO operator_actions (operator, action, filter, affected)
SELECT $7, 'set_branding', jsonb_build_object('tenant', tenant_id, 'name', name, 'logo_url', logo_url,
                                              'primary_color', primary_color, 'from_name', from_name, 'footer', footer),
       1
FROM written";

/// The branding of one tenant.
pub struct TenantBranding<'a> {
    pub(in crate::store) pool: crate::store::TenantPool,
    pub(in crate::store) tenant: &'a TenantId,
    /// Who acts, as the audit names them.
    pub(in crate::store) by: String,
}

impl TenantBranding<'_> {
    /// What the tenant set (nothing: all `None`).
    pub async fn read(&self) -> Result<Branding, StoreError> {
        let client = self.pool.get().await?;
        let row = client.query_opt(&client.prepare_cached(READ).await?, &[&self.tenant.as_str()]).await?;
        row.as_ref().map_or(Ok(Branding::default()), branding_from_row)
    }

    /// Sets the tenant's branding to `branding`, whole, audited.
    pub async fn write(&self, branding: &Branding) -> Result<(), StoreError> {
        let client = self.pool.get().await?;
        let Branding { name, logo_url, primary_color, from_name, footer } = branding;
        let statement = client.prepare_cached(WRITE).await?;
        let tenant = self.tenant.as_str();
        client.execute(&statement, &[&tenant, name, logo_url, primary_color, from_name, footer, &self.by]).await?;
        client.commit().await?;
        Ok(())
    }
}
