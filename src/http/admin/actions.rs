//! `GET /admin/actions`: the operators' audit trail, filterable, newest
//! first: who did what, when, to which jobs. Any operator may read it, a
//! read-only one included.

use actix_web::{HttpResponse, web};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::domain::Operator;
use crate::http::AppState;
use crate::http::support::pagination;
use crate::http::support::problem::{AppError, OperatorReadProblems, Problem};
use crate::store::{ActionQuery, OperatorAction};

/// The actions an operator (or, for erasures and schedules, a tenant admin)
/// can take, as recorded (`operator_actions.action`).
const ACTIONS: [&str; 15] = [
    "retry",
    "cancel",
    "bulk_retry",
    "bulk_cancel",
    "set_quotas",
    "pause",
    "resume",
    "hold",
    "release",
    "erase",
    "schedule_pause",
    "schedule_delete",
    "set_retention",
    "notification_defaults",
    "set_branding",
];

#[derive(Deserialize)]
pub struct ActionListQuery {
    operator: Option<String>,
    action: Option<String>,
    job: Option<uuid::Uuid>,
    since: Option<DateTime<Utc>>,
    until: Option<DateTime<Utc>>,
    limit: Option<u32>,
    cursor: Option<String>,
}

/// A page of the audit trail.
#[derive(Serialize, utoipa::ToSchema)]
pub struct ActionList {
    /// `{id, at, operator, action, job_id, filter, affected}` each.
    #[schema(value_type = Vec<Object>)]
    actions: Vec<OperatorAction>,
    /// Pass as `cursor` for the next page; absent on the last.
    next_cursor: Option<String>,
}

/// `GET /admin/actions`: operators' actions, newest first.
#[utoipa::path(get, path = "/admin/actions", tag = "operators",
    params(("operator" = Option<String>, Query, description = "Only this operator's (the token's `sub`)"),
        ("action" = Option<String>, Query, pattern = "^(retry|cancel|bulk_retry|bulk_cancel|set_quotas|pause|resume|hold|release|erase|schedule_pause|schedule_delete|set_retention|notification_defaults|set_branding)$", description = "retry, cancel, bulk_retry, bulk_cancel, set_quotas, pause, resume, hold, release, erase, schedule_pause, schedule_delete, set_retention, notification_defaults or set_branding"),
        ("job" = Option<String>, Query, format = Uuid, description = "Only actions on this job"),
        ("since" = Option<String>, Query, format = DateTime, description = "Taken at or after (RFC 3339)"),
        ("until" = Option<String>, Query, format = DateTime, description = "Taken before (RFC 3339)"),
        ("limit" = Option<u32>, Query, minimum = 1, maximum = 100, description = "1 to 100, default 20"),
        ("cursor" = Option<String>, Query, pattern = "^[A-Za-z0-9_-]{21}[AQgw]$", description = "`next_cursor` of the previous page")),
    responses((status = 200, description = "A page of actions", body = ActionList),
        (status = 400, description = "A bad filter, limit or cursor (`bad_request`)", body = Problem, content_type = "application/problem+json"),
        OperatorReadProblems))]
pub async fn list(
    operator: Operator,
    query: web::Query<ActionListQuery>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let q = query.into_inner();
    if let Some(action) = q.action.as_deref().filter(|a| !ACTIONS.contains(a)) {
        return Err(AppError::BadRequest(format!("action must be one of {}, not {action:?}", ACTIONS.join(", "))));
    }
    let query = ActionQuery {
        operator: pagination::text_filter("operator", q.operator)?,
        action: q.action,
        job: q.job,
        after: q.since,
        before_time: q.until,
        before: q.cursor.as_deref().map(pagination::decode_cursor).transpose()?,
        limit: pagination::limit(q.limit)?,
    };
    let page = state.store.audit_for_operator(&operator).list(&query).await?;
    Ok(HttpResponse::Ok()
        .json(ActionList { actions: page.actions, next_cursor: page.next_before.map(pagination::encode_cursor) }))
}
