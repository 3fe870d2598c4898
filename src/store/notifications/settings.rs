//! One person's notification settings: their time zone, quiet hours and
//! digest, read by the statements that end jobs (`errand_send_at`: an email
//! or a push due within quiet hours waits for their end; `errand_channels`:
//! an email in a digest category is held for the digest). Scoped like their
//! jobs: reads and changes through [`CallerNotificationSettings`] only.

use chrono::NaiveTime;

use crate::domain::{Caller, DigestEvery};
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
    /// When their digest goes; `None`: no digest (emails go at once).
    pub digest: Option<DigestEvery>,
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
SELECT timezone, quiet_start, quiet_end, digest_every, digest_at FROM notification_settings
WHERE tenant_id = $1 AND user_id = $2";

/// Whether the database knows zone `$1` (the name `AT TIME ZONE` will be given).
const KNOWS_ZONE: &str = "SELECT EXISTS (SELECT 1 FROM pg_timezone_names WHERE name = $1) AS known";

/// Records the caller's settings: zone `$3`, quiet hours `$4` to `$5`, a
/// digest every `$6` (`hour`, `day`) at `$7`, next at `$8` (NULL: none).
const WRITE: &str = "
INSERT INTO notification_settings AS s (tenant_id, user_id, timezone, quiet_start, quiet_end, digest_every,
                                        digest_at, digest_next_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
ON CONFLICT (tenant_id, user_id) DO UPDATE
SET timezone = EXCLUDED.timezone, quiet_start = EXCLUDED.quiet_start, quiet_end = EXCLUDED.quiet_end,
    digest_every = EXCLUDED.digest_every, digest_at = EXCLUDED.digest_at, digest_next_at = EXCLUDED.digest_next_at,
    updated_at = now()";

/// Without a digest, what the caller's digest held goes as it would have:
/// each email on its own, once their quiet hours allow (the settings just
/// written).
const RELEASE_HELD: &str = "
UPDATE email_outbox SET state = 'pending', next_attempt_at = errand_quiet_until($1, $2, now())
WHERE tenant_id = $1 AND user_id = $2 AND state = 'held'";

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
        let digest = match row.try_get::<_, Option<&str>>("digest_every")? {
            None => None,
            Some("hour") => Some(DigestEvery::Hour),
            Some(_) => Some(DigestEvery::Day(
                row.try_get::<_, Option<NaiveTime>>("digest_at")?
                    .ok_or_else(|| StoreError::Corrupt("a daily digest without its time".into()))?,
            )),
        };
        Ok(Some(NotificationSettings {
            timezone: row.try_get("timezone")?,
            quiet_hours: start.zip(end).map(|(start, end)| QuietHours { start, end }),
            digest,
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
        let (every, at) = match settings.digest {
            None => (None, None),
            Some(DigestEvery::Hour) => (Some("hour"), None),
            Some(DigestEvery::Day(at)) => (Some("day"), Some(at)),
        };
        let next = match settings.digest {
            None => None,
            Some(digest) => Some(digest.next_after(chrono::Utc::now(), &settings.timezone).ok_or_else(|| {
                StoreError::Corrupt(format!("no next digest in the time zone {:?}", settings.timezone))
            })?),
        };
        let statement = client.prepare_cached(WRITE).await?;
        client.execute(&statement, &[&tenant, &user, &settings.timezone, &start, &end, &every, &at, &next]).await?;
        if settings.digest.is_none() {
            client.execute(&client.prepare_cached(RELEASE_HELD).await?, &[&tenant, &user]).await?;
        }
        client.commit().await?;
        Ok(true)
    }
}
