//! `POST /admin/jobs/retry` and `POST /admin/jobs/cancel`: an action on every
//! job a filter matches (the list's filters), for an operator who may act.
//! A dry run counts; a run goes in steps (see `store/operator_bulk.rs`):
//! whole in one call, or one step per call with `limit`, continued `after`
//! the last job the previous step took, so that a page can show progress.

use actix_web::{HttpResponse, web};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::domain::JobId;
use crate::http::AppState;
use crate::http::admin::{param_filter, unsearchable_params};
use crate::http::auth::ActingOperator;
use crate::http::jobs::type_filter;
use crate::http::support::pagination;
use crate::http::support::problem::{AppError, OperatorActionProblems, Problem};
use crate::store::{BulkAction, BulkFilter};

/// Which jobs a bulk action takes (at least a tenant, a type or
/// `created_after`), and how.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BulkRequest {
    tenant: Option<String>,
    user: Option<String>,
    #[serde(rename = "type")]
    job_type: Option<String>,
    /// Jobs whose error message holds this text (any case).
    error: Option<String>,
    /// `path=value`: jobs whose params hold `value` (as text) at the dot-separated `path`.
    param: Option<String>,
    created_after: Option<DateTime<Utc>>,
    created_before: Option<DateTime<Utc>>,
    /// Count the jobs it would take, and change nothing (no audit row either).
    #[serde(default)]
    dry_run: bool,
    /// Take at most this many (1 to 1,000), in one step: the answer's
    /// `next_after` says where the next step starts. Without it, all.
    #[schema(minimum = 1, maximum = 1000)]
    limit: Option<u32>,
    /// Start after this job (the previous step's `next_after`).
    #[schema(value_type = Option<String>, format = Uuid)]
    after: Option<uuid::Uuid>,
}

/// The most jobs one step may take.
const MAX_STEP: u32 = 1000;

/// How many jobs a bulk retry put back in the queue (or, as a dry run,
/// would put back now).
#[derive(Serialize, utoipa::ToSchema)]
pub struct Retried {
    #[serde(skip_serializing_if = "Option::is_none")]
    retried: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    would_retry: Option<u64>,
    /// With `limit`: where the next step starts; `null` when none is left.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, format = Uuid)]
    next_after: Option<Option<uuid::Uuid>>,
}

/// How many jobs a bulk cancel cancelled or asked to stop (or, as a dry
/// run, would now).
#[derive(Serialize, utoipa::ToSchema)]
pub struct Cancelled {
    #[serde(skip_serializing_if = "Option::is_none")]
    cancelled: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    would_cancel: Option<u64>,
    /// With `limit`: where the next step starts; `null` when none is left.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, format = Uuid)]
    next_after: Option<Option<uuid::Uuid>>,
}

/// What a bulk action did, before it is worded for its route.
enum Done {
    Counted(u64),
    Whole(u64),
    Step(u64, Option<JobId>),
}

impl Done {
    fn next_after(&self) -> Option<Option<uuid::Uuid>> {
        match self {
            Self::Step(_, next) => Some(next.map(|id| id.0)),
            _ => None,
        }
    }

    /// How many it did (`None` for a dry run), and would do (`None` otherwise).
    fn counts(&self) -> (Option<u64>, Option<u64>) {
        match self {
            Self::Counted(n) => (None, Some(*n)),
            Self::Whole(n) | Self::Step(n, _) => (Some(*n), None),
        }
    }
}

/// `POST /admin/jobs/retry`: retries the failed jobs the filter matches
/// (e.g. every failed `export_sales_report` of one tenant in the last hour).
#[utoipa::path(post, path = "/admin/jobs/retry", tag = "operators",
    request_body = BulkRequest,
    responses((status = 200, description = "How many were retried (`retried`, and `next_after` with `limit`), or as a dry run would be now (`would_retry`)", body = Retried),
        (status = 400, description = "No filter, or a bad one (`bad_request`)", body = Problem, content_type = "application/problem+json"),
        OperatorActionProblems))]
pub async fn retry_matching(
    operator: ActingOperator,
    body: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let done = run(BulkAction::Retry, operator, body, &state).await?;
    let (retried, would_retry) = done.counts();
    Ok(HttpResponse::Ok().json(Retried { retried, would_retry, next_after: done.next_after() }))
}

/// `POST /admin/jobs/cancel`: cancels the unfinished jobs the filter matches
/// (a running one is asked to stop, as one job's cancel does); each owner is
/// notified as for an operator's cancel.
#[utoipa::path(post, path = "/admin/jobs/cancel", tag = "operators",
    request_body = BulkRequest,
    responses((status = 200, description = "How many were cancelled or asked to stop (`cancelled`, and `next_after` with `limit`), or as a dry run would be now (`would_cancel`)", body = Cancelled),
        (status = 400, description = "No filter, or a bad one (`bad_request`)", body = Problem, content_type = "application/problem+json"),
        OperatorActionProblems))]
pub async fn cancel_matching(
    operator: ActingOperator,
    body: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let done = run(BulkAction::Cancel, operator, body, &state).await?;
    let (cancelled, would_cancel) = done.counts();
    Ok(HttpResponse::Ok().json(Cancelled { cancelled, would_cancel, next_after: done.next_after() }))
}

async fn run(
    action: BulkAction,
    ActingOperator(operator): ActingOperator,
    body: web::Payload,
    state: &AppState,
) -> Result<Done, AppError> {
    let request: BulkRequest = crate::http::support::body::json(body).await?;
    if request.tenant.is_none() && request.job_type.is_none() && request.created_after.is_none() {
        // Every failed (or unfinished) job of every tenant is a bad thing to act on by accident.
        return Err(AppError::BadRequest("name a tenant, a type or created_after".into()));
    }
    let filter = BulkFilter {
        tenant: pagination::text_filter("tenant", request.tenant)?,
        user: pagination::text_filter("user", request.user)?,
        job_type: type_filter(request.job_type)?,
        error: pagination::text_filter("error", request.error)?,
        param: pagination::text_filter("param", request.param)?.as_deref().map(param_filter).transpose()?,
        created_after: request.created_after,
        created_before: request.created_before,
        params_unsearchable: unsearchable_params(&operator, state),
    };
    let jobs = state.store.jobs_for_operator(&operator);
    let after = request.after.map(JobId);
    Ok(match (request.dry_run, request.limit) {
        (true, _) => Done::Counted(jobs.count_for(action, &filter).await?),
        (false, Some(limit @ 1..=MAX_STEP)) => {
            let step = jobs.bulk_step(action, &filter, after, limit).await?;
            Done::Step(step.done, step.next_after)
        }
        (false, Some(_)) => return Err(AppError::BadRequest(format!("limit must be 1 to {MAX_STEP}"))),
        (false, None) => Done::Whole(jobs.bulk(action, &filter, after).await?),
    })
}
