//! A tenant's schedules as its admins (`/tenant/schedules`, their own
//! tenant) and operators (`/admin/schedules`, any tenant) manage them: list
//! a user's, pause one, delete one (`store::ManagedSchedules`). A schedule
//! outlives its owner otherwise: only their own token could stop it.

use actix_web::{HttpResponse, web};
use serde::{Deserialize, Serialize};

use super::wire::ScheduleView;
use crate::domain::{Operator, ScheduleId, TenantId, UserId};
use crate::http::auth::{ActingOperator, TenantAdmin};
use crate::http::support::problem::{
    AppError, OperatorActionProblems, OperatorReadProblems, Problem, UserRouteProblems,
};
use crate::http::{AppState, path_id};
use crate::store::{ManagedSchedules, OwnedSchedule};

/// Which schedules a listing shows.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ManagedQuery {
    /// An operator's choice of tenant (a tenant admin's is their own).
    tenant: Option<String>,
    user: Option<String>,
}

/// A schedule and whose it is.
#[derive(Serialize, utoipa::ToSchema)]
pub struct ManagedScheduleView {
    tenant: String,
    user: String,
    #[serde(flatten)]
    schedule: ScheduleView,
}

impl ManagedScheduleView {
    fn of(owned: OwnedSchedule) -> Self {
        Self {
            tenant: owned.tenant.to_string(),
            user: owned.user.to_string(),
            schedule: ScheduleView::of(owned.schedule),
        }
    }
}

/// `GET /admin/schedules?tenant=&user=`: any tenant's schedules, newest first (at most 500).
#[utoipa::path(get, path = "/admin/schedules", tag = "operators",
    params(("tenant" = Option<String>, Query, description = "Only this tenant's"), ("user" = Option<String>, Query, description = "Only this user's")),
    responses((status = 200, description = "`schedules`: each a schedule with its `tenant` and `user`", body = Object),
        (status = 400, description = "A tenant or user that is not an id (`bad_request`)", body = Problem, content_type = "application/problem+json"),
        OperatorReadProblems))]
pub async fn list_for_operator(
    operator: Operator,
    query: web::Query<ManagedQuery>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    list(state.store.schedules_managed_by_operator(&operator), query.into_inner()).await
}

/// `GET /tenant/schedules?user=`: the admin's tenant's schedules, newest first (at most 500).
#[utoipa::path(get, path = "/tenant/schedules", tag = "tenant admins",
    params(("user" = Option<String>, Query, description = "Only this user's")),
    responses((status = 200, description = "`schedules`: each a schedule with its `tenant` and `user`", body = Object),
        (status = 403, description = "Not a tenant admin's token (`forbidden`)", body = Problem, content_type = "application/problem+json"),
        UserRouteProblems))]
pub async fn list_for_tenant_admin(
    TenantAdmin(admin): TenantAdmin,
    query: web::Query<ManagedQuery>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    list(state.store.schedules_managed_by_tenant_admin(&admin), query.into_inner()).await
}

/// `POST /admin/schedules/{id}/pause`: pauses any tenant's schedule (audited); its owner may resume it.
#[utoipa::path(post, path = "/admin/schedules/{id}/pause", tag = "operators",
    params(("id" = String, Path, format = Uuid, description = "The schedule's id")),
    responses((status = 200, description = "The schedule, paused", body = ManagedScheduleView),
        (status = 404, description = "No such schedule (`not_found`)", body = Problem, content_type = "application/problem+json"),
        OperatorActionProblems))]
pub async fn pause_for_operator(
    ActingOperator(operator): ActingOperator,
    path: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    pause(state.store.schedules_managed_by_operator(&operator), &path).await
}

/// `POST /tenant/schedules/{id}/pause`: pauses a schedule of the admin's tenant (audited).
#[utoipa::path(post, path = "/tenant/schedules/{id}/pause", tag = "tenant admins",
    params(("id" = String, Path, format = Uuid, description = "The schedule's id")),
    responses((status = 200, description = "The schedule, paused", body = ManagedScheduleView),
        (status = 403, description = "Not a tenant admin's token (`forbidden`)", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such schedule in the admin's tenant (`not_found`)", body = Problem, content_type = "application/problem+json"),
        UserRouteProblems))]
pub async fn pause_for_tenant_admin(
    TenantAdmin(admin): TenantAdmin,
    path: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    pause(state.store.schedules_managed_by_tenant_admin(&admin), &path).await
}

/// `DELETE /admin/schedules/{id}`: deletes any tenant's schedule (audited; its jobs stay).
#[utoipa::path(delete, path = "/admin/schedules/{id}", tag = "operators",
    params(("id" = String, Path, format = Uuid, description = "The schedule's id")),
    responses((status = 204, description = "Deleted"),
        (status = 404, description = "No such schedule (`not_found`)", body = Problem, content_type = "application/problem+json"),
        OperatorActionProblems))]
pub async fn delete_for_operator(
    ActingOperator(operator): ActingOperator,
    path: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    delete(state.store.schedules_managed_by_operator(&operator), &path).await
}

/// `DELETE /tenant/schedules/{id}`: deletes a schedule of the admin's tenant (audited; its jobs stay).
#[utoipa::path(delete, path = "/tenant/schedules/{id}", tag = "tenant admins",
    params(("id" = String, Path, format = Uuid, description = "The schedule's id")),
    responses((status = 204, description = "Deleted"),
        (status = 403, description = "Not a tenant admin's token (`forbidden`)", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such schedule in the admin's tenant (`not_found`)", body = Problem, content_type = "application/problem+json"),
        UserRouteProblems))]
pub async fn delete_for_tenant_admin(
    TenantAdmin(admin): TenantAdmin,
    path: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    delete(state.store.schedules_managed_by_tenant_admin(&admin), &path).await
}

async fn list(managed: ManagedSchedules<'_>, query: ManagedQuery) -> Result<HttpResponse, AppError> {
    let tenant = query.tenant.map(TenantId::parse).transpose().map_err(|_| bad("tenant"))?;
    let user = query.user.map(UserId::parse).transpose().map_err(|_| bad("user"))?;
    let schedules = managed.list(tenant.as_ref(), user.as_ref()).await?;
    let schedules: Vec<ManagedScheduleView> = schedules.into_iter().map(ManagedScheduleView::of).collect();
    Ok(HttpResponse::Ok().json(serde_json::json!({ "schedules": schedules })))
}

async fn pause(managed: ManagedSchedules<'_>, path: &str) -> Result<HttpResponse, AppError> {
    let paused = managed.pause(ScheduleId(path_id(path)?)).await?.ok_or(AppError::NotFound)?;
    Ok(HttpResponse::Ok().json(ManagedScheduleView::of(paused)))
}

async fn delete(managed: ManagedSchedules<'_>, path: &str) -> Result<HttpResponse, AppError> {
    if managed.delete(ScheduleId(path_id(path)?)).await? {
        Ok(HttpResponse::NoContent().finish())
    } else {
        Err(AppError::NotFound)
    }
}

fn bad(field: &str) -> AppError {
    AppError::BadRequest(format!("`{field}` is not an id"))
}
