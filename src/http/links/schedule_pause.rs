//! `/schedules/pause/{token}`: the link an email of a scheduled job carries
//! to pause the schedule that made it (see [`crate::outbound::links`]). No token: the
//! signed path is the authorisation. As for unsubscribing, a `GET` changes
//! nothing (link scanners GET every link in a mail): it shows a page whose
//! button POSTs; the `POST` pauses.

use std::convert::Infallible;

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};

use crate::domain::Arg;
use crate::http::AppState;
use crate::http::links::pages::{Extras, Pages};
use crate::http::support::problem::AppError;

/// Asks whether to pause: a page with a button that POSTs.
#[utoipa::path(get, path = "/schedules/pause/{token}", tag = "schedules",
    params(("token" = String, Path, description = "From a scheduled job's email: the only authorisation")),
    responses((status = 200, description = "A page asking to confirm, with a button that POSTs; nothing changes", content_type = "text/html"),
        (status = 403, description = "A tampered or foreign link: a page", content_type = "text/html"),
        (status = 410, description = "The schedule was deleted: a page", content_type = "text/html")))]
pub async fn ask(
    req: HttpRequest,
    path: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let Ok((caller, id)) = state.links.verify_pause(&path) else { return Pages::errands(&state, &req).invalid_link() };
    let pages = Pages::of(&state, &caller.tenant, &req).await;
    let Some(schedule) = state.store.schedules_for(&caller).get(id).await? else { return gone(&pages) };
    let action = format!("/schedules/pause/{path}");
    let when = Arg::from(format!("{} ({})", schedule.cron, schedule.timezone));
    if schedule.paused.is_some() {
        return pages.page(
            StatusCode::OK,
            &pages.say("page-schedule-paused", &[]),
            &pages.say("page-schedule-paused-why", &[("when", when)]),
        );
    }
    let name = state.job_types.display_name(&schedule.job_type, pages.locale());
    let button = pages.say("page-pause", &[]);
    pages.page_with(
        StatusCode::OK,
        &pages.say("page-pause-schedule", &[]),
        &pages.say("page-pause-schedule-why", &[("name", name.into()), ("when", when)]),
        Extras { form: Some((&action, &button)), ..Extras::default() },
    )
}

/// Pauses the schedule: it makes no jobs until resumed (`PATCH /schedules/{id}`).
#[utoipa::path(post, path = "/schedules/pause/{token}", tag = "schedules",
    params(("token" = String, Path, description = "From a scheduled job's email: the only authorisation")),
    responses((status = 200, description = "Paused (again, if it was already): a page", content_type = "text/html"),
        (status = 403, description = "A tampered or foreign link: a page", content_type = "text/html"),
        (status = 410, description = "The schedule was deleted: a page", content_type = "text/html")))]
pub async fn confirm(
    req: HttpRequest,
    path: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let Ok((caller, id)) = state.links.verify_pause(&path) else { return Pages::errands(&state, &req).invalid_link() };
    crate::http::support::request_id::record_caller(&caller);
    let pages = Pages::of(&state, &caller.tenant, &req).await;
    let paused = state
        .store
        .schedules_for(&caller)
        .change(id, |mut schedule| {
            schedule.set_paused(true);
            Ok::<_, Infallible>(schedule)
        })
        .await?;
    match paused {
        Some(Ok(schedule)) => pages.page(
            StatusCode::OK,
            &pages.say("page-schedule-now-paused", &[]),
            &pages.say(
                "page-schedule-now-paused-why",
                &[("when", format!("{} ({})", schedule.cron, schedule.timezone).into())],
            ),
        ),
        Some(Err(never)) => match never {},
        None => gone(&pages),
    }
}

fn gone(pages: &Pages) -> Result<HttpResponse, AppError> {
    pages.page(StatusCode::GONE, &pages.say("page-schedule-gone", &[]), &pages.say("page-schedule-gone-why", &[]))
}
