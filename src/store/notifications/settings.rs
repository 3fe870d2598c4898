//! One person's notification settings: their time zone and quiet hours,
//! read by the statements that end jobs (`errand_send_at`: an email or
//! a push due within quiet hours waits for their end). Scoped like their
//! jobs: reads and changes through [`CallerNotificationSettings`] only.

use chrono::NaiveTime;

use crate::domain::Caller;
use crate::store::StoreError;

/// A person's quiet hours: from `start` to `end`, local times in their zone
/// (across midnight when `start` is later).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuietHours {
    pub start: NaiveTime,
    pub end: NaiveTime,
}

/// What a person set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotificationSettings {
    /// IANA, e.g. `Europe/Paris`.
    pub timezone: String,
    pub quiet_hours: Option<QuietHours>,
}

/// Why settings were not recorded.
#[derive(Debug, thiserror::Error)]
pub enum SettingsRefused {
    #[error("the database does not know the time zone {0:?}")]
    UnknownZone(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The caller's settings (`$1` tenant, `$2` user).
const READ: &str = "
SELECT timezone, quiet_start, quiet_end FROM notification_settings WHERE tenant_id = $1 AND user_id = $2";

/// Whether the database knows zone `$1` (the name `AT TIME ZONE` will be given).
const KNOWS_ZONE: &str = "SELECT EXISTS (SELECT 1 FROM pg_timezone_names WHERE name = $1) AS known";

/// Records the caller's settings: zone `$3`, quiet hours `$4` to `$5` (NULL: none).
const WRITE: &str = "
INSERT INTO notification_settings AS s (tenant_id, user_id, timezone, quiet_start, quiet_end)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (tenant_id, user_id) DO UPDATE
SET timezone = EXCLUDED.timezone, quiet_start = EXCLUDED.quiet_start, quiet_end = EXCLUDED.quiet_end, updated_at = now()";

/// The notification settings of the caller's user in the caller's tenant.
pub struct CallerNotificationSettings<'a> {
    pub(in crate::store) pool: crate::store::TenantPool,
    pub(in crate::store) caller: &'a Caller,
}

impl CallerNotificationSettings<'_> {
    /// What the caller set, if anything.
    pub async fn read(&self) -> Result<Option<NotificationSettings>, StoreError> {
        let client = self.pool.get().await?;
        let (tenant, user) = (self.caller.tenant.as_str(), self.caller.user.as_str());
        let row = client.query_opt(&client.prepare_cached(READ).await?, &[&tenant, &user]).await?;
        let Some(row) = row else { return Ok(None) };
        let (start, end): (Option<NaiveTime>, Option<NaiveTime>) =
            (row.try_get("quiet_start")?, row.try_get("quiet_end")?);
        Ok(Some(NotificationSettings {
            timezone: row.try_get("timezone")?,
            quiet_hours: start.zip(end).map(|(start, end)| QuietHours { start, end }),
        }))
    }

    /// Records `settings` in place of the caller's, once the database is
    /// known to read its zone (an unknown one would fail every statement
    /// that ends the caller's jobs).
    pub async fn write(&self, settings: &NotificationSettings) -> Result<(), SettingsRefused> {
        match self.write_if_known(settings).await? {
            true => Ok(()),
            false => Err(SettingsRefused::UnknownZone(settings.timezone.clone())),
        }
    }

    async fn write_if_known(&self, settings: &NotificationSettings) -> Result<bool, StoreError> {
        let client = self.pool.get().await?;
        let known: bool = client
            .query_one(&client.prepare_cached(KNOWS_ZONE).await?, &[&settings.timezone])
            .await?
            .try_get("known")?;
        if !known {
            return Ok(false);
        }
        let (tenant, user) = (self.caller.tenant.as_str(), self.caller.user.as_str());
        let (start, end) = settings.quiet_hours.map(|q| (q.start, q.end)).unzip();
        let statement = client.prepare_cached(WRITE).await?;
        client.execute(&statement, &[&tenant, &user, &settings.timezone, &start, &end]).await?;
        client.commit().await?;
        Ok(true)
    }
}
