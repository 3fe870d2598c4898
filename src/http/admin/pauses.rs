//! `/admin/pauses`: an operator stops the claims of a job type, a tenant, or
//! a type in one tenant (a source database down at 3 a.m.: nothing burns its
//! attempts against it), and resumes them. Submissions go on and running
//! jobs finish; waiting jobs of the scope stay waiting. A resumed scope
//! ramps: its concurrency rises from 1 to its limit over the pause's `ramp`
//! (a source that has just come back is not hit by every waiting job at
//! once). Read-only operators see the pauses.

use std::time::Duration;

use actix_web::{HttpResponse, web};
use chrono::{DateTime, Utc};
use serde::Deserialize;

use crate::domain::{Operator, TenantId};
use crate::http::AppState;
use crate::http::auth::ActingOperator;
use crate::http::support::problem::{AppError, OperatorActionProblems, OperatorReadProblems, Problem};
use crate::store::{NewPause, Paused};

/// The longest reason kept (characters).
const MAX_REASON: usize = 500;

/// The longest ramp.
const MAX_RAMP: Duration = Duration::from_secs(24 * 3600);

/// A ramp's length as a request gives it (`"90s"`, `"2m"`, `"0s"`: none).
fn parse_ramp(text: &str) -> Result<Duration, AppError> {
    humantime::parse_duration(text).ok().filter(|ramp| *ramp <= MAX_RAMP).ok_or_else(|| {
        AppError::BadRequest(format!(
            "`ramp` is a duration such as \"2m\" or \"0s\", at most {}",
            humantime::format_duration(MAX_RAMP)
        ))
    })
}

/// `POST /admin/pauses`'s body.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PauseRequest {
    /// A tenant's id; left out: every tenant.
    tenant: Option<String>,
    /// A job type; left out: every type.
    #[serde(rename = "type")]
    job_type: Option<String>,
    reason: String,
    /// RFC 3339; left out: until resumed.
    until: Option<String>,
    /// How long the scope ramps once the pause ends; left out: 2 minutes.
    ramp: Option<String>,
}

impl PauseRequest {
    /// The pause asked for, or why it cannot be.
    fn check(self, state: &AppState) -> Result<NewPause, AppError> {
        if self.tenant.is_none() && self.job_type.is_none() {
            return Err(AppError::BadRequest("a pause names a `type`, a `tenant`, or both".into()));
        }
        let tenant = self
            .tenant
            .map(TenantId::parse)
            .transpose()
            .map_err(|_| AppError::BadRequest("`tenant` is not a tenant's id".into()))?;
        if let Some(name) = &self.job_type
            && state.job_types.get(name).is_none()
        {
            return Err(AppError::BadRequest(format!("`type`: there is no job type {name:?}")));
        }
        let reason = self.reason.trim().to_owned();
        if reason.is_empty() || reason.chars().count() > MAX_REASON || reason.chars().any(char::is_control) {
            return Err(AppError::BadRequest(format!(
                "`reason` is 1 to {MAX_REASON} characters, none a control character"
            )));
        }
        let until = self
            .until
            .map(|until| DateTime::parse_from_rfc3339(&until).map(|t| t.with_timezone(&Utc)))
            .transpose()
            .map_err(|_| AppError::BadRequest("`until` is not an RFC 3339 time".into()))?;
        if until.is_some_and(|until| until <= Utc::now()) {
            return Err(AppError::BadRequest("`until` has passed".into()));
        }
        let ramp = self.ramp.as_deref().map(parse_ramp).transpose()?;
        Ok(NewPause { tenant, job_type: self.job_type, reason, until, ramp })
    }
}

/// `GET /admin/pauses`: the pauses that hold now and those whose scope
/// ramps, oldest first.
#[utoipa::path(get, path = "/admin/pauses", tag = "operators",
    responses((status = 200, description = "`pauses`: each `{id, tenant, type, reason, until, paused_by, paused_at, state, resumed_at, ramp_seconds, ramp_ends_at}` (`tenant` or `type` `null`: every one; `until` `null`: until resumed; `state` `holding`, or `ramping` once it ended, until `ramp_ends_at`)", body = Object),
        OperatorReadProblems))]
pub async fn list(operator: Operator, state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    let pauses = state.store.pauses_for_operator(&operator).list().await?;
    Ok(HttpResponse::Ok().json(serde_json::json!({ "pauses": pauses })))
}

/// `POST /admin/pauses`: pauses a scope. No claim begun after the answer,
/// in any process, takes a waiting job of it. A scope paused already takes
/// the new reason and end (200).
#[utoipa::path(post, path = "/admin/pauses", tag = "operators",
    request_body(content = Object, description = "`type` (a job type), `tenant` (a tenant's id), at least one of them; `reason` (1 to 500 characters); `until` (RFC 3339, optional: until resumed); `ramp` (how long the scope ramps once the pause ends, e.g. `\"5m\"`, at most a day; optional: 2 minutes)"),
    responses((status = 201, description = "The scope is paused: the pause", body = Object),
        (status = 200, description = "The scope was paused already: its pause, with the new reason and end", body = Object),
        (status = 400, description = "No scope, an unknown type, an empty reason, an `until` that has passed, or a `ramp` that is not a duration of at most a day (`bad_request`)", body = Problem, content_type = "application/problem+json"),
        OperatorActionProblems))]
pub async fn pause(
    ActingOperator(operator): ActingOperator,
    body: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let request: PauseRequest = crate::http::support::body::json(body).await?;
    let pause = request.check(&state)?;
    Ok(match state.store.pauses_for_operator(&operator).pause(&pause).await? {
        Paused::Created(pause) => HttpResponse::Created().json(pause),
        Paused::Updated(pause) => HttpResponse::Ok().json(pause),
    })
}

/// `DELETE /admin/pauses/{id}`'s query.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResumeQuery {
    /// How long the scope ramps (`"0s"`: not at all); left out: the pause's own.
    ramp: Option<String>,
}

/// `DELETE /admin/pauses/{id}`: resumes the pause's scope; its waiting jobs
/// start as room allows, the scope ramping. A pause whose scope ramps
/// already has its ramp ended.
#[utoipa::path(delete, path = "/admin/pauses/{id}", tag = "operators",
    params(("id" = String, Path, description = "A pause's id"),
        ("ramp" = Option<String>, Query, description = "How long the scope ramps, e.g. `5m` (`0s`: not at all, at most a day); left out: the pause's own")),
    responses((status = 200, description = "Resumed: the pause, `state` `ramping` (a pause that was ramping: as it was, its ramp now ended)", body = Object),
        (status = 400, description = "A `ramp` that is not a duration of at most a day (`bad_request`)", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such pause (`not_found`)", body = Problem, content_type = "application/problem+json"),
        OperatorActionProblems))]
pub async fn resume(
    ActingOperator(operator): ActingOperator,
    path: web::Path<String>,
    query: web::Query<ResumeQuery>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let id = uuid::Uuid::parse_str(&path.into_inner()).map_err(|_| AppError::NotFound)?;
    let ramp = query.ramp.as_deref().map(parse_ramp).transpose()?;
    let resumed = state.store.pauses_for_operator(&operator).resume(id, ramp).await?.ok_or(AppError::NotFound)?;
    Ok(HttpResponse::Ok().json(resumed))
}
