//! `/notifications`: the in-app feed, read-marks, and the live stream
//! (Server-Sent Events). Every read goes through the caller's scope.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use actix_web::{FromRequest, HttpRequest, HttpResponse, Responder, web};
use actix_web_lab::sse;
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;
use uuid::Uuid;

use super::AppState;
use super::page::{self, rfc3339};
use crate::actors::{ListNotifications, MarkAllRead, MarkRead, StreamWakes, Subscribe};
use crate::domain::{BatchCounts, BatchId, Caller, JobId, JobState, NotificationId, ScheduleId};
use crate::http::error::{AppError, Problem, RateLimitedResponse, Unauthenticated, Unavailable};
use crate::jobs::JobTypes;
use crate::store::{Notification, NotificationKind, NotificationSubject, Store};

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

/// A notification as the API shows it, written for a person.
#[derive(Serialize, utoipa::ToSchema)]
pub struct NotificationView {
    #[schema(value_type = String, format = Uuid)]
    id: NotificationId,
    /// `job_completed`, `batch_completed` (the last job of a batch ended) or
    /// `webhook_disabled` (to a tenant's admins) in the feed; on streams also
    /// `job_cancelled`, when the user cancelled the job themselves (never in
    /// the feed).
    #[schema(value_type = String)]
    kind: &'static str,
    /// The job (`job_completed`, `job_cancelled`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, format = Uuid)]
    job_id: Option<JobId>,
    /// The job's, or the batch's children's, type.
    #[serde(skip_serializing_if = "Option::is_none")]
    job_type: Option<String>,
    /// `completed`, `failed` or `cancelled` (`job_completed`, `job_cancelled`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    job_status: Option<&'static str>,
    /// The schedule that made the job, when one did: `PATCH /schedules/{id}`
    /// with `{"paused": true}` pauses it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, format = Uuid)]
    schedule_id: Option<ScheduleId>,
    /// The batch (`batch_completed`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, format = Uuid)]
    batch_id: Option<BatchId>,
    /// How the batch's children ended (`batch_completed`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    counts: Option<BatchCounts>,
    /// The endpoint that was disabled (`webhook_disabled`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, format = Uuid)]
    webhook_id: Option<Uuid>,
    title: String,
    body: String,
    created_at: String,
    read_at: Option<String>,
}

impl NotificationView {
    fn new(n: Notification, types: &JobTypes) -> Self {
        let mut view = Self {
            id: n.id,
            kind: n.kind.as_str(),
            job_id: None,
            job_type: None,
            job_status: None,
            schedule_id: None,
            batch_id: None,
            counts: None,
            webhook_id: None,
            title: String::new(),
            body: String::new(),
            created_at: rfc3339(n.created_at),
            read_at: n.read_at.map(rfc3339),
        };
        (view.title, view.body) = match n.subject {
            NotificationSubject::Job { job, job_type, status, error_message, schedule } => {
                let name = types.display_name(&job_type);
                let (job_status, title, body) = match status {
                    JobState::Failed => {
                        let reason = error_message.as_deref().unwrap_or("no reason was recorded");
                        ("failed", format!("Your {name} failed"), format!("Your {name} failed: {reason}"))
                    }
                    JobState::Cancelled if n.kind == NotificationKind::JobCancelled => {
                        ("cancelled", format!("Your {name} was cancelled"), format!("You cancelled your {name}."))
                    }
                    JobState::Cancelled => (
                        "cancelled",
                        format!("Your {name} was cancelled"),
                        format!("An operator cancelled your {name}."),
                    ),
                    _ => ("completed", format!("Your {name} is ready"), format!("Your {name} finished successfully.")),
                };
                (view.job_id, view.job_type, view.job_status) = (Some(job), Some(job_type), Some(job_status));
                view.schedule_id = schedule;
                let body = match schedule {
                    Some(_) => format!("{body} One of your schedules made it."),
                    None => body,
                };
                (title, body)
            }
            NotificationSubject::Batch { batch, job_type, counts } => {
                let name = types.display_name(&job_type);
                let title = format!("Your batch of {} {name} jobs is done", counts.total);
                let mut parts = vec![format!("{} completed", counts.completed)];
                if counts.failed > 0 {
                    parts.push(format!("{} failed", counts.failed));
                }
                if counts.cancelled > 0 {
                    parts.push(format!("{} cancelled", counts.cancelled));
                }
                let report = if counts.completed < counts.total { "; the report lists the others" } else { "" };
                (view.batch_id, view.job_type, view.counts) = (Some(batch), Some(job_type), Some(counts));
                (title, format!("{}{report}.", parts.join(", ")))
            }
            NotificationSubject::WebhookDisabled { endpoint, url, reason } => {
                view.webhook_id = Some(endpoint);
                ("A webhook endpoint was disabled".to_owned(), format!("Deliveries to {url} stopped: {reason}."))
            }
        };
        view
    }
}

#[derive(Deserialize)]
pub struct FeedQuery {
    unread_only: Option<bool>,
    limit: Option<u32>,
    cursor: Option<String>,
}

/// A page of the caller's feed.
#[derive(Serialize, utoipa::ToSchema)]
pub struct FeedPage {
    notifications: Vec<NotificationView>,
    unread_count: i64,
    /// Pass as `cursor` for the next page; absent on the last.
    next_cursor: Option<String>,
}

/// How many notifications `read-all` marked.
#[derive(Serialize, utoipa::ToSchema)]
pub struct MarkedRead {
    marked_read: u64,
}

/// A ticket for `GET /notifications/stream?ticket=…`.
#[derive(Serialize, utoipa::ToSchema)]
pub struct StreamTicket {
    ticket: String,
    /// Seconds until it expires.
    expires_in: u64,
}

/// `GET /notifications`: the caller's feed, newest first, with `unread_count`.
#[utoipa::path(
    get, path = "/notifications", tag = "notifications",
    params(
        ("unread_only" = Option<bool>, Query, description = "Only unread notifications"),
        ("limit" = Option<u32>, Query, minimum = 1, maximum = 100, description = "1 to 100, default 20"),
        ("cursor" = Option<String>, Query, pattern = "^[A-Za-z0-9_-]{21}[AQgw]$", description = "`next_cursor` of the previous page"),
    ),
    responses(
        (status = 200, description = "A page of the feed", body = FeedPage),
        (status = 400, description = "Bad limit or cursor (`bad_request`)", body = Problem, content_type = "application/problem+json"),
        Unauthenticated,
        RateLimitedResponse,
        Unavailable,
    ),
    security(("bearer" = [])),
)]
pub async fn list(
    caller: Caller,
    query: web::Query<FeedQuery>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let query = query.into_inner();
    let limit = page::limit(query.limit)?;
    let before = query.cursor.as_deref().map(page::decode_cursor).transpose()?.map(NotificationId);
    let msg = ListNotifications { caller, unread_only: query.unread_only.unwrap_or(false), before, limit };
    let page = state.notifier.send(msg).await??;
    Ok(HttpResponse::Ok().json(FeedPage {
        notifications: page.notifications.into_iter().map(|n| NotificationView::new(n, &state.job_types)).collect(),
        unread_count: page.unread_count,
        next_cursor: page.next_before.map(|id| page::encode_cursor(id.0)),
    }))
}

/// `POST /notifications/{id}/read`: 204, or 404 whether missing or someone else's.
#[utoipa::path(
    post, path = "/notifications/{id}/read", tag = "notifications",
    params(("id" = String, Path, format = Uuid, description = "The notification's id")),
    responses(
        (status = 204, description = "Marked read"),
        Unauthenticated,
        RateLimitedResponse,
        (status = 404, description = "No such notification of the caller (`not_found`)", body = Problem, content_type = "application/problem+json"),
        Unavailable,
    ),
    security(("bearer" = [])),
)]
pub async fn mark_read(
    caller: Caller,
    path: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let id = NotificationId(super::path_id(&path)?);
    if state.notifier.send(MarkRead { caller, id }).await?? {
        Ok(HttpResponse::NoContent().finish())
    } else {
        Err(AppError::NotFound)
    }
}

/// `POST /notifications/read-all`: marks every unread notification of the caller read.
#[utoipa::path(
    post, path = "/notifications/read-all", tag = "notifications",
    responses(
        (status = 200, description = "How many were marked", body = MarkedRead),
        Unauthenticated,
        RateLimitedResponse,
        Unavailable,
    ),
    security(("bearer" = [])),
)]
pub async fn mark_all_read(caller: Caller, state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    let marked_read = state.notifier.send(MarkAllRead { caller }).await??;
    Ok(HttpResponse::Ok().json(MarkedRead { marked_read }))
}

/// `POST /notifications/stream-tickets`: a short-lived ticket for
/// `GET /notifications/stream?ticket=…`, for browsers' EventSource, which
/// cannot send an Authorization header. The ticket opens streams only.
#[utoipa::path(
    post, path = "/notifications/stream-tickets", tag = "notifications",
    responses(
        (status = 201, description = "A ticket for the stream", body = StreamTicket),
        (status = 429, description = "Too many of the caller's tickets are unused (`too_many_streams`), or past a rate limit (`rate_limited`)", body = Problem, content_type = "application/problem+json"),
        Unauthenticated,
    ),
    security(("bearer" = [])),
)]
pub async fn stream_ticket(caller: Caller, state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    let ttl = state.stream.stream_ticket_ttl;
    let id = state.tickets.issue(&caller)?;
    let ticket = state.auth.stream_ticket(&caller, ttl, id)?;
    Ok(HttpResponse::Created().json(StreamTicket { ticket, expires_in: ttl.as_secs() }))
}

#[derive(Deserialize)]
pub struct StreamQuery {
    ticket: Option<String>,
}

/// `GET /notifications/stream`: Server-Sent Events, one `job_completed` event
/// per new notification of the caller, with the notification id as event id,
/// an `unread_count` event (no id) when the stream opens and whenever the
/// caller's unread count changes, in this process or any other, and a
/// `job_progress` event (no id; only the latest value) when a running job of
/// the caller reports progress, or a `batch_progress` event when a running
/// batch's counts change. A job the caller cancelled themselves comes as a
/// `job_cancelled` event (never in the feed); `batch_completed` and
/// `webhook_disabled` notifications come as events of those names.
/// With `Last-Event-ID`, first replays what came after it.
#[utoipa::path(
    get, path = "/notifications/stream", tag = "notifications",
    params(
        ("ticket" = Option<String>, Query, description = "A stream ticket, for clients that cannot send Authorization"),
        ("Last-Event-ID" = Option<String>, Header, description = "Replay what came after this notification"),
    ),
    responses(
        (status = 200, description = "`job_completed` events (data: a notification, id: its id) `job_cancelled` events (the same, for a job the caller cancelled), `unread_count` events (data: `{\"unread_count\": n}`, no id) `job_progress` events (data: `{\"job_id\", \"progress\"}`, no id), `batch_progress` events (data: `{\"batch_id\", \"total\", \"completed\", \"failed\", \"cancelled\", \"status\"}`, no id), and `batch_completed` and `webhook_disabled` events (data: a notification, id: its id)", content_type = "text/event-stream", body = String),
        (status = 401, description = "No valid token or ticket (`unauthorized`)", body = Problem, content_type = "application/problem+json"),
        (status = 429, description = "The caller (or this server) has as many streams open as allowed (`too_many_streams`), or the caller is past a rate limit (`rate_limited`, with the `RateLimit` headers)", body = Problem, content_type = "application/problem+json",
            headers(("Retry-After" = u64, description = "Seconds to wait before opening a stream again"))),
    ),
    security(("bearer" = []), ()),
)]
pub async fn stream(
    req: HttpRequest,
    query: web::Query<StreamQuery>,
    state: web::Data<AppState>,
) -> Result<impl Responder, AppError> {
    let caller = match &query.ticket {
        Some(ticket) => {
            let (caller, id) = state.auth.caller_from_ticket(ticket)?;
            if let Some(id) = id {
                state.tickets.used(&caller, id);
            }
            super::request_id::record_caller(&caller);
            caller
        }
        None => Caller::extract(&req).await?,
    };
    let last_event = match req.headers().get("Last-Event-ID") {
        None => None,
        Some(value) => Some(
            value
                .to_str()
                .ok()
                .and_then(|v| Uuid::parse_str(v.trim()).ok())
                .map(NotificationId)
                .ok_or_else(|| AppError::BadRequest("Last-Event-ID must be an event id this stream sent".into()))?,
        ),
    };
    // Subscribe before looking, so nothing committed from here on is missed.
    let wakes = state.notifier.send(Subscribe { caller: caller.clone() }).await??;
    let start = match last_event {
        Some(id) => Some(id),
        None => state.store.notifications_for(&caller).after_newest().await?,
    };
    let (events, receiver) = mpsc::channel(16);
    let feed = LiveFeed {
        store: state.store.clone(),
        types: state.job_types.clone(),
        caller,
        sent: VecDeque::new(),
        newest: start,
        unread_count: None,
        progress_sent: HashMap::new(),
        batch_counts_sent: HashMap::new(),
        closing: state.closing_streams.clone(),
    };
    actix_web::rt::spawn(feed.run(wakes, events));
    Ok(sse::Sse::from_infallible_receiver(receiver).with_keep_alive(state.stream.keep_alive))
}

/// One open stream: what it has sent, and how to find what it has not.
struct LiveFeed {
    store: Store,
    types: JobTypes,
    caller: Caller,
    sent: VecDeque<NotificationId>,
    /// The newest notification sent (or present when the stream opened).
    newest: Option<NotificationId>,
    /// The unread count last sent.
    unread_count: Option<i64>,
    /// The progress last sent, per running job.
    progress_sent: HashMap<JobId, serde_json::Value>,
    /// The counts last sent, per running batch.
    batch_counts_sent: HashMap<BatchId, BatchCounts>,
    /// The process is shutting down: end the stream (its client resumes elsewhere).
    closing: tokio_util::sync::CancellationToken,
}

impl LiveFeed {
    async fn run(mut self, mut wakes: StreamWakes, events: mpsc::Sender<sse::Event>) {
        if let Some(id) = self.newest {
            self.sent.push_back(id);
        }
        let mut feed_woken = true;
        let mut progress_woken = true;
        loop {
            let mut open = Ok(true);
            if feed_woken {
                open = match self.send_unsent(&events).await {
                    Ok(true) => self.send_unread_count(&events).await,
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
        let running = self.store.for_caller(&self.caller).running_progress().await?;
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

    /// Sends the caller's unread count when it differs from the one last
    /// sent (and once when the stream opens), as an `unread_count` event
    /// without an id: the latest count is all that matters, so it is never
    /// replayed. A read-mark anywhere wakes the stream as a new notification
    /// does, so every open tab shows the server's count.
    async fn send_unread_count(&mut self, events: &mpsc::Sender<sse::Event>) -> Result<bool, crate::store::StoreError> {
        let count = self.store.notifications_for(&self.caller).unread_count().await?;
        if self.unread_count == Some(count) {
            return Ok(true);
        }
        let data = sse::Data::new(serde_json::json!({ "unread_count": count }).to_string()).event("unread_count");
        if events.send(data.into()).await.is_err() {
            return Ok(false);
        }
        self.unread_count = Some(count);
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
