//! `/worker/v1/…`: the external worker API. Job types with `handler =
//! "external"` are run by workers outside errand, in any language, which
//! claim them here through the Broker, with the claim spec of errand's own
//! dispatcher (tenant and type limits, fairness), and end their attempts
//! through the Completer, as errand's own workers do, under the lease they were
//! given: every call is fenced on it, so a worker whose lease was lost
//! (expired and rescued, or its job cancelled) changes nothing and is told
//! so with `409 lease_lost`. Only worker tokens (`scope: worker`, with the
//! `types` they may take) get in, and they get nowhere else.

pub(super) mod attempts;
pub(super) mod files;

use std::time::Duration;

use actix_web::{HttpResponse, web};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

use super::AppState;
use super::auth::ExternalWorker;
use crate::actors::ClaimForWorker;
use crate::domain::JobId;
use crate::http::support::problem::{AppError, NotAWorker, Problem, Unauthenticated, Unavailable};
use crate::http::support::routing::Routes;

/// Most jobs one claim answers.
const MAX_CLAIM: u32 = 100;
/// Longest a claim waits for work.
const MAX_WAIT_SECS: u64 = 60;

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
    /// What an earlier attempt of this run recorded with `/checkpoint`:
    /// go on from there (absent: start from the beginning).
    #[serde(skip_serializing_if = "Option::is_none")]
    checkpoint: Option<Value>,
    /// A first attempt's trace: the W3C `traceparent` of the request that
    /// recorded the job. Make the span that runs it a child of this one, and
    /// send it as the `traceparent` header of this job's calls.
    #[serde(skip_serializing_if = "Option::is_none")]
    traceparent: Option<String>,
    /// A later attempt's: the same request's `traceparent`, to *link* the
    /// span that runs it to (a retry starts a trace of its own).
    #[serde(skip_serializing_if = "Option::is_none")]
    trace_link: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct Claimed {
    jobs: Vec<LeasedJob>,
}

/// `POST /worker/v1/claim`: up to `max` jobs of the worker's types, waiting
/// up to `wait` seconds for one to arrive (answered as soon as one does).
#[utoipa::path(post, path = "/worker/v1/claim", tag = "workers",
    request_body = ClaimBody,
    responses((status = 200, description = "The jobs leased (none if nothing came in time)", body = Claimed),
        (status = 400, description = "A bad body, or a type the token does not allow (`bad_request`)", body = Problem, content_type = "application/problem+json"),
        Unauthenticated,
        NotAWorker,
        Unavailable))]
pub async fn claim(
    worker: ExternalWorker,
    body: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let body: ClaimBody = crate::http::support::body::json(body).await?;
    let types = match body.types {
        Some(types) => {
            if let Some(refused) = types.iter().find(|t| !worker.types.contains(t)) {
                return Err(AppError::BadRequest(format!("this worker's token does not allow the type {refused:?}")));
            }
            types
        }
        None => worker.types.clone(),
    };
    let max = body.max.unwrap_or(1);
    if !(1..=MAX_CLAIM).contains(&max) {
        return Err(AppError::BadRequest(format!("max must be between 1 and {MAX_CLAIM}")));
    }
    let wait = Duration::from_secs(body.wait.unwrap_or(30).min(MAX_WAIT_SECS));
    let pull = ClaimForWorker { worker: worker.name.to_string(), types, max: max as usize, wait };
    let leased = state.broker.send(pull).await.map_err(|e| AppError::Unavailable(e.to_string()))??;
    let expires = crate::http::support::pagination::rfc3339(leased.expires_at);
    let jobs = leased
        .jobs
        .into_iter()
        .map(|job| {
            let (traceparent, trace_link) = match job.trace {
                Some(trace) if trace.continued_by(job.attempt.into()) => (Some(trace.parent.to_string()), None),
                Some(trace) => (None, Some(trace.parent.to_string())),
                None => (None, None),
            };
            LeasedJob {
                id: job.id,
                job_type: job.job_type,
                params: job.params,
                tenant: job.tenant.to_string(),
                user: job.user.to_string(),
                attempt: job.attempt,
                lease_id: job.lease.0,
                lease_expires_at: expires.clone(),
                checkpoint: job.checkpoint,
                traceparent,
                trace_link,
            }
        })
        .collect();
    Ok(HttpResponse::Ok().json(Claimed { jobs }))
}

/// Before an end or an upload: the attempt `lease` names must be of a type
/// the worker's token holds (403 otherwise), so a lease id that reached the
/// wrong hands cannot end another type's job. An attempt no longer running
/// is left to the end itself (a replay, or 409).
pub(super) async fn check_type_held(
    state: &AppState,
    worker: &ExternalWorker,
    id: crate::domain::JobId,
    lease: crate::domain::LeaseId,
) -> Result<Option<crate::store::RunningAttempt>, AppError> {
    let running = state.store.queue().running_attempt(id, lease).await?;
    if let Some(attempt) = &running
        && !worker.types.contains(&attempt.job_type)
    {
        return Err(AppError::Forbidden(format!(
            "this job is of type {:?}, which the worker's token does not list in `types`",
            attempt.job_type
        )));
    }
    Ok(running)
}

/// `/worker/v1/…`: the external worker API.
pub fn routes(r: &mut Routes) {
    r.post("/worker/v1/claim", claim)
        .post("/worker/v1/jobs/{id}/heartbeat", attempts::heartbeat)
        .post("/worker/v1/jobs/{id}/progress", attempts::progress)
        .post("/worker/v1/jobs/{id}/logs", attempts::logs)
        .post("/worker/v1/jobs/{id}/checkpoint", attempts::checkpoint)
        .post("/worker/v1/jobs/{id}/complete", attempts::complete)
        .post("/worker/v1/jobs/{id}/fail", attempts::fail)
        .resource("/worker/v1/jobs/{id}/result", "PUT", |res| res.route(web::put().to(files::upload)))
        .post("/worker/v1/jobs/{id}/result-url", files::upload_url);
}
