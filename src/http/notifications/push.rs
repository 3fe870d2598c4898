//! `/me/push-subscriptions`: the devices the caller subscribed to Web Push
//! (a browser's `PushSubscription`, made with errand's VAPID public key,
//! which the list carries). A job's end reaches each of them as far as the
//! caller's `push` preferences allow (`actors::delivery::push_sender`).
//!
//! An endpoint must be on one of the push services' hosts (`[push]
//! allow_hosts`) and pass the outbound rules (HTTPS, public addresses),
//! so that a subscription cannot make errand call anything else.

use actix_web::{HttpRequest, HttpResponse, web};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::config::PushServices;
use crate::domain::Caller;
use crate::http::AppState;
use crate::http::support::problem::{AppError, Problem, UserRouteProblems};
use crate::outbound::policy::OutboundPolicy;
use crate::outbound::web_push::SubscriptionKeys;
use crate::store::{NewPushSubscription, PushSubscription, Subscribed};

/// The longest endpoint taken: push services' are a few hundred bytes.
const MAX_ENDPOINT_BYTES: usize = 2048;

/// What the routes need of `[push]`, when it is enabled.
#[derive(Clone, Debug)]
pub struct PushRules {
    /// The key browsers subscribe with.
    pub vapid_public_key: String,
    pub services: PushServices,
    /// The outbound rules, with `[push] private_hosts` exempt.
    pub outbound: OutboundPolicy,
    pub max_per_user: usize,
}

/// A browser's `PushSubscription.toJSON()`, as `POST` takes it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewSubscription {
    endpoint: String,
    keys: NewKeys,
    /// `PushSubscription.toJSON()` carries it; errand sets each message's own TTL.
    #[serde(default, rename = "expirationTime")]
    _expiration_time: Option<serde_json::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewKeys {
    p256dh: String,
    auth: String,
}

/// A subscribed device (never its keys).
#[derive(Serialize, utoipa::ToSchema)]
pub struct SubscriptionView {
    #[schema(value_type = String, format = Uuid)]
    id: Uuid,
    endpoint: String,
    /// The browser that subscribed, as its `User-Agent` said.
    user_agent: Option<String>,
    created_at: String,
}

impl From<PushSubscription> for SubscriptionView {
    fn from(s: PushSubscription) -> Self {
        Self {
            id: s.id,
            endpoint: s.endpoint,
            user_agent: s.user_agent,
            created_at: crate::jobs::rfc3339(s.created_at),
        }
    }
}

/// The caller's devices, and the key to subscribe another with.
#[derive(Serialize, utoipa::ToSchema)]
pub struct SubscriptionList {
    /// errand's VAPID public key (base64url): `applicationServerKey` for `pushManager.subscribe`.
    vapid_public_key: String,
    subscriptions: Vec<SubscriptionView>,
}

impl PushRules {
    /// The rules of `settings`, when push is enabled (its keys were checked at start-up).
    pub fn of(settings: &crate::config::WebPushSettings) -> Option<Self> {
        let vapid_public_key = settings.vapid_public_key.clone().filter(|_| settings.enabled)?;
        Some(Self {
            vapid_public_key,
            services: settings.services(),
            outbound: OutboundPolicy::new(settings.private_hosts.iter().cloned()),
            max_per_user: settings.max_subscriptions_per_user.get(),
        })
    }
}

fn rules(state: &AppState) -> Result<&PushRules, AppError> {
    state.settings.push.as_ref().ok_or(AppError::PushNotEnabled)
}

/// `GET /me/push-subscriptions`: the caller's devices, oldest first.
#[utoipa::path(get, path = "/me/push-subscriptions", tag = "notifications",
    responses((status = 200, description = "The caller's devices and errand's VAPID public key", body = SubscriptionList),
        (status = 404, description = "This errand does not offer Web Push (`push_not_enabled`)", body = Problem, content_type = "application/problem+json"),
        UserRouteProblems))]
pub async fn list(caller: Caller, state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    let rules = rules(&state)?;
    let subscriptions = state.store.push_subscriptions_for(&caller).list().await?;
    Ok(HttpResponse::Ok().json(SubscriptionList {
        vapid_public_key: rules.vapid_public_key.clone(),
        subscriptions: subscriptions.into_iter().map(SubscriptionView::from).collect(),
    }))
}

/// `POST /me/push-subscriptions`: subscribes a device (the same endpoint
/// again renews its keys).
#[utoipa::path(post, path = "/me/push-subscriptions", tag = "notifications",
    request_body(content = Object, description = "A browser's `PushSubscription.toJSON()`: `endpoint` and `keys` (`p256dh`, `auth`)"),
    responses((status = 201, description = "Subscribed", body = SubscriptionView),
        (status = 200, description = "Already subscribed: its keys renewed", body = SubscriptionView),
        (status = 400, description = "A body that is not such an object (`bad_request`)", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "This errand does not offer Web Push (`push_not_enabled`)", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "An endpoint off the push services' hosts or the outbound rules, keys that are not a subscription's, or the caller's most devices already (`invalid_push_subscription`)", body = Problem, content_type = "application/problem+json"),
        UserRouteProblems))]
pub async fn subscribe(
    caller: Caller,
    request: HttpRequest,
    body: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let rules = rules(&state)?;
    let new: NewSubscription = crate::http::support::body::json(body).await?;
    let invalid = AppError::InvalidPushSubscription;
    if new.endpoint.len() > MAX_ENDPOINT_BYTES {
        return Err(invalid(format!("endpoint: longer than {MAX_ENDPOINT_BYTES} bytes, which no push service's is")));
    }
    let endpoint =
        rules.outbound.check(&new.endpoint).await.map_err(|refused| invalid(format!("endpoint: {refused}")))?;
    if !rules.services.allows(&endpoint) {
        let host = endpoint.host_str().unwrap_or_default();
        return Err(invalid(format!("endpoint: {host} is not a push service errand sends to (push.allow_hosts)")));
    }
    SubscriptionKeys::parse(&new.keys.p256dh, &new.keys.auth).map_err(|e| invalid(e.to_string()))?;
    let user_agent = request.headers().get("user-agent").and_then(|v| v.to_str().ok()).map(|ua| truncate(ua, 300));
    let subscribed = NewPushSubscription {
        endpoint: endpoint.as_str(),
        p256dh: &new.keys.p256dh,
        auth: &new.keys.auth,
        user_agent: user_agent.as_deref(),
    };
    match state.store.push_subscriptions_for(&caller).subscribe(subscribed, rules.max_per_user).await? {
        Subscribed::Created(s) => Ok(HttpResponse::Created().json(SubscriptionView::from(s))),
        Subscribed::Renewed(s) => Ok(HttpResponse::Ok().json(SubscriptionView::from(s))),
        Subscribed::TooMany => {
            Err(invalid(format!("you have {} devices subscribed, the most: unsubscribe one first", rules.max_per_user)))
        }
    }
}

/// `DELETE /me/push-subscriptions/{id}`: unsubscribes one of the caller's devices.
#[utoipa::path(delete, path = "/me/push-subscriptions/{id}", tag = "notifications",
    params(("id" = String, Path, format = Uuid, description = "The subscription's id")),
    responses((status = 204, description = "Unsubscribed: the device hears of nothing more"),
        (status = 404, description = "No such device of the caller's (`not_found`), or no Web Push here (`push_not_enabled`)", body = Problem, content_type = "application/problem+json"),
        UserRouteProblems))]
pub async fn unsubscribe(
    caller: Caller,
    path: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    rules(&state)?;
    let id = crate::http::path_id(&path)?;
    if state.store.push_subscriptions_for(&caller).unsubscribe(id).await? {
        Ok(HttpResponse::NoContent().finish())
    } else {
        Err(AppError::NotFound)
    }
}

/// `text` cut to at most `max` bytes, at a character boundary.
fn truncate(text: &str, max: usize) -> String {
    let end = (0..=max.min(text.len())).rev().find(|i| text.is_char_boundary(*i)).unwrap_or(0);
    text[..end].to_owned()
}
