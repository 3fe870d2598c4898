//! `/jobs`: submit a job, read one, list them. Every read goes through the
//! caller's scope, so another user's or tenant's job is exactly as absent as
//! one that never existed.

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

use super::{AppState, body};
use crate::actors::{GetJob, ListJobs, SubmitJob};
use crate::domain::{Caller, IdempotencyKey, InvalidIdempotencyKey, Job, JobId, JobState, JobStatus};
use crate::error::AppError;
use crate::store::{JobFilter, Submission};

/// Seconds a client should wait before polling `Location`, if it polls at all.
const RETRY_AFTER_SECS: &str = "1";
const DEFAULT_LIMIT: u32 = 20;
const MAX_LIMIT: u32 = 100;

/// A job as the API shows it.
#[derive(Serialize)]
pub struct JobView {
    id: JobId,
    #[serde(rename = "type")]
    job_type: String,
    status: JobStatus,
    /// Finer than `status`: `queued`, `running`, `retry_scheduled`, `completed`, `failed`.
    state: &'static str,
    params: Value,
    result_url: Option<String>,
    error_message: Option<String>,
    attempts: i32,
    max_attempts: i32,
    /// When a job waiting to retry runs next.
    next_attempt_at: Option<String>,
    created_at: String,
    /// When the job reached `completed` or `failed`.
    completed_at: Option<String>,
}

pub(super) fn rfc3339(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Millis, true)
}

impl From<Job> for JobView {
    fn from(job: Job) -> Self {
        let state = match job.state {
            JobState::Available => "queued",
            JobState::Running => "running",
            JobState::Retryable => "retry_scheduled",
            JobState::Completed => "completed",
            JobState::Failed => "failed",
        };
        Self {
            id: job.id,
            job_type: job.job_type,
            status: job.state.status(),
            state,
            params: job.params,
            // Result storage and signed URLs come with exports.
            result_url: None,
            error_message: job.error_message.filter(|_| job.state == JobState::Failed),
            attempts: job.attempt,
            max_attempts: job.max_attempts,
            next_attempt_at: (job.state == JobState::Retryable).then(|| rfc3339(job.run_at)),
            created_at: rfc3339(job.created_at),
            completed_at: job.finished_at.map(rfc3339),
        }
    }
}

/// `POST /jobs/{type}`: record the job (or find the one the key names) and answer at once.
pub async fn submit(
    req: HttpRequest,
    caller: Caller,
    path: web::Path<String>,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let key = match req.headers().get("Idempotency-Key") {
        None => return Err(InvalidIdempotencyKey::Missing.into()),
        Some(value) => IdempotencyKey::parse(value.to_str().map_err(|_| InvalidIdempotencyKey::Malformed)?)?,
    };
    let params = Value::Object(body::json_object(payload).await?);
    let msg = SubmitJob { caller: caller.clone(), key, job_type: path.into_inner(), params };
    match state.ask(&caller, msg).await?? {
        Submission::Created(job) => Ok(HttpResponse::Accepted()
            .insert_header((header::LOCATION, format!("/jobs/{}", job.id)))
            .insert_header((header::RETRY_AFTER, RETRY_AFTER_SECS))
            .json(JobView::from(job))),
        Submission::Replayed(job) => Ok(HttpResponse::Ok()
            .insert_header(("Idempotent-Replayed", "true"))
            .insert_header((header::LOCATION, format!("/jobs/{}", job.id)))
            .json(JobView::from(job))),
        Submission::KeyReused => Err(AppError::IdempotencyKeyReused),
    }
}

/// `GET /jobs/{id}`: the caller's job, or 404 for anything else (including ids that are not UUIDs).
pub async fn get(
    caller: Caller,
    path: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let id = Uuid::parse_str(&path).map(JobId).map_err(|_| AppError::NotFound)?;
    let job = state.ask(&caller, GetJob { caller: caller.clone(), id }).await??;
    job.map(|job| HttpResponse::Ok().json(JobView::from(job))).ok_or(AppError::NotFound)
}

#[derive(Deserialize)]
pub struct ListQuery {
    status: Option<String>,
    #[serde(rename = "type")]
    job_type: Option<String>,
    limit: Option<u32>,
    cursor: Option<String>,
}

#[derive(Serialize)]
struct JobList {
    jobs: Vec<JobView>,
    next_cursor: Option<String>,
}

/// `GET /jobs`: the caller's jobs, newest first, one page at a time.
pub async fn list(
    caller: Caller,
    query: web::Query<ListQuery>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let query = query.into_inner();
    let status = query
        .status
        .map(|s| {
            s.parse::<JobStatus>().map_err(|()| {
                AppError::BadRequest(format!("status must be pending, processing, completed or failed, not {s:?}"))
            })
        })
        .transpose()?;
    let limit = query.limit.unwrap_or(DEFAULT_LIMIT);
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(AppError::BadRequest(format!("limit must be between 1 and {MAX_LIMIT}")));
    }
    let before = query.cursor.as_deref().map(decode_cursor).transpose()?;
    let filter = JobFilter { status, job_type: query.job_type, before, limit };
    let page = state.ask(&caller, ListJobs { caller: caller.clone(), filter }).await??;
    Ok(HttpResponse::Ok().json(JobList {
        jobs: page.jobs.into_iter().map(JobView::from).collect(),
        next_cursor: page.next_before.map(encode_cursor),
    }))
}

/// Cursors are opaque to clients: the last job id of a page, base64url.
pub fn encode_cursor(id: JobId) -> String {
    URL_SAFE_NO_PAD.encode(id.0.as_bytes())
}

/// The inverse of [`encode_cursor`]; anything else is a 400.
pub fn decode_cursor(cursor: &str) -> Result<JobId, AppError> {
    let invalid = || AppError::BadRequest("the cursor is not one this API returned".into());
    let bytes = URL_SAFE_NO_PAD.decode(cursor).map_err(|_| invalid())?;
    Uuid::from_slice(&bytes).map(JobId).map_err(|_| invalid())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn cursors_round_trip(bytes in any::<[u8; 16]>()) {
            let id = JobId(Uuid::from_bytes(bytes));
            prop_assert_eq!(decode_cursor(&encode_cursor(id)).unwrap(), id);
        }

        #[test]
        fn only_22_character_cursors_can_decode(text in ".{0,64}") {
            // 16 bytes are 22 characters of unpadded base64url.
            prop_assert!(decode_cursor(&text).is_err() || text.len() == 22);
        }
    }
}
