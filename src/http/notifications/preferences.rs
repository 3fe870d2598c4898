//! `/me/notification-preferences`: which job ends reach the caller, per
//! category of job and per channel. Read in the statement that ends each
//! job (see `store/finish.rs`), so a change counts from the next end on.

use actix_web::{HttpResponse, web};
use serde::Serialize;
use serde_json::Value;

use crate::domain::{Caller, Channel, NotificationRules};
use crate::http::AppState;
use crate::http::support::problem::{AppError, Problem, UserRouteProblems};
use crate::store::CategoryPreferences;

/// A category's channels as they stand for the caller.
#[derive(Serialize, utoipa::ToSchema)]
pub struct CategoryView {
    category: String,
    /// No one can turn it off (configured).
    required: bool,
    /// `in_app` (the feed and live streams) and `email`: whether a job's end reaches the caller there.
    #[schema(value_type = Object)]
    channels: serde_json::Map<String, Value>,
}

impl From<CategoryPreferences> for CategoryView {
    fn from(p: CategoryPreferences) -> Self {
        let channels = Channel::ALL
            .into_iter()
            .map(|channel| {
                let on = match channel {
                    Channel::InApp => p.in_app,
                    Channel::Email => p.email,
                };
                (channel.as_str().to_owned(), Value::Bool(on))
            })
            .collect();
        Self { category: p.category, required: p.required, channels }
    }
}

/// Every category the configured job types use.
#[derive(Serialize, utoipa::ToSchema)]
pub struct PreferencesView {
    categories: Vec<CategoryView>,
}

/// `GET /me/notification-preferences`: how each category stands for the caller.
#[utoipa::path(get, path = "/me/notification-preferences", tag = "notifications",
    responses((status = 200, description = "One entry per category of the configured job types, in name order", body = PreferencesView),
        UserRouteProblems))]
pub async fn list(caller: Caller, state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    let rules = state.store.notification_rules();
    let categories: Vec<&str> = rules.categories().into_iter().collect();
    let standing = state.store.preferences_for(&caller).standing(&categories).await?;
    Ok(HttpResponse::Ok().json(PreferencesView { categories: standing.into_iter().map(CategoryView::from).collect() }))
}

/// `PUT /me/notification-preferences/{category}`: changes some of the
/// caller's channels for one category; those left out stay as they were.
#[utoipa::path(put, path = "/me/notification-preferences/{category}", tag = "notifications",
    params(("category" = String, Path, description = "A category of the configured job types")),
    request_body(content = Object, description = "Channels to change: `in_app` and/or `email`, each `true` or `false`, e.g. `{\"email\": false}`"),
    responses((status = 200, description = "The category as it now stands", body = CategoryView),
        (status = 400, description = "A body that is not a JSON object (`bad_request`)", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "An unknown category or channel, a value that is not a boolean, or turning off a required category (`invalid_preference`)", body = Problem, content_type = "application/problem+json"),
        UserRouteProblems))]
pub async fn set(
    caller: Caller,
    path: web::Path<String>,
    body: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let category = known_category(path.into_inner(), state.store.notification_rules())?;
    let changes = crate::http::support::body::json_object(body).await?;
    let (mut in_app, mut email) = (None, None);
    for (name, value) in changes {
        let channel = Channel::parse(&name).ok_or_else(|| {
            AppError::InvalidPreference(format!("there is no channel {name:?}; there are: in_app, email"))
        })?;
        let on = choice(&category, &name, &value, state.store.notification_rules())?;
        match channel {
            Channel::InApp => in_app = Some(on),
            Channel::Email => email = Some(on),
        }
    }
    let standing = state.store.preferences_for(&caller).choose(&category, in_app, email).await?;
    Ok(HttpResponse::Ok().json(CategoryView::from(standing)))
}

/// `category`, if the configured job types use it; else the 422 that lists them.
/// (Also the webhook channel's, `webhooks/preferences.rs`.)
pub(in crate::http) fn known_category(category: String, rules: &NotificationRules) -> Result<String, AppError> {
    let categories = rules.categories();
    if categories.contains(category.as_str()) {
        return Ok(category);
    }
    let known = categories.into_iter().collect::<Vec<_>>().join(", ");
    Err(AppError::InvalidPreference(format!("there is no category {category:?}; there are: {known}")))
}

/// Channel `name`'s new setting for `category`: a boolean, and never off
/// for a required category.
pub(in crate::http) fn choice(
    category: &str,
    name: &str,
    value: &Value,
    rules: &NotificationRules,
) -> Result<bool, AppError> {
    let on = value
        .as_bool()
        .ok_or_else(|| AppError::InvalidPreference(format!("{name} must be true or false, not {value}")))?;
    if !on && rules.is_required(category) {
        return Err(AppError::InvalidPreference(format!(
            "{category} is a required category: its notifications cannot be turned off"
        )));
    }
    Ok(on)
}
