//! `/tenant/notification-defaults`: a tenant's admins set, per category of
//! job, what its users get until they choose for themselves. Precedence:
//! a required category is on; then each user's own choice; then these;
//! then the configuration's. Read in the statement that ends each job, so
//! a change counts from the next end on; each change is audited.

use actix_web::{HttpResponse, web};
use serde::Serialize;
use serde_json::Value;

use crate::domain::Delivery;
use crate::http::AppState;
use crate::http::auth::TenantAdmin;
use crate::http::notifications::preferences::{
    CategoryView, delivery, digest_offered, known_category, offered_channel,
};
use crate::http::support::problem::{AppError, Problem, UserRouteProblems};
use crate::store::DefaultChoices;

/// Every category the configured job types use, as it stands by default.
#[derive(Serialize, utoipa::ToSchema)]
pub struct DefaultsView {
    categories: Vec<CategoryView>,
}

/// `GET /tenant/notification-defaults`: how each category stands for the admin's tenant's users who chose nothing.
#[utoipa::path(get, path = "/tenant/notification-defaults", tag = "tenant admins",
    responses((status = 200, description = "One entry per category of the configured job types, in name order; `sources` says which channels the tenant set (`tenant`) and which the configuration decides (`config`)", body = DefaultsView),
        (status = 403, description = "Not a tenant admin's token (`forbidden`)", body = Problem, content_type = "application/problem+json"),
        UserRouteProblems))]
pub async fn list(TenantAdmin(admin): TenantAdmin, state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    let rules = state.store.notification_rules();
    let categories: Vec<&str> = rules.categories().into_iter().collect();
    let standing = state.store.notification_defaults_for_tenant_admin(&admin).standing(&categories).await?;
    let categories = standing.into_iter().map(|p| CategoryView::of(p, rules)).collect();
    Ok(HttpResponse::Ok().json(DefaultsView { categories }))
}

/// `PUT /tenant/notification-defaults/{category}`: sets some of the tenant's
/// defaults for one category (audited); those left out stay as they were.
#[utoipa::path(put, path = "/tenant/notification-defaults/{category}", tag = "tenant admins",
    params(("category" = String, Path, description = "A category of the configured job types")),
    request_body(content = Object, description = "Channels to set: `in_app`, `email` and (where offered) `push`, each `true` (or `\"instant\"`), `false` (or `\"off\"`), `email` also `\"digest\"` (for users who set a digest time), or `null`: the configuration's again. E.g. `{\"email\": \"digest\", \"push\": false}`"),
    responses((status = 200, description = "The category as it now stands by default", body = CategoryView),
        (status = 400, description = "A body that is not a JSON object (`bad_request`)", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "Not a tenant admin's token (`forbidden`)", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "An unknown category or channel, a value that is not a setting, turning off a required category, or a digest for another channel than email or for a required category (`invalid_preference`)", body = Problem, content_type = "application/problem+json"),
        UserRouteProblems))]
pub async fn set(
    TenantAdmin(admin): TenantAdmin,
    path: web::Path<String>,
    body: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let rules = state.store.notification_rules();
    let category = known_category(path.into_inner(), rules)?;
    let changes = crate::http::support::body::json_object(body).await?;
    let mut choices = DefaultChoices::default();
    for (name, value) in changes {
        let channel = offered_channel(&name, rules)?;
        let setting = match value {
            Value::Null => None,
            value => Some(delivery(&category, &name, &value, rules)?),
        };
        if setting == Some(Delivery::Digest) {
            digest_offered(&category, channel, rules)?;
        }
        choices.choose(channel, setting);
    }
    let standing = state.store.notification_defaults_for_tenant_admin(&admin).choose(&category, choices).await?;
    Ok(HttpResponse::Ok().json(CategoryView::of(standing, rules)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::Channel;

    #[test]
    fn a_choice_left_out_stays_and_null_gives_a_channel_back() {
        let mut choices = DefaultChoices::default();
        choices.choose(Channel::Email, Some(Delivery::Digest));
        choices.choose(Channel::Push, None);
        assert_eq!(choices.email, Some(Some(Delivery::Digest)));
        assert_eq!(choices.push, Some(None), "given back to the configuration");
        assert_eq!(choices.in_app, None, "left as it was");
    }
}
