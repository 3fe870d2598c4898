//! One open notification stream: what it has sent, and how it finds what
//! it has not (re-reading a little behind its newest, since ids are taken
//! when rows are written, not when they become visible).

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use actix_web_lab::sse;
use tokio::sync::mpsc;
use uuid::Uuid;

use super::NotificationView;
use crate::actors::StreamWakes;
use crate::domain::{BatchCounts, BatchId, Caller, JobId, NotificationId};
use crate::jobs::JobTypes;
use crate::store::{FeedCounts, Store};

/// A live stream also re-reads this far behind its newest sent notification:
/// ids are taken when a row is written, so two ends committing at nearly the
/// same moment can become visible out of id order. By how much: the
/// statement that writes a user's notification then deletes the job's queue
/// row, whose counting trigger locks that user's count of unfinished jobs
/// until the commit is visible (a wait for a synchronous standby included).
/// So one user's notifications become visible in the order their statements
/// reached that lock, out of id order by at most the rest of one statement:
/// milliseconds, and this window leaves room for a stalled server.
/// (`tests/api/notifications.rs` commits one after a newer one was streamed.)
const LOOKBACK: Duration = Duration::from_secs(2);
/// Ids a stream remembers having sent, to skip them when it looks back.
const REMEMBERED: usize = 256;
/// Notifications read per query while catching up.
const PAGE: i64 = 200;

/// One open stream: what it has sent, and how to find what it has not.
pub(super) struct LiveFeed {
    store: Store,
    types: JobTypes,
    caller: Caller,
    sent: VecDeque<NotificationId>,
    /// The newest notification sent (or present when the stream opened).
    newest: Option<NotificationId>,
    /// The counts last sent.
    counts: Option<FeedCounts>,
    /// The progress last sent, per running job.
    progress_sent: HashMap<JobId, serde_json::Value>,
    /// The counts last sent, per running batch.
    batch_counts_sent: HashMap<BatchId, BatchCounts>,
    /// The process is shutting down: end the stream (its client resumes elsewhere).
    closing: tokio_util::sync::CancellationToken,
}

impl LiveFeed {
    /// A stream for `caller` that sends what comes after `newest` (or,
    /// without one, what comes from now on) until the process is `closing`.
    pub(super) fn open(
        store: Store,
        types: JobTypes,
        caller: Caller,
        newest: Option<NotificationId>,
        closing: tokio_util::sync::CancellationToken,
    ) -> Self {
        Self {
            store,
            types,
            caller,
            sent: VecDeque::new(),
            newest,
            counts: None,
            progress_sent: HashMap::new(),
            batch_counts_sent: HashMap::new(),
            closing,
        }
    }

    pub(super) async fn run(mut self, mut wakes: StreamWakes, events: mpsc::Sender<sse::Event>) {
        if let Some(id) = self.newest {
            self.sent.push_back(id);
        }
        let mut feed_woken = true;
        let mut progress_woken = true;
        loop {
            let mut open = Ok(true);
            if feed_woken {
                open = match self.send_unsent(&events).await {
                    Ok(true) => self.send_counts(&events).await,
                    other => other,
                };
            }
            if progress_woken && matches!(open, Ok(true)) {
                open = self.send_progress(&events).await;
            }
            match open {
                Ok(true) => {}
                Ok(false) => return,
                // The database is away: the next wake-up tries again.
                Err(error) => tracing::warn!(%error, "notification stream could not read the feed"),
            }
            tokio::select! {
                woken = wakes.feed.recv() => {
                    if woken.is_none() { return }
                    (feed_woken, progress_woken) = (true, false);
                }
                woken = wakes.progress.recv() => {
                    if woken.is_none() { return }
                    (feed_woken, progress_woken) = (false, true);
                }
                _ = events.closed() => return,
                _ = self.closing.cancelled() => return,
            }
        }
    }

    /// Sends a `job_progress` event (no id: only the latest value matters,
    /// and it is never replayed) for each of the caller's running jobs whose
    /// progress changed since last sent.
    async fn send_progress(&mut self, events: &mpsc::Sender<sse::Event>) -> Result<bool, crate::store::StoreError> {
        let running = self.store.jobs_for(&self.caller).running_progress().await?;
        let still_running: std::collections::HashSet<JobId> = running.iter().map(|(job, _)| *job).collect();
        self.progress_sent.retain(|job, _| still_running.contains(job));
        for (job, progress) in running {
            if self.progress_sent.get(&job) == Some(&progress) {
                continue;
            }
            let data = serde_json::json!({ "job_id": job, "progress": progress }).to_string();
            if events.send(sse::Data::new(data).event("job_progress").into()).await.is_err() {
                return Ok(false);
            }
            self.progress_sent.insert(job, progress);
        }
        self.send_batch_progress(events).await
    }

    /// Sends a `batch_progress` event (no id, as `job_progress`) for each of
    /// the caller's running batches whose counts changed since last sent. A
    /// batch's last counts come with its `batch_completed` notification.
    async fn send_batch_progress(
        &mut self,
        events: &mpsc::Sender<sse::Event>,
    ) -> Result<bool, crate::store::StoreError> {
        let open = self.store.batches_for(&self.caller).open().await?;
        let still_open: std::collections::HashSet<BatchId> = open.iter().map(|batch| batch.id).collect();
        self.batch_counts_sent.retain(|batch, _| still_open.contains(batch));
        for batch in open {
            if self.batch_counts_sent.get(&batch.id) == Some(&batch.counts) {
                continue;
            }
            let c = batch.counts;
            let data = serde_json::json!({
                "batch_id": batch.id, "total": c.total, "completed": c.completed, "failed": c.failed,
                "cancelled": c.cancelled, "status": c.status().as_str(),
            });
            if events.send(sse::Data::new(data.to_string()).event("batch_progress").into()).await.is_err() {
                return Ok(false);
            }
            self.batch_counts_sent.insert(batch.id, c);
        }
        Ok(true)
    }

    /// Sends the caller's unread and unseen counts when they differ from
    /// those last sent (and once when the stream opens), as an
    /// `unread_count` event without an id: the latest counts are all that
    /// matter, so they are never replayed. A read, seen or archive mark
    /// anywhere wakes the stream as a new notification does, so every open
    /// tab shows the server's counts.
    async fn send_counts(&mut self, events: &mpsc::Sender<sse::Event>) -> Result<bool, crate::store::StoreError> {
        let counts = self.store.notifications_for(&self.caller).counts().await?;
        if self.counts == Some(counts) {
            return Ok(true);
        }
        let json = serde_json::json!({ "unread_count": counts.unread, "unseen_count": counts.unseen });
        let data = sse::Data::new(json.to_string()).event("unread_count");
        if events.send(data.into()).await.is_err() {
            return Ok(false);
        }
        self.counts = Some(counts);
        Ok(true)
    }

    /// Sends what is newer than (a little before) the newest sent; `false` once the client is gone.
    async fn send_unsent(&mut self, events: &mpsc::Sender<sse::Event>) -> Result<bool, crate::store::StoreError> {
        let mut since = self.newest.map(|id| lookback(id, LOOKBACK));
        loop {
            let page = self.store.notifications_for(&self.caller).after(since, PAGE).await?;
            let full = page.full;
            since = page.last.or(since);
            for notification in page.notifications {
                let (id, kind) = (notification.id, notification.kind);
                if self.sent.contains(&id) {
                    continue;
                }
                // Serialising a view of strings cannot fail; skip rather than panic if it did.
                let Ok(data) = sse::Data::new_json(NotificationView::new(notification, &self.types)) else { continue };
                if events.send(data.id(id.to_string()).event(kind.as_str()).into()).await.is_err() {
                    return Ok(false);
                }
                self.sent.push_back(id);
                if self.sent.len() > REMEMBERED {
                    self.sent.pop_front();
                }
                self.newest = self.newest.max(Some(id));
            }
            if !full {
                return Ok(true);
            }
        }
    }
}

/// The smallest v7 id of the millisecond `by` before `id`'s.
fn lookback(id: NotificationId, by: Duration) -> NotificationId {
    let bytes = id.0.as_bytes();
    let mut millis = [0u8; 8];
    millis[2..].copy_from_slice(&bytes[..6]);
    let earlier = u64::from_be_bytes(millis).saturating_sub(by.as_millis() as u64);
    let mut out = [0u8; 16];
    out[..6].copy_from_slice(&earlier.to_be_bytes()[2..]);
    out[6] = 0x70;
    out[8] = 0x80;
    NotificationId(Uuid::from_bytes(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn lookback_is_earlier_by_the_window(ms in 10_000u64..(1u64 << 47), rest in any::<u128>()) {
            let ts = uuid::Timestamp::from_unix(uuid::NoContext, ms / 1000, (ms % 1000) as u32 * 1_000_000);
            let mut bytes = *Uuid::new_v7(ts).as_bytes();
            bytes[8..].copy_from_slice(&rest.to_be_bytes()[8..]);
            let id = NotificationId(Uuid::from_bytes(bytes));
            let bound = lookback(id, Duration::from_millis(2000));
            prop_assert!(bound < id);
            let bound_ms = bound.0.get_timestamp().unwrap().to_unix();
            prop_assert_eq!(bound_ms.0 * 1000 + u64::from(bound_ms.1 / 1_000_000), ms - 2000);
        }
    }
}
