//! `/tenant/branding`: how a tenant's users' emails present it (sender
//! name, name, logo, colour, footer), set by its admins, audited. Tenant
//! copy is plain text (`domain::Branding::checked`), shown escaped; the
//! logo is checked like a webhook's URL (https, public addresses). Its
//! users read it (the elements take its colour); its admins and operators
//! preview each email in it.

use actix_web::{HttpResponse, web};

use crate::domain::{Branding, BrandingError, Caller, Locale, Operator, TenantId};
use crate::http::AppState;
use crate::http::auth::TenantAdmin;
use crate::http::support::problem::{AppError, OperatorReadProblems, Problem, UserRouteProblems};
use crate::outbound::mail_preview::{PreviewFor, PreviewKind};

/// `GET /tenant/branding`: what the caller's tenant set (nulls: errand's
/// own). Any of its users may read it: it is what their emails show, and
/// the browser's elements take its colour.
#[utoipa::path(get, path = "/tenant/branding", tag = "tenant admins",
    responses((status = 200, description = "`{name, logo_url, primary_color, from_name, footer}`, each null until set", body = Object),
        UserRouteProblems))]
pub async fn get(caller: Caller, state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    Ok(HttpResponse::Ok().json(state.store.branding_of(&caller.tenant).await?))
}

/// `PUT /tenant/branding`: sets the tenant's branding whole (what is left
/// out or blank: errand's own), audited; counts from the next email on.
#[utoipa::path(put, path = "/tenant/branding", tag = "tenant admins",
    request_body(content = Object, description = "`{\"name\": \"Acme\", \"logo_url\": \"https://…\", \"primary_color\": \"#2457d6\", \"from_name\": \"Acme reports\", \"footer\": \"Sent for {name}.\"}`: plain text (at most 100 characters, the footer 500), the footer's only variable `{name}`"),
    responses((status = 200, description = "As now set", body = Object),
        (status = 400, description = "A body that is not such an object (`bad_request`)", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "Not a tenant admin's token (`forbidden`)", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "Text too long or with control characters, a colour that is not #rrggbb, a footer variable other than {name}, or a logo that is not https or not on a public address (`invalid_branding`)", body = Problem, content_type = "application/problem+json"),
        UserRouteProblems))]
pub async fn set(
    TenantAdmin(admin): TenantAdmin,
    body: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let branding: Branding = crate::http::support::body::json(body).await?;
    let branding = branding.checked()?;
    if let Some(logo) = &branding.logo_url {
        state
            .settings
            .outbound
            .check(logo)
            .await
            .map_err(|refused| BrandingError { field: "logo_url", reason: refused.to_string() })?;
    }
    state.store.branding_for_tenant_admin(&admin).write(&branding).await?;
    Ok(HttpResponse::Ok().json(branding))
}

/// Which email to preview, and (for operators) whose.
#[derive(serde::Deserialize)]
pub struct PreviewQuery {
    kind: String,
    tenant: Option<String>,
    /// A shipped locale's tag; the asker's language (an operator's: the default) when absent.
    locale: Option<String>,
}

impl PreviewQuery {
    /// The language asked for, else `otherwise`; 400 for one errand does not ship.
    fn locale_or(&self, otherwise: Locale) -> Result<Locale, AppError> {
        let Some(tag) = &self.locale else { return Ok(otherwise) };
        Locale::parse(tag).ok_or_else(|| {
            let shipped: Vec<_> = Locale::all().map(Locale::as_str).collect();
            AppError::BadRequest(format!("locale: one of {}", shipped.join(", ")))
        })
    }
}

/// `GET /tenant/templates/preview?kind=`: an email as the admin's tenant's users get it, with sample content.
#[utoipa::path(get, path = "/tenant/templates/preview", tag = "tenant admins",
    params(("kind" = String, Query, description = "job_completed, job_failed, batch_completed or digest"),
        ("locale" = Option<String>, Query, description = "A shipped locale (`en`, `fr`); the admin's language when absent")),
    responses((status = 200, description = "`{from, subject, text, html}`, rendered in the tenant's branding", body = Object),
        (status = 400, description = "An unknown kind or locale (`bad_request`)", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "Not a tenant admin's token (`forbidden`)", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "errand sends no email here (`email_not_enabled`)", body = Problem, content_type = "application/problem+json"),
        UserRouteProblems))]
pub async fn preview_for_tenant_admin(
    TenantAdmin(admin): TenantAdmin,
    query: web::Query<PreviewQuery>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let branding = state.store.branding_of(&admin.tenant).await?;
    let locale = query.locale_or(admin.locale)?;
    preview(&state, &query.kind, &PreviewFor { tenant: &admin.tenant, user: &admin.user, branding: &branding, locale })
}

/// `GET /admin/templates/preview?tenant=&kind=`: an email as a tenant's users get it, with sample content.
#[utoipa::path(get, path = "/admin/templates/preview", tag = "operators",
    params(("tenant" = String, Query, description = "Whose branding"),
        ("kind" = String, Query, description = "job_completed, job_failed, batch_completed or digest"),
        ("locale" = Option<String>, Query, description = "A shipped locale (`en`, `fr`); errand's default when absent")),
    responses((status = 200, description = "`{from, subject, text, html}`, rendered in the tenant's branding", body = Object),
        (status = 400, description = "No or an invalid tenant, or an unknown kind or locale (`bad_request`)", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "errand sends no email here (`email_not_enabled`)", body = Problem, content_type = "application/problem+json"),
        OperatorReadProblems))]
pub async fn preview_for_operator(
    operator: Operator,
    query: web::Query<PreviewQuery>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let tenant = query.tenant.clone().ok_or_else(|| AppError::BadRequest("tenant: whose branding to show".into()))?;
    let tenant = TenantId::parse(tenant).map_err(|e| AppError::BadRequest(format!("tenant: {e}")))?;
    let branding = state.store.branding_of(&tenant).await?;
    let locale = query.locale_or(state.auth.default_locale())?;
    preview(&state, &query.kind, &PreviewFor { tenant: &tenant, user: &operator.name, branding: &branding, locale })
}

/// `kind`'s email with sample content for `viewer`.
fn preview(state: &AppState, kind: &str, viewer: &PreviewFor<'_>) -> Result<HttpResponse, AppError> {
    let kind = PreviewKind::parse(kind)
        .ok_or_else(|| AppError::BadRequest(format!("kind: one of {}", PreviewKind::NAMES.join(", "))))?;
    let emails = state.emails.as_ref().ok_or(AppError::EmailNotEnabled)?;
    let composed = emails.preview(kind, viewer).map_err(|e| AppError::Internal(e.to_string()))?;
    Ok(HttpResponse::Ok().json(composed))
}
