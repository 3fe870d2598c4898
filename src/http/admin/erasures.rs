//! Erasure of a person's data (GDPR's right to be forgotten), or of a
//! tenant's: `POST /admin/erasures` for operators who may act (any tenant,
//! a user of it or all of it), `POST /tenant/erasures` for tenant admins (a
//! user of their own tenant). A dry run answers what errand keeps; a real
//! run erases it in steps (`store::Erasure`), the result files first from
//! storage, and answers what it found and what is left (nothing, unless the
//! person recorded more meanwhile: run it again). A second run finds nothing.

use actix_web::{HttpResponse, web};
use serde::{Deserialize, Serialize};

use crate::domain::{TenantId, UserId};
use crate::http::AppState;
use crate::http::auth::{ActingOperator, TenantAdmin};
use crate::http::support::problem::{AppError, OperatorActionProblems, Problem, UserRouteProblems};
use crate::storage::ObjectKey;
use crate::store::{Erasure, ErasureScope, Inventory};

/// `POST /admin/erasures`' body.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OperatorErasure {
    tenant: String,
    /// Left out: the whole tenant.
    user: Option<String>,
    #[serde(default)]
    dry_run: bool,
}

/// `POST /tenant/erasures`' body.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TenantErasure {
    user: String,
    #[serde(default)]
    dry_run: bool,
}

/// What an erasure found (a dry run: what it would erase), and what is left after it.
#[derive(Serialize, utoipa::ToSchema)]
pub struct ErasureReport {
    dry_run: bool,
    found: Inventory,
    /// After a real run: what is still there (nothing, unless recorded meanwhile).
    #[serde(skip_serializing_if = "Option::is_none")]
    left: Option<Inventory>,
}

/// `POST /admin/erasures`: erases (or counts) what errand keeps of a
/// tenant's user, or of the whole tenant.
#[utoipa::path(post, path = "/admin/erasures", tag = "operators",
    request_body(content = Object, description = "`tenant`; `user` (left out: every user of the tenant, and the tenant's own endpoints, quotas and pauses); `dry_run` (default false: erase)"),
    responses((status = 200, description = "What was found (and, after a real run, what is left)", body = ErasureReport),
        (status = 400, description = "A body that is not such an object (`bad_request`)", body = Problem, content_type = "application/problem+json"),
        OperatorActionProblems))]
pub async fn erase_for_operator(
    ActingOperator(operator): ActingOperator,
    body: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let asked: OperatorErasure = crate::http::support::body::json(body).await?;
    let tenant =
        TenantId::parse(asked.tenant).map_err(|_| AppError::BadRequest("`tenant` is not a tenant's id".into()))?;
    let user = asked.user.map(parse_user).transpose()?;
    let erasure = state.store.erasure_by_operator(&operator, ErasureScope { tenant, user });
    run(&erasure, asked.dry_run, &state).await
}

/// `POST /tenant/erasures`: a tenant admin erases (or counts) what errand
/// keeps of one user of their own tenant.
#[utoipa::path(post, path = "/tenant/erasures", tag = "tenant admins",
    request_body(content = Object, description = "`user` (of the admin's own tenant); `dry_run` (default false: erase)"),
    responses((status = 200, description = "What was found (and, after a real run, what is left)", body = ErasureReport),
        (status = 400, description = "A body that is not such an object (`bad_request`)", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "Not a tenant admin's token (`forbidden`)", body = Problem, content_type = "application/problem+json"),
        UserRouteProblems))]
pub async fn erase_for_tenant_admin(
    TenantAdmin(admin): TenantAdmin,
    body: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let asked: TenantErasure = crate::http::support::body::json(body).await?;
    let erasure = state.store.erasure_by_tenant_admin(&admin, parse_user(asked.user)?);
    run(&erasure, asked.dry_run, &state).await
}

fn parse_user(user: String) -> Result<UserId, AppError> {
    UserId::parse(user).map_err(|_| AppError::BadRequest("`user` is not a user's id".into()))
}

/// Counts, or erases: the queue rows, the files, then the rows.
async fn run(erasure: &Erasure<'_>, dry_run: bool, state: &AppState) -> Result<HttpResponse, AppError> {
    let found = erasure.inventory().await?;
    if dry_run {
        return Ok(HttpResponse::Ok().json(ErasureReport { dry_run, found, left: None }));
    }
    erasure.dequeue().await?;
    loop {
        let files = erasure.live_files().await?;
        if files.is_empty() {
            break;
        }
        for key in files.iter().filter_map(|(_, key)| key.clone()) {
            // Deleted again by a second run if this one stops here; a file already gone is no error.
            state
                .storage
                .delete(&ObjectKey::from_stored(key))
                .await
                .map_err(|e| AppError::Unavailable(e.to_string()))?;
        }
        erasure.files_deleted(&files.iter().map(|(job, _)| *job).collect::<Vec<_>>()).await?;
    }
    erasure.delete_rows(&found).await?;
    let left = Some(erasure.inventory().await?);
    Ok(HttpResponse::Ok().json(ErasureReport { dry_run, found, left }))
}
