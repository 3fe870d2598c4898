//! The HTTP API, a folder per feature, each declaring its own routes
//! (`support/routing.rs`). Handlers parse and authenticate, then submit
//! through the caller's tenant supervisor, or read and act through the
//! store's door scoped to the caller; they never do the work. (The
//! operators' routes, which span tenants, use the store's operator door:
//! see `admin/`.)

mod admin;
mod auth;
mod jobs;
mod links;
mod notifications;
mod schedules;
mod site;
pub mod support;
mod webhooks;
mod worker_api;

use actix::prelude::*;
use actix_web::dev::Server;
use actix_web::{App, HttpResponse, HttpServer, web};

pub use auth::ExternalWorker;
pub use support::body::guard_body;
pub use support::request_id::request_id;
use support::routing::{RouteTable, Routes};

use crate::actors::{Broker, Completer, ListenerHealth, Notifier, Sightings, SupervisorFor, SupervisorRegistry};
use crate::config::{NotificationSettings, Settings};
use crate::domain::Caller;
use crate::http::support::problem::AppError;
use crate::jobs::JobTypes;
use crate::outbound::links::JobLinks;
use crate::storage::{ResultFile, Storage};
use crate::store::Store;

/// What handlers share: the engine's actors and stores, and the settings
/// they read (resolved once, in [`HandlerSettings`]).
#[derive(Clone)]
pub struct AppState {
    pub registry: Addr<SupervisorRegistry>,
    pub notifier: Addr<Notifier>,
    pub store: Store,
    pub job_types: JobTypes,
    pub auth: auth::Authenticator,
    pub storage: Storage,
    /// Checks the signed links of emails.
    pub links: JobLinks,
    /// `GET /openapi.json`, built and written out once.
    pub openapi: web::Bytes,
    /// Cancelled when the process shuts down: live streams end.
    pub closing_streams: tokio_util::sync::CancellationToken,
    /// Leases jobs to external workers.
    pub broker: Addr<Broker>,
    /// Records the ends external workers report.
    pub completer: Addr<Completer>,
    /// The user routes' request budgets.
    pub rate_limits: support::rate_limit::RateLimits,
    /// Whether this process hears the database's announcements (`/readyz`).
    pub listener: std::sync::Arc<ListenerHealth>,
    /// Who signed in (for schedules: `actors::upkeep::sightings`).
    pub sightings: std::sync::Arc<Sightings>,
    /// What renders emails, where email is enabled (the templates' previews).
    pub emails: Option<crate::outbound::mail::SmtpMailer>,
    pub settings: HandlerSettings,
}

/// What handlers read from the configuration, resolved once at start-up.
#[derive(Clone)]
pub struct HandlerSettings {
    pub stream: NotificationSettings,
    /// How long a download URL handed out works.
    pub url_expiry: std::time::Duration,
    /// How long result files are kept (uploads by external workers).
    pub result_retention: std::time::Duration,
    /// The largest result file an external worker may store.
    pub max_upload_bytes: u64,
    /// Where people change their notification preferences (the unsubscribe page links there).
    pub preferences_url: String,
    /// Where tenants' webhook endpoints may point.
    pub outbound: crate::outbound::policy::OutboundPolicy,
    /// Endpoints one tenant may register.
    pub max_webhook_endpoints: usize,
    /// Web Push subscriptions' rules, when push is enabled.
    pub push: Option<notifications::push::PushRules>,
    /// Items one batch may have.
    pub max_batch_items: usize,
    /// Schedules one user may have.
    pub max_schedules_per_user: u32,
    /// How long a request's body may take (`support::body::guard_body`).
    pub body_timeout: std::time::Duration,
    /// How often one webhook delivery may be sent again by hand.
    pub redeliver_cooldown: std::time::Duration,
    /// Where the console links a job's trace.
    pub telemetry: crate::config::TelemetrySettings,
}

impl HandlerSettings {
    fn new(settings: &Settings) -> Self {
        Self {
            stream: settings.notifications.clone(),
            url_expiry: settings.storage.url_expiry,
            result_retention: settings.storage.retention,
            max_upload_bytes: settings.storage.max_upload_bytes,
            preferences_url: match &settings.email.preferences_url {
                Some(url) => url.to_string(),
                None => settings.http.public_base_url.join_path("/"),
            },
            outbound: crate::outbound::policy::OutboundPolicy::new(settings.webhooks.allow_hosts.iter().cloned()),
            max_webhook_endpoints: settings.webhooks.max_endpoints_per_tenant.get(),
            push: notifications::push::PushRules::of(&settings.push),
            max_batch_items: settings.batches.max_items.get(),
            max_schedules_per_user: settings.schedules.max_per_user.get(),
            body_timeout: settings.http.body_timeout,
            redeliver_cooldown: settings.webhooks.redeliver_cooldown,
            telemetry: settings.telemetry.clone(),
        }
    }
}

/// What start-up hands the HTTP side: the actors and stores it talks to.
pub struct AppParts {
    pub registry: Addr<SupervisorRegistry>,
    pub notifier: Addr<Notifier>,
    pub store: Store,
    pub job_types: JobTypes,
    pub storage: Storage,
    pub links: JobLinks,
    pub broker: Addr<Broker>,
    pub completer: Addr<Completer>,
    /// Cancelled at shutdown: live streams end.
    pub closing_streams: tokio_util::sync::CancellationToken,
    pub listener: std::sync::Arc<ListenerHealth>,
    pub sightings: std::sync::Arc<Sightings>,
    pub emails: Option<crate::outbound::mail::SmtpMailer>,
}

impl AppState {
    pub fn new(parts: AppParts, settings: &Settings) -> Result<Self, jsonwebtoken::errors::Error> {
        let openapi =
            web::Bytes::from(serde_json::to_vec(&site::openapi::document(&parts.job_types)).unwrap_or_default());
        Ok(Self {
            registry: parts.registry,
            notifier: parts.notifier,
            store: parts.store,
            job_types: parts.job_types,
            auth: auth::Authenticator::new(&settings.auth, settings.i18n.default_locale())?,
            storage: parts.storage,
            links: parts.links,
            openapi,
            closing_streams: parts.closing_streams,
            broker: parts.broker,
            completer: parts.completer,
            listener: parts.listener,
            sightings: parts.sightings,
            emails: parts.emails,
            rate_limits: support::rate_limit::RateLimits::new(support::rate_limit::Budgets {
                per_user: settings.rate_limits.per_user.0,
                creates_per_user: settings.rate_limits.creates_per_user.0,
                per_tenant: settings.rate_limits.per_tenant.0,
                burst: settings.rate_limits.burst,
            }),
            settings: HandlerSettings::new(settings),
        })
    }

    /// A fresh signed URL of a job's result file.
    async fn download_url(&self, file: &ResultFile) -> Result<String, AppError> {
        self.storage.result_url(file, self.settings.url_expiry).await.map_err(|e| AppError::Unavailable(e.to_string()))
    }

    /// Sends `msg` to the caller's tenant supervisor. A supervisor that stopped
    /// for idleness just as the message was sent is replaced, and the message
    /// sent once more.
    async fn ask<M>(&self, caller: &Caller, msg: M) -> Result<M::Result, AppError>
    where
        M: Message + Send + Clone + 'static,
        M::Result: Send,
        crate::actors::JobSupervisor: Handler<M>,
    {
        let supervisor = self.registry.send(SupervisorFor(caller.tenant.clone())).await?;
        match supervisor.send(msg.clone()).await {
            Ok(reply) => Ok(reply),
            Err(_closed) => {
                let supervisor = self.registry.send(SupervisorFor(caller.tenant.clone())).await?;
                Ok(supervisor.send(msg).await?)
            }
        }
    }
}

/// Binds `http.bind` and serves the API over `state` (not yet running:
/// the caller spawns the server and stops it through its handle).
pub fn serve(settings: &Settings, state: AppState) -> std::io::Result<(Server, std::net::SocketAddr)> {
    let listener = std::net::TcpListener::bind(settings.http.bind)?;
    // Accepted connections inherit it: a peer that takes nothing for this
    // long (a zero window: a reader who stopped) is dropped by the kernel,
    // which a response body cannot do, since nothing polls it then.
    socket2::SockRef::from(&listener).set_tcp_user_timeout(Some(settings.http.send_timeout))?;
    let address = listener.local_addr()?;
    let state = web::Data::new(state);
    let mut server = HttpServer::new(move || {
        App::new()
            .wrap(actix_web::middleware::from_fn(guard_body))
            .wrap(actix_web::middleware::from_fn(support::rate_limit::headers))
            .wrap(actix_web::middleware::from_fn(request_id))
            .app_data(state.clone())
            .configure(routes)
    })
    .disable_signals()
    .shutdown_timeout(settings.workers.shutdown_grace.as_secs().max(1));
    if let Some(workers) = settings.http.workers {
        server = server.workers(workers.get());
    }
    Ok((server.listen(listener)?.run(), address))
}

/// Every route, each feature's declared in its folder, in the order
/// actix-web tries them.
pub fn routes(cfg: &mut web::ServiceConfig) {
    register(cfg);
}

/// Registers every route, and answers the table of them (which the OpenAPI
/// document is checked against).
fn register(cfg: &mut web::ServiceConfig) -> RouteTable {
    let mut routes = Routes::new(cfg);
    site::routes(&mut routes);
    jobs::routes(&mut routes);
    schedules::routes(&mut routes);
    admin::routes(&mut routes);
    worker_api::routes(&mut routes);
    links::routes(&mut routes);
    notifications::routes(&mut routes);
    webhooks::routes(&mut routes);
    routes
        .config()
        .app_data(
            web::QueryConfig::default()
                .error_handler(|error, _req| AppError::BadRequest(format!("invalid query string: {error}")).into()),
        )
        .app_data(web::PathConfig::default().error_handler(|_error, _req| AppError::NotFound.into()))
        .default_service(web::to(|| async { Err::<HttpResponse, _>(AppError::NotFound) }));
    routes.into_table()
}

/// The job a `{id}` path segment names; anything but a UUID is a 404, as a
/// job that is not there (or not the caller's) is.
fn job_id(path: &str) -> Result<crate::domain::JobId, AppError> {
    path_id(path).map(crate::domain::JobId)
}

/// A resource's id in the path: anything but a UUID names nothing, a 404.
fn path_id(path: &str) -> Result<uuid::Uuid, AppError> {
    uuid::Uuid::parse_str(path).map_err(|_| AppError::NotFound)
}

/// For `GET /jobs/{id}` and `GET /batches/{id}`: a configured type's name
/// is where its kind is submitted (`POST` only); anything else is an id.
fn read_by_id(path: &str, state: &AppState) -> Result<uuid::Uuid, AppError> {
    if state.job_types.get(path).is_some() {
        return Err(AppError::MethodNotAllowed { method: "GET".into(), allow: "POST" });
    }
    path_id(path)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::http::support::routing::shape;

    /// The pages and files people and browsers load: routed, not API operations.
    const UNDOCUMENTED: &[&str] = &["/", "/admin", "/client/{}", "/openapi.json", "/docs"];

    #[test]
    fn the_route_table_and_the_openapi_document_name_the_same_operations() {
        let mut table = RouteTable::new();
        let _app = App::new().configure(|cfg| table = register(cfg));
        let redoc = format!("/docs/{}", site::docs::REDOC_BUNDLE);
        let routed: BTreeSet<(String, String)> = table
            .iter()
            .filter(|entry| !UNDOCUMENTED.contains(&shape(&entry.path).as_str()) && entry.path != redoc)
            .flat_map(|entry| {
                entry.methods.iter().filter(|m| **m != "HEAD").map(|m| (shape(&entry.path), m.to_string()))
            })
            .collect();
        let document = site::openapi::document(&JobTypes::default());
        let documented: BTreeSet<(String, String)> = document["paths"]
            .as_object()
            .expect("the document has paths")
            .iter()
            .flat_map(|(path, operations)| {
                let methods = operations.as_object().expect("a path has operations").keys();
                methods.map(|method| (shape(path), method.to_uppercase())).collect::<Vec<_>>()
            })
            .collect();
        assert!(routed.len() > 50, "{routed:?}");
        let undocumented: Vec<_> = routed.difference(&documented).collect();
        let unrouted: Vec<_> = documented.difference(&routed).collect();
        assert!(undocumented.is_empty(), "routed but not in the OpenAPI document: {undocumented:?}");
        assert!(unrouted.is_empty(), "in the OpenAPI document but not routed: {unrouted:?}");
    }

    #[test]
    fn a_route_left_out_of_the_table_would_be_seen() {
        assert_eq!(shape("/jobs/{id_or_type}"), shape("/jobs/{job_type}"));
        assert_eq!(shape("/client/{path:.*}"), "/client/{}");
        assert_ne!(shape("/jobs/{id}/result"), shape("/jobs/{id}"));
    }
}
