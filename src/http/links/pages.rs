//! Pages for people: what a link from an email answers when it is opened in
//! a browser (`links.rs`, `unsubscribe.rs`). Small HTML, styled inline,
//! nothing fetched; a form may post back to errand only.

use actix_web::http::{StatusCode, header};
use actix_web::{HttpRequest, HttpResponse};
use minijinja::{Environment, context};

use crate::domain::{Arg, Branding, Locale, TenantId};
use crate::http::AppState;
use crate::http::support::problem::AppError;

/// Inline styles only, nothing fetched; forms post to errand itself.
const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; \
     form-action 'self'; frame-ancestors 'none'";

/// The same, and the tenant's logo (https only, as its branding allows).
const CONTENT_SECURITY_POLICY_WITH_LOGO: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src https:; \
     base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// errand's own colour, where a tenant set none.
const ERRAND_COLOR: &str = "#2563eb";

static PAGES: std::sync::LazyLock<Environment<'static>> = std::sync::LazyLock::new(|| {
    let mut pages = Environment::new();
    pages.add_template("page.html", include_str!("../../../templates/link_page.html")).expect("the link page parses");
    pages
});

/// What a page says beyond its heading and sentence.
#[derive(Default)]
pub struct Extras<'a> {
    /// A button that POSTs to this URL (errand's own), and its label.
    pub form: Option<(&'a str, &'a str)>,
    /// A link: its URL and its text.
    pub link: Option<(&'a str, &'a str)>,
    /// The tenant's branding (its name or logo at the head, its colour).
    pub brand: Option<&'a Branding>,
}

/// A page for a person in `locale`: a heading and a sentence, escaped.
fn render(
    status: StatusCode,
    title: &str,
    message: &str,
    locale: Locale,
    extras: Extras<'_>,
) -> Result<HttpResponse, AppError> {
    let (form_action, button) = extras.form.unzip();
    let (link, link_text) = extras.link.unzip();
    let brand = extras.brand.cloned().unwrap_or_default();
    let color = brand.primary_color.as_deref().unwrap_or(ERRAND_COLOR);
    let (brand_name, brand_logo) = (&brand.name, &brand.logo_url);
    let lang = locale.as_str();
    let html = PAGES
        .get_template("page.html")
        .and_then(|t| {
            t.render(
                context! { lang, title, message, form_action, button, link, link_text, color, brand_name, brand_logo },
            )
        })
        .map_err(|e| AppError::Internal(e.to_string()))?;
    let policy = if brand_logo.is_some() { CONTENT_SECURITY_POLICY_WITH_LOGO } else { CONTENT_SECURITY_POLICY };
    Ok(HttpResponse::build(status)
        .content_type("text/html; charset=utf-8")
        .insert_header((header::CONTENT_SECURITY_POLICY, policy))
        .insert_header((header::CACHE_CONTROL, "private, no-store"))
        .insert_header((header::REFERRER_POLICY, "no-referrer"))
        // The page's words follow the browser's languages.
        .insert_header((header::VARY, "Accept-Language"))
        .body(html))
}

/// The pages of one tenant's links (what its users' emails link to), in
/// its branding (its name or logo, its colour) and in the language of the
/// email that carried them where the link says it (a job's link), else of the
/// browser that opens them (`Accept-Language`, else errand's default: a link
/// holds no token to read a locale claim from).
pub struct Pages {
    brand: Branding,
    locale: Locale,
}

impl Pages {
    /// `tenant`'s pages; errand's own if its branding cannot be read now (a
    /// page is not refused for its colours).
    pub async fn of(state: &AppState, tenant: &TenantId, req: &HttpRequest) -> Self {
        Self::of_in(state, tenant, req, None).await
    }

    /// [`Self::of`], in `lang` where it is a shipped locale (the language of
    /// the email or push whose link was opened) rather than the browser's.
    pub async fn of_in(state: &AppState, tenant: &TenantId, req: &HttpRequest, lang: Option<&str>) -> Self {
        let brand = state.store.branding_of(tenant).await.unwrap_or_else(|error| {
            tracing::warn!(%error, "could not read the tenant's branding; the page is errand's own");
            Branding::default()
        });
        let locale = lang.and_then(Locale::parse).unwrap_or_else(|| locale_of(state, req));
        Self { brand, locale }
    }

    /// errand's own pages, for a link that names no tenant it can trust.
    pub fn errands(state: &AppState, req: &HttpRequest) -> Self {
        Self { brand: Branding::default(), locale: locale_of(state, req) }
    }

    /// Message `id` in the page's language.
    pub fn say(&self, id: &str, args: &[(&str, Arg<'_>)]) -> String {
        self.locale.say(id, args)
    }

    pub fn locale(&self) -> Locale {
        self.locale
    }

    /// A page of a heading and a sentence, in the tenant's branding.
    pub fn page(&self, status: StatusCode, title: &str, message: &str) -> Result<HttpResponse, AppError> {
        self.page_with(status, title, message, Extras::default())
    }

    /// [`Self::page`], with a form or a link.
    pub fn page_with(
        &self,
        status: StatusCode,
        title: &str,
        message: &str,
        extras: Extras<'_>,
    ) -> Result<HttpResponse, AppError> {
        render(status, title, message, self.locale, Extras { brand: Some(&self.brand), ..extras })
    }

    /// The page of a signed link that does not verify and does not expire
    /// (unsubscribe, pause): any refusal is an altered or foreign link.
    pub fn invalid_link(&self) -> Result<HttpResponse, AppError> {
        self.page(StatusCode::FORBIDDEN, &self.say("page-link-invalid", &[]), &self.say("page-link-invalid-why", &[]))
    }
}

/// The language of the browser that opened a link, else errand's default.
fn locale_of(state: &AppState, req: &HttpRequest) -> Locale {
    let accept = req.headers().get(header::ACCEPT_LANGUAGE).and_then(|value| value.to_str().ok());
    accept.and_then(Locale::from_accept_language).unwrap_or_else(|| state.auth.default_locale())
}
