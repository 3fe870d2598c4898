//! `GET /i18n/elements`: the words of the browser's elements in a person's
//! language, from errand's catalogues (`templates/locales/{tag}/elements.ftl`),
//! so that the client ships no copy of them. No token needed: they are the
//! same for everyone who reads the language.

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};
use std::collections::BTreeMap;

use crate::domain::Locale;
use crate::http::AppState;

/// Which language to answer in.
#[derive(serde::Deserialize)]
pub struct WordsQuery {
    locale: Option<String>,
}

/// An element's words, each variable written `{name}`.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct ElementWords {
    /// The language they are in: the one asked for, the nearest errand
    /// ships, else its default.
    #[schema(value_type = String)]
    locale: Locale,
    /// By message id (`ui-…`).
    messages: &'static BTreeMap<String, String>,
}

/// The elements' words in a language: `locale` if errand ships it (or one
/// near it: `fr-CA` is answered `fr`), else the browser's `Accept-Language`,
/// else errand's default.
#[utoipa::path(get, path = "/i18n/elements", tag = "notifications",
    params(("locale" = Option<String>, Query, description = "A language tag, e.g. `fr`")),
    responses((status = 200, description = "The words, and the language they are in", body = ElementWords)))]
pub async fn elements(req: HttpRequest, query: web::Query<WordsQuery>, state: web::Data<AppState>) -> HttpResponse {
    let accept = req.headers().get(header::ACCEPT_LANGUAGE).and_then(|value| value.to_str().ok());
    let locale = query
        .locale
        .as_deref()
        .and_then(|tag| Locale::negotiate([tag]))
        .or_else(|| accept.and_then(Locale::from_accept_language))
        .unwrap_or_else(|| state.auth.default_locale());
    HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, "public, max-age=300"))
        .insert_header((header::VARY, "Accept-Language"))
        .json(ElementWords { locale, messages: locale.element_messages() })
}
