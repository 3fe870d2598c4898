//! `/admin/tenants/{tenant}/retention`: an operator reads and sets how long
//! one tenant's finished jobs and result files are kept, for all its job
//! types or one (audited; see `store::operator::retention` for how the
//! levels combine).

use std::time::Duration;

use actix_web::{HttpResponse, web};
use serde::Deserialize;

use super::quotas::tenant;
use crate::domain::Operator;
use crate::http::AppState;
use crate::http::auth::ActingOperator;
use crate::http::support::problem::{AppError, OperatorActionProblems, OperatorReadProblems, Problem};
use crate::store::Retention;

/// The longest retention a tenant may be given.
const MAX_RETENTION: Duration = Duration::from_secs(10 * 366 * 24 * 3600);

/// `PUT`'s body: each field absent or `null` is not set at this level.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RetentionRequest {
    /// How long finished jobs are kept, e.g. `"30d"`.
    #[serde(default)]
    retention: Option<String>,
    /// How long result files are kept at most, e.g. `"1d"`.
    #[serde(default)]
    result_retention: Option<String>,
}

/// `PUT`'s query: which of the tenant's types, if one.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scope {
    #[serde(rename = "type")]
    job_type: Option<String>,
}

/// `text` as a retention, or a 400 naming `field`.
fn duration(field: &str, text: Option<String>) -> Result<Option<Duration>, AppError> {
    text.map(|text| {
        humantime::parse_duration(&text).ok().filter(|r| !r.is_zero() && *r <= MAX_RETENTION).ok_or_else(|| {
            AppError::BadRequest(format!("`{field}` is a duration such as \"30d\", more than zero, at most ten years"))
        })
    })
    .transpose()
}

/// `GET /admin/tenants/{tenant}/retention`: the tenant's own retentions.
#[utoipa::path(get, path = "/admin/tenants/{tenant}/retention", tag = "operators",
    params(("tenant" = String, Path, description = "A tenant's id")),
    responses((status = 200, description = "For all its types, `retention_seconds` (how long its finished jobs are kept) and `result_retention_seconds` (its result files), each `null` where not set; and `types`: the same per job type that has its own", body = Object),
        OperatorReadProblems))]
pub async fn get(
    operator: Operator,
    path: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let tenant = tenant(path)?;
    Ok(HttpResponse::Ok().json(state.store.retentions_for_operator(&operator).get(&tenant).await?))
}

/// `PUT /admin/tenants/{tenant}/retention[?type=]`: sets the tenant's own
/// retentions, for all its types or (`type`) one; `null` (or absent) at
/// both: the type's and the configured ones hold again.
#[utoipa::path(put, path = "/admin/tenants/{tenant}/retention", tag = "operators",
    params(("tenant" = String, Path, description = "A tenant's id"),
        ("type" = Option<String>, Query, description = "One of the tenant's job types; absent: all of them")),
    request_body(content = Object, description = "`retention` (finished jobs) and `result_retention` (result files): durations such as `\"30d\"` (at most ten years), or `null`. A result retention shorter than a file's expiry brings it forward"),
    responses((status = 200, description = "The level's retentions as they now hold: `retention_seconds`, `result_retention_seconds`", body = Object),
        (status = 400, description = "Not such a body, not such a duration, or no such job type (`bad_request`)", body = Problem, content_type = "application/problem+json"),
        OperatorActionProblems))]
pub async fn set(
    ActingOperator(operator): ActingOperator,
    path: web::Path<String>,
    scope: web::Query<Scope>,
    body: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let tenant = tenant(path)?;
    let job_type = scope.into_inner().job_type;
    if let Some(name) = &job_type
        && state.job_types.get(name).is_none()
    {
        return Err(AppError::BadRequest(format!("`type`: no job type is named {name:?}")));
    }
    let asked: RetentionRequest = crate::http::support::body::json(body).await?;
    let to = Retention {
        history: duration("retention", asked.retention)?,
        results: duration("result_retention", asked.result_retention)?,
    };
    state.store.retentions_for_operator(&operator).set(&tenant, job_type.as_deref(), to).await?;
    Ok(HttpResponse::Ok().json(to))
}
