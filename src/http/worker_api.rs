//! `/worker/v1/…`: the external worker API. Job types with `handler =
//! "external"` are run by workers outside errand, in any language, which
//! claim them here through the same claim as errand's own dispatcher (tenant
//! and type limits, fairness), and report back under the lease they were
//! given: every call is fenced on it, so a worker whose lease was lost
//! (expired and rescued, or its job cancelled) changes nothing and is told
//! so with `409 lease_lost`. Only worker tokens (`scope: worker`, with the
//! `types` they may take) get in, and they get nowhere else.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::{HttpResponse, web};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use uuid::Uuid;

use super::AppState;
use super::auth::ExternalWorker;
use crate::actors::JobFinished;
use crate::domain::{JobId, LeaseId};
use crate::error::{AppError, Problem, Unauthenticated, Unavailable};
use crate::jobs::ProgressReport;
use crate::storage::{ObjectKey, ResultFile};
use crate::store::{ClaimRequest, Completion, Ender, Outcome, TypeLimits};

/// What the worker API's claims need, shared by every request.
pub struct ExternalClaims {
    pub lease: Duration,
    pub tenant_limit: u32,
    pub type_limits: Arc<TypeLimits>,
    /// Woken when work may have arrived (the dispatcher's wake-ups).
    pub work_arrived: Arc<tokio::sync::Notify>,
    /// Where the next external claim starts walking the tenants (fairness
    /// across claims, as the dispatcher keeps its own).
    after_tenant: Mutex<String>,
}

impl ExternalClaims {
    pub fn new(
        lease: Duration,
        tenant_limit: u32,
        type_limits: Arc<TypeLimits>,
        work_arrived: Arc<tokio::sync::Notify>,
    ) -> Self {
        Self { lease, tenant_limit, type_limits, work_arrived, after_tenant: Mutex::new(String::new()) }
    }
}

/// Most jobs one claim answers.
const MAX_CLAIM: u32 = 100;
/// Longest a claim waits for work.
const MAX_WAIT_SECS: u64 = 60;
/// A waiting claim looks again at least this often, whatever it heard.
const BACKSTOP: Duration = Duration::from_secs(1);

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ClaimBody {
    /// Job types to take (default: all the token allows).
    types: Option<Vec<String>>,
    /// 1 to 100, default 1.
    max: Option<u32>,
    /// Seconds to wait for work, 0 to 60, default 30.
    wait: Option<u64>,
}

/// A job leased to an external worker.
#[derive(Serialize, utoipa::ToSchema)]
pub struct LeasedJob {
    #[schema(value_type = String, format = Uuid)]
    id: JobId,
    #[serde(rename = "type")]
    job_type: String,
    #[schema(value_type = Object)]
    params: Value,
    tenant: String,
    user: String,
    attempt: u32,
    /// Name it in every call about this job.
    #[schema(value_type = String, format = Uuid)]
    lease_id: Uuid,
    lease_expires_at: String,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct Claimed {
    jobs: Vec<LeasedJob>,
}

/// `POST /worker/v1/claim`: up to `max` jobs of the worker's types, waiting
/// up to `wait` seconds for one to arrive (answered as soon as one does).
#[utoipa::path(
    post, path = "/worker/v1/claim", tag = "workers",
    request_body = ClaimBody,
    responses(
        (status = 200, description = "The jobs leased (none if nothing came in time)", body = Claimed),
        (status = 400, description = "A bad body, or a type the token does not allow (`bad_request`)", body = Problem, content_type = "application/problem+json"),
        Unauthenticated,
        (status = 403, description = "Not a worker token (`forbidden`)", body = Problem, content_type = "application/problem+json"),
        Unavailable,
    ),
    security(("bearer" = [])),
)]
pub async fn claim(
    worker: ExternalWorker,
    body: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let body: ClaimBody = parse(body).await?;
    let types = match body.types {
        Some(types) => {
            if let Some(refused) = types.iter().find(|t| !worker.types.contains(t)) {
                return Err(AppError::BadRequest(format!("this worker's token does not allow the type {refused:?}")));
            }
            types
        }
        None => worker.types.clone(),
    };
    let types: Vec<String> = types.into_iter().filter(|t| state.job_types.is_external(t)).collect();
    let max = body.max.unwrap_or(1);
    if !(1..=MAX_CLAIM).contains(&max) {
        return Err(AppError::BadRequest(format!("max must be between 1 and {MAX_CLAIM}")));
    }
    let wait = Duration::from_secs(body.wait.unwrap_or(30).min(MAX_WAIT_SECS));
    let external = &state.external;
    // Each worker leases under an owner of its own, never a process's: a
    // process that shuts down gives back its own jobs, not a worker's.
    let owner = worker_owner(&worker);
    let deadline = tokio::time::Instant::now() + wait;
    // Whether this round of claims covered the tenants before the cursor it
    // started from: a round that began mid-way wraps around once.
    let mut covered_start: Option<bool> = None;
    loop {
        // Listen before looking, so that work arriving meanwhile wakes us.
        let arrived = external.work_arrived.notified();
        tokio::pin!(arrived);
        arrived.as_mut().enable();
        let after_tenant = external.after_tenant.lock().map(|cursor| cursor.clone()).unwrap_or_default();
        let covered = covered_start.get_or_insert(after_tenant.is_empty());
        let request = ClaimRequest {
            owner,
            limit: max as usize,
            tenant_limit: external.tenant_limit,
            lease: external.lease,
            after_tenant: &after_tenant,
            tenants: (max as usize).clamp(16, 256),
            type_limits: &external.type_limits,
            only_types: Some(&types),
        };
        let claim = if types.is_empty() { None } else { Some(state.store.queue().claim(&request).await?) };
        if let Some(claim) = &claim
            && let Ok(mut cursor) = external.after_tenant.lock()
        {
            cursor.clone_from(&claim.next_after_tenant);
        }
        // A walk that stopped part-way through the tenants (those it saw
        // were at their limit, or locked by another claim) goes on at once,
        // and one that began mid-way starts again from the first tenant:
        // the tenants it has not seen may have work.
        let walk_unfinished = claim.as_ref().is_some_and(|c| !c.next_after_tenant.is_empty());
        let jobs = claim.map(|c| c.jobs).unwrap_or_default();
        let now = tokio::time::Instant::now();
        if jobs.is_empty() && now < deadline && !types.is_empty() {
            if walk_unfinished {
                continue;
            }
            if !*covered {
                *covered = true;
                continue;
            }
        }
        if !jobs.is_empty() || now >= deadline {
            let expires = chrono::Utc::now() + chrono::Duration::from_std(external.lease).unwrap_or_default();
            let jobs = jobs
                .into_iter()
                .map(|job| LeasedJob {
                    id: job.id,
                    job_type: job.job_type,
                    params: job.params,
                    tenant: job.tenant.to_string(),
                    user: job.user.to_string(),
                    attempt: job.attempt,
                    lease_id: job.lease.0,
                    lease_expires_at: super::page::rfc3339(expires),
                })
                .collect();
            return Ok(HttpResponse::Ok().json(Claimed { jobs }));
        }
        covered_start = None;
        let _ = tokio::time::timeout((deadline - now).min(BACKSTOP), arrived).await;
    }
}

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
        (status = 403, description = "Not a worker token (`forbidden`)", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The lease is no longer yours (`lease_lost`): stop", body = Problem, content_type = "application/problem+json"),
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
    let body: Heartbeat = parse(body).await?;
    let renewed = state.store.queue().renew_leases(&[(id, LeaseId(body.lease_id))], state.external.lease).await?;
    let (_, cancel_requested) = renewed.first().copied().ok_or(AppError::LeaseLost)?;
    let expires = chrono::Utc::now() + chrono::Duration::from_std(state.external.lease).unwrap_or_default();
    Ok(HttpResponse::Ok().json(LeaseRenewed { lease_expires_at: super::page::rfc3339(expires), cancel_requested }))
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
        (status = 403, description = "Not a worker token (`forbidden`)", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The lease is no longer yours (`lease_lost`): stop", body = Problem, content_type = "application/problem+json"),
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
    let body: ProgressBody = parse(body).await?;
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
        (status = 403, description = "Not a worker token (`forbidden`)", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The lease is no longer yours (`lease_lost`)", body = Problem, content_type = "application/problem+json"),
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
    let body: CompleteBody = parse(body).await?;
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
        (status = 403, description = "Not a worker token (`forbidden`)", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The lease is no longer yours (`lease_lost`)", body = Problem, content_type = "application/problem+json"),
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
    let body: FailBody = parse(body).await?;
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

#[derive(Deserialize)]
pub struct UploadQuery {
    lease_id: Uuid,
    file_name: String,
}

/// `PUT /worker/v1/jobs/{id}/result?lease_id=&file_name=`: the attempt's
/// output file, streamed into errand's storage (constant memory) with the
/// request's `Content-Type`. When the attempt completes, the file is the
/// job's result: its owner downloads it through a fresh signed URL, and it is
/// deleted after the result retention, as an export's is.
#[utoipa::path(
    put, path = "/worker/v1/jobs/{id}/result", tag = "workers",
    params(
        ("id" = String, Path, format = Uuid, description = "The job's id"),
        ("lease_id" = String, Query, format = Uuid, description = "The attempt's lease"),
        ("file_name" = String, Query, description = "What a download is saved as, e.g. `invoice-42.pdf`"),
    ),
    request_body(content = Vec<u8>, content_type = "application/octet-stream", description = "The file"),
    responses(
        (status = 200, description = "Stored; the job's result once it completes", body = Object),
        (status = 400, description = "A bad query (`bad_request`)", body = Problem, content_type = "application/problem+json"),
        Unauthenticated,
        (status = 403, description = "Not a worker token (`forbidden`)", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The lease is no longer yours (`lease_lost`)", body = Problem, content_type = "application/problem+json"),
        Unavailable,
    ),
    security(("bearer" = [])),
)]
pub async fn upload(
    _worker: ExternalWorker,
    req: actix_web::HttpRequest,
    path: web::Path<String>,
    query: web::Query<UploadQuery>,
    body: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let id = job_id(&path)?;
    let UploadQuery { lease_id, file_name } = query.into_inner();
    let lease = LeaseId(lease_id);
    check_file_name(&file_name)?;
    let queue = state.store.queue();
    let running = queue.running_attempt(id, lease).await?.ok_or(AppError::LeaseLost)?;
    let content_type = req
        .headers()
        .get(actix_web::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/octet-stream")
        .to_owned();
    let key = ObjectKey::for_upload(&running.tenant, id, lease, extension_of(&file_name));
    let stored =
        state.storage.put(&key, &content_type, body).await.map_err(|e| AppError::Unavailable(e.to_string()))?;
    let file = ResultFile {
        storage_key: key.as_str().to_owned(),
        size_bytes: stored.size_bytes,
        row_count: 0,
        content_type,
        file_name,
        expires_at: chrono::Utc::now() + chrono::Duration::from_std(state.result_retention).unwrap_or_default(),
        expired: false,
    };
    let file = serde_json::to_value(&file).map_err(|e| AppError::Internal(e.to_string()))?;
    if !queue.keep_upload(id, lease, &file).await? {
        // Lost while uploading: the file is no one's.
        let _ = state.storage.delete(&key).await;
        return Err(AppError::LeaseLost);
    }
    Ok(HttpResponse::Ok().json(file))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UploadUrlBody {
    #[schema(value_type = String, format = Uuid)]
    lease_id: Uuid,
    /// What a download is saved as.
    file_name: String,
    /// The file's media type (default `application/octet-stream`).
    content_type: Option<String>,
}

/// Where to PUT the file, until when.
#[derive(Serialize, utoipa::ToSchema)]
pub struct UploadUrl {
    url: String,
    /// `PUT`.
    method: &'static str,
    expires_at: String,
}

/// `POST /worker/v1/jobs/{id}/result-url`: with the S3 backend, a presigned
/// URL to PUT the attempt's output file straight into the bucket (nothing
/// passes through errand). `/complete` then checks that the object is there
/// and makes it the job's result. The local backend answers 400: upload
/// through `PUT /worker/v1/jobs/{id}/result` instead.
#[utoipa::path(
    post, path = "/worker/v1/jobs/{id}/result-url", tag = "workers",
    params(("id" = String, Path, format = Uuid, description = "The job's id")),
    request_body = UploadUrlBody,
    responses(
        (status = 200, description = "Where to PUT the file", body = UploadUrl),
        (status = 400, description = "A bad body, or not an S3 deployment (`bad_request`)", body = Problem, content_type = "application/problem+json"),
        Unauthenticated,
        (status = 403, description = "Not a worker token (`forbidden`)", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "The lease is no longer yours (`lease_lost`)", body = Problem, content_type = "application/problem+json"),
        Unavailable,
    ),
    security(("bearer" = [])),
)]
pub async fn upload_url(
    _worker: ExternalWorker,
    path: web::Path<String>,
    body: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let id = job_id(&path)?;
    let body: UploadUrlBody = parse(body).await?;
    let lease = LeaseId(body.lease_id);
    check_file_name(&body.file_name)?;
    let queue = state.store.queue();
    let running = queue.running_attempt(id, lease).await?.ok_or(AppError::LeaseLost)?;
    let key = ObjectKey::for_upload(&running.tenant, id, lease, extension_of(&body.file_name));
    let expires_in = state.url_expiry;
    let url = state.storage.upload_url(&key, expires_in).await.map_err(|e| AppError::Unavailable(e.to_string()))?;
    let Some(url) = url else {
        return Err(AppError::BadRequest(
            "this errand stores files locally: upload through PUT /worker/v1/jobs/{id}/result".into(),
        ));
    };
    let content_type = body.content_type.unwrap_or_else(|| "application/octet-stream".into());
    let pending = json!({
        "storage_key": key.as_str(), "file_name": body.file_name, "content_type": content_type, "pending": true,
    });
    if !queue.keep_upload(id, lease, &pending).await? {
        return Err(AppError::LeaseLost);
    }
    let expires_at = chrono::Utc::now() + chrono::Duration::from_std(expires_in).unwrap_or_default();
    Ok(HttpResponse::Ok().json(UploadUrl { url, method: "PUT", expires_at: super::page::rfc3339(expires_at) }))
}

/// Before a completion: a file the worker was to PUT through a presigned URL
/// must be there; it is then kept as an uploaded file, with its size.
async fn confirm_presigned_upload(state: &AppState, id: JobId, lease: LeaseId) -> Result<(), AppError> {
    let queue = state.store.queue();
    let Some(running) = queue.running_attempt(id, lease).await? else { return Ok(()) };
    let Some(Value::Object(mut pending)) = running.uploaded else { return Ok(()) };
    if pending.remove("pending").is_none() {
        return Ok(());
    }
    let key = pending.get("storage_key").and_then(Value::as_str).map(|k| ObjectKey::from_stored(k.to_owned()));
    let Some(key) = key else { return Ok(()) };
    let size = state.storage.size(&key).await.map_err(|e| AppError::Unavailable(e.to_string()))?;
    let size = size.ok_or_else(|| {
        AppError::BadRequest("the file was not uploaded to the presigned URL: PUT it, then complete".into())
    })?;
    let expires_at = chrono::Utc::now() + chrono::Duration::from_std(state.result_retention).unwrap_or_default();
    pending.insert("size_bytes".into(), json!(size));
    pending.insert("row_count".into(), json!(0));
    pending.insert("expires_at".into(), json!(super::page::rfc3339(expires_at)));
    if !queue.keep_upload(id, lease, &Value::Object(pending)).await? {
        return Err(AppError::LeaseLost);
    }
    Ok(())
}

fn check_file_name(file_name: &str) -> Result<(), AppError> {
    if file_name.is_empty() || file_name.len() > 255 || file_name.contains(['/', '\\', '\0']) {
        return Err(AppError::BadRequest("file_name must be 1 to 255 bytes, without / \\ or NUL".into()));
    }
    Ok(())
}

/// The object key's extension: the file name's, when it is a short plain one.
fn extension_of(file_name: &str) -> &str {
    file_name
        .rsplit_once('.')
        .map(|(_, ext)| ext)
        .filter(|e| e.len() <= 10 && e.chars().all(|c| c.is_ascii_alphanumeric()))
        .unwrap_or("bin")
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

async fn parse<T: serde::de::DeserializeOwned>(body: web::Payload) -> Result<T, AppError> {
    let fields = super::body::json_object(body).await?;
    serde_json::from_value(Value::Object(fields))
        .map_err(|e| AppError::BadRequest(format!("the body is not one errand understands: {e}")))
}

/// The lease owner of a worker's claims: derived from its name, so the same
/// worker always leases under the same owner.
fn worker_owner(worker: &ExternalWorker) -> Uuid {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(format!("errand-worker\0{}", worker.name));
    Uuid::from_slice(&digest[..16]).unwrap_or_default()
}

fn job_id(path: &str) -> Result<JobId, AppError> {
    Uuid::parse_str(path).map(JobId).map_err(|_| AppError::NotFound)
}
