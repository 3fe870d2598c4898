//! `/admin/…`: the operators' routes, across tenants. Only an operator token
//! (`scope` holding `operator`; `errand token --operator`) gets in; a user's
//! token gets 403, as an operator's does on the user routes. They go through
//! the store's operator door, which audits every action in its transaction:
//! there is no tenant supervisor to ask for work that spans tenants.

pub mod actions;
pub mod bulk;
pub mod erasures;
pub mod overview;
pub mod pauses;
pub mod quotas;
pub mod retention;

use actix_web::{HttpResponse, web};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::config::RedactedField;
use crate::domain::{Job, JobId, JobState, Operator};
use crate::http::auth::ActingOperator;
use crate::http::jobs::{job_view, status_filter, type_filter};
use crate::http::support::pagination;
use crate::http::support::problem::{AppError, OperatorActionProblems, OperatorReadProblems, Problem};
use crate::http::support::routing::Routes;
use crate::http::{AppState, job_id};
use crate::jobs::JobView;
use crate::store::{
    ActionQuery, AttemptError, AttemptOutcome, CancelOutcome, HoldOutcome, JobQuery, JobTimeline, NearestQuotas,
    OperatorAction, QueueCount, RetryOutcome,
};

/// A job as an operator sees it: whose it is, and (alone) its attempts' errors.
#[derive(Serialize, utoipa::ToSchema)]
pub struct AdminJobView {
    tenant: String,
    user: String,
    #[serde(flatten)]
    job: JobView,
    /// What the job's type keeps from operators without the
    /// `operator:sensitive` scope (`params`: shown as `{}`; `result`: `null`,
    /// no download), when anything.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schema(value_type = Vec<String>)]
    redacted: Vec<RedactedField>,
    /// The operator holding it, while held (`GET /admin/jobs/{id}` and the
    /// answers of its actions).
    #[serde(skip_serializing_if = "Option::is_none")]
    held_by: Option<String>,
    /// The backend service that asked for the job for its owner (a service
    /// token acting for them), where one did (`GET /admin/jobs/{id}`).
    #[serde(skip_serializing_if = "Option::is_none")]
    acted_by: Option<String>,
    /// Why each failed attempt failed, oldest first (`GET /admin/jobs/{id}` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<Object>>)]
    attempt_errors: Option<Vec<AttemptError>>,
    /// What became of the job (`GET /admin/jobs/{id}` only): `attempts`,
    /// `notifications`, `emails`, `pushes`, `webhooks` and `actions`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    history: Option<JobHistory>,
}

/// A job's attempts, the notifications, emails, push messages and webhook deliveries its
/// ends made, and the operator actions taken on it.
#[derive(Serialize)]
struct JobHistory {
    /// `attempts`: `{run, attempt, outcome (running, failed, completed,
    /// cancelled), started_at, ended_at, lease_id, lease_owner,
    /// lease_expires_at, error, progress}`; `notifications`, `emails`, `pushes`, `webhooks`.
    #[serde(flatten)]
    timeline: JobTimeline,
    /// The newest hundred.
    actions: Vec<OperatorAction>,
    /// The trace of the request that recorded the job: `{trace_id, url}`
    /// (`url` where `[telemetry] trace_url` is set); later attempts are
    /// traces of their own, linked to it.
    #[serde(skip_serializing_if = "Option::is_none")]
    trace: Option<TraceLink>,
}

#[derive(Serialize)]
struct TraceLink {
    trace_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    url: Option<String>,
}

/// How many of a job's operator actions its detail lists.
const ACTIONS_SHOWN: u32 = 100;

impl AdminJobView {
    async fn new(
        mut job: Job,
        attempt_errors: Option<Vec<AttemptError>>,
        operator: &Operator,
        state: &AppState,
    ) -> Result<Self, AppError> {
        let (tenant, user, held_by) = (job.tenant.to_string(), job.user.to_string(), job.held_by.take());
        let acted_by = job.acted_by.take();
        let redacted = redact(&mut job, operator, state);
        let job = job_view(job, state).await?;
        Ok(Self { tenant, user, held_by, acted_by, job, redacted, attempt_errors, history: None })
    }
}

/// Empties what the job's type redacts, unless the operator may see it
/// (`operator:sensitive`); returns what it emptied. Done to the job before
/// its view is made, so that no download URL is signed for a kept result.
fn redact(job: &mut Job, operator: &Operator, state: &AppState) -> Vec<RedactedField> {
    let Some(job_type) = state.job_types.get(&job.job_type).filter(|_| !operator.sees_sensitive) else {
        return Vec::new();
    };
    for field in &job_type.redact {
        match field {
            RedactedField::Params => job.params = serde_json::Value::Object(serde_json::Map::new()),
            RedactedField::Result => job.result = None,
        }
    }
    job_type.redact.clone()
}

/// The job types whose params an operator's `param` filter does not
/// search: those sealed at rest (whose params the database cannot read),
/// and those kept from an operator without `operator:sensitive`.
pub(super) fn unsearchable_params(operator: &Operator, state: &AppState) -> Vec<String> {
    let mut types = state.job_types.params_sealed();
    if !operator.sees_sensitive {
        types.extend(state.job_types.params_redacted());
    }
    types.sort();
    types.dedup();
    types
}

#[derive(Deserialize)]
pub struct AdminListQuery {
    tenant: Option<String>,
    user: Option<String>,
    error: Option<String>,
    param: Option<String>,
    #[serde(rename = "type")]
    job_type: Option<String>,
    status: Option<String>,
    created_after: Option<DateTime<Utc>>,
    created_before: Option<DateTime<Utc>>,
    limit: Option<u32>,
    cursor: Option<String>,
}

/// A page of any tenant's jobs.
#[derive(Serialize, utoipa::ToSchema)]
pub struct AdminJobList {
    jobs: Vec<AdminJobView>,
    next_cursor: Option<String>,
    /// With a `param` filter: the job types whose params it did not search
    /// (sealed at rest, or kept from this operator); their jobs never match it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    params_not_searched: Vec<String>,
}

/// `GET /admin/jobs`: any tenant's jobs, newest first.
#[utoipa::path(get, path = "/admin/jobs", tag = "operators",
    params(("tenant" = Option<String>, Query, description = "Only this tenant's jobs"),
        ("user" = Option<String>, Query, description = "Only this user's jobs"),
        ("error" = Option<String>, Query, description = "Only jobs whose error message holds this text (any case)"),
        ("param" = Option<String>, Query, description = "`path=value`: only jobs whose params hold `value` (as text) at the dot-separated `path`, e.g. `customer.id=42`"),
        ("type" = Option<String>, Query, pattern = "^[a-z0-9_-]{1,64}$", description = "A job type's name"),
        ("status" = Option<String>, Query, pattern = "^(pending|processing|completed|failed|cancelled)$", description = "pending, processing, completed, failed or cancelled"),
        ("created_after" = Option<String>, Query, format = DateTime, description = "Created at or after (RFC 3339)"),
        ("created_before" = Option<String>, Query, format = DateTime, description = "Created before (RFC 3339)"),
        ("limit" = Option<u32>, Query, minimum = 1, maximum = 100, description = "1 to 100, default 20"),
        ("cursor" = Option<String>, Query, pattern = "^[A-Za-z0-9_-]{21}[AQgw]$", description = "`next_cursor` of the previous page")),
    responses((status = 200, description = "A page of jobs", body = AdminJobList),
        (status = 400, description = "A bad filter, limit or cursor (`bad_request`)", body = Problem, content_type = "application/problem+json"),
        OperatorReadProblems))]
pub async fn list(
    operator: Operator,
    query: web::Query<AdminListQuery>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let q = query.into_inner();
    let query = JobQuery {
        tenant: pagination::text_filter("tenant", q.tenant)?,
        user: pagination::text_filter("user", q.user)?,
        error: pagination::text_filter("error", q.error)?,
        param: pagination::text_filter("param", q.param)?.as_deref().map(param_filter).transpose()?,
        job_type: type_filter(q.job_type)?,
        status: status_filter(q.status)?,
        created_after: q.created_after,
        created_before: q.created_before,
        before: q.cursor.as_deref().map(pagination::decode_cursor).transpose()?.map(JobId),
        limit: pagination::limit(q.limit)?,
        params_unsearchable: unsearchable_params(&operator, &state),
    };
    let params_not_searched = if query.param.is_some() { query.params_unsearchable.clone() } else { Vec::new() };
    let page = state.store.jobs_for_operator(&operator).list(&query).await?;
    let views = page.jobs.into_iter().map(|job| AdminJobView::new(job, None, &operator, &state));
    Ok(HttpResponse::Ok().json(AdminJobList {
        jobs: futures_util::future::try_join_all(views).await?,
        next_cursor: page.next_before.map(|id| pagination::encode_cursor(id.0)),
        params_not_searched,
    }))
}

/// A `param` filter, `path=value`: the path's dot-separated keys, and the value.
pub(super) fn param_filter(param: &str) -> Result<(Vec<String>, String), AppError> {
    let refused = || AppError::BadRequest(format!("param must be path=value, e.g. customer.id=42, not {param:?}"));
    let (path, value) = param.split_once('=').ok_or_else(refused)?;
    let keys: Vec<String> = path.split('.').map(str::to_owned).collect();
    if keys.iter().any(String::is_empty) {
        return Err(refused());
    }
    Ok((keys, value.to_owned()))
}

/// `GET /admin/jobs/{id}`: any tenant's job, with its attempts, what its
/// ends sent and the operator actions taken on it.
#[utoipa::path(get, path = "/admin/jobs/{id}", tag = "operators",
    params(("id" = String, Path, format = Uuid, description = "The job's id")),
    responses((status = 200, description = "The job", body = AdminJobView),
        OperatorReadProblems,
        (status = 404, description = "No such job (`not_found`)", body = Problem, content_type = "application/problem+json")))]
pub async fn get(
    operator: Operator,
    path: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let id = job_id(&path)?;
    let jobs = state.store.jobs_for_operator(&operator);
    let (job, errors) = jobs.get(id).await?.ok_or(AppError::NotFound)?;
    let mut timeline = jobs.timeline(id).await?;
    if !operator.may_act {
        // A running attempt's lease is what lets a worker end it: only
        // operators who may act see it.
        let running = timeline.attempts.iter_mut().filter(|a| a.outcome == AttemptOutcome::Running);
        running.for_each(|attempt| attempt.lease_id = None);
    }
    let audit = ActionQuery { job: Some(id.0), limit: ACTIONS_SHOWN, ..ActionQuery::default() };
    let actions = state.store.audit_for_operator(&operator).list(&audit).await?.actions;
    let mut view = AdminJobView::new(job, Some(errors), &operator, &state).await?;
    if view.redacted.contains(&RedactedField::Params) {
        // What a handler logs may quote its params: kept from whoever may
        // not see them, all but when and how much it mattered.
        for line in timeline.attempts.iter_mut().flat_map(|attempt| attempt.logs.iter_mut()) {
            line.message = "(redacted)".into();
            line.fields = None;
        }
    }
    let trace = timeline.trace.as_ref().map(|trace| TraceLink {
        trace_id: trace.trace_id().to_owned(),
        url: state.settings.telemetry.trace_page(trace.trace_id()),
    });
    view.history = Some(JobHistory { timeline, actions, trace });
    Ok(HttpResponse::Ok().json(view))
}

/// `POST /admin/jobs/{id}/retry`: a failed or cancelled job goes back to the
/// queue, same id and key, as a new run with a fresh attempt budget; it ends
/// with a notification of its own (the old one stays).
#[utoipa::path(post, path = "/admin/jobs/{id}/retry", tag = "operators",
    params(("id" = String, Path, format = Uuid, description = "The job's id")),
    responses((status = 200, description = "The job, queued again", body = AdminJobView),
        OperatorActionProblems,
        (status = 404, description = "No such job (`not_found`)", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "Neither failed nor cancelled (`job_not_retryable`)", body = Problem, content_type = "application/problem+json")))]
pub async fn retry(
    ActingOperator(operator): ActingOperator,
    path: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    match state.store.jobs_for_operator(&operator).retry(job_id(&path)?).await? {
        RetryOutcome::Retried(job) => {
            Ok(HttpResponse::Ok().json(AdminJobView::new(*job, None, &operator, &state).await?))
        }
        RetryOutcome::NotRetryable(job_state) => Err(AppError::NotRetryable(job_state.status().as_str())),
        RetryOutcome::NotFound => Err(AppError::NotFound),
    }
}

/// `POST /admin/jobs/{id}/cancel`: as the owner's cancel, and the owner is
/// notified (in-app and by email) once it is cancelled.
#[utoipa::path(post, path = "/admin/jobs/{id}/cancel", tag = "operators",
    params(("id" = String, Path, format = Uuid, description = "The job's id")),
    responses((status = 200, description = "The job, cancelled", body = AdminJobView),
        (status = 202, description = "The job, being stopped (state `cancelling`)", body = AdminJobView),
        OperatorActionProblems,
        (status = 404, description = "No such job (`not_found`)", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "Already completed or failed (`job_already_ended`)", body = Problem, content_type = "application/problem+json")))]
pub async fn cancel(
    ActingOperator(operator): ActingOperator,
    path: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    match state.store.jobs_for_operator(&operator).cancel(job_id(&path)?).await? {
        CancelOutcome::Cancelled(job) => {
            Ok(HttpResponse::Ok().json(AdminJobView::new(job, None, &operator, &state).await?))
        }
        CancelOutcome::Stopping(job) => {
            Ok(HttpResponse::Accepted().json(AdminJobView::new(job, None, &operator, &state).await?))
        }
        CancelOutcome::AlreadyEnded(ended) => Err(AppError::AlreadyEnded(ended.status().as_str())),
        CancelOutcome::NotFound => Err(AppError::NotFound),
    }
}

/// `POST /admin/jobs/{id}/hold`: a waiting job stays waiting, its place in
/// line kept, and no process claims it until it is released.
#[utoipa::path(post, path = "/admin/jobs/{id}/hold", tag = "operators",
    params(("id" = String, Path, format = Uuid, description = "The job's id")),
    responses((status = 200, description = "The job, held (holding a held job again changes nothing)", body = AdminJobView),
        OperatorActionProblems,
        (status = 404, description = "No such job (`not_found`)", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "Running or ended (`job_not_waiting`)", body = Problem, content_type = "application/problem+json")))]
pub async fn hold(
    ActingOperator(operator): ActingOperator,
    path: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let outcome = state.store.jobs_for_operator(&operator).hold(job_id(&path)?).await?;
    hold_answer(outcome, &operator, &state).await
}

/// `POST /admin/jobs/{id}/release`: a held job may be claimed again, at once.
#[utoipa::path(post, path = "/admin/jobs/{id}/release", tag = "operators",
    params(("id" = String, Path, format = Uuid, description = "The job's id")),
    responses((status = 200, description = "The job, released (or never held)", body = AdminJobView),
        OperatorActionProblems,
        (status = 404, description = "No such job (`not_found`)", body = Problem, content_type = "application/problem+json")))]
pub async fn release(
    ActingOperator(operator): ActingOperator,
    path: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let outcome = state.store.jobs_for_operator(&operator).release(job_id(&path)?).await?;
    hold_answer(outcome, &operator, &state).await
}

async fn hold_answer(outcome: HoldOutcome, operator: &Operator, state: &AppState) -> Result<HttpResponse, AppError> {
    match outcome {
        HoldOutcome::Done(job) => Ok(HttpResponse::Ok().json(AdminJobView::new(*job, None, operator, state).await?)),
        HoldOutcome::NotWaiting(JobState::Running) => Err(AppError::NotWaiting("running")),
        HoldOutcome::NotWaiting(ended) => Err(AppError::NotWaiting(ended.status().as_str())),
        HoldOutcome::NotFound => Err(AppError::NotFound),
    }
}

/// Unfinished jobs per type and state.
#[derive(Serialize, utoipa::ToSchema)]
pub struct Queues {
    #[schema(value_type = Vec<Object>)]
    queues: Vec<QueueCount>,
    /// The tenants and the users with the most unfinished jobs against their
    /// caps (`limit`; `null`: none), nearest first: `{tenants, users}`.
    #[schema(value_type = Object)]
    nearest_quotas: NearestQuotas,
}

/// How many tenants and users `GET /admin/queues` lists as nearest to their caps.
const NEAREST_QUOTAS: i64 = 10;

/// `GET /admin/queues`: per job type and state, the counts of waiting,
/// retrying and running jobs and the oldest due job's wait, and who is
/// nearest to their quotas, read from the queue table alone (it holds
/// unfinished jobs only).
#[utoipa::path(get, path = "/admin/queues", tag = "operators",
    responses((status = 200, description = "Counts per type and state", body = Queues),
        OperatorReadProblems))]
pub async fn queues(operator: Operator, state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    let queues = state.store.jobs_for_operator(&operator).queues().await?;
    let nearest_quotas = state.store.quotas_for_operator(&operator).nearest(NEAREST_QUOTAS).await?;
    Ok(HttpResponse::Ok().json(Queues { queues, nearest_quotas }))
}

/// `/admin/…`: the operators' routes.
pub fn routes(r: &mut Routes) {
    r.get("/admin/jobs", list)
        // Before `/admin/jobs/{id}`, which would take the paths otherwise.
        .post("/admin/jobs/retry", bulk::retry_matching)
        .post("/admin/jobs/cancel", bulk::cancel_matching)
        .get("/admin/jobs/{id}", get)
        .post("/admin/jobs/{id}/retry", retry)
        .post("/admin/jobs/{id}/cancel", cancel)
        .post("/admin/jobs/{id}/hold", hold)
        .post("/admin/jobs/{id}/release", release)
        .get("/admin/queues", queues)
        .get("/admin/actions", actions::list)
        .get("/admin/overview", overview::read)
        .resource("/admin/pauses", "GET, POST", |res| {
            res.route(web::get().to(pauses::list)).route(web::post().to(pauses::pause))
        })
        .resource("/admin/pauses/{id}", "DELETE", |res| res.route(web::delete().to(pauses::resume)))
        .post("/admin/erasures", erasures::erase_for_operator)
        .post("/tenant/erasures", erasures::erase_for_tenant_admin)
        .resource("/admin/tenants/{tenant}/quotas", "GET, PUT", |res| {
            res.route(web::get().to(quotas::get)).route(web::put().to(quotas::set))
        })
        .resource("/admin/tenants/{tenant}/retention", "GET, PUT", |res| {
            res.route(web::get().to(retention::get)).route(web::put().to(retention::set))
        });
}
