//! `/notifications/…/read`, `…/seen`, `…/archive`: the caller's marks on
//! their feed. Each changes the counts every open stream of theirs shows.

use actix_web::{HttpResponse, web};
use serde::Serialize;

use crate::domain::{Caller, NotificationId};
use crate::http::AppState;
use crate::http::support::problem::{AppError, Problem, UserRouteProblems};

/// How many notifications `read-all` marked.
#[derive(Serialize, utoipa::ToSchema)]
pub struct MarkedRead {
    marked_read: u64,
}

/// How many notifications `seen` marked.
#[derive(Serialize, utoipa::ToSchema)]
pub struct MarkedSeen {
    marked_seen: u64,
}

/// How many notifications `archive-read` archived.
#[derive(Serialize, utoipa::ToSchema)]
pub struct Archived {
    archived: u64,
}

/// `POST /notifications/{id}/read`: 204, or 404 whether missing or someone else's.
#[utoipa::path(post, path = "/notifications/{id}/read", tag = "notifications",
    params(("id" = String, Path, format = Uuid, description = "The notification's id")),
    responses((status = 204, description = "Marked read"),
        UserRouteProblems,
        (status = 404, description = "No such notification of the caller (`not_found`)", body = Problem, content_type = "application/problem+json")))]
pub async fn mark_read(
    caller: Caller,
    path: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let id = NotificationId(crate::http::path_id(&path)?);
    no_content_if_found(state.store.notifications_for(&caller).mark_read(id).await?)
}

/// `POST /notifications/read-all`: marks every unread notification of the caller read.
#[utoipa::path(post, path = "/notifications/read-all", tag = "notifications",
    responses((status = 200, description = "How many were marked", body = MarkedRead),
        UserRouteProblems))]
pub async fn mark_all_read(caller: Caller, state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    let marked_read = state.store.notifications_for(&caller).mark_all_read().await?;
    Ok(HttpResponse::Ok().json(MarkedRead { marked_read }))
}

/// `POST /notifications/seen`: the caller opened the bell: every unseen
/// notification is seen (the badge counts none), read or not.
#[utoipa::path(post, path = "/notifications/seen", tag = "notifications",
    responses((status = 200, description = "How many were marked", body = MarkedSeen),
        UserRouteProblems))]
pub async fn mark_all_seen(caller: Caller, state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    let marked_seen = state.store.notifications_for(&caller).mark_all_seen().await?;
    Ok(HttpResponse::Ok().json(MarkedSeen { marked_seen }))
}

/// `POST /notifications/{id}/archive`: out of the feed and its counts (listed
/// with `status=archived`); 204 again for one already archived, 404 whether
/// missing or someone else's.
#[utoipa::path(post, path = "/notifications/{id}/archive", tag = "notifications",
    params(("id" = String, Path, format = Uuid, description = "The notification's id")),
    responses((status = 204, description = "Archived"),
        UserRouteProblems,
        (status = 404, description = "No such notification of the caller (`not_found`)", body = Problem, content_type = "application/problem+json")))]
pub async fn archive(
    caller: Caller,
    path: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let id = NotificationId(crate::http::path_id(&path)?);
    no_content_if_found(state.store.notifications_for(&caller).archive(id).await?)
}

/// `POST /notifications/archive-read`: archives every read notification of the caller.
#[utoipa::path(post, path = "/notifications/archive-read", tag = "notifications",
    responses((status = 200, description = "How many were archived", body = Archived),
        UserRouteProblems))]
pub async fn archive_read(caller: Caller, state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    let archived = state.store.notifications_for(&caller).archive_read().await?;
    Ok(HttpResponse::Ok().json(Archived { archived }))
}

/// 204 for a mark of the caller's notification, 404 when they have none such.
fn no_content_if_found(found: bool) -> Result<HttpResponse, AppError> {
    if found { Ok(HttpResponse::NoContent().finish()) } else { Err(AppError::NotFound) }
}
