//! Reads of one caller's notifications, and their marks (`marks.rs`): tenant and user are
//! bound into every statement from the [`Caller`]. Notifications are written
//! only by the statements that end jobs (see `finish.rs`, `cancel.rs`).

pub mod branding;
pub mod defaults;
pub mod digests;
pub mod emails;
mod marks;
pub mod preferences;
pub mod push;
pub mod settings;
pub mod tickets;

use chrono::{DateTime, Utc};
use tokio_postgres::Row;

use crate::domain::{BatchCounts, BatchId, Caller, JobId, JobState, NotificationId, ScheduleId};
use crate::store::StoreError;

/// A page of the caller's feed (every kind but the streams-only ones), newest
/// first, before the notification $4 if given, as filter $3 picks them
/// (see [`FeedFilter`]); $5 rows.
const FEED_PAGE: &str = "
SELECT id, kind, job_id, job_type, job_status, error_message, batch_id, webhook_endpoint_id, details, locale, created_at, read_at,
       seen_at, archived_at, (SELECT j.schedule_id FROM jobs j WHERE j.id = n.job_id) AS schedule_id
FROM notifications n
WHERE tenant_id = $1 AND user_id = $2 AND kind NOT IN ('job_cancelled', 'job_superseded')
  AND CASE $3::text WHEN 'archived' THEN archived_at IS NOT NULL
                    WHEN 'unread' THEN archived_at IS NULL AND read_at IS NULL
                    WHEN 'unseen' THEN archived_at IS NULL AND seen_at IS NULL
                    ELSE archived_at IS NULL END
  AND ($4::uuid IS NULL OR id < $4)
ORDER BY id DESC
LIMIT $5";

/// The caller's notifications of every kind after $3 (all if NULL), oldest first, $4 rows.
const NEWER_THAN: &str = "
SELECT id, kind, job_id, job_type, job_status, error_message, batch_id, webhook_endpoint_id, details, locale, created_at, read_at,
       seen_at, archived_at, (SELECT j.schedule_id FROM jobs j WHERE j.id = n.job_id) AS schedule_id
FROM notifications n
WHERE tenant_id = $1 AND user_id = $2 AND ($3::uuid IS NULL OR id > $3)
ORDER BY id
LIMIT $4";

/// The caller's newest notification of any kind: where a new live stream starts.
const NEWEST: &str = "
SELECT id FROM notifications WHERE tenant_id = $1 AND user_id = $2 ORDER BY id DESC LIMIT 1";

/// How many of the caller's feed notifications (archived ones aside) are unread, and unseen.
const COUNTS: &str = "
SELECT count(*) FILTER (WHERE read_at IS NULL) AS unread, count(*) FILTER (WHERE seen_at IS NULL) AS unseen
FROM notifications
WHERE tenant_id = $1 AND user_id = $2 AND kind NOT IN ('job_cancelled', 'job_superseded') AND archived_at IS NULL
  AND (read_at IS NULL OR seen_at IS NULL)";

/// What a notification tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotificationKind {
    /// A job ended (completed, failed, or cancelled by an operator): in the
    /// feed, counted while unread, emailed.
    JobCompleted,
    /// The user cancelled their own job: only their open streams hear of it
    /// (other tabs update); never in the feed or the count.
    JobCancelled,
    /// A newer request with the job's admission key superseded it: told as
    /// `JobCancelled` is.
    JobSuperseded,
    /// The last job of the user's batch ended: in the feed, with the counts.
    BatchCompleted,
    /// A webhook endpoint of the tenant kept failing and was disabled: in
    /// the feeds of the tenant's admins.
    WebhookDisabled,
    /// errand paused one of the user's schedules: they had not signed in
    /// for `schedules.owner_inactive_after`. In the feed.
    SchedulePaused,
}

impl NotificationKind {
    /// The kind as stored, and as the stream's event name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::JobCompleted => "job_completed",
            Self::JobCancelled => "job_cancelled",
            Self::JobSuperseded => "job_superseded",
            Self::BatchCompleted => "batch_completed",
            Self::WebhookDisabled => "webhook_disabled",
            Self::SchedulePaused => "schedule_paused",
        }
    }

    /// `None` for a kind this version does not know: a newer errand process
    /// on the same database may write one during an upgrade.
    fn parse(kind: &str) -> Option<Self> {
        Some(match kind {
            "job_completed" => Self::JobCompleted,
            "job_cancelled" => Self::JobCancelled,
            "job_superseded" => Self::JobSuperseded,
            "batch_completed" => Self::BatchCompleted,
            "webhook_disabled" => Self::WebhookDisabled,
            "schedule_paused" => Self::SchedulePaused,
            _ => return None,
        })
    }
}

/// What a notification is about, by kind.
#[derive(Debug, Clone)]
pub enum NotificationSubject {
    /// `job_completed`, `job_cancelled`, `job_superseded`.
    Job {
        job: JobId,
        job_type: String,
        /// `Completed`, `Failed` or `Cancelled`.
        status: JobState,
        error_message: Option<String>,
        /// The schedule that made the job, while it exists.
        schedule: Option<ScheduleId>,
    },
    /// `batch_completed`: how its children ended.
    Batch { batch: BatchId, job_type: String, counts: BatchCounts },
    /// `webhook_disabled`.
    WebhookDisabled { endpoint: uuid::Uuid, url: String, reason: String },
    /// `schedule_paused`: which, of what type, and when its owner was last seen.
    SchedulePaused { schedule: ScheduleId, job_type: String, seen_at: Option<DateTime<Utc>> },
}

/// A notification.
#[derive(Debug, Clone)]
pub struct Notification {
    pub id: NotificationId,
    pub kind: NotificationKind,
    pub subject: NotificationSubject,
    pub created_at: DateTime<Utc>,
    pub read_at: Option<DateTime<Utc>>,
    /// The bell was opened while it was in the feed (read implies seen).
    pub seen_at: Option<DateTime<Utc>>,
    pub archived_at: Option<DateTime<Utc>>,
    /// The language it is told in (its job's, batch's or schedule's).
    pub locale: crate::domain::Locale,
}

/// Which of the caller's feed a page lists: archived notifications are
/// apart from the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FeedFilter {
    /// Every notification not archived.
    All,
    Unread,
    Unseen,
    Archived,
}

impl FeedFilter {
    /// The filter's name in the API (`status=`), as `FEED_PAGE` takes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::All => "all",
            Self::Unread => "unread",
            Self::Unseen => "unseen",
            Self::Archived => "archived",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        [Self::All, Self::Unread, Self::Unseen, Self::Archived].into_iter().find(|f| f.as_str() == name)
    }
}

/// How many of the caller's feed notifications (archived ones aside) are
/// unread, and unseen: the badge's count is the second.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeedCounts {
    pub unread: i64,
    pub unseen: i64,
}

/// One page of the feed, newest first, with the caller's counts.
#[derive(Debug)]
pub struct NotificationPage {
    pub notifications: Vec<Notification>,
    pub next_before: Option<NotificationId>,
    pub counts: FeedCounts,
}

/// Notifications newer than a point, oldest first, one page.
#[derive(Debug)]
pub struct NewerPage {
    pub notifications: Vec<Notification>,
    /// The newest row read (of any kind): where the next page starts.
    pub last: Option<NotificationId>,
    /// The page was full: more may follow.
    pub full: bool,
}

/// The notifications of one user of one tenant.
pub struct CallerNotifications<'a> {
    pool: crate::store::TenantPool,
    caller: &'a Caller,
}

impl<'a> CallerNotifications<'a> {
    pub(super) fn new(pool: crate::store::TenantPool, caller: &'a Caller) -> Self {
        Self { pool, caller }
    }

    fn owner(&self) -> (&str, &str) {
        (self.caller.tenant.as_str(), self.caller.user.as_str())
    }

    /// A page of the feed, newest first (keyset on the v7 id).
    pub async fn list(
        &self,
        filter: FeedFilter,
        before: Option<NotificationId>,
        limit: u32,
    ) -> Result<NotificationPage, StoreError> {
        crate::store::retry_if_connection_lost(|| self.list_once(filter, before, limit)).await
    }

    async fn list_once(
        &self,
        filter: FeedFilter,
        before: Option<NotificationId>,
        limit: u32,
    ) -> Result<NotificationPage, StoreError> {
        let client = self.pool.get().await?;
        let (tenant, user) = self.owner();
        let statement = client.prepare_cached(FEED_PAGE).await?;
        let fetch = i64::from(limit) + 1;
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 5] =
            [&tenant, &user, &filter.as_str(), &before.map(|id| id.0), &fetch];
        let mut rows = client.query(&statement, &params).await?;
        // The page and its cursor go by rows, whatever kinds are left out.
        let next_before = if rows.len() > limit as usize {
            rows.truncate(limit as usize);
            rows.last().map(|row| row.try_get("id").map(NotificationId)).transpose()?
        } else {
            None
        };
        let notifications = notifications_from_rows(&rows)?;
        let counts = self.counts_on(&client).await?;
        Ok(NotificationPage { notifications, next_before, counts })
    }

    /// Notifications newer than `after` (all when `None`), oldest first: what a
    /// live stream has not sent yet.
    pub async fn after(&self, after: Option<NotificationId>, limit: i64) -> Result<NewerPage, StoreError> {
        crate::store::retry_if_connection_lost(|| self.after_once(after, limit)).await
    }

    async fn after_once(&self, after: Option<NotificationId>, limit: i64) -> Result<NewerPage, StoreError> {
        let (tenant, user) = self.owner();
        let rows = self.pool.read(NEWER_THAN, &[&tenant, &user, &after.map(|id| id.0), &limit]).await?;
        Ok(NewerPage {
            notifications: notifications_from_rows(&rows)?,
            last: rows.last().map(|row| row.try_get("id").map(NotificationId)).transpose()?,
            full: rows.len() as i64 == limit,
        })
    }

    /// The caller's newest notification, if any: where a new live stream starts.
    pub async fn after_newest(&self) -> Result<Option<NotificationId>, StoreError> {
        let client = self.pool.get().await?;
        let (tenant, user) = self.owner();
        let statement = client.prepare_cached(NEWEST).await?;
        let newest = client.query_opt(&statement, &[&tenant, &user]).await?;
        Ok(newest.map(|row| row.try_get("id").map(NotificationId)).transpose()?)
    }

    /// How many of the caller's notifications are unread, and unseen.
    pub async fn counts(&self) -> Result<FeedCounts, StoreError> {
        let (tenant, user) = self.owner();
        let rows = self.pool.read(COUNTS, &[&tenant, &user]).await?;
        counts_from_row(rows.first().ok_or_else(|| StoreError::Corrupt("a count read back no row".into()))?)
    }

    async fn counts_on(&self, client: &deadpool_postgres::Client) -> Result<FeedCounts, StoreError> {
        let (tenant, user) = self.owner();
        let statement = client.prepare_cached(COUNTS).await?;
        counts_from_row(&client.query_one(&statement, &[&tenant, &user]).await?)
    }
}

/// The notifications of `rows`, in order, leaving out kinds this version
/// does not know (see [`NotificationKind::parse`]) rather than failing the read.
fn notifications_from_rows(rows: &[Row]) -> Result<Vec<Notification>, StoreError> {
    let mut notifications = Vec::with_capacity(rows.len());
    for row in rows {
        if let Some(kind) = NotificationKind::parse(row.try_get("kind")?) {
            notifications.push(notification_from_row(row, kind)?);
        }
    }
    Ok(notifications)
}

fn notification_from_row(row: &Row, kind: NotificationKind) -> Result<Notification, StoreError> {
    let details = || -> Result<serde_json::Value, StoreError> {
        row.try_get::<_, Option<serde_json::Value>>("details")?
            .ok_or_else(|| StoreError::Corrupt("a notification without its details".into()))
    };
    let subject = match kind {
        NotificationKind::JobCompleted | NotificationKind::JobCancelled | NotificationKind::JobSuperseded => {
            let status: String = row.try_get("job_status")?;
            NotificationSubject::Job {
                job: JobId(row.try_get("job_id")?),
                job_type: row.try_get("job_type")?,
                status: status.parse::<JobState>()?,
                error_message: row.try_get("error_message")?,
                schedule: row.try_get::<_, Option<uuid::Uuid>>("schedule_id")?.map(ScheduleId),
            }
        }
        NotificationKind::BatchCompleted => NotificationSubject::Batch {
            batch: BatchId(row.try_get("batch_id")?),
            job_type: row.try_get("job_type")?,
            counts: serde_json::from_value(details()?)
                .map_err(|e| StoreError::Corrupt(format!("a batch notification's counts: {e}")))?,
        },
        NotificationKind::WebhookDisabled => {
            let details = details()?;
            let text = |key: &str| details.get(key).and_then(serde_json::Value::as_str).unwrap_or_default().to_owned();
            NotificationSubject::WebhookDisabled {
                endpoint: row.try_get("webhook_endpoint_id")?,
                url: text("url"),
                reason: text("reason"),
            }
        }
        NotificationKind::SchedulePaused => {
            let details = details()?;
            let schedule = details.get("schedule_id").and_then(|id| id.as_str()?.parse().ok());
            NotificationSubject::SchedulePaused {
                schedule: ScheduleId(schedule.ok_or_else(|| StoreError::Corrupt("a paused schedule's id".into()))?),
                job_type: row.try_get("job_type")?,
                seen_at: details.get("seen_at").and_then(|at| serde_json::from_value(at.clone()).ok()),
            }
        }
    };
    Ok(Notification {
        id: NotificationId(row.try_get("id")?),
        kind,
        subject,
        created_at: row.try_get("created_at")?,
        read_at: row.try_get("read_at")?,
        seen_at: row.try_get("seen_at")?,
        archived_at: row.try_get("archived_at")?,
        // One of a catalogue no longer shipped is told in English.
        locale: crate::domain::Locale::parse(&row.try_get::<_, String>("locale")?)
            .unwrap_or(crate::domain::Locale::ENGLISH),
    })
}

fn counts_from_row(row: &Row) -> Result<FeedCounts, StoreError> {
    Ok(FeedCounts { unread: row.try_get("unread")?, unseen: row.try_get("unseen")? })
}
