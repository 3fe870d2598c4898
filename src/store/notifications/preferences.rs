//! One user's notification preferences, scoped like their jobs: reads and
//! changes through [`CallerPreferences`] only, which names its caller's
//! tenant and user in every statement.

use crate::domain::{Caller, NotificationRules};
use crate::store::StoreError;

/// A category's channels as they stand for a user: their choices, else the defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CategoryPreferences {
    pub category: String,
    /// No one can turn it off.
    pub required: bool,
    pub in_app: bool,
    pub email: bool,
}

/// How each category in `$3` stands for user `$2` of tenant `$1` under the rules `$4`.
const STANDING: &str = "
SELECT c.category, w.in_app, w.email
FROM unnest($3::text[]) AS c (category)
CROSS JOIN LATERAL errand_channels($1, $2, c.category, $4) w
ORDER BY c.category";

/// Records user `$2` of tenant `$1`'s choices for category `$3`: `$4` in
/// the app, `$5` by email (NULL: as before).
const CHOOSE: &str = "
INSERT INTO notification_preferences AS p (tenant_id, user_id, category, in_app, email)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (tenant_id, user_id, category) DO UPDATE
SET in_app = coalesce(EXCLUDED.in_app, p.in_app), email = coalesce(EXCLUDED.email, p.email), updated_at = now()";

/// The notification preferences of the caller's user in the caller's tenant.
pub struct CallerPreferences<'a> {
    pub(in crate::store) pool: crate::store::TenantPool,
    pub(in crate::store) caller: &'a Caller,
    pub(in crate::store) rules: &'a NotificationRules,
}

impl CallerPreferences<'_> {
    /// How each of `categories` stands for the caller, in name order.
    pub async fn standing(&self, categories: &[&str]) -> Result<Vec<CategoryPreferences>, StoreError> {
        let client = self.pool.get().await?;
        let statement = client.prepare_cached(STANDING).await?;
        let (tenant, user) = (self.caller.tenant.as_str(), self.caller.user.as_str());
        let rows = client.query(&statement, &[&tenant, &user, &categories, self.rules.as_sql()]).await?;
        rows.iter()
            .map(|row| {
                let category: String = row.try_get("category")?;
                Ok(CategoryPreferences {
                    required: self.rules.is_required(&category),
                    in_app: row.try_get("in_app")?,
                    email: row.try_get("email")?,
                    category,
                })
            })
            .collect()
    }

    /// Records the caller's choices for `category` (`None`: as before) and
    /// answers how it then stands. Turning a required category off is the
    /// caller's to refuse before this.
    pub async fn choose(
        &self,
        category: &str,
        in_app: Option<bool>,
        email: Option<bool>,
    ) -> Result<CategoryPreferences, StoreError> {
        {
            let client = self.pool.get().await?;
            let statement = client.prepare_cached(CHOOSE).await?;
            let (tenant, user) = (self.caller.tenant.as_str(), self.caller.user.as_str());
            client.execute(&statement, &[&tenant, &user, &category, &in_app, &email]).await?;
            client.commit().await?;
        }
        let mut standing = self.standing(&[category]).await?;
        standing.pop().ok_or_else(|| StoreError::Corrupt("a category's preferences read back nothing".into()))
    }
}
