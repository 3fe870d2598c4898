//! One user's notification preferences, scoped like their jobs: reads and
//! changes through [`CallerPreferences`] only, which names its caller's
//! tenant and user in every statement.

use crate::domain::{Caller, Channel, Delivery, NotificationRules};
use crate::store::StoreError;

/// A category's channels as they stand for a user: their choices, else the defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CategoryPreferences {
    pub category: String,
    /// No one can turn it off.
    pub required: bool,
    pub in_app: bool,
    pub email: bool,
    /// Emails wait for the user's digest (when `email`).
    pub digest: bool,
    /// Web Push, to the devices the user subscribed.
    pub push: bool,
}

/// How each category in `$3` stands for user `$2` of tenant `$1` under the rules `$4`.
const STANDING: &str = "
SELECT c.category, w.in_app, w.email, w.digest, w.push
FROM unnest($3::text[]) AS c (category)
CROSS JOIN LATERAL errand_channels($1, $2, c.category, $4) w
ORDER BY c.category";

/// Records user `$2` of tenant `$1`'s choices for category `$3`: `$4` in
/// the app, `$5` by email, `$6` by Web Push, `$7` emails in the digest
/// (NULL: as before).
const CHOOSE: &str = "
INSERT INTO notification_preferences AS p (tenant_id, user_id, category, in_app, email, push, digest)
VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (tenant_id, user_id, category) DO UPDATE
SET in_app = coalesce(EXCLUDED.in_app, p.in_app), email = coalesce(EXCLUDED.email, p.email),
    push = coalesce(EXCLUDED.push, p.push), digest = coalesce(EXCLUDED.digest, p.digest), updated_at = now()";

/// A change to some of a category's channels (`None`: as before).
#[derive(Debug, Clone, Copy, Default)]
pub struct ChannelChoices {
    pub in_app: Option<bool>,
    pub email: Option<bool>,
    pub push: Option<bool>,
    /// Emails in the digest (chosen with `email`).
    pub digest: Option<bool>,
}

impl ChannelChoices {
    /// Sets `channel` to `delivery` (only email has a digest: the caller checks).
    pub fn choose(&mut self, channel: Channel, delivery: Delivery) {
        let on = delivery != Delivery::Off;
        match channel {
            Channel::InApp => self.in_app = Some(on),
            Channel::Push => self.push = Some(on),
            Channel::Email => (self.email, self.digest) = (Some(on), Some(delivery == Delivery::Digest)),
        }
    }
}

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
                    digest: row.try_get("digest")?,
                    push: row.try_get("push")?,
                    category,
                })
            })
            .collect()
    }

    /// Records the caller's choices for `category` (`None`: as before) and
    /// answers how it then stands. Turning a required category off is the
    /// caller's to refuse before this.
    pub async fn choose(&self, category: &str, choices: ChannelChoices) -> Result<CategoryPreferences, StoreError> {
        {
            let client = self.pool.get().await?;
            let statement = client.prepare_cached(CHOOSE).await?;
            let (tenant, user) = (self.caller.tenant.as_str(), self.caller.user.as_str());
            let ChannelChoices { in_app, email, push, digest } = choices;
            client.execute(&statement, &[&tenant, &user, &category, &in_app, &email, &push, &digest]).await?;
            client.commit().await?;
        }
        let mut standing = self.standing(&[category]).await?;
        standing.pop().ok_or_else(|| StoreError::Corrupt("a category's preferences read back nothing".into()))
    }
}
