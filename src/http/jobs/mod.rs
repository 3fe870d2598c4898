//! `/jobs`: submit a job, read one, list them. Every read goes through the
//! caller's scope, so another user's or tenant's job is exactly as absent as
//! one that never existed.

pub mod batches;

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tracing::Instrument;

use crate::actors::SubmitJob;
use crate::domain::{Caller, IdempotencyKey, InvalidIdempotencyKey, Job, JobId, JobState, JobStatus};
use crate::http::AppState;
use crate::http::support::body;
use crate::http::support::pagination;
use crate::http::support::problem::{AppError, Problem, RateLimitedResponse, Unauthenticated, UserRouteProblems};
use crate::http::support::routing::Routes;
use crate::jobs::JobView;
use crate::storage::ResultFile;
use crate::store::{CancelOutcome, JobFilter, Submission};

/// Seconds a client should wait before polling `Location`, if it polls at all.
const RETRY_AFTER_SECS: &str = "1";

/// A job as the API shows it, with a download URL signed on every read.
pub(super) async fn job_view(job: Job, state: &AppState) -> Result<JobView, AppError> {
    let result_url = match crate::jobs::downloadable(&job) {
        Some(file) => Some(state.download_url(&file).await?),
        None => None,
    };
    Ok(JobView::of(job, result_url))
}

/// `POST /jobs/{type}`: record the job (or find the one the key names) and answer at once.
#[utoipa::path(post, path = "/jobs/{job_type}", tag = "jobs",
    params(("job_type" = String, Path, description = "A configured job type (each also has an operation of its own)"),
        ("Idempotency-Key" = String, Header, pattern = "^[!-~]{1,255}$", description = "One per intent: a retry or double-click sends the same key (1 to 255 visible ASCII characters)"),
        ("priority" = Option<i8>, Query, minimum = -4, maximum = 4, description = "How soon it runs beside the caller's tenant's other jobs you clicked for, -4 to 4 (default 0), added to its type's; it always runs before scheduled and bulk work"),
        ("format" = Option<String>, Query, pattern = "^(csv|csv\\.gz|xlsx|ndjson)$", description = "An export's file format, one of those its type offers (its first when absent): part of the request, so the same key with another format is refused")),
    request_body(content = Object, description = "The job's params: a JSON object, checked against the type's schema"),
    responses((status = 202, description = "A new job, processing", body = JobView),
        (status = 200, description = "The key's job, replayed (`Idempotent-Replayed: true`); or, for a type with an admission key, the caller's unfinished job for the same resource, joined (`Errand-Joined: true`) or debounced (`Errand-Debounced: true`: it took this request's params and starts later)", body = JobView),
        (status = 409, description = "An unfinished job holds the type's admission key (`admission_conflict`, with `job_id`): the type says `on_conflict = \"reject\"`, or the job is a colleague's", body = Problem, content_type = "application/problem+json"),
        (status = 400, description = "Missing or malformed key, a body that is not a JSON object, or a priority outside -4 to 4 (`bad_request`, `invalid_idempotency_key`)", body = Problem, content_type = "application/problem+json"),
        Unauthenticated,
        (status = 404, description = "Unknown job type (`unknown_job_type`)", body = Problem, content_type = "application/problem+json"),
        (status = 413, description = "Body over 64 KiB (`payload_too_large`)", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "Params refused (`invalid_params`, with `field`), a format the type does not write (`invalid_format`, with `field` = `format`), or the key reused for another request (`idempotency_key_reused`)", body = Problem, content_type = "application/problem+json"),
        (status = 429, description = "A new job over one of the caller's quotas of unfinished jobs (`quota_exceeded`, with `scope`, `limit` and `count`; a replay of an existing key is answered as ever), or past a rate limit (`rate_limited`, with the `RateLimit` headers)", body = Problem, content_type = "application/problem+json",
        headers(("Retry-After" = u64, description = "Seconds to wait before trying again (with the same key)"))),
        (status = 503, description = "The database is away (`unavailable`), or errand sheds new jobs under overload (`overloaded`): nothing was recorded; try again with the same key", body = Problem, content_type = "application/problem+json",
        headers(("Retry-After" = u64, description = "Seconds to wait before trying again")))))]
pub async fn submit(
    req: HttpRequest,
    caller: Caller,
    path: web::Path<String>,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let key = idempotency_key(&req)?;
    let SubmitOptions { priority, format } = submit_options(&req)?;
    let params = Value::Object(body::json_object(payload).await?);
    let job_type = path.into_inner();
    let record = record_span(&job_type);
    let trace = crate::http::support::request_id::trace_of(&req, &record);
    let msg = SubmitJob { caller: caller.clone(), key, job_type, params, priority, format, trace };
    let submission = state.ask(&caller, msg).instrument(record.clone()).await??;
    if let Submission::Created(job) | Submission::Replayed(job) | Submission::Joined(job) | Submission::Debounced(job) =
        &submission
    {
        record.record("messaging.message.id", job.id.to_string());
    }
    match submission {
        Submission::Created(job) => Ok(HttpResponse::Accepted()
            .insert_header((header::LOCATION, format!("/jobs/{}", job.id)))
            .insert_header((header::RETRY_AFTER, RETRY_AFTER_SECS))
            .json(job_view(job, &state).await?)),
        Submission::Replayed(job) => Ok(HttpResponse::Ok()
            .insert_header(("Idempotent-Replayed", "true"))
            .insert_header((header::LOCATION, format!("/jobs/{}", job.id)))
            .json(job_view(job, &state).await?)),
        Submission::Joined(job) => Ok(HttpResponse::Ok()
            .insert_header(("Errand-Joined", "true"))
            .insert_header((header::LOCATION, format!("/jobs/{}", job.id)))
            .json(job_view(job, &state).await?)),
        Submission::Debounced(job) => Ok(HttpResponse::Ok()
            .insert_header(("Errand-Debounced", "true"))
            .insert_header((header::LOCATION, format!("/jobs/{}", job.id)))
            .json(job_view(job, &state).await?)),
        Submission::AdmissionConflict(job) => Err(AppError::AdmissionConflict(job)),
        Submission::KeyReused => Err(AppError::IdempotencyKeyReused),
        Submission::OverQuota(exceeded) => {
            Err(AppError::QuotaExceeded { exceeded, retry_after: state.store.quotas().retry_after })
        }
    }
}

/// The span of recording jobs of `job_type` (a producer's, in OpenTelemetry's
/// messaging conventions): what the jobs recorded continue
/// (`telemetry::traces`).
pub(super) fn record_span(job_type: &str) -> tracing::Span {
    tracing::info_span!(
        "record",
        otel.name = format!("create {job_type}"),
        otel.kind = "producer",
        messaging.system = "errand",
        messaging.operation.type = "create",
        messaging.destination.name = job_type,
        messaging.message.id = tracing::field::Empty,
    )
}

/// The request's `Idempotency-Key` header (jobs and batches).
pub(super) fn idempotency_key(req: &HttpRequest) -> Result<IdempotencyKey, AppError> {
    match req.headers().get("Idempotency-Key") {
        None => Err(InvalidIdempotencyKey::Missing.into()),
        Some(value) => Ok(IdempotencyKey::parse(value.to_str().map_err(|_| InvalidIdempotencyKey::Malformed)?)?),
    }
}

/// `GET /jobs/{id}`: the caller's job, or 404 for anything else (including ids that are not UUIDs).
#[utoipa::path(get, path = "/jobs/{id}", tag = "jobs",
    params(("id" = String, Path, format = Uuid, description = "The job's id")),
    responses((status = 200, description = "The caller's job", body = JobView),
        UserRouteProblems,
        (status = 404, description = "No such job of the caller's (`not_found`)", body = Problem, content_type = "application/problem+json")))]
pub async fn get(
    caller: Caller,
    path: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let id = JobId(crate::http::read_by_id(&path, &state)?);
    let job = state.store.jobs_for(&caller).get(id).await?;
    let job = job.ok_or(AppError::NotFound)?;
    Ok(HttpResponse::Ok().json(job_view(job, &state).await?))
}

#[derive(Deserialize)]
pub struct ListQuery {
    status: Option<String>,
    #[serde(rename = "type")]
    job_type: Option<String>,
    limit: Option<u32>,
    cursor: Option<String>,
}

/// A page of the caller's jobs, newest first.
#[derive(Serialize, utoipa::ToSchema)]
pub struct JobList {
    jobs: Vec<JobView>,
    next_cursor: Option<String>,
}

/// `GET /jobs`: the caller's jobs, newest first, one page at a time.
#[utoipa::path(get, path = "/jobs", tag = "jobs",
    params(("status" = Option<String>, Query, pattern = "^(pending|processing|completed|failed|cancelled)$", description = "pending, processing, completed, failed or cancelled"),
        ("type" = Option<String>, Query, pattern = "^[a-z0-9_-]{1,64}$", description = "A job type's name"),
        ("limit" = Option<u32>, Query, minimum = 1, maximum = 100, description = "1 to 100, default 20"),
        ("cursor" = Option<String>, Query, pattern = "^[A-Za-z0-9_-]{21}[AQgw]$", description = "`next_cursor` of the previous page")),
    responses((status = 200, description = "A page of jobs", body = JobList),
        (status = 400, description = "A bad filter, limit or cursor (`bad_request`)", body = Problem, content_type = "application/problem+json"),
        UserRouteProblems))]
pub async fn list(
    caller: Caller,
    query: web::Query<ListQuery>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let query = query.into_inner();
    let status = status_filter(query.status)?;
    let limit = pagination::limit(query.limit)?;
    let before = query.cursor.as_deref().map(pagination::decode_cursor).transpose()?.map(JobId);
    let job_type = type_filter(query.job_type)?;
    let filter = JobFilter { status, job_type, before, limit };
    let page = state.store.jobs_for(&caller).list(&filter).await?;
    Ok(HttpResponse::Ok().json(JobList {
        jobs: futures_util::future::try_join_all(page.jobs.into_iter().map(|job| job_view(job, &state))).await?,
        next_cursor: page.next_before.map(|id| pagination::encode_cursor(id.0)),
    }))
}

/// A list's `status` filter: one of the API's statuses, or a 400.
pub(super) fn status_filter(status: Option<String>) -> Result<Option<JobStatus>, AppError> {
    status
        .map(|s| {
            s.parse::<JobStatus>().map_err(|()| {
                AppError::BadRequest(format!(
                    "status must be pending, processing, completed, failed or cancelled, not {s:?}"
                ))
            })
        })
        .transpose()
}

/// A list's `type` filter: a job type's name (configured or not), or a 400.
pub(super) fn type_filter(job_type: Option<String>) -> Result<Option<String>, AppError> {
    job_type
        .map(|t| match crate::domain::JobTypeName::parse(&t) {
            Some(_) => Ok(t),
            None => Err(AppError::BadRequest(format!("type must be a job type's name (a-z, 0-9, _ and -), not {t:?}"))),
        })
        .transpose()
}

/// `GET /jobs/{id}/result`: for the job's owner, a 303 to a fresh signed URL
/// of its file; 409 while the job has not completed; 410 once the file's
/// retention ended; 404 for anyone else, as for a missing job.
#[utoipa::path(get, path = "/jobs/{id}/result", tag = "jobs",
    params(("id" = String, Path, format = Uuid, description = "The job's id")),
    responses((status = 303, description = "To a fresh signed download URL (`Location`)"),
        Unauthenticated,
        RateLimitedResponse,
        (status = 404, description = "No such job of the caller's, or one without a file (`not_found`, `no_result`)", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The job has not completed (`result_not_ready`)", body = Problem, content_type = "application/problem+json"),
        (status = 410, description = "The file's retention ended (`result_expired`)", body = Problem, content_type = "application/problem+json")))]
pub async fn result(
    caller: Caller,
    path: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let id = crate::http::job_id(&path)?;
    let job = state.store.jobs_for(&caller).get(id).await?.ok_or(AppError::NotFound)?;
    if job.state != JobState::Completed {
        return Err(AppError::NotReady(format!("the job is {}, not completed", job.state.status().as_str())));
    }
    let file = ResultFile::of(job.result.as_ref()).ok_or(AppError::NoResult)?;
    if file.is_expired() {
        return Err(AppError::ResultExpired);
    }
    Ok(HttpResponse::SeeOther().insert_header((header::LOCATION, state.download_url(&file).await?)).finish())
}

/// `POST /jobs/{id}/cancel`: stops one of the caller's jobs. A waiting job
/// ends at once (`200`, `cancelled`); a running one is told to stop, in
/// whichever process runs it (`202`, state `cancelling`, until its worker
/// ended it); asking again gives the same answer. The owner gets no
/// notification or email for it, only a `job_cancelled` event on their
/// streams. A job that already completed or failed answers `409`.
#[utoipa::path(post, path = "/jobs/{id}/cancel", tag = "jobs",
    params(("id" = String, Path, format = Uuid, description = "The job's id")),
    responses((status = 200, description = "The job, cancelled", body = JobView),
        (status = 202, description = "The job, being stopped (state `cancelling`)", body = JobView),
        UserRouteProblems,
        (status = 404, description = "No such job of the caller's (`not_found`)", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The job already completed or failed (`job_already_ended`)", body = Problem, content_type = "application/problem+json")))]
pub async fn cancel(
    caller: Caller,
    path: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let id = crate::http::job_id(&path)?;
    match state.store.jobs_for(&caller).cancel(id).await? {
        CancelOutcome::Cancelled(job) => Ok(HttpResponse::Ok().json(job_view(job, &state).await?)),
        CancelOutcome::Stopping(job) => Ok(HttpResponse::Accepted()
            .insert_header((header::LOCATION, format!("/jobs/{}", job.id)))
            .json(job_view(job, &state).await?)),
        CancelOutcome::AlreadyEnded(ended) => Err(AppError::AlreadyEnded(ended.status().as_str())),
        CancelOutcome::NotFound => Err(AppError::NotFound),
    }
}

/// The request's `?priority=` (-4 to 4, default 0; see `domain::priority`).
/// What a submission's query asks beside its body: a priority, a format.
struct SubmitOptions {
    priority: i8,
    format: Option<String>,
}

fn submit_options(req: &HttpRequest) -> Result<SubmitOptions, AppError> {
    #[derive(serde::Deserialize)]
    struct Query {
        priority: Option<String>,
        format: Option<String>,
    }
    let refused = || AppError::BadRequest("priority must be a whole number from -4 to 4".into());
    let query = web::Query::<Query>::from_query(req.query_string())
        .map_err(|_| AppError::BadRequest("the query string cannot be read".into()))?
        .into_inner();
    let priority = match query.priority {
        None => 0,
        Some(text) => {
            text.parse::<i8>().ok().filter(|p| crate::domain::PRIORITY_RANGE.contains(p)).ok_or_else(refused)?
        }
    };
    Ok(SubmitOptions { priority, format: query.format })
}

/// `/jobs` (`/jobs/{id}` reads a job, `/jobs/{type}` submits one), and `/batches`.
pub fn routes(r: &mut Routes) {
    r.get("/jobs", list)
        .id_or_type("/jobs", "GET", "POST", |res| res.route(web::get().to(get)).route(web::post().to(submit)))
        .get("/jobs/{id}/result", result)
        .post("/jobs/{id}/cancel", cancel);
    batches::routes(r);
}
