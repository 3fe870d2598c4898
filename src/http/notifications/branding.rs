//! `/tenant/branding`: how a tenant's users' emails present it (sender
//! name, name, logo, colour, footer), set by its admins, audited. Tenant
//! copy is plain text (`domain::Branding::checked`), shown escaped; the
//! logo is checked like a webhook's URL (https, public addresses).

use actix_web::{HttpResponse, web};

use crate::domain::{Branding, BrandingError};
use crate::http::AppState;
use crate::http::auth::TenantAdmin;
use crate::http::support::problem::{AppError, Problem, UserRouteProblems};

/// `GET /tenant/branding`: what the admin's tenant set (nulls: errand's own).
#[utoipa::path(get, path = "/tenant/branding", tag = "tenant admins",
    responses((status = 200, description = "`{name, logo_url, primary_color, from_name, footer}`, each null until set", body = Object),
        (status = 403, description = "Not a tenant admin's token (`forbidden`)", body = Problem, content_type = "application/problem+json"),
        UserRouteProblems))]
pub async fn get(TenantAdmin(admin): TenantAdmin, state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    Ok(HttpResponse::Ok().json(state.store.branding_for_tenant_admin(&admin).read().await?))
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
