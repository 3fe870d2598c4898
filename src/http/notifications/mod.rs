//! `/notifications`: the in-app feed, read-marks, and the live stream
//! (Server-Sent Events). Every read goes through the caller's scope.

pub mod branding;
pub mod defaults;
pub mod marks;
pub mod preferences;
pub mod push;
pub mod settings;

use actix_web::{FromRequest, HttpRequest, HttpResponse, Responder, web};
use actix_web_lab::sse;
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;
use uuid::Uuid;

use super::AppState;
use crate::actors::Subscribe;
use crate::domain::{Arg, BatchCounts, BatchId, Caller, JobId, JobState, NotificationId, ScheduleId};
use crate::http::support::pagination::{self, rfc3339};
use crate::http::support::problem::{AppError, Problem, Unauthenticated, UserRouteProblems};
use crate::jobs::JobTypes;
use crate::store::{FeedFilter, Notification, NotificationKind, NotificationSubject};

mod live;

use crate::http::support::routing::Routes;
use live::LiveFeed;

/// A notification as the API shows it, written for a person.
#[derive(Serialize, utoipa::ToSchema)]
pub struct NotificationView {
    #[schema(value_type = String, format = Uuid)]
    id: NotificationId,
    /// `job_completed`, `batch_completed` (the last job of a batch ended),
    /// `webhook_disabled` (to a tenant's admins) or `schedule_paused` (errand
    /// paused the user's schedule: they had not signed in for long) in the
    /// feed; on streams also
    /// `job_cancelled`, when the user cancelled the job themselves, and
    /// `job_superseded`, when a newer request of theirs with the job's
    /// admission key replaced it (never in the feed).
    #[schema(value_type = String)]
    kind: &'static str,
    /// The job (`job_completed`, `job_cancelled`, `job_superseded`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, format = Uuid)]
    job_id: Option<JobId>,
    /// The job's, or the batch's children's, type.
    #[serde(skip_serializing_if = "Option::is_none")]
    job_type: Option<String>,
    /// `completed`, `failed` or `cancelled` (`job_completed`, `job_cancelled`, `job_superseded`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    job_status: Option<&'static str>,
    /// The schedule that made the job, when one did (`PATCH /schedules/{id}`
    /// with `{"paused": true}` pauses it), or the schedule paused (`schedule_paused`).
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
    /// When the caller opened the bell while it was in the feed (read implies seen).
    seen_at: Option<String>,
    /// When the caller archived it: out of the feed and its counts.
    archived_at: Option<String>,
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
            seen_at: n.seen_at.map(rfc3339),
            archived_at: n.archived_at.map(rfc3339),
        };
        let locale = n.locale;
        let say = |id: &str, args: &[(&str, Arg<'_>)]| locale.say(id, args);
        (view.title, view.body) = match n.subject {
            NotificationSubject::Job { job, job_type, status, error_message, schedule } => {
                let name = types.display_name(&job_type, locale);
                let named = [("name", Arg::from(name.as_str()))];
                let (job_status, title, body) = match status {
                    JobState::Failed => {
                        let reason = error_message.unwrap_or_else(|| say("no-reason", &[]));
                        let body = say("feed-job-failed", &[("name", name.as_str().into()), ("reason", reason.into())]);
                        ("failed", say("job-failed", &named), body)
                    }
                    JobState::Cancelled if n.kind == NotificationKind::JobCancelled => {
                        ("cancelled", say("job-cancelled", &named), say("feed-job-cancelled-by-you", &named))
                    }
                    JobState::Cancelled if n.kind == NotificationKind::JobSuperseded => {
                        ("cancelled", say("job-replaced", &named), say("feed-job-replaced", &named))
                    }
                    JobState::Cancelled => {
                        ("cancelled", say("job-cancelled", &named), say("feed-job-cancelled-by-operator", &named))
                    }
                    _ => ("completed", say("job-ready", &named), say("feed-job-ready", &named)),
                };
                (view.job_id, view.job_type, view.job_status) = (Some(job), Some(job_type), Some(job_status));
                view.schedule_id = schedule;
                let body = match schedule {
                    Some(_) => say("feed-made-by-schedule", &[("body", body.into())]),
                    None => body,
                };
                (title, body)
            }
            NotificationSubject::Batch { batch, job_type, counts } => {
                let name = types.display_name(&job_type, locale);
                let title = say("batch-done", &[("total", u64::from(counts.total).into()), ("name", name.into())]);
                let outcome = counts.outcome(locale);
                let body = match counts.completed < counts.total {
                    true => say("feed-batch-with-report", &[("outcome", outcome.into())]),
                    false => say("feed-batch", &[("outcome", outcome.into())]),
                };
                (view.batch_id, view.job_type, view.counts) = (Some(batch), Some(job_type), Some(counts));
                (title, body)
            }
            NotificationSubject::WebhookDisabled { endpoint, url, reason } => {
                view.webhook_id = Some(endpoint);
                let body = say("feed-webhook-disabled", &[("url", url.into()), ("reason", reason.into())]);
                (say("feed-webhook-disabled-title", &[]), body)
            }
            NotificationSubject::SchedulePaused { schedule, job_type, seen_at } => {
                let name = types.display_name(&job_type, locale);
                let body = match seen_at {
                    Some(at) => say("feed-schedule-paused", &[("since", locale.date(at, chrono_tz::UTC).into())]),
                    None => say("feed-schedule-paused-long-ago", &[]),
                };
                (view.schedule_id, view.job_type) = (Some(schedule), Some(job_type));
                (say("feed-schedule-paused-title", &[("name", name.into())]), body)
            }
        };
        view
    }
}

#[derive(Deserialize)]
pub struct FeedQuery {
    unread_only: Option<bool>,
    status: Option<String>,
    limit: Option<u32>,
    cursor: Option<String>,
}

impl FeedQuery {
    /// Which notifications the query asks for: `status`, or `unread_only` (the older way to ask for unread ones).
    fn filter(&self) -> Result<FeedFilter, AppError> {
        let filter = match &self.status {
            None if self.unread_only == Some(true) => FeedFilter::Unread,
            None => FeedFilter::All,
            Some(status) => FeedFilter::parse(status).ok_or_else(|| {
                AppError::BadRequest(format!("status must be all, unread, unseen or archived, not {status:?}"))
            })?,
        };
        if self.status.is_some() && self.unread_only == Some(true) && filter != FeedFilter::Unread {
            return Err(AppError::BadRequest(
                "unread_only=true asks for unread notifications: use status alone".into(),
            ));
        }
        Ok(filter)
    }
}

/// A page of the caller's feed.
#[derive(Serialize, utoipa::ToSchema)]
pub struct FeedPage {
    notifications: Vec<NotificationView>,
    /// Unread notifications, archived ones aside.
    unread_count: i64,
    /// Unseen ones (the bell was not opened since they came), archived ones aside: the bell's badge.
    unseen_count: i64,
    /// Pass as `cursor` for the next page; absent on the last.
    next_cursor: Option<String>,
}

/// A ticket for `GET /notifications/stream?ticket=…`.
#[derive(Serialize, utoipa::ToSchema)]
pub struct StreamTicket {
    ticket: String,
    /// Seconds until it expires.
    expires_in: u64,
}

/// `GET /notifications`: the caller's feed, newest first, with `unread_count` and `unseen_count`.
#[utoipa::path(get, path = "/notifications", tag = "notifications",
    params(("status" = Option<String>, Query, description = "`all` (the default: every one not archived), `unread`, `unseen` or `archived`"),
        ("unread_only" = Option<bool>, Query, description = "Only unread notifications (as `status=unread`)"),
        ("limit" = Option<u32>, Query, minimum = 1, maximum = 100, description = "1 to 100, default 20"),
        ("cursor" = Option<String>, Query, pattern = "^[A-Za-z0-9_-]{21}[AQgw]$", description = "`next_cursor` of the previous page")),
    responses((status = 200, description = "A page of the feed", body = FeedPage),
        (status = 400, description = "Bad status, limit or cursor (`bad_request`)", body = Problem, content_type = "application/problem+json"),
        UserRouteProblems))]
pub async fn list(
    caller: Caller,
    query: web::Query<FeedQuery>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let query = query.into_inner();
    let limit = pagination::limit(query.limit)?;
    let before = query.cursor.as_deref().map(pagination::decode_cursor).transpose()?.map(NotificationId);
    let page = state.store.notifications_for(&caller).list(query.filter()?, before, limit).await?;
    Ok(HttpResponse::Ok().json(FeedPage {
        notifications: page.notifications.into_iter().map(|n| NotificationView::new(n, &state.job_types)).collect(),
        unread_count: page.counts.unread,
        unseen_count: page.counts.unseen,
        next_cursor: page.next_before.map(|id| pagination::encode_cursor(id.0)),
    }))
}

/// `POST /notifications/stream-tickets`: a short-lived ticket for
/// `GET /notifications/stream?ticket=…`, for browsers' EventSource, which
/// cannot send an Authorization header. The ticket opens streams only.
#[utoipa::path(post, path = "/notifications/stream-tickets", tag = "notifications",
    responses((status = 201, description = "A ticket for the stream", body = StreamTicket),
        (status = 429, description = "Too many of the caller's tickets are unused (`too_many_streams`), or past a rate limit (`rate_limited`)", body = Problem, content_type = "application/problem+json"),
        Unauthenticated))]
pub async fn stream_ticket(caller: Caller, state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    let ticket = crate::http::auth::tickets::issue(&state, &caller).await?;
    Ok(HttpResponse::Created()
        .json(StreamTicket { ticket, expires_in: state.settings.stream.stream_ticket_ttl.as_secs() }))
}

#[derive(Deserialize)]
pub struct StreamQuery {
    ticket: Option<String>,
}

/// `GET /notifications/stream`: Server-Sent Events, one `job_completed` event
/// per new notification of the caller, with the notification id as event id,
/// an `unread_count` event (no id) when the stream opens and whenever the
/// caller's unread or unseen count changes, in this process or any other, and a
/// `job_progress` event (no id; only the latest value) when a running job of
/// the caller reports progress, or a `batch_progress` event when a running
/// batch's counts change. A job the caller cancelled themselves comes as a
/// `job_cancelled` event, one a newer request of theirs replaced as a
/// `job_superseded` event (never in the feed); `batch_completed` and
/// `webhook_disabled` notifications come as events of those names.
/// With `Last-Event-ID`, first replays what came after it.
#[utoipa::path(get, path = "/notifications/stream", tag = "notifications",
    params(("ticket" = Option<String>, Query, description = "A stream ticket, for clients that cannot send Authorization"),
        ("Last-Event-ID" = Option<String>, Header, description = "Replay what came after this notification")),
    responses((status = 200, description = "`job_completed` events (data: a notification, id: its id) `job_cancelled` events (the same, for a job the caller cancelled), `job_superseded` events (the same, for a job a newer request of the caller's replaced), `unread_count` events (data: `{\"unread_count\": n, \"unseen_count\": m}`, no id) `job_progress` events (data: `{\"job_id\", \"progress\"}`, no id), `batch_progress` events (data: `{\"batch_id\", \"total\", \"completed\", \"failed\", \"cancelled\", \"status\"}`, no id), and `batch_completed` and `webhook_disabled` events (data: a notification, id: its id)", content_type = "text/event-stream", body = String),
        (status = 401, description = "No valid token or ticket (`unauthorized`)", body = Problem, content_type = "application/problem+json"),
        (status = 429, description = "The caller (or this server) has as many streams open as allowed (`too_many_streams`), or the caller is past a rate limit (`rate_limited`, with the `RateLimit` headers)", body = Problem, content_type = "application/problem+json",
        headers(("Retry-After" = u64, description = "Seconds to wait before opening a stream again")))),
    security(("bearer" = []), ()),
)]
pub async fn stream(
    req: HttpRequest,
    query: web::Query<StreamQuery>,
    state: web::Data<AppState>,
) -> Result<impl Responder, AppError> {
    let caller = match &query.ticket {
        Some(ticket) => crate::http::auth::tickets::redeem(&state, &req, ticket).await?,
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
    let feed =
        LiveFeed::open(state.store.clone(), state.job_types.clone(), caller, start, state.closing_streams.clone());
    actix_web::rt::spawn(feed.run(wakes, events));
    Ok(sse::Sse::from_infallible_receiver(receiver).with_keep_alive(state.settings.stream.keep_alive))
}

/// `/notifications` (the feed, read-marks, the live stream), the caller's
/// preferences, `/me/notification-preferences`, their time zone and quiet
/// hours, `/me/notification-settings`, and their Web Push devices,
/// `/me/push-subscriptions`.
pub fn routes(r: &mut Routes) {
    r.get("/notifications", list)
        .post("/notifications/read-all", marks::mark_all_read)
        .post("/notifications/seen", marks::mark_all_seen)
        .post("/notifications/archive-read", marks::archive_read)
        .post("/notifications/stream-tickets", stream_ticket)
        .get("/notifications/stream", stream)
        .post("/notifications/{id}/read", marks::mark_read)
        .post("/notifications/{id}/archive", marks::archive)
        .get("/me/notification-preferences", preferences::list)
        .resource("/me/notification-settings", "GET, PUT", |res| {
            res.route(web::get().to(settings::get)).route(web::put().to(settings::set))
        })
        .resource("/me/push-subscriptions", "GET, POST", |res| {
            res.route(web::get().to(push::list)).route(web::post().to(push::subscribe))
        })
        .resource("/me/push-subscriptions/{id}", "DELETE", |res| res.route(web::delete().to(push::unsubscribe)))
        .resource("/me/notification-preferences/{category}", "PUT", |res| res.route(web::put().to(preferences::set)))
        .resource("/tenant/branding", "GET, PUT", |res| {
            res.route(web::get().to(branding::get)).route(web::put().to(branding::set))
        })
        .get("/tenant/templates/preview", branding::preview_for_tenant_admin)
        .get("/admin/templates/preview", branding::preview_for_operator)
        .get("/tenant/notification-defaults", defaults::list)
        .resource("/tenant/notification-defaults/{category}", "PUT", |res| res.route(web::put().to(defaults::set)));
}
