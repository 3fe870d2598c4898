//! `/webhooks`: a tenant's admins register, list and remove the endpoints
//! that hear when the tenant's jobs end (a user token whose `scope` holds
//! `tenant_admin`; any other user gets 403). Each endpoint's secret
//! (`whsec_…`, as Standard Webhooks writes it) is shown once, in the answer
//! that made it. Endpoints must be HTTPS on public addresses (see
//! [`crate::outbound::policy`]).

pub mod preferences;

use actix_web::{HttpResponse, web};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};
use sha2::Digest;
use uuid::Uuid;

use crate::http::AppState;
use crate::http::auth::TenantAdmin;
use crate::http::support::pagination::{self, rfc3339};
use crate::http::support::problem::{AppError, Problem, Unauthenticated, Unavailable, UserRouteProblems};
use crate::http::support::routing::Routes;
use crate::store::{DeliveryRecord, Redelivery, Registered, WebhookEndpoint};

/// The events an endpoint may ask for: how a job ended, and a job type
/// paused (by an operator, or its breaker) for the tenant or everywhere.
const EVENTS: [&str; 4] = ["job.completed", "job.failed", "job.cancelled", "type.paused"];

/// An endpoint as its tenant's admins see it.
#[derive(Serialize, utoipa::ToSchema)]
pub struct EndpointView {
    #[schema(value_type = String, format = Uuid)]
    id: Uuid,
    url: String,
    events: Vec<String>,
    /// The admin who registered it.
    created_by: String,
    created_at: String,
    /// `false` once deliveries kept failing (see `disabled_reason`).
    enabled: bool,
    disabled_reason: Option<String>,
}

impl From<WebhookEndpoint> for EndpointView {
    fn from(e: WebhookEndpoint) -> Self {
        Self {
            id: e.id,
            url: e.url,
            events: e.events,
            created_by: e.created_by,
            created_at: rfc3339(e.created_at),
            enabled: e.disabled_at.is_none(),
            disabled_reason: e.disabled_reason,
        }
    }
}

/// A new endpoint, with the secret that signs its deliveries: shown only now.
#[derive(Serialize, utoipa::ToSchema)]
pub struct CreatedEndpoint {
    #[serde(flatten)]
    endpoint: EndpointView,
    /// `whsec_` and the base64 of the 32-byte key (Standard Webhooks).
    secret: String,
}

/// The tenant's endpoints.
#[derive(Serialize, utoipa::ToSchema)]
pub struct EndpointList {
    webhooks: Vec<EndpointView>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewEndpoint {
    url: String,
    events: Vec<String>,
}

/// `POST /webhooks`: registers an endpoint for the admin's tenant.
#[utoipa::path(post, path = "/webhooks", tag = "webhooks",
    request_body(content = Object, description = "`url` (HTTPS, a public address) and `events`: any of `job.completed`, `job.failed`, `job.cancelled`, `type.paused`"),
    responses((status = 201, description = "The endpoint, with its secret: shown only this once", body = CreatedEndpoint),
        (status = 400, description = "A body that is not such an object (`bad_request`)", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "Not a tenant admin's token (`forbidden`)", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "A URL errand may not call, an unknown or missing event, or the tenant's most endpoints already (`invalid_webhook`)", body = Problem, content_type = "application/problem+json"),
        UserRouteProblems))]
pub async fn register(
    TenantAdmin(admin): TenantAdmin,
    body: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let new: NewEndpoint = crate::http::support::body::json(body).await?;
    let invalid = |why: String| AppError::InvalidWebhook(why);
    if new.events.is_empty() {
        return Err(invalid(format!("events must name at least one of: {}", EVENTS.join(", "))));
    }
    if let Some(unknown) = new.events.iter().find(|event| !EVENTS.contains(&event.as_str())) {
        return Err(invalid(format!("there is no event {unknown:?}; there are: {}", EVENTS.join(", "))));
    }
    let mut events = new.events;
    events.sort();
    events.dedup();
    let url = state.settings.outbound.check(&new.url).await.map_err(|refused| invalid(format!("url: {refused}")))?;
    let secret = new_secret();
    let registered = state
        .store
        .webhooks_for_tenant(&admin.tenant)
        .register(url.as_str(), &events, &secret, &admin, state.settings.max_webhook_endpoints)
        .await?;
    match registered {
        Registered::Created(endpoint) => {
            Ok(HttpResponse::Created().json(CreatedEndpoint { endpoint: endpoint.into(), secret }))
        }
        Registered::TooMany { limit } => {
            Err(invalid(format!("this tenant has {limit} endpoints already, its most: remove one first")))
        }
    }
}

/// `GET /webhooks`: the admin's tenant's endpoints, oldest first (no secrets).
#[utoipa::path(get, path = "/webhooks", tag = "webhooks",
    responses((status = 200, description = "The tenant's endpoints", body = EndpointList),
        (status = 403, description = "Not a tenant admin's token (`forbidden`)", body = Problem, content_type = "application/problem+json"),
        UserRouteProblems))]
pub async fn list(TenantAdmin(admin): TenantAdmin, state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    let endpoints = state.store.webhooks_for_tenant(&admin.tenant).list().await?;
    Ok(HttpResponse::Ok().json(EndpointList { webhooks: endpoints.into_iter().map(EndpointView::from).collect() }))
}

/// `DELETE /webhooks/{id}`: removes one of the tenant's endpoints.
#[utoipa::path(delete, path = "/webhooks/{id}", tag = "webhooks",
    params(("id" = String, Path, format = Uuid, description = "The endpoint's id")),
    responses((status = 204, description = "Removed: it hears of nothing more"),
        (status = 403, description = "Not a tenant admin's token (`forbidden`)", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such endpoint of this tenant (`not_found`)", body = Problem, content_type = "application/problem+json"),
        UserRouteProblems))]
pub async fn remove(
    TenantAdmin(admin): TenantAdmin,
    path: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let id = crate::http::path_id(&path)?;
    if state.store.webhooks_for_tenant(&admin.tenant).remove(id).await? {
        Ok(HttpResponse::NoContent().finish())
    } else {
        Err(AppError::NotFound)
    }
}

/// A delivery as the endpoint's log shows it.
#[derive(Serialize, utoipa::ToSchema)]
pub struct DeliveryView {
    /// Also its `webhook-id`.
    #[schema(value_type = String, format = Uuid)]
    id: Uuid,
    /// The job whose end it tells (absent: another event, e.g. `type.paused`).
    #[schema(value_type = Option<String>, format = Uuid)]
    #[serde(skip_serializing_if = "Option::is_none")]
    job_id: Option<Uuid>,
    event: String,
    /// `pending`, `sending`, `delivered` or `failed`.
    state: String,
    attempts: i32,
    /// The endpoint's status at the last attempt (absent: no answer).
    last_status: Option<i32>,
    last_error: Option<String>,
    last_latency_ms: Option<i32>,
    created_at: String,
    delivered_at: Option<String>,
    /// When a pending delivery is tried next.
    next_attempt_at: Option<String>,
}

impl From<DeliveryRecord> for DeliveryView {
    fn from(d: DeliveryRecord) -> Self {
        let waiting = d.state == "pending";
        Self {
            id: d.id,
            job_id: d.job_id,
            event: d.event,
            state: d.state,
            attempts: d.attempts,
            last_status: d.last_status,
            last_error: d.last_error,
            last_latency_ms: d.last_latency_ms,
            created_at: rfc3339(d.created_at),
            delivered_at: d.delivered_at.map(rfc3339),
            next_attempt_at: waiting.then(|| rfc3339(d.next_attempt_at)),
        }
    }
}

/// A page of an endpoint's deliveries, newest first.
#[derive(Serialize, utoipa::ToSchema)]
pub struct DeliveryPage {
    deliveries: Vec<DeliveryView>,
    /// Pass as `cursor` for the next page; absent on the last.
    next_cursor: Option<String>,
}

#[derive(Deserialize)]
pub struct DeliveryQuery {
    limit: Option<u32>,
    cursor: Option<String>,
}

/// `GET /webhooks/{id}/deliveries`: the endpoint's delivery log, newest first.
#[utoipa::path(get, path = "/webhooks/{id}/deliveries", tag = "webhooks",
    params(("id" = String, Path, format = Uuid, description = "The endpoint's id"),
        ("limit" = Option<u32>, Query, minimum = 1, maximum = 100, description = "Deliveries per page (default 20)"),
        ("cursor" = Option<String>, Query, description = "`next_cursor` of the previous page")),
    responses((status = 200, description = "A page of the endpoint's deliveries", body = DeliveryPage),
        (status = 400, description = "Bad limit or cursor (`bad_request`)", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "Not a tenant admin's token (`forbidden`)", body = Problem, content_type = "application/problem+json"),
        UserRouteProblems))]
pub async fn deliveries(
    TenantAdmin(admin): TenantAdmin,
    path: web::Path<String>,
    query: web::Query<DeliveryQuery>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let endpoint = crate::http::path_id(&path)?;
    let limit = pagination::limit(query.limit)?;
    let before = query.cursor.as_deref().map(pagination::decode_cursor).transpose()?;
    let mut found =
        state.store.webhooks_for_tenant(&admin.tenant).deliveries(endpoint, before, i64::from(limit) + 1).await?;
    let more = found.len() > limit as usize;
    found.truncate(limit as usize);
    let next_cursor = more.then(|| found.last().map(|d| pagination::encode_cursor(d.id))).flatten();
    Ok(HttpResponse::Ok()
        .json(DeliveryPage { deliveries: found.into_iter().map(DeliveryView::from).collect(), next_cursor }))
}

/// `POST /webhooks/{id}/deliveries/{delivery}/redeliver`: sends a delivered
/// or failed delivery again, as a new series of attempts (the same
/// `webhook-id`); one still pending or being sent is left as it is. A
/// delivery is sent again at most once per `webhooks.redeliver_cooldown`:
/// errand is not a tool for sending one request to an address in a loop.
#[utoipa::path(post, path = "/webhooks/{id}/deliveries/{delivery}/redeliver", tag = "webhooks",
    params(("id" = String, Path, format = Uuid, description = "The endpoint's id"),
        ("delivery" = String, Path, format = Uuid, description = "The delivery's id (its webhook-id)")),
    responses((status = 202, description = "The delivery, due now (or already on its way)", body = DeliveryView),
        (status = 403, description = "Not a tenant admin's token (`forbidden`)", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "No such delivery of this tenant's endpoint (`not_found`)", body = Problem, content_type = "application/problem+json"),
        (status = 429, description = "This delivery was sent again within `webhooks.redeliver_cooldown` (`redelivered_too_soon`), or past a rate limit (`rate_limited`)", body = Problem, content_type = "application/problem+json",
        headers(("Retry-After" = u64, description = "Seconds until it may be sent again"))),
        Unauthenticated,
        Unavailable))]
pub async fn redeliver(
    TenantAdmin(admin): TenantAdmin,
    path: web::Path<(String, String)>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let (endpoint, delivery) = path.into_inner();
    let (endpoint, delivery) = (crate::http::path_id(&endpoint)?, crate::http::path_id(&delivery)?);
    let cooldown = state.settings.redeliver_cooldown;
    match state.store.webhooks_for_tenant(&admin.tenant).redeliver(endpoint, delivery, cooldown).await? {
        None => Err(AppError::NotFound),
        Some(Redelivery::Due(again)) => Ok(HttpResponse::Accepted().json(DeliveryView::from(again))),
        Some(Redelivery::TooSoon { wait }) => Err(AppError::RedeliveredTooSoon { cooldown, retry_after: wait }),
    }
}

/// A fresh signing secret: `whsec_` and the base64 of 32 bytes from the
/// operating system's random source (two v4 UUIDs, 244 random bits, spread
/// over the 32 bytes by SHA-256).
fn new_secret() -> String {
    let mut hash = sha2::Sha256::new();
    hash.update(Uuid::new_v4().as_bytes());
    hash.update(Uuid::new_v4().as_bytes());
    format!("whsec_{}", STANDARD.encode(hash.finalize()))
}

/// `/webhooks`: a tenant's endpoints, their deliveries, and the channel's preferences.
pub fn routes(r: &mut Routes) {
    r.resource("/webhooks", "GET, HEAD, POST", |res| {
        res.route(web::get().to(list)).route(web::head().to(list)).route(web::post().to(register))
    })
    // Before `/webhooks/{id}`, which would take the path otherwise.
    .get_or_head("/webhooks/preferences", preferences::list)
    .resource("/webhooks/preferences/{category}", "PUT", |res| res.route(web::put().to(preferences::set)))
    .resource("/webhooks/{id}", "DELETE", |res| res.route(web::delete().to(remove)))
    .get("/webhooks/{id}/deliveries", deliveries)
    .post("/webhooks/{id}/deliveries/{delivery}/redeliver", redeliver);
}
