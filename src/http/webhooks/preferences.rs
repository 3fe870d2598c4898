//! `/webhooks/preferences`: the webhook channel in the preferences grid, at
//! tenant level. A tenant's admins choose, per category of job, whether the
//! tenant's endpoints hear of its jobs' ends; read in the statement that
//! ends each job, so a change counts from the next end on.

use actix_web::{HttpResponse, web};
use serde::Serialize;

use crate::http::AppState;
use crate::http::auth::TenantAdmin;
use crate::http::notifications::preferences::{choice, known_category};
use crate::http::support::problem::{AppError, Problem, UserRouteProblems};
use crate::store::WebhookCategory;

/// A category's webhook channel as it stands for the tenant.
#[derive(Serialize, utoipa::ToSchema)]
pub struct WebhookCategoryView {
    category: String,
    /// No one can turn it off (configured).
    required: bool,
    /// Whether the tenant's endpoints hear of the ends of this category's jobs.
    webhook: bool,
}

impl From<WebhookCategory> for WebhookCategoryView {
    fn from(c: WebhookCategory) -> Self {
        Self { category: c.category, required: c.required, webhook: c.webhook }
    }
}

/// Every category the configured job types use.
#[derive(Serialize, utoipa::ToSchema)]
pub struct WebhookPreferencesView {
    categories: Vec<WebhookCategoryView>,
}

/// `GET /webhooks/preferences`: how each category's webhook channel stands for the admin's tenant.
#[utoipa::path(get, path = "/webhooks/preferences", tag = "webhooks",
    responses((status = 200, description = "One entry per category of the configured job types, in name order", body = WebhookPreferencesView),
        UserRouteProblems,
        (status = 403, description = "Not a tenant admin (`forbidden`)", body = Problem, content_type = "application/problem+json")))]
pub async fn list(TenantAdmin(admin): TenantAdmin, state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    let categories: Vec<&str> = state.store.notification_rules().categories().into_iter().collect();
    let standing = state.store.webhook_preferences_for_tenant(&admin.tenant).standing(&categories).await?;
    let categories = standing.into_iter().map(WebhookCategoryView::from).collect();
    Ok(HttpResponse::Ok().json(WebhookPreferencesView { categories }))
}

/// `PUT /webhooks/preferences/{category}`: turns the tenant's webhook channel on or off for one category.
#[utoipa::path(put, path = "/webhooks/preferences/{category}", tag = "webhooks",
    params(("category" = String, Path, description = "A category of the configured job types")),
    request_body(content = Object, description = "`{\"webhook\": true}` or `{\"webhook\": false}`"),
    responses((status = 200, description = "The category as it now stands", body = WebhookCategoryView),
        (status = 400, description = "A body that is not a JSON object (`bad_request`)", body = Problem, content_type = "application/problem+json"),
        UserRouteProblems,
        (status = 403, description = "Not a tenant admin (`forbidden`)", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "An unknown category or channel, a value that is not a boolean, or turning off a required category (`invalid_preference`)", body = Problem, content_type = "application/problem+json")))]
pub async fn set(
    TenantAdmin(admin): TenantAdmin,
    path: web::Path<String>,
    body: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let rules = state.store.notification_rules();
    let category = known_category(path.into_inner(), rules)?;
    let mut changes = crate::http::support::body::json_object(body).await?;
    let value = changes.remove("webhook").ok_or_else(|| {
        AppError::InvalidPreference("the body sets the one channel here: {\"webhook\": true|false}".into())
    })?;
    if let Some(other) = changes.keys().next() {
        return Err(AppError::InvalidPreference(format!("there is no channel {other:?} here; there is: webhook")));
    }
    let on = choice(&category, "webhook", &value, rules)?;
    let standing = state.store.webhook_preferences_for_tenant(&admin.tenant).choose(&category, on).await?;
    Ok(HttpResponse::Ok().json(WebhookCategoryView::from(standing)))
}
