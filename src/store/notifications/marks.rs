//! The caller's marks on their feed: read, seen (the feed opened) and
//! archived, each announced to every process's open streams of the caller,
//! whose counts then change.

use crate::domain::{NotificationId, OwnerTag};
use crate::store::StoreError;
use crate::store::notifications::CallerNotifications;

/// Marks the caller's feed notification $3 read (and so seen), if it is unread.
const MARK_READ: &str = "
UPDATE notifications SET read_at = now(), seen_at = coalesce(seen_at, now())
WHERE tenant_id = $1 AND user_id = $2 AND id = $3 AND kind NOT IN ('job_cancelled', 'job_superseded') AND read_at IS NULL";

/// Marks every unseen feed notification of the caller (archived ones aside) seen.
const MARK_ALL_SEEN: &str = "
UPDATE notifications SET seen_at = now()
WHERE tenant_id = $1 AND user_id = $2 AND kind NOT IN ('job_cancelled', 'job_superseded') AND seen_at IS NULL
  AND archived_at IS NULL";

/// Archives the caller's feed notification $3, if it is not already.
const ARCHIVE: &str = "
UPDATE notifications SET archived_at = now()
WHERE tenant_id = $1 AND user_id = $2 AND id = $3 AND kind NOT IN ('job_cancelled', 'job_superseded')
  AND archived_at IS NULL";

/// Archives every read feed notification of the caller not archived yet.
const ARCHIVE_READ: &str = "
UPDATE notifications SET archived_at = now()
WHERE tenant_id = $1 AND user_id = $2 AND kind NOT IN ('job_cancelled', 'job_superseded') AND read_at IS NOT NULL
  AND archived_at IS NULL";

/// Whether the caller has the feed notification $3 (read or not).
const EXISTS: &str = "
SELECT 1 FROM notifications WHERE tenant_id = $1 AND user_id = $2 AND id = $3 AND kind NOT IN ('job_cancelled', 'job_superseded')";

/// Marks every unread feed notification of the caller read (and so seen).
const MARK_ALL_READ: &str = "
UPDATE notifications SET read_at = now(), seen_at = coalesce(seen_at, now())
WHERE tenant_id = $1 AND user_id = $2 AND kind NOT IN ('job_cancelled', 'job_superseded') AND read_at IS NULL";

/// Wakes the streams of owner tag $2 on channel $1 (a read, seen or archive mark changes their counts).
const ANNOUNCE: &str = "SELECT pg_notify($1, $2)";

impl CallerNotifications<'_> {
    /// Marks one notification read; `false` if the caller has no such notification.
    pub async fn mark_read(&self, id: NotificationId) -> Result<bool, StoreError> {
        self.mark_one(MARK_READ, id).await
    }

    /// Marks every unread notification of the caller read; returns how many.
    pub async fn mark_all_read(&self) -> Result<u64, StoreError> {
        self.mark_all(MARK_ALL_READ).await
    }

    /// Marks every unseen notification of the caller seen (the bell was
    /// opened); returns how many.
    pub async fn mark_all_seen(&self) -> Result<u64, StoreError> {
        self.mark_all(MARK_ALL_SEEN).await
    }

    /// Archives every read notification of the caller; returns how many.
    pub async fn archive_read(&self) -> Result<u64, StoreError> {
        self.mark_all(ARCHIVE_READ).await
    }

    /// Archives one notification (again: nothing changes); `false` if the
    /// caller has no such notification.
    pub async fn archive(&self, id: NotificationId) -> Result<bool, StoreError> {
        self.mark_one(ARCHIVE, id).await
    }

    /// Runs one of the marks of one notification (`MARK_READ`, `ARCHIVE`),
    /// announcing a change; `false` if the caller has no such notification
    /// (one already marked is `true`: nothing changes).
    async fn mark_one(&self, mark: &str, id: NotificationId) -> Result<bool, StoreError> {
        let client = self.pool.get().await?;
        let (tenant, user) = self.owner();
        let statement = client.prepare_cached(mark).await?;
        if client.execute(&statement, &[&tenant, &user, &id.0]).await? == 1 {
            self.announce_read(&client).await?;
            client.commit().await?;
            return Ok(true);
        }
        let exists = client.prepare_cached(EXISTS).await?;
        Ok(client.query_opt(&exists, &[&tenant, &user, &id.0]).await?.is_some())
    }

    /// Runs one of the marks of every matching notification of the caller
    /// (`MARK_ALL_READ`, `MARK_ALL_SEEN`, `ARCHIVE_READ`), announcing a change.
    async fn mark_all(&self, mark: &str) -> Result<u64, StoreError> {
        let client = self.pool.get().await?;
        let (tenant, user) = self.owner();
        let statement = client.prepare_cached(mark).await?;
        let marked = client.execute(&statement, &[&tenant, &user]).await?;
        if marked > 0 {
            self.announce_read(&client).await?;
            client.commit().await?;
        }
        Ok(marked)
    }

    /// Tells every process's open streams of the caller that the unread
    /// count changed (the same announcement as a new notification: streams
    /// woken by it send what is new and the count), so every open tab and
    /// device shows the count the server has.
    async fn announce_read(&self, client: &deadpool_postgres::Client) -> Result<(), StoreError> {
        let owner = OwnerTag::of(&self.caller.tenant, &self.caller.user);
        let statement = client.prepare_cached(ANNOUNCE).await?;
        client.execute(&statement, &[&crate::store::NOTIFICATION_CHANNEL, &owner.as_str()]).await?;
        Ok(())
    }
}
