//! A tenant's default notification preferences, per category: what its
//! users get until they choose (`errand_channels` reads them in the
//! statement that ends each job, after the user's own choice and before the
//! configuration's). Scoped to one tenant, whose admins set them; each
//! change is audited in `operator_actions` in its transaction.

use crate::domain::{Channel, Delivery, NotificationRules, TenantId};
use crate::store::StoreError;
use crate::store::notifications::preferences::CategoryPreferences;

/// How each category in `$2` stands by default for tenant `$1`'s users
/// under the rules `$3` (as for a user who chose nothing: the empty string
/// is no user's id), and which channels the tenant set. (A digest is the
/// tenant's word alone here: `errand_channels` answers it only for a user
/// who set a digest time.)
const STANDING: &str = "
SELECT c.category, w.in_app, w.email, coalesce(t.digest, false) AS digest, w.push,
       false AS user_in_app, false AS user_email, false AS user_push,
       t.in_app IS NOT NULL AS tenant_in_app, t.email IS NOT NULL AS tenant_email, t.push IS NOT NULL AS tenant_push
FROM unnest($2::text[]) AS c (category)
CROSS JOIN LATERAL errand_channels($1, '', c.category, $3) w
LEFT JOIN tenant_notification_defaults t ON t.tenant_id = $1 AND t.category = c.category
ORDER BY c.category";

/// Sets tenant `$1`'s defaults for category `$2`: in the app `$3`, by email
/// `$4`, by Web Push `$5`, emails in the digest `$6`, each where `$7` (the
/// channels changed) names it (NULL there: the configuration's again);
/// audited as `$8` did it.
const CHOOSE: &str = "
WITH chosen AS (
    INSERT INTO tenant_notification_defaults AS d (tenant_id, category, in_app, email, push, digest)
    VALUES ($1, $2, $3, $4, $5, $6)
    ON CONFLICT (tenant_id, category) DO UPDATE
    SET in_app = CASE WHEN 'in_app' = ANY ($7) THEN EXCLUDED.in_app ELSE d.in_app END,
        email = CASE WHEN 'email' = ANY ($7) THEN EXCLUDED.email ELSE d.email END,
        digest = CASE WHEN 'email' = ANY ($7) THEN EXCLUDED.digest ELSE d.digest END,
        push = CASE WHEN 'push' = ANY ($7) THEN EXCLUDED.push ELSE d.push END,
        updated_at = now()
    RETURNING tenant_id, category, in_app, email, push, digest
)
INSERT INTO operator_actions (operator, action, filter, affected)
SELECT $8, 'notification_defaults',
       jsonb_build_object('tenant', tenant_id, 'category', category, 'in_app', in_app, 'email',
                          CASE WHEN digest AND email THEN to_jsonb('digest'::text) ELSE to_jsonb(email) END,
                          'push', push),
       1
FROM chosen";

/// A change to some of a category's defaults: `Some(None)` gives a channel
/// back to the configuration; `None` leaves it as it was.
#[derive(Debug, Clone, Copy, Default)]
pub struct DefaultChoices {
    pub in_app: Option<Option<Delivery>>,
    pub email: Option<Option<Delivery>>,
    pub push: Option<Option<Delivery>>,
}

impl DefaultChoices {
    /// Sets `channel` to `delivery` (`None`: the configuration's).
    pub fn choose(&mut self, channel: Channel, delivery: Option<Delivery>) {
        *match channel {
            Channel::InApp => &mut self.in_app,
            Channel::Email => &mut self.email,
            Channel::Push => &mut self.push,
        } = Some(delivery);
    }
}

/// The notification defaults of one tenant.
pub struct TenantNotificationDefaults<'a> {
    pub(in crate::store) pool: crate::store::TenantPool,
    pub(in crate::store) tenant: &'a TenantId,
    pub(in crate::store) rules: &'a NotificationRules,
    /// Who acts, as the audit names them.
    pub(in crate::store) by: String,
}

impl TenantNotificationDefaults<'_> {
    /// How each of `categories` stands by default, in name order.
    pub async fn standing(&self, categories: &[&str]) -> Result<Vec<CategoryPreferences>, StoreError> {
        let client = self.pool.get().await?;
        let statement = client.prepare_cached(STANDING).await?;
        let rows = client.query(&statement, &[&self.tenant.as_str(), &categories, self.rules.as_sql()]).await?;
        rows.iter().map(|row| CategoryPreferences::from_row(row, self.rules)).collect()
    }

    /// Records the tenant's defaults for `category`, audited, and answers
    /// how it then stands. Refusing what a required category forbids is
    /// the caller's.
    pub async fn choose(&self, category: &str, choices: DefaultChoices) -> Result<CategoryPreferences, StoreError> {
        {
            let client = self.pool.get().await?;
            let DefaultChoices { in_app, email, push } = choices;
            let changed: Vec<&str> = [(Channel::InApp, in_app), (Channel::Email, email), (Channel::Push, push)]
                .into_iter()
                .filter_map(|(channel, choice)| choice.map(|_| channel.as_str()))
                .collect();
            // A channel given back to the configuration is NULL; `email` and `digest` go together.
            let on = |choice: Option<Option<Delivery>>| choice.flatten().map(|d| d != Delivery::Off);
            let digest = email.flatten().map(|d| d == Delivery::Digest);
            let (in_app, email, push) = (on(in_app), on(email), on(push));
            let statement = client.prepare_cached(CHOOSE).await?;
            let tenant = self.tenant.as_str();
            client
                .execute(&statement, &[&tenant, &category, &in_app, &email, &push, &digest, &changed, &self.by])
                .await?;
            client.commit().await?;
        }
        let mut standing = self.standing(&[category]).await?;
        standing.pop().ok_or_else(|| StoreError::Corrupt("a category's defaults read back nothing".into()))
    }
}
