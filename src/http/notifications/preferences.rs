//! `/me/notification-preferences`: which job ends reach the caller, per
//! category of job and per channel. Read in the statement that ends each
//! job (see `store/finish.rs`), so a change counts from the next end on.

use actix_web::{HttpResponse, web};
use serde::Serialize;
use serde_json::Value;

use crate::domain::{Caller, Channel, Delivery, NotificationRules};
use crate::http::AppState;
use crate::http::support::problem::{AppError, Problem, UserRouteProblems};
use crate::store::{CategoryPreferences, ChannelChoices};

/// A category's channels as they stand for the caller (or, at
/// `/tenant/notification-defaults`, for the tenant's users who chose nothing).
#[derive(Serialize, utoipa::ToSchema)]
pub struct CategoryView {
    category: String,
    /// No one can turn it off (configured).
    required: bool,
    /// `in_app` (the feed and live streams), `email` and, where errand offers Web Push, `push`
    /// (the devices the caller subscribed): whether a job's end reaches the caller there,
    /// `true` or `false`; `email` may also be `"digest"` (in the caller's digest email).
    #[schema(value_type = Object)]
    channels: serde_json::Map<String, Value>,
    /// Whose word each channel's setting is: `required`, `user` (the caller's
    /// choice), `tenant` (the tenant's default) or `config`.
    #[schema(value_type = Object)]
    sources: serde_json::Map<String, Value>,
}

impl CategoryView {
    /// `p` with the channels `rules` offer.
    pub(in crate::http) fn of(p: CategoryPreferences, rules: &NotificationRules) -> Self {
        let offered = p.channels.iter().filter(|(channel, ..)| rules.channels().any(|c| c == *channel));
        let (mut channels, mut sources) = (serde_json::Map::new(), serde_json::Map::new());
        for (channel, delivery, source) in offered {
            channels.insert(channel.as_str().to_owned(), delivery.as_json());
            sources.insert(channel.as_str().to_owned(), Value::from(source.as_str()));
        }
        Self { category: p.category, required: p.required, channels, sources }
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
    let categories = standing.into_iter().map(|p| CategoryView::of(p, rules)).collect();
    Ok(HttpResponse::Ok().json(PreferencesView { categories }))
}

/// `PUT /me/notification-preferences/{category}`: changes some of the
/// caller's channels for one category; those left out stay as they were.
#[utoipa::path(put, path = "/me/notification-preferences/{category}", tag = "notifications",
    params(("category" = String, Path, description = "A category of the configured job types")),
    request_body(content = Object, description = "Channels to change: `in_app`, `email` and (where offered) `push`, each `true` (or `\"instant\"`) or `false` (or `\"off\"`), and `email` also `\"digest\"` once the caller set a digest time (`/me/notification-settings`), e.g. `{\"email\": \"digest\"}`"),
    responses((status = 200, description = "The category as it now stands", body = CategoryView),
        (status = 400, description = "A body that is not a JSON object (`bad_request`)", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "An unknown category or channel, a value that is not a setting, turning off a required category, or a digest for another channel than email, for a required category or before a digest time is set (`invalid_preference`)", body = Problem, content_type = "application/problem+json"),
        UserRouteProblems))]
pub async fn set(
    caller: Caller,
    path: web::Path<String>,
    body: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let category = known_category(path.into_inner(), state.store.notification_rules())?;
    let changes = crate::http::support::body::json_object(body).await?;
    let rules = state.store.notification_rules();
    let mut choices = ChannelChoices::default();
    for (name, value) in changes {
        let channel = offered_channel(&name, rules)?;
        let delivery = delivery(&category, &name, &value, rules)?;
        if delivery == Delivery::Digest {
            digest_allowed(&caller, &state, &category, channel).await?;
        }
        choices.choose(channel, delivery);
    }
    let standing = state.store.preferences_for(&caller).choose(&category, choices).await?;
    Ok(HttpResponse::Ok().json(CategoryView::of(standing, rules)))
}

/// Channel `name`, if errand offers it here; else the 422 that lists those it does.
pub(in crate::http) fn offered_channel(name: &str, rules: &NotificationRules) -> Result<Channel, AppError> {
    let channel = Channel::parse(name).filter(|channel| rules.channels().any(|offered| offered == *channel));
    channel.ok_or_else(|| {
        let offered: Vec<&str> = rules.channels().map(Channel::as_str).collect();
        AppError::InvalidPreference(format!("there is no channel {name:?}; there are: {}", offered.join(", ")))
    })
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

/// Channel `name`'s new setting for `category`: `true`, `false`, or one of
/// `instant`, `off`, `digest`; never off for a required category.
pub(in crate::http) fn delivery(
    category: &str,
    name: &str,
    value: &Value,
    rules: &NotificationRules,
) -> Result<Delivery, AppError> {
    let delivery = Delivery::parse(value).ok_or_else(|| {
        let digest = if name == Channel::Email.as_str() { ", or \"digest\"" } else { "" };
        AppError::InvalidPreference(format!("{name} must be true or false (\"instant\", \"off\"){digest}, not {value}"))
    })?;
    if delivery == Delivery::Off && rules.is_required(category) {
        return Err(AppError::InvalidPreference(format!(
            "{category} is a required category: its notifications cannot be turned off"
        )));
    }
    Ok(delivery)
}

/// A digest is for email, of a category that is not required (those go at
/// once), once the caller set a digest time.
async fn digest_allowed(caller: &Caller, state: &AppState, category: &str, channel: Channel) -> Result<(), AppError> {
    digest_offered(category, channel, state.store.notification_rules())?;
    let settings = state.store.notification_settings_for(caller).read().await?;
    if settings.and_then(|s| s.digest).is_none() {
        return Err(AppError::InvalidPreference(
            "set a digest time first: PUT /me/notification-settings with \"digest\"".into(),
        ));
    }
    Ok(())
}

/// A digest is for email, of a category that is not required (those go at once).
pub(in crate::http) fn digest_offered(
    category: &str,
    channel: Channel,
    rules: &NotificationRules,
) -> Result<(), AppError> {
    if channel != Channel::Email {
        return Err(AppError::InvalidPreference(format!("only email has a digest, not {}", channel.as_str())));
    }
    if rules.is_required(category) {
        return Err(AppError::InvalidPreference(format!(
            "{category} is a required category: its emails go at once, not in a digest"
        )));
    }
    Ok(())
}

/// Channel `name`'s new setting for `category`, as on or off: `true` or
/// `false`, and never off for a required category. (The webhook channel's,
/// which has no digest.)
pub(in crate::http) fn choice(
    category: &str,
    name: &str,
    value: &Value,
    rules: &NotificationRules,
) -> Result<bool, AppError> {
    if !value.is_boolean() {
        return Err(AppError::InvalidPreference(format!("{name} must be true or false, not {value}")));
    }
    Ok(delivery(category, name, value, rules)? != Delivery::Off)
}
