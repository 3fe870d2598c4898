//! `/unsubscribe/{token}`: the one-click unsubscribe of RFC 8058, which every
//! completion email of a category people may turn off carries
//! (`List-Unsubscribe`, `List-Unsubscribe-Post`; see [`crate::outbound::links`]).
//!
//! A `POST` (the mailbox provider's one click, or the page's button) turns
//! off the category's emails for the token's user at once. A `GET` changes
//! nothing: it shows a page whose button POSTs, because link scanners
//! (Microsoft Safe Links and others) GET every link in a mail.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};

use crate::http::AppState;
use crate::http::links::pages::{Extras, Pages};
use crate::http::support::problem::AppError;
use crate::outbound::links::Unsubscriber;

/// The link every page has: where people choose which emails they get.
fn preferences_link<'a>(state: &'a AppState, text: &'a str) -> Option<(&'a str, &'a str)> {
    Some((state.settings.preferences_url.as_str(), text))
}

/// Asks whether to unsubscribe: a page with a button that POSTs.
#[utoipa::path(get, path = "/unsubscribe/{token}", tag = "notifications",
    params(("token" = String, Path, description = "From an email's List-Unsubscribe link: the only authorisation")),
    responses((status = 200, description = "A page asking to confirm, with a button that POSTs; nothing changes", content_type = "text/html"),
        (status = 403, description = "A tampered or foreign link: a page", content_type = "text/html")))]
pub async fn ask(
    req: HttpRequest,
    path: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let (holder, pages) = match opened(&state, &req, &path).await {
        Ok(opened) => opened,
        Err(answer) => return answer,
    };
    let category = &holder.category;
    let action = format!("/unsubscribe/{path}");
    let (button, choose) = (pages.say("page-unsubscribe", &[]), pages.say("page-choose-emails", &[]));
    pages.page_with(
        StatusCode::OK,
        &pages.say("page-unsubscribe-ask", &[("category", category.as_str().into())]),
        &pages.say("page-unsubscribe-ask-why", &[("category", category.as_str().into())]),
        Extras { form: Some((&action, &button)), link: preferences_link(&state, &choose), ..Extras::default() },
    )
}

/// Unsubscribes: the category's emails are off for the token's user from now on.
#[utoipa::path(post, path = "/unsubscribe/{token}", tag = "notifications",
    params(("token" = String, Path, description = "From an email's List-Unsubscribe link: the only authorisation")),
    request_body(content = String, content_type = "application/x-www-form-urlencoded", description = "`List-Unsubscribe=One-Click` (RFC 8058), or nothing: not read"),
    responses((status = 200, description = "Unsubscribed (again, if it was already): a page", content_type = "text/html"),
        (status = 403, description = "A tampered or foreign link: a page", content_type = "text/html"),
        (status = 422, description = "A required category, which cannot be turned off: a page", content_type = "text/html")))]
pub async fn confirm(
    req: HttpRequest,
    path: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let (holder, pages) = match opened(&state, &req, &path).await {
        Ok(opened) => opened,
        Err(answer) => return answer,
    };
    let category = &holder.category;
    crate::http::support::request_id::record_caller(&holder.caller);
    let email_off = crate::store::ChannelChoices { email: Some(false), ..Default::default() };
    state.store.preferences_for(&holder.caller).choose(category, email_off).await?;
    let choose = pages.say("page-choose-emails", &[]);
    pages.page_with(
        StatusCode::OK,
        &pages.say("page-unsubscribed", &[]),
        &pages.say("page-unsubscribed-why", &[("category", category.as_str().into())]),
        Extras { link: preferences_link(&state, &choose), ..Extras::default() },
    )
}

/// The link's holder and their tenant's pages; or the page that answers
/// instead: an altered link's, or a required category's (which cannot be
/// turned off).
async fn opened(
    state: &AppState,
    req: &HttpRequest,
    token: &str,
) -> Result<(Unsubscriber, Pages), Result<HttpResponse, AppError>> {
    let Ok(holder) = state.links.verify_unsubscribe(token) else {
        return Err(Pages::errands(state, req).invalid_link());
    };
    let pages = Pages::of(state, &holder.caller.tenant, req).await;
    if state.store.notification_rules().is_required(&holder.category) {
        return Err(required(&holder.category, state, &pages));
    }
    Ok((holder, pages))
}

fn required(category: &str, state: &AppState, pages: &Pages) -> Result<HttpResponse, AppError> {
    let choose = pages.say("page-choose-emails", &[]);
    pages.page_with(
        StatusCode::UNPROCESSABLE_ENTITY,
        &pages.say("page-required", &[]),
        &pages.say("page-required-why", &[("category", category.into())]),
        Extras { link: preferences_link(state, &choose), ..Extras::default() },
    )
}
