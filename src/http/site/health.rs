//! Liveness, readiness and metrics; no token needed. (`/metrics` carries
//! counts, never tenant or user names: job types and states only.)

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};

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

/// Submissions, claims, attempt ends, rescues, emails, open streams, and the
/// queue's depth across all processes (read from the database at each
/// scrape; left out when the database does not answer). OpenMetrics (with
/// exemplars naming traces) where `Accept` asks for it, as Prometheus does;
/// else the Prometheus text format.
#[utoipa::path(get, path = "/metrics", tag = "operations",
    responses((status = 200, description = "Prometheus text, or OpenMetrics",
        content((String = "text/plain"), (String = "application/openmetrics-text")))),
)]
pub async fn metrics(state: web::Data<AppState>, request: HttpRequest) -> HttpResponse {
    match state.store.queue().depth().await {
        Ok(depth) => {
            let metrics = crate::telemetry::metrics();
            metrics.jobs_waiting.set(depth.waiting);
            metrics.jobs_running_all_processes.set(depth.running);
            metrics.oldest_due_job_wait_seconds.set(depth.oldest_due_seconds);
            metrics.database_oldest_snapshot_seconds.set(depth.oldest_snapshot_seconds);
            metrics.paused_scopes.set("operator", depth.paused_by_operators);
            metrics.paused_scopes.set("breaker", depth.paused_by_breakers);
        }
        Err(error) => tracing::warn!(%error, "metrics: could not read the queue's depth"),
    }
    let accept = request.headers().get(header::ACCEPT).and_then(|value| value.to_str().ok());
    let (content_type, body) = crate::telemetry::metrics::render(accept);
    HttpResponse::Ok().content_type(content_type).body(body)
}
