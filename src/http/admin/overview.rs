//! `GET /admin/overview`: how the queue stands, for an operator's page
//! during an incident, as fast at millions of finished jobs as at none
//! (see `store/operator_overview.rs`). A page polls it (every few seconds):
//! one cheap statement, where a stream would hold a connection per viewer.

use actix_web::{HttpResponse, web};
use serde::Serialize;

use crate::domain::Operator;
use crate::http::AppState;
use crate::http::support::problem::{AppError, OperatorReadProblems};
use crate::store::Overview;

/// The overview, and this process's own view of the database.
#[derive(Serialize, utoipa::ToSchema)]
pub struct OverviewView {
    /// `unfinished` (by queue state), `oldest_due_seconds`, `finished`
    /// (`completed`, `failed`, `cancelled`, each counted up to
    /// `finished_count_cap` + 1: more reads as "cap+"),
    /// `recent_failures_by_type` (the newest failed jobs, up to the cap, by
    /// type: `{job_type, failed}`), `emails_waiting`,
    /// `webhooks_waiting`, `largest_backlogs` (`{tenant, unfinished}`, ten at
    /// most), `processes` (errand processes connected) and `process_list`
    /// (`{name, address, since, connections}`), `running` and
    /// `running_by_owner` (`{owner, running, oldest_started_at}`),
    /// `writable`, `database` (`address:port/name` this process reached),
    /// `totals` (cumulative: jobs `claimed` and `attempts_ended` as every
    /// process last published them, every few seconds; `created`, `ended`,
    /// `attempts_failed` as PostgreSQL's statistics count them; read `at`:
    /// sample twice for rates).
    #[serde(flatten)]
    #[schema(value_type = Object)]
    overview: Overview,
    /// Whether this process hears the database's announcements (LISTEN).
    listening: bool,
}

/// `GET /admin/overview`: counts, backlogs, processes and the database.
#[utoipa::path(get, path = "/admin/overview", tag = "operators",
    responses((status = 200, description = "How the queue stands", body = OverviewView),
        OperatorReadProblems))]
pub async fn read(operator: Operator, state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    let overview = state.store.overview_for_operator(&operator).read().await?;
    Ok(HttpResponse::Ok().json(OverviewView { overview, listening: state.listener.is_listening() }))
}
