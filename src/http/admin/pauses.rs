//! `/admin/pauses`: an operator stops the claims of a job type, a tenant, or
//! a type in one tenant (a source database down at 3 a.m.: nothing burns its
//! attempts against it), and resumes them. Submissions go on and running
//! jobs finish; waiting jobs of the scope stay waiting. Read-only operators
//! see the pauses.

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
        Ok(NewPause { tenant, job_type: self.job_type, reason, until })
    }
}

/// `GET /admin/pauses`: the pauses that hold now, oldest first.
#[utoipa::path(get, path = "/admin/pauses", tag = "operators",
    responses((status = 200, description = "`pauses`: each `{id, tenant, type, reason, until, paused_by, paused_at}` (`tenant` or `type` `null`: every one; `until` `null`: until resumed)", body = Object),
        OperatorReadProblems))]
pub async fn list(operator: Operator, state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    let pauses = state.store.pauses_for_operator(&operator).list().await?;
    Ok(HttpResponse::Ok().json(serde_json::json!({ "pauses": pauses })))
}

/// `POST /admin/pauses`: pauses a scope. No claim begun after the answer,
/// in any process, takes a waiting job of it. A scope paused already takes
/// the new reason and end (200).
#[utoipa::path(post, path = "/admin/pauses", tag = "operators",
    request_body(content = Object, description = "`type` (a job type), `tenant` (a tenant's id), at least one of them; `reason` (1 to 500 characters); `until` (RFC 3339, optional: until resumed)"),
    responses((status = 201, description = "The scope is paused: the pause", body = Object),
        (status = 200, description = "The scope was paused already: its pause, with the new reason and end", body = Object),
        (status = 400, description = "No scope, an unknown type, an empty reason, or an `until` that has passed (`bad_request`)", body = Problem, content_type = "application/problem+json"),
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

/// `DELETE /admin/pauses/{id}`: resumes the pause's scope; its waiting jobs
/// start at once, as room allows.
#[utoipa::path(delete, path = "/admin/pauses/{id}", tag = "operators",
    params(("id" = String, Path, description = "A pause's id")),
    responses((status = 200, description = "Resumed: the pause as it was", body = Object),
        (status = 404, description = "No such pause (`not_found`)", body = Problem, content_type = "application/problem+json"),
        OperatorActionProblems))]
pub async fn resume(
    ActingOperator(operator): ActingOperator,
    path: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let id = uuid::Uuid::parse_str(&path.into_inner()).map_err(|_| AppError::NotFound)?;
    let resumed = state.store.pauses_for_operator(&operator).resume(id).await?.ok_or(AppError::NotFound)?;
    Ok(HttpResponse::Ok().json(resumed))
}
