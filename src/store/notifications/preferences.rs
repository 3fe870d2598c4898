//! One user's notification preferences, scoped like their jobs: reads and
//! changes through [`CallerPreferences`] only, which names its caller's
//! tenant and user in every statement.

use crate::domain::{Caller, Channel, Delivery, NotificationRules};
use crate::store::StoreError;

/// Whose word a channel's setting is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The category is required: on, whatever anyone chose.
    Required,
    /// The person's own choice.
    User,
    /// Their tenant's default.
    Tenant,
    /// The configuration's default (`[notifications.preferences]`).
    Config,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Required => "required",
            Self::User => "user",
            Self::Tenant => "tenant",
            Self::Config => "config",
        }
    }

    /// The source of a setting that `user` and `tenant` may have set, for a
    /// category that is `required` or not.
    pub fn of(required: bool, user: bool, tenant: bool) -> Self {
        match (required, user, tenant) {
            (true, _, _) => Self::Required,
            (false, true, _) => Self::User,
            (false, false, true) => Self::Tenant,
            (false, false, false) => Self::Config,
        }
    }
}

/// A category's channels as they stand for a user (their choices, else
/// their tenant's defaults, else the configuration's), or for a tenant's
/// users who chose nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CategoryPreferences {
    pub category: String,
    /// No one can turn it off.
    pub required: bool,
    /// Each channel, in the order of [`Channel::ALL`]: its setting, and whose word it is.
    pub channels: [(Channel, Delivery, Source); 3],
}

impl CategoryPreferences {
    /// The category of `row` (`category`; `in_app`, `email`, `digest`,
    /// `push` as `errand_channels` answers them; `user_*` and `tenant_*`:
    /// whether the user or the tenant set each channel) under `rules`.
    pub(in crate::store) fn from_row(row: &tokio_postgres::Row, rules: &NotificationRules) -> Result<Self, StoreError> {
        let category: String = row.try_get("category")?;
        let required = rules.is_required(&category);
        let standing = |channel: Channel, delivery: Delivery| -> Result<(Channel, Delivery, Source), StoreError> {
            let (user, tenant) = (format!("user_{}", channel.as_str()), format!("tenant_{}", channel.as_str()));
            Ok((channel, delivery, Source::of(required, row.try_get(user.as_str())?, row.try_get(tenant.as_str())?)))
        };
        let email = match (row.try_get::<_, bool>("email")?, row.try_get::<_, bool>("digest")?) {
            (true, true) if !required => Delivery::Digest,
            (on, _) => Delivery::on_or_off(on),
        };
        let channels = [
            standing(Channel::InApp, Delivery::on_or_off(row.try_get("in_app")?))?,
            standing(Channel::Email, email)?,
            standing(Channel::Push, Delivery::on_or_off(row.try_get("push")?))?,
        ];
        Ok(Self { category, required, channels })
    }
}

/// How each category in `$3` stands for user `$2` of tenant `$1` under the
/// rules `$4`, and which channels the user and the tenant set.
const STANDING: &str = "
SELECT c.category, w.in_app, w.email, w.digest, w.push,
       p.in_app IS NOT NULL AS user_in_app, p.email IS NOT NULL AS user_email, p.push IS NOT NULL AS user_push,
       t.in_app IS NOT NULL AS tenant_in_app, t.email IS NOT NULL AS tenant_email, t.push IS NOT NULL AS tenant_push
FROM unnest($3::text[]) AS c (category)
CROSS JOIN LATERAL errand_channels($1, $2, c.category, $4) w
LEFT JOIN notification_preferences p ON p.tenant_id = $1 AND p.user_id = $2 AND p.category = c.category
LEFT JOIN tenant_notification_defaults t ON t.tenant_id = $1 AND t.category = c.category
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
        rows.iter().map(|row| CategoryPreferences::from_row(row, self.rules)).collect()
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
