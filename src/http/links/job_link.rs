//! `GET /links/jobs/{id}?tenant=&user=&expires=&sig=`: where a completion
//! email's link leads (see [`crate::outbound::links`]). No token: the signature is the
//! authorisation. Whoever opens it is a person, so every answer but the
//! redirect is a small HTML page, not JSON:
//! - a completed job with its file: `303` to a fresh, short-lived download URL;
//! - a failed job: a page with its error;
//! - a tampered, expired or foreign link: `403`, a page saying so;
//! - a file past its retention, or a job pruned since: `410`, a page.

use actix_web::http::{StatusCode, header};
use actix_web::{HttpRequest, HttpResponse, web};

use crate::domain::{Arg, JobState};
use crate::http::AppState;
use crate::http::links::pages::Pages;
use crate::http::support::problem::AppError;
use crate::outbound::links::{LinkError, LinkQuery};
use crate::storage::ResultFile;

/// Opens an email's link.
#[utoipa::path(get, path = "/links/jobs/{id}", tag = "jobs",
    params(("id" = String, Path, format = Uuid, description = "The job's id"),
        ("tenant" = String, Query, description = "The job's tenant"),
        ("user" = String, Query, description = "The job's owner"),
        ("expires" = i64, Query, description = "When the link expires, seconds since the epoch"),
        ("sig" = String, Query, description = "The link's signature: the only authorisation")),
    responses((status = 303, description = "A completed job's file: to a fresh, short-lived download URL (`Location`)"),
        (status = 200, description = "A page: the failed job's error, or the job's status", content_type = "text/html"),
        (status = 403, description = "A tampered, expired or foreign link: a page", content_type = "text/html"),
        (status = 410, description = "The file's retention ended, or the job was pruned: a page", content_type = "text/html")))]
pub async fn open(
    req: HttpRequest,
    path: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let query = web::Query::<LinkQuery>::from_query(req.query_string()).map_err(|_| LinkError::Invalid);
    let lang = query.as_ref().ok().and_then(|q| q.lang.clone());
    let holder = match query.and_then(|q| state.links.verify(&path, &q, chrono::Utc::now())) {
        Ok(holder) => holder,
        Err(refused) => {
            let pages = Pages::errands(&state, &req);
            let (title, why) = match refused {
                LinkError::Invalid => ("page-link-invalid", "page-link-invalid-why"),
                LinkError::Expired => ("page-link-expired", "page-link-expired-why"),
            };
            return pages.page(StatusCode::FORBIDDEN, &pages.say(title, &[]), &pages.say(why, &[]));
        }
    };
    crate::http::support::request_id::record_caller(&holder.caller);
    // The page is the tenant's as its emails are.
    let pages = Pages::of_in(&state, &holder.caller.tenant, &req, lang.as_deref()).await;
    let say = |id: &str, args: &[(&str, Arg<'_>)]| pages.say(id, args);
    let page = |status, title: &str, message: &str| pages.page(status, title, message);
    let job = state.store.jobs_for(&holder.caller).get(holder.job).await?;
    let Some(job) = job else {
        return page(StatusCode::GONE, &say("page-job-gone", &[]), &say("page-job-gone-why", &[]));
    };
    let name = state.job_types.display_name(&job.job_type, pages.locale());
    let named = [("name", Arg::from(name.as_str()))];
    match job.state {
        JobState::Completed => match ResultFile::of(job.result.as_ref()) {
            Some(file) if file.is_expired() => {
                page(StatusCode::GONE, &say("page-file-gone", &named), &say("page-file-gone-why", &[]))
            }
            Some(file) => Ok(HttpResponse::SeeOther()
                .insert_header((header::LOCATION, state.download_url(&file).await?))
                .finish()),
            None => page(StatusCode::OK, &say("page-job-done", &named), &say("page-job-done-why", &[])),
        },
        JobState::Failed => {
            let reason = job.error_message.unwrap_or_else(|| say("no-reason", &[]));
            page(
                StatusCode::OK,
                &say("job-failed", &named),
                &say("email-what-went-wrong", &[("reason", reason.into())]),
            )
        }
        JobState::Cancelled => page(StatusCode::OK, &say("job-cancelled", &named), &say("page-job-cancelled-why", &[])),
        JobState::Available | JobState::Running | JobState::Retryable => {
            page(StatusCode::OK, &say("page-job-running-again", &named), &say("page-job-running-again-why", &[]))
        }
    }
}
