//! `/admin/tenants/{tenant}/quotas`: an operator reads and overrides one
//! tenant's caps on unfinished jobs, without a restart (see `[quotas]` in
//! `config.toml`; the change is audited and holds from the next submission on).

use actix_web::{HttpResponse, web};

use crate::domain::{Operator, TenantId};
use crate::http::AppState;
use crate::http::auth::ActingOperator;
use crate::http::support::problem::{AppError, OperatorActionProblems, OperatorReadProblems, Problem};
use crate::store::Caps;

/// The tenant of the path; one no token could name is a 404, like any unknown resource.
pub(super) fn tenant(path: web::Path<String>) -> Result<TenantId, AppError> {
    TenantId::parse(path.into_inner()).map_err(|_| AppError::NotFound)
}

/// `GET /admin/tenants/{tenant}/quotas`: the tenant's override, the caps that
/// hold, and its unfinished jobs now.
#[utoipa::path(get, path = "/admin/tenants/{tenant}/quotas", tag = "operators",
    params(("tenant" = String, Path, description = "A tenant's id")),
    responses((status = 200, description = "The tenant's quotas: `override`, `caps` (`null`: no cap) and `unfinished`", body = Object),
        OperatorReadProblems))]
pub async fn get(
    operator: Operator,
    path: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let tenant = tenant(path)?;
    Ok(HttpResponse::Ok().json(state.store.quotas_for_operator(&operator).get(&tenant).await?))
}

/// `PUT /admin/tenants/{tenant}/quotas`: sets the tenant's override. A field
/// left out or `null` takes the configured cap; both `null` remove the override.
#[utoipa::path(put, path = "/admin/tenants/{tenant}/quotas", tag = "operators",
    params(("tenant" = String, Path, description = "A tenant's id")),
    request_body(content = Object, description = "`max_unfinished_per_user` and `max_unfinished_per_tenant`: whole numbers (0 refuses every new job), or `null` for the configured cap"),
    responses((status = 200, description = "The tenant's quotas as they now hold", body = Object),
        (status = 400, description = "A body that is not such an object (`bad_request`)", body = Problem, content_type = "application/problem+json"),
        OperatorActionProblems))]
pub async fn set(
    ActingOperator(operator): ActingOperator,
    path: web::Path<String>,
    body: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let tenant = tenant(path)?;
    let caps: Caps = crate::http::support::body::json(body).await?;
    let limit = i32::MAX as u32;
    for cap in [caps.max_unfinished_per_user, caps.max_unfinished_per_tenant].into_iter().flatten() {
        if cap > limit {
            return Err(AppError::BadRequest(format!("a cap is at most {limit}")));
        }
    }
    Ok(HttpResponse::Ok().json(state.store.quotas_for_operator(&operator).set(&tenant, caps).await?))
}
