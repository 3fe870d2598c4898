//! Liveness, readiness and metrics; no token needed. (`/metrics` carries
//! counts, never tenant or user names: job types and states only.)

use actix_web::{HttpResponse, web};
use serde_json::json;

use super::AppState;
use crate::error::AppError;

/// The process is up.
pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(json!({ "status": "ok" }))
}

/// The database answers and has every migration this build knows.
pub async fn readyz(state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    match crate::db::migrations_current(&state.store).await {
        Ok(true) => Ok(HttpResponse::Ok().json(json!({ "status": "ready" }))),
        Ok(false) => Err(AppError::Unavailable("migrations are not applied".into())),
        Err(e) => Err(AppError::Unavailable(e.to_string())),
    }
}

/// Prometheus text format: submissions, claims, attempt ends, rescues, emails, open streams.
pub async fn metrics() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4; charset=utf-8")
        .body(crate::telemetry::prometheus().render())
}
