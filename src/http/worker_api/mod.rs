//! `/worker/v1/…`: the external worker API. Job types with `handler =
//! "external"` are run by workers outside errand, in any language, which
//! claim them here through the same claim as errand's own dispatcher (tenant
//! and type limits, fairness), and report back under the lease they were
//! given: every call is fenced on it, so a worker whose lease was lost
//! (expired and rescued, or its job cancelled) changes nothing and is told
//! so with `409 lease_lost`. Only worker tokens (`scope: worker`, with the
//! `types` they may take) get in, and they get nowhere else.

pub(super) mod attempts;
pub(super) mod files;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::{HttpResponse, web};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

use super::AppState;
use super::auth::ExternalWorker;
use crate::domain::JobId;
use crate::http::error::{AppError, NotAWorker, Problem, Unauthenticated, Unavailable};
use crate::store::{ClaimRequest, TypeLimits};

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
        NotAWorker,
        Unavailable,
    ),
    security(("bearer" = [])),
)]
pub async fn claim(
    worker: ExternalWorker,
    body: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let body: ClaimBody = super::body::json(body).await?;
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
    loop {
        // Listen before looking, so that work arriving meanwhile wakes us.
        let arrived = external.work_arrived.notified();
        tokio::pin!(arrived);
        arrived.as_mut().enable();
        let after_tenant = external.after_tenant.lock().map(|cursor| cursor.clone()).unwrap_or_default();
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
        // A walk that stopped part-way round the tenants (those it saw were
        // at their limit, or locked by another claim) goes on at once: the
        // tenants it has not seen may have work.
        let walk_unfinished = claim.as_ref().is_some_and(|c| !c.next_after_tenant.is_empty());
        let jobs = claim.map(|c| c.jobs).unwrap_or_default();
        let now = tokio::time::Instant::now();
        if jobs.is_empty() && walk_unfinished && now < deadline {
            continue;
        }
        if !jobs.is_empty() || now >= deadline {
            let expires = chrono::Utc::now() + chrono::Duration::from_std(external.lease).unwrap_or_default();
            let jobs = jobs
                .into_iter()
                .inspect(|job| crate::telemetry::record_job_wait(&job.job_type, job.due_at))
                .map(|job| LeasedJob {
                    id: job.id,
                    job_type: job.job_type,
                    params: job.params,
                    tenant: job.tenant.to_string(),
                    user: job.user.to_string(),
                    attempt: job.attempt,
                    lease_id: job.lease.0,
                    lease_expires_at: crate::http::page::rfc3339(expires),
                })
                .collect();
            return Ok(HttpResponse::Ok().json(Claimed { jobs }));
        }
        let _ = tokio::time::timeout((deadline - now).min(BACKSTOP), arrived).await;
    }
}

/// The lease owner of a worker's claims: derived from its name, so the same
/// worker always leases under the same owner.
fn worker_owner(worker: &ExternalWorker) -> Uuid {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(format!("errand-worker\0{}", worker.name));
    Uuid::from_slice(&digest[..16]).unwrap_or_default()
}
