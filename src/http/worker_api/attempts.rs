//! The calls a worker makes about a job it holds: heartbeat, progress,
//! complete and fail, each fenced on the lease it names.

use actix_web::{HttpResponse, web};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

use super::files::confirm_presigned_upload;
use crate::actors::JobFinished;
use crate::domain::{JobId, LeaseId};
use crate::domain::{Outcome, ProgressReport};
use crate::http::AppState;
use crate::http::auth::ExternalWorker;
use crate::http::body::json as read_json;
use crate::http::error::{AppError, LeaseNoLongerYours, NotAWorker, Problem, Unauthenticated, Unavailable};
use crate::http::job_id;
use crate::store::{Completion, Ender};

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Heartbeat {
    #[schema(value_type = String, format = Uuid)]
    lease_id: Uuid,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct LeaseRenewed {
    lease_expires_at: String,
    /// The job's owner or an operator asked for it to stop: stop, then call
    /// `/fail` (it ends `cancelled`).
    cancel_requested: bool,
}

/// `POST /worker/v1/jobs/{id}/heartbeat`: extends the lease.
#[utoipa::path(
    post, path = "/worker/v1/jobs/{id}/heartbeat", tag = "workers",
    params(("id" = String, Path, format = Uuid, description = "The job's id")),
    request_body = Heartbeat,
    responses(
        (status = 200, description = "Still yours", body = LeaseRenewed),
        Unauthenticated,
        NotAWorker,
        LeaseNoLongerYours,
        Unavailable,
    ),
    security(("bearer" = [])),
)]
pub async fn heartbeat(
    _worker: ExternalWorker,
    path: web::Path<String>,
    body: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let id = job_id(&path)?;
    let body: Heartbeat = read_json(body).await?;
    let renewed = state.store.queue().renew_leases(&[(id, LeaseId(body.lease_id))], state.external.lease).await?;
    let (_, cancel_requested) = renewed.first().copied().ok_or(AppError::LeaseLost)?;
    let expires = chrono::Utc::now() + chrono::Duration::from_std(state.external.lease).unwrap_or_default();
    Ok(HttpResponse::Ok()
        .json(LeaseRenewed { lease_expires_at: crate::http::page::rfc3339(expires), cancel_requested }))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ProgressBody {
    #[schema(value_type = String, format = Uuid)]
    lease_id: Uuid,
    done: u64,
    total: Option<u64>,
    message: Option<String>,
}

/// `POST /worker/v1/jobs/{id}/progress`: how far the job has come (shown in
/// `GET /jobs/{id}` and on the owner's streams). Each call is a write:
/// report about once a second, as errand's own handlers are throttled to.
#[utoipa::path(
    post, path = "/worker/v1/jobs/{id}/progress", tag = "workers",
    params(("id" = String, Path, format = Uuid, description = "The job's id")),
    request_body = ProgressBody,
    responses(
        (status = 204, description = "Recorded"),
        Unauthenticated,
        NotAWorker,
        LeaseNoLongerYours,
        Unavailable,
    ),
    security(("bearer" = [])),
)]
pub async fn progress(
    _worker: ExternalWorker,
    path: web::Path<String>,
    body: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let id = job_id(&path)?;
    let body: ProgressBody = read_json(body).await?;
    if body.message.as_deref().is_some_and(|m| m.contains('\0') || m.len() > 1000) {
        return Err(AppError::BadRequest("message must be up to 1000 bytes, without NUL".into()));
    }
    let report = ProgressReport { done: body.done, total: body.total, message: body.message };
    match state.store.queue().write_progress(&[(id, LeaseId(body.lease_id), report)]).await? {
        0 => Err(AppError::LeaseLost),
        _ => Ok(HttpResponse::NoContent().finish()),
    }
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CompleteBody {
    #[schema(value_type = String, format = Uuid)]
    lease_id: Uuid,
    /// The job's result, shown to its owner.
    #[schema(value_type = Option<Object>)]
    result: Option<serde_json::Map<String, Value>>,
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FailBody {
    #[schema(value_type = String, format = Uuid)]
    lease_id: Uuid,
    /// Why, written for the person who asked for the job.
    error: String,
    /// Whether another attempt may succeed (within the type's attempts and backoff).
    retryable: bool,
}

/// Where a job is after an end was recorded.
#[derive(Serialize, utoipa::ToSchema)]
pub struct Ended {
    /// `completed`, `failed`, `cancelled` or `retry_scheduled`.
    status: &'static str,
}

/// `POST /worker/v1/jobs/{id}/complete`: the job is done, with its result.
/// Idempotent for the same lease.
#[utoipa::path(
    post, path = "/worker/v1/jobs/{id}/complete", tag = "workers",
    params(("id" = String, Path, format = Uuid, description = "The job's id")),
    request_body = CompleteBody,
    responses(
        (status = 200, description = "Recorded (or recorded before, for this lease)", body = Ended),
        (status = 400, description = "A bad body (`bad_request`)", body = Problem, content_type = "application/problem+json"),
        Unauthenticated,
        NotAWorker,
        LeaseNoLongerYours,
        Unavailable,
    ),
    security(("bearer" = [])),
)]
pub async fn complete(
    _worker: ExternalWorker,
    path: web::Path<String>,
    body: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let id = job_id(&path)?;
    let body: CompleteBody = read_json(body).await?;
    let result = body.result.map(Value::Object);
    if result.as_ref().is_some_and(|r| r.get("storage_key").is_some() || crate::jobs::holds_nul(r)) {
        // A storage key would make errand sign download URLs for a file it did not store.
        return Err(AppError::BadRequest("a result may hold neither `storage_key` nor NUL".into()));
    }
    let lease = LeaseId(body.lease_id);
    confirm_presigned_upload(&state, id, lease).await?;
    // A file uploaded for this attempt joins the result where the end is recorded.
    end(&state, id, lease, Outcome::Completed { result }).await
}

/// `POST /worker/v1/jobs/{id}/fail`: the attempt failed; it runs again after
/// the type's backoff if `retryable` and attempts remain. Idempotent for the
/// same lease.
#[utoipa::path(
    post, path = "/worker/v1/jobs/{id}/fail", tag = "workers",
    params(("id" = String, Path, format = Uuid, description = "The job's id")),
    request_body = FailBody,
    responses(
        (status = 200, description = "Recorded (or recorded before, for this lease)", body = Ended),
        (status = 400, description = "A bad body (`bad_request`)", body = Problem, content_type = "application/problem+json"),
        Unauthenticated,
        NotAWorker,
        LeaseNoLongerYours,
        Unavailable,
    ),
    security(("bearer" = [])),
)]
pub async fn fail(
    _worker: ExternalWorker,
    path: web::Path<String>,
    body: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let id = job_id(&path)?;
    let body: FailBody = read_json(body).await?;
    let error = body.error.replace('\0', "\u{FFFD}");
    let lease = LeaseId(body.lease_id);
    let outcome = match state.store.queue().running_attempt(id, lease).await? {
        Some(running) if body.retryable => match state.job_types.get(&running.job_type) {
            Some(t) if t.retry.allows_another(running.attempt) => {
                Outcome::Retry { delay: t.retry.next_delay(running.attempt), error }
            }
            _ => Outcome::Failed { error },
        },
        _ => Outcome::Failed { error },
    };
    end(&state, id, lease, outcome).await
}

/// Records an end under `lease`; answers how the job stands, or 409.
async fn end(state: &AppState, id: JobId, lease: LeaseId, outcome: Outcome) -> Result<HttpResponse, AppError> {
    let completion = Completion { id, lease, outcome, ender: Ender::Worker };
    let queue = state.store.queue();
    if let Some(ended) = queue.finish_many_if_running(&[completion]).await?.into_iter().next() {
        let status = status_of(ended.state);
        if ended.state.is_terminal() {
            state.notifier.do_send(JobFinished(ended));
        }
        return Ok(HttpResponse::Ok().json(Ended { status }));
    }
    // Not running under this lease: recorded before under it (a retried
    // call), or the lease was lost.
    match queue.ended_under(id, lease).await? {
        Some(state) => Ok(HttpResponse::Ok().json(Ended { status: status_of(state) })),
        None => Err(AppError::LeaseLost),
    }
}

fn status_of(state: crate::domain::JobState) -> &'static str {
    use crate::domain::JobState as S;
    match state {
        S::Completed => "completed",
        S::Failed => "failed",
        S::Cancelled => "cancelled",
        S::Available | S::Retryable | S::Running => "retry_scheduled",
    }
}
