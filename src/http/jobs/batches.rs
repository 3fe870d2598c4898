//! `/batches`: a bulk action as one request, one job per item, and one
//! notification when the last of them ends. Every read goes through the
//! caller's scope, as for jobs.

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};
use futures_util::StreamExt;
use serde::Serialize;
use serde_json::Value;
use tracing::Instrument;

use crate::actors::SubmitBatch;
use crate::domain::{BatchId, Caller};
use crate::http::AppState;
use crate::http::support::problem::{AppError, Problem, Unauthenticated, Unavailable, UserRouteProblems};
use crate::http::support::routing::Routes;
use crate::http::support::{body, pagination};
use crate::store::{Batch, BatchSubmission, UnfinishedChild};

/// The largest batch body accepted, whatever `[batches] max_items` allows:
/// it is read whole (one JSON document, recorded in one statement). Each
/// item is held to a job's params cap as well, while the body streams.
const MAX_BATCH_BODY: usize = 32 * 1024 * 1024;

/// A batch as the API shows it.
#[derive(Serialize, utoipa::ToSchema)]
pub struct BatchView {
    #[schema(value_type = String, format = Uuid)]
    id: BatchId,
    #[serde(rename = "type")]
    job_type: String,
    total: u32,
    completed: u32,
    failed: u32,
    cancelled: u32,
    /// `processing` until every child ended; then `completed`, or
    /// `completed_with_failures` when some failed or were cancelled.
    #[schema(value_type = String)]
    status: &'static str,
    /// Where the children that did not complete are listed (CSV), once there are any.
    report_url: Option<String>,
    created_at: String,
    finished_at: Option<String>,
}

impl BatchView {
    fn of(batch: Batch) -> Self {
        let c = batch.counts;
        Self {
            id: batch.id,
            job_type: batch.job_type,
            total: c.total,
            completed: c.completed,
            failed: c.failed,
            cancelled: c.cancelled,
            status: c.status().as_str(),
            report_url: (c.failed + c.cancelled > 0).then(|| format!("/batches/{}/report", batch.id)),
            created_at: pagination::rfc3339(batch.created_at),
            finished_at: batch.finished_at.map(pagination::rfc3339),
        }
    }
}

/// `POST /batches/{type}`: record a batch and its children (or find the
/// batch the key names) and answer at once.
#[utoipa::path(post, path = "/batches/{job_type}", tag = "batches",
    params(("job_type" = String, Path, description = "A configured job type: each item becomes a job of it"),
        ("Idempotency-Key" = String, Header, pattern = "^[!-~]{1,255}$", description = "One per intent, as for jobs")),
    request_body(content = Object, description = "`{\"items\": [params, …]}`: each item is a job's params, checked against the type's schema"),
    responses((status = 202, description = "A new batch, processing", body = BatchView),
        (status = 200, description = "The key's batch, replayed (`Idempotent-Replayed: true`)", body = BatchView),
        (status = 400, description = "Missing or malformed key, or a body that is not `{\"items\": [...]}` (`bad_request`, `invalid_idempotency_key`)", body = Problem, content_type = "application/problem+json"),
        Unauthenticated,
        (status = 404, description = "Unknown job type (`unknown_job_type`)", body = Problem, content_type = "application/problem+json"),
        (status = 413, description = "Body over `max_items` × 64 KiB, or over 32 MiB (`payload_too_large`)", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "No items, or more than `[batches] max_items` (`invalid_batch`, refused as the body streams), or a type with an admission key (`invalid_batch`: its jobs are submitted one at a time); an item refused (`invalid_params`, `field` e.g. `/items/3/to`; an item over 64 KiB is refused as the body streams); or the key reused for another request (`idempotency_key_reused`)", body = Problem, content_type = "application/problem+json"),
        (status = 429, description = "The children would take the caller over a quota of unfinished jobs (`quota_exceeded`; nothing was recorded), or past a rate limit (`rate_limited`)", body = Problem, content_type = "application/problem+json",
        headers(("Retry-After" = u64, description = "Seconds to wait before trying again (with the same key)"))),
        Unavailable))]
pub async fn submit(
    req: HttpRequest,
    caller: Caller,
    path: web::Path<String>,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let key = crate::http::jobs::idempotency_key(&req)?;
    let max = state.settings.max_batch_items;
    let limits = body::ItemLimits {
        max_items: max,
        max_item_bytes: body::MAX_BODY,
        // Each item and its separator, and room for the wrapper and whitespace.
        max_body: max.saturating_mul(body::MAX_BODY + 1).saturating_add(4096).min(MAX_BATCH_BODY),
    };
    let mut body = body::json_items(payload, limits).await?;
    let Some(Value::Array(items)) = body.remove("items") else {
        return Err(AppError::BadRequest("the body must be {\"items\": [params, ...]}".into()));
    };
    if let Some(field) = body.keys().next() {
        return Err(AppError::BadRequest(format!("unknown field {field:?}: the body is {{\"items\": [...]}}")));
    }
    if items.is_empty() || items.len() > max {
        return Err(AppError::InvalidBatch(format!("a batch has 1 to {max} items, not {}", items.len())));
    }
    if let Some(i) = items.iter().position(|item| !item.is_object()) {
        let reason = "an item must be a JSON object (a job's params)".to_owned();
        return Err(AppError::InvalidParams(crate::jobs::ParamsError { field: format!("/items/{i}"), reason }));
    }
    let job_type = path.into_inner();
    let record = super::record_span(&job_type);
    let trace = crate::http::support::request_id::trace_of(&req, &record);
    let msg = SubmitBatch { caller: caller.clone(), key, job_type, items, trace };
    match state.ask(&caller, msg).instrument(record).await?? {
        BatchSubmission::Created(batch) => Ok(HttpResponse::Accepted()
            .insert_header((header::LOCATION, format!("/batches/{}", batch.id)))
            .json(BatchView::of(batch))),
        BatchSubmission::Replayed(batch) => Ok(HttpResponse::Ok()
            .insert_header(("Idempotent-Replayed", "true"))
            .insert_header((header::LOCATION, format!("/batches/{}", batch.id)))
            .json(BatchView::of(batch))),
        BatchSubmission::KeyReused => Err(AppError::IdempotencyKeyReused),
        BatchSubmission::OverQuota(exceeded) => {
            Err(AppError::QuotaExceeded { exceeded, retry_after: state.store.quotas().retry_after })
        }
    }
}

/// `GET /batches/{id}`: the caller's batch and its counts, or 404.
#[utoipa::path(get, path = "/batches/{id}", tag = "batches",
    params(("id" = String, Path, format = Uuid, description = "The batch's id")),
    responses((status = 200, description = "The caller's batch", body = BatchView),
        UserRouteProblems,
        (status = 404, description = "No such batch of the caller's (`not_found`)", body = Problem, content_type = "application/problem+json")))]
pub async fn get(
    caller: Caller,
    path: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let id = BatchId(crate::http::read_by_id(&path, &state)?);
    let batch = state.store.batches_for(&caller).get(id).await?.ok_or(AppError::NotFound)?;
    Ok(HttpResponse::Ok().json(BatchView::of(batch)))
}

/// `POST /batches/{id}/cancel`: cancels the batch's children that have not
/// started (running ones finish); asking again changes nothing more. The
/// batch's one notification comes when its last child ended, as ever.
#[utoipa::path(post, path = "/batches/{id}/cancel", tag = "batches",
    params(("id" = String, Path, format = Uuid, description = "The batch's id")),
    responses((status = 200, description = "The batch after the cancel", body = BatchView),
        UserRouteProblems,
        (status = 404, description = "No such batch of the caller's (`not_found`)", body = Problem, content_type = "application/problem+json")))]
pub async fn cancel(
    caller: Caller,
    path: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let id = batch_id(&path)?;
    let (batch, cancelled) = state.store.batches_for(&caller).cancel(id).await?.ok_or(AppError::NotFound)?;
    tracing::info!(batch = %id, cancelled, "batch cancelled");
    Ok(HttpResponse::Ok().json(BatchView::of(batch)))
}

/// `GET /batches/{id}/report`: the batch's children that failed or were
/// cancelled, as CSV (`job_id,status,error,params`), streamed.
#[utoipa::path(get, path = "/batches/{id}/report", tag = "batches",
    params(("id" = String, Path, format = Uuid, description = "The batch's id")),
    responses((status = 200, description = "The report (a header line only while no child failed or was cancelled)", content_type = "text/csv", body = String),
        UserRouteProblems,
        (status = 404, description = "No such batch of the caller's (`not_found`)", body = Problem, content_type = "application/problem+json")))]
pub async fn report(
    caller: Caller,
    path: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let id = batch_id(&path)?;
    let batches = state.store.batches_for(&caller);
    batches.get(id).await?.ok_or(AppError::NotFound)?;
    let rows = batches.not_completed(id);
    let header_line =
        futures_util::stream::once(async { Ok(web::Bytes::from_static(b"job_id,status,error,params\r\n")) });
    let lines = rows.map(|child| match child {
        Ok(child) => Ok(web::Bytes::from(csv_line(&child))),
        Err(error) => {
            tracing::warn!(%error, "a batch report stopped early");
            Err(actix_web::error::ErrorInternalServerError("the report could not be read to its end"))
        }
    });
    Ok(HttpResponse::Ok()
        .content_type("text/csv; charset=utf-8")
        .insert_header((header::CONTENT_DISPOSITION, format!("attachment; filename=\"batch-{id}-report.csv\"")))
        .streaming(header_line.chain(lines)))
}

fn batch_id(path: &str) -> Result<BatchId, AppError> {
    crate::http::path_id(path).map(BatchId)
}

/// One report line, RFC 4180 quoted, each field defused (`domain::defused`):
/// errors and params come from users and handlers.
fn csv_line(child: &UnfinishedChild) -> String {
    let params = child.params.to_string();
    let fields = [child.job.to_string(), child.state.clone(), child.error_message.clone().unwrap_or_default(), params];
    let quoted: Vec<String> = fields.iter().map(|field| csv_field(field)).collect();
    format!("{}\r\n", quoted.join(","))
}

fn csv_field(field: &str) -> String {
    let guarded = crate::domain::defused(field);
    if guarded.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", guarded.replace('"', "\"\""))
    } else {
        guarded.into()
    }
}

/// `/batches` (`/batches/{id}` reads a batch, `/batches/{type}` submits one).
pub fn routes(r: &mut Routes) {
    r.id_or_type("/batches", "GET", "POST", |res| res.route(web::get().to(get)).route(web::post().to(submit)))
        .get("/batches/{id}/report", report)
        .post("/batches/{id}/cancel", cancel);
}

#[cfg(test)]
mod tests {
    use super::csv_field;

    #[test]
    fn csv_fields_are_quoted_and_formulas_defused() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\"\nbye"), "\"say \"\"hi\"\"\nbye\"");
        assert_eq!(csv_field("=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
        assert_eq!(csv_field("-1"), "'-1");
    }
}
