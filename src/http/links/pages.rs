//! Pages for people: what a link from an email answers when it is opened in
//! a browser (`links.rs`, `unsubscribe.rs`). Small HTML, styled inline,
//! nothing fetched; a form may post back to errand only.

use actix_web::HttpResponse;
use actix_web::http::{StatusCode, header};
use minijinja::{Environment, context};

use crate::domain::{Branding, TenantId};
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

/// A page for a person: a heading and a sentence, escaped.
pub fn page(status: StatusCode, title: &str, message: &str) -> Result<HttpResponse, AppError> {
    page_with(status, title, message, Extras::default())
}

/// [`page`], with a form or a link.
pub fn page_with(status: StatusCode, title: &str, message: &str, extras: Extras<'_>) -> Result<HttpResponse, AppError> {
    let (form_action, button) = extras.form.unzip();
    let (link, link_text) = extras.link.unzip();
    let brand = extras.brand.cloned().unwrap_or_default();
    let color = brand.primary_color.as_deref().unwrap_or(ERRAND_COLOR);
    let (brand_name, brand_logo) = (&brand.name, &brand.logo_url);
    let html = PAGES
        .get_template("page.html")
        .and_then(|t| {
            t.render(context! { title, message, form_action, button, link, link_text, color, brand_name, brand_logo })
        })
        .map_err(|e| AppError::Internal(e.to_string()))?;
    let policy = if brand_logo.is_some() { CONTENT_SECURITY_POLICY_WITH_LOGO } else { CONTENT_SECURITY_POLICY };
    Ok(HttpResponse::build(status)
        .content_type("text/html; charset=utf-8")
        .insert_header((header::CONTENT_SECURITY_POLICY, policy))
        .insert_header((header::CACHE_CONTROL, "private, no-store"))
        .insert_header((header::REFERRER_POLICY, "no-referrer"))
        .body(html))
}

/// The pages of one tenant's links (what its users' emails link to), in
/// its branding: its name or logo, its colour.
pub struct Pages {
    brand: Branding,
}

impl Pages {
    /// `tenant`'s pages; errand's own if its branding cannot be read now (a
    /// page is not refused for its colours).
    pub async fn of(state: &AppState, tenant: &TenantId) -> Self {
        let brand = state.store.branding_of(tenant).await.unwrap_or_else(|error| {
            tracing::warn!(%error, "could not read the tenant's branding; the page is errand's own");
            Branding::default()
        });
        Self { brand }
    }

    /// [`page`], in the tenant's branding.
    pub fn page(&self, status: StatusCode, title: &str, message: &str) -> Result<HttpResponse, AppError> {
        self.page_with(status, title, message, Extras::default())
    }

    /// [`page_with`], in the tenant's branding.
    pub fn page_with(
        &self,
        status: StatusCode,
        title: &str,
        message: &str,
        extras: Extras<'_>,
    ) -> Result<HttpResponse, AppError> {
        page_with(status, title, message, Extras { brand: Some(&self.brand), ..extras })
    }
}

/// The page of a signed link that does not verify and does not expire
/// (unsubscribe, pause): any refusal is an altered or foreign link.
pub fn invalid_link() -> Result<HttpResponse, AppError> {
    page(
        StatusCode::FORBIDDEN,
        "This link is not valid",
        "It may have been changed or cut short. Open the link from the email again.",
    )
}
