//! Liveness, readiness and metrics; no token needed. (`/metrics` carries
//! counts, never tenant or user names: job types and states only.)

use actix_web::{HttpResponse, web};

use crate::http::AppState;
use crate::http::support::problem::{AppError, Problem};

/// What the health routes answer.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct Health {
    /// `ok` (healthz) or `ready` (readyz).
    #[schema(value_type = String)]
    status: &'static str,
}

/// The process is up.
#[utoipa::path(get, path = "/healthz", tag = "operations", responses((status = 200, description = "Up", body = Health)))]
pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(Health { status: "ok" })
}

/// The database answers and has every migration this build knows.
#[utoipa::path(get, path = "/readyz", tag = "operations",
    responses((status = 200, description = "Ready", body = Health),
        (status = 503, description = "Database unreachable or not migrated (`unavailable`)", body = Problem, content_type = "application/problem+json")))]
pub async fn readyz(state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    match crate::store::migrations::migrations_current(&state.store).await {
        Ok(true) if !state.listener.is_listening() => {
            Err(AppError::Unavailable("not listening to the database's announcements (reconnecting)".into()))
        }
        Ok(true) => Ok(HttpResponse::Ok().json(Health { status: "ready" })),
        Ok(false) => Err(AppError::Unavailable("migrations are not applied".into())),
        Err(e) => Err(AppError::Unavailable(e.to_string())),
    }
}

/// Prometheus text format: submissions, claims, attempt ends, rescues, emails,
/// open streams, and the queue's depth across all processes (read from the
/// database at each scrape; left out when the database does not answer).
#[utoipa::path(get, path = "/metrics", tag = "operations",
    responses((status = 200, description = "Prometheus text", content_type = "text/plain", body = String)),
)]
pub async fn metrics(state: web::Data<AppState>) -> HttpResponse {
    match state.store.queue().depth().await {
        Ok(depth) => {
            metrics::gauge!("errand_jobs_waiting").set(depth.waiting as f64);
            metrics::gauge!("errand_jobs_running_all_processes").set(depth.running as f64);
            metrics::gauge!("errand_oldest_due_job_wait_seconds").set(depth.oldest_due_seconds);
            metrics::gauge!("errand_paused_scopes", "by" => "operator").set(depth.paused_by_operators as f64);
            metrics::gauge!("errand_paused_scopes", "by" => "breaker").set(depth.paused_by_breakers as f64);
        }
        Err(error) => tracing::warn!(%error, "metrics: could not read the queue's depth"),
    }
    HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4; charset=utf-8")
        .body(crate::telemetry::prometheus().render())
}
