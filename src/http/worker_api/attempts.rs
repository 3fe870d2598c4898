//! The calls a worker makes about a job it holds: heartbeat, progress, logs,
//! complete and fail, each fenced on the lease it names.

use actix_web::{HttpResponse, web};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

use super::files::confirm_presigned_upload;
use crate::actors::{EndAttempt, Recorded, RenewWorkerLease, ReportProgress, WorkerEnd};
use crate::domain::{Failure, JobState, LeaseId, LogLevel, LogLine, ProgressReport};
use crate::http::AppState;
use crate::http::auth::ExternalWorker;
use crate::http::job_id;
use crate::http::support::body::json as read_json;
use crate::http::support::problem::{AppError, Problem, WorkerCallProblems};

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
#[utoipa::path(post, path = "/worker/v1/jobs/{id}/heartbeat", tag = "workers",
    params(("id" = String, Path, format = Uuid, description = "The job's id")),
    request_body = Heartbeat,
    responses((status = 200, description = "Still yours", body = LeaseRenewed),
        WorkerCallProblems))]
pub async fn heartbeat(
    _worker: ExternalWorker,
    path: web::Path<String>,
    body: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let id = job_id(&path)?;
    let body: Heartbeat = read_json(body).await?;
    let heartbeat = RenewWorkerLease { job: id, lease: LeaseId(body.lease_id) };
    let renewed = state.broker.send(heartbeat).await.map_err(|e| AppError::Unavailable(e.to_string()))??;
    let renewed = renewed.ok_or(AppError::LeaseLost)?;
    let lease_expires_at = crate::http::support::pagination::rfc3339(renewed.expires_at);
    Ok(HttpResponse::Ok().json(LeaseRenewed { lease_expires_at, cancel_requested: renewed.cancel_requested }))
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
#[utoipa::path(post, path = "/worker/v1/jobs/{id}/progress", tag = "workers",
    params(("id" = String, Path, format = Uuid, description = "The job's id")),
    request_body = ProgressBody,
    responses((status = 204, description = "Recorded"),
        WorkerCallProblems))]
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
    let progress = ReportProgress { job: id, lease: LeaseId(body.lease_id), report };
    recorded_if_held(state.broker.send(progress).await.map_err(|e| AppError::Unavailable(e.to_string()))??)
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckpointBody {
    #[schema(value_type = String, format = Uuid)]
    lease_id: Uuid,
    /// How far the attempt has come, in any JSON the worker reads back
    /// (`checkpoint` in the claim of the run's next attempt); `null` forgets it.
    checkpoint: Value,
    /// Its progress then (what the job's view shows a next attempt resumed from).
    #[serde(default)]
    done: u64,
}

/// `POST /worker/v1/jobs/{id}/checkpoint`: records how far the attempt has
/// come, so that after a crash the run's next attempt (whichever worker
/// claims it) is handed it and resumes there. Write it once what it says is
/// durable, and not more often than every few seconds.
#[utoipa::path(post, path = "/worker/v1/jobs/{id}/checkpoint", tag = "workers",
    params(("id" = String, Path, format = Uuid, description = "The job's id")),
    request_body = CheckpointBody,
    responses((status = 204, description = "Recorded"),
        (status = 400, description = "A malformed body, or a checkpoint holding NUL (`bad_request`)", body = Problem, content_type = "application/problem+json"),
        WorkerCallProblems,
        (status = 413, description = "Body over 64 KiB (`payload_too_large`)", body = Problem, content_type = "application/problem+json")))]
pub async fn checkpoint(
    worker: ExternalWorker,
    path: web::Path<String>,
    body: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let id = job_id(&path)?;
    let body: CheckpointBody = read_json(body).await?;
    if crate::domain::holds_nul(&body.checkpoint) {
        return Err(AppError::BadRequest("checkpoint must not hold the NUL character (\\u0000)".into()));
    }
    let lease = LeaseId(body.lease_id);
    super::check_type_held(&state, &worker, id, lease).await?;
    let value = Some(&body.checkpoint).filter(|v| !v.is_null());
    recorded_if_held(state.store.queue().write_checkpoint(id, lease, value, body.done).await?)
}

/// The most lines one `logs` call sends.
const LOG_LINES_PER_CALL: usize = 100;

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LogsBody {
    #[schema(value_type = String, format = Uuid)]
    lease_id: Uuid,
    /// 1 to 100 lines, oldest first.
    lines: Vec<LogLineBody>,
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LogLineBody {
    /// `debug`, `info`, `warn` or `error`.
    #[schema(value_type = String)]
    level: LogLevel,
    /// Up to 4,096 characters (longer ones are cut), without NUL.
    message: String,
    /// Structured details, a JSON object.
    #[schema(value_type = Option<Object>)]
    fields: Option<serde_json::Map<String, Value>>,
    /// When it was logged (RFC 3339); left out: when errand received it.
    at: Option<String>,
}

/// `POST /worker/v1/jobs/{id}/logs`: lines the attempt logged, for the
/// operators' timeline of the job. Send them in batches (a few a second at
/// most), the last ones before or just after the attempt's end (under the
/// lease it ended with); an attempt keeps 1,000 lines or 256 KiB, then one
/// line says its log was cut.
#[utoipa::path(post, path = "/worker/v1/jobs/{id}/logs", tag = "workers",
    params(("id" = String, Path, format = Uuid, description = "The job's id")),
    request_body = LogsBody,
    responses((status = 204, description = "Recorded (past the attempt's cap: dropped); `409` `lease_lost` when the lease is neither the running attempt's nor the one it ended with"),
        (status = 400, description = "No lines or more than 100, an unknown level, a message holding NUL, or a bad time (`bad_request`)", body = Problem, content_type = "application/problem+json"),
        WorkerCallProblems,
        (status = 413, description = "Body over 64 KiB (`payload_too_large`)", body = Problem, content_type = "application/problem+json")))]
pub async fn logs(
    worker: ExternalWorker,
    path: web::Path<String>,
    body: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let id = job_id(&path)?;
    let body: LogsBody = read_json(body).await?;
    if body.lines.is_empty() || body.lines.len() > LOG_LINES_PER_CALL {
        return Err(AppError::BadRequest(format!("lines: 1 to {LOG_LINES_PER_CALL} a call")));
    }
    let lease = LeaseId(body.lease_id);
    let mut lines = Vec::with_capacity(body.lines.len());
    for line in body.lines {
        let fields = line.fields.map(Value::Object);
        if line.message.contains('\0') || fields.as_ref().is_some_and(crate::domain::holds_nul) {
            return Err(AppError::BadRequest("a line must not hold the NUL character (\\u0000)".into()));
        }
        let mut logged = LogLine::now(line.level, &line.message, fields);
        if let Some(at) = line.at {
            let at = chrono::DateTime::parse_from_rfc3339(&at)
                .map_err(|_| AppError::BadRequest("`at` is not an RFC 3339 time".into()))?;
            logged.at = at.with_timezone(&chrono::Utc);
        }
        lines.push((id, lease, logged));
    }
    super::check_type_held(&state, &worker, id, lease).await?;
    recorded_if_held(state.store.queue().write_logs(&lines).await?.contains(&id))
}

/// The answer to a write fenced on a lease: 204, or 409 if the lease was lost.
fn recorded_if_held(held: bool) -> Result<HttpResponse, AppError> {
    if held { Ok(HttpResponse::NoContent().finish()) } else { Err(AppError::LeaseLost) }
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
#[utoipa::path(post, path = "/worker/v1/jobs/{id}/complete", tag = "workers",
    params(("id" = String, Path, format = Uuid, description = "The job's id")),
    request_body = CompleteBody,
    responses((status = 200, description = "Recorded (or recorded before, for this lease)", body = Ended),
        (status = 400, description = "A bad body (`bad_request`)", body = Problem, content_type = "application/problem+json"),
        WorkerCallProblems))]
pub async fn complete(
    worker: ExternalWorker,
    path: web::Path<String>,
    body: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let id = job_id(&path)?;
    let body: CompleteBody = read_json(body).await?;
    if let Some(refusal) = body.result.as_ref().and_then(crate::domain::foreign_result_refusal) {
        return Err(AppError::BadRequest(refusal.into()));
    }
    let result = body.result.map(Value::Object);
    let lease = LeaseId(body.lease_id);
    let running = super::check_type_held(&state, &worker, id, lease).await?;
    confirm_presigned_upload(&state, id, lease, running.as_ref()).await?;
    // A file uploaded for this attempt joins the result where the end is recorded.
    end(&state, EndAttempt { id, lease, end: WorkerEnd::Completed { result }, running }).await
}

/// `POST /worker/v1/jobs/{id}/fail`: the attempt failed; it runs again after
/// the type's backoff if `retryable` and attempts remain. Idempotent for the
/// same lease.
#[utoipa::path(post, path = "/worker/v1/jobs/{id}/fail", tag = "workers",
    params(("id" = String, Path, format = Uuid, description = "The job's id")),
    request_body = FailBody,
    responses((status = 200, description = "Recorded (or recorded before, for this lease)", body = Ended),
        (status = 400, description = "A bad body (`bad_request`)", body = Problem, content_type = "application/problem+json"),
        WorkerCallProblems))]
pub async fn fail(
    worker: ExternalWorker,
    path: web::Path<String>,
    body: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let id = job_id(&path)?;
    let body: FailBody = read_json(body).await?;
    let lease = LeaseId(body.lease_id);
    let running = super::check_type_held(&state, &worker, id, lease).await?;
    let failure = if body.retryable { Failure::Retryable(body.error) } else { Failure::Permanent(body.error) };
    end(&state, EndAttempt { id, lease, end: WorkerEnd::Failed(failure), running }).await
}

/// Records an end through the Completer; answers how the job stands, or 409.
async fn end(state: &AppState, end: EndAttempt) -> Result<HttpResponse, AppError> {
    let recorded = state.completer.send(end).await.map_err(|e| AppError::Unavailable(e.to_string()))?;
    match recorded.map_err(|e| AppError::Unavailable(e.to_string()))? {
        Recorded::Now(state) | Recorded::Before(state) => {
            Ok(HttpResponse::Ok().json(Ended { status: status_of(state) }))
        }
        Recorded::LeaseLost => Err(AppError::LeaseLost),
    }
}

/// What an ended attempt means for the worker: the job's end, or that it
/// will run again.
fn status_of(state: JobState) -> &'static str {
    if state.is_terminal() { state.api_word(false) } else { "retry_scheduled" }
}
