//! A tenant's webhook channel, per category of job: whether its endpoints
//! hear of the ends of that category's jobs (`errand_queue_webhooks` reads
//! it in the statement that ends each job). Scoped to one tenant, whose
//! admins choose.

use crate::domain::{NotificationRules, TenantId};
use crate::store::StoreError;

/// A category's webhook channel as it stands for a tenant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookCategory {
    pub category: String,
    /// No one can turn it off (configured).
    pub required: bool,
    pub webhook: bool,
}

/// The choices tenant `$1` made among the categories `$2`.
const CHOSEN: &str = "
SELECT category, webhook FROM webhook_preferences WHERE tenant_id = $1 AND category = ANY ($2)";

/// Records tenant `$1`'s choice for category `$2`: `$3`.
const CHOOSE: &str = "
INSERT INTO webhook_preferences (tenant_id, category, webhook) VALUES ($1, $2, $3)
ON CONFLICT (tenant_id, category) DO UPDATE SET webhook = EXCLUDED.webhook, updated_at = now()";

/// The webhook channel's preferences of one tenant.
pub struct TenantWebhookPreferences<'a> {
    pub(in crate::store) pool: crate::store::TenantPool,
    pub(in crate::store) tenant: &'a TenantId,
    pub(in crate::store) rules: &'a NotificationRules,
}

impl TenantWebhookPreferences<'_> {
    /// How each of `categories` stands for the tenant, in their order: on
    /// unless the tenant's admins turned it off (a required one always on).
    pub async fn standing(&self, categories: &[&str]) -> Result<Vec<WebhookCategory>, StoreError> {
        let client = self.pool.get().await?;
        let rows = client.query(&client.prepare_cached(CHOSEN).await?, &[&self.tenant.as_str(), &categories]).await?;
        let mut chosen = std::collections::HashMap::new();
        for row in &rows {
            chosen.insert(row.try_get::<_, String>("category")?, row.try_get::<_, bool>("webhook")?);
        }
        Ok(categories
            .iter()
            .map(|&category| {
                let required = self.rules.is_required(category);
                let webhook = required || chosen.get(category).copied().unwrap_or(true);
                WebhookCategory { category: category.to_owned(), required, webhook }
            })
            .collect())
    }

    /// Records the tenant's choice for `category` and answers how it then
    /// stands. Turning a required category off is the caller's to refuse.
    pub async fn choose(&self, category: &str, webhook: bool) -> Result<WebhookCategory, StoreError> {
        {
            let client = self.pool.get().await?;
            let statement = client.prepare_cached(CHOOSE).await?;
            client.execute(&statement, &[&self.tenant.as_str(), &category, &webhook]).await?;
            client.commit().await?;
        }
        let mut standing = self.standing(&[category]).await?;
        standing.pop().ok_or_else(|| StoreError::Corrupt("a category's webhook channel read back nothing".into()))
    }
}
