//! `/admin/tenants/{tenant}/retention`: an operator reads and sets how long
//! one tenant's finished jobs are kept, instead of their type's `retention`
//! or `history.retention` (audited; the pruner reads it on its next pass).

use std::time::Duration;

use actix_web::{HttpResponse, web};
use serde::Deserialize;
use serde_json::json;

use super::quotas::tenant;
use crate::domain::Operator;
use crate::http::AppState;
use crate::http::auth::ActingOperator;
use crate::http::support::problem::{AppError, OperatorActionProblems, OperatorReadProblems, Problem};

/// The longest retention a tenant may be given.
const MAX_RETENTION: Duration = Duration::from_secs(10 * 366 * 24 * 3600);

/// `PUT`'s body.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RetentionRequest {
    /// `"30d"`; `null`: the type's or the history's again.
    retention: Option<String>,
}

fn answer(retention: Option<Duration>) -> HttpResponse {
    HttpResponse::Ok().json(json!({ "retention_seconds": retention.map(|r| r.as_secs()) }))
}

/// `GET /admin/tenants/{tenant}/retention`: the tenant's own retention (`null`: none).
#[utoipa::path(get, path = "/admin/tenants/{tenant}/retention", tag = "operators",
    params(("tenant" = String, Path, description = "A tenant's id")),
    responses((status = 200, description = "`retention_seconds`: how long its finished jobs are kept (`null`: as their type's or the history's)", body = Object),
        OperatorReadProblems))]
pub async fn get(
    operator: Operator,
    path: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let tenant = tenant(path)?;
    Ok(answer(state.store.retentions_for_operator(&operator).get(&tenant).await?))
}

/// `PUT /admin/tenants/{tenant}/retention`: sets (or, with `null`, removes) the tenant's own retention.
#[utoipa::path(put, path = "/admin/tenants/{tenant}/retention", tag = "operators",
    params(("tenant" = String, Path, description = "A tenant's id")),
    request_body(content = Object, description = "`retention`: a duration such as `\"30d\"` (at most ten years), or `null`"),
    responses((status = 200, description = "The tenant's retention as it now holds", body = Object),
        (status = 400, description = "Not such a body, or not such a duration (`bad_request`)", body = Problem, content_type = "application/problem+json"),
        OperatorActionProblems))]
pub async fn set(
    ActingOperator(operator): ActingOperator,
    path: web::Path<String>,
    body: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let tenant = tenant(path)?;
    let asked: RetentionRequest = crate::http::support::body::json(body).await?;
    let retention = asked
        .retention
        .map(|text| {
            humantime::parse_duration(&text).ok().filter(|r| !r.is_zero() && *r <= MAX_RETENTION).ok_or_else(|| {
                AppError::BadRequest(
                    "`retention` is a duration such as \"30d\", more than zero, at most ten years".into(),
                )
            })
        })
        .transpose()?;
    state.store.retentions_for_operator(&operator).set(&tenant, retention).await?;
    Ok(answer(retention))
}
