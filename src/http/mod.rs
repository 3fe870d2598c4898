//! The HTTP API: one route table, one file per resource. Handlers parse and
//! authenticate, then ask the caller's tenant supervisor; they never touch
//! the job table themselves and never do the work. (The operators' routes,
//! which span tenants, use the store's operator door: see `admin.rs`.)

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
use actix_web::{App, FromRequest, HttpRequest, HttpResponse, HttpServer, Resource, Responder, web};

pub use auth::ExternalWorker;
pub use support::body::guard_body;
pub use support::request_id::request_id;

use crate::actors::{Broker, Completer, ListenerHealth, Notifier, SupervisorFor, SupervisorRegistry};
use crate::config::{NotificationSettings, Settings};
use crate::domain::Caller;
use crate::http::support::error::AppError;
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
    pub outbound: crate::outbound::guard::OutboundPolicy,
    /// Endpoints one tenant may register.
    pub max_webhook_endpoints: usize,
    /// Items one batch may have.
    pub max_batch_items: usize,
    /// Schedules one user may have.
    pub max_schedules_per_user: u32,
    /// How long a request's body may take (`support::body::guard_body`).
    pub body_timeout: std::time::Duration,
    /// How often one webhook delivery may be sent again by hand.
    pub redeliver_cooldown: std::time::Duration,
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
            outbound: crate::outbound::guard::OutboundPolicy::new(settings.webhooks.allow_hosts.iter().cloned()),
            max_webhook_endpoints: settings.webhooks.max_endpoints_per_tenant.get(),
            max_batch_items: settings.batches.max_items.get(),
            max_schedules_per_user: settings.schedules.max_per_user.get(),
            body_timeout: settings.http.body_timeout,
            redeliver_cooldown: settings.webhooks.redeliver_cooldown,
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
            auth: auth::Authenticator::new(&settings.auth)?,
            storage: parts.storage,
            links: parts.links,
            openapi,
            closing_streams: parts.closing_streams,
            broker: parts.broker,
            completer: parts.completer,
            listener: parts.listener,
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

/// The route table. Each path is a resource that answers its own methods;
/// any other method gets a 405 naming them (`resource`).
pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.service(get_or_head("/", site::client::demo_page))
        // Before the `/admin` scope of the operators' routes, which would take the path otherwise.
        .service(get_or_head("/admin", site::client::admin_page))
        .service(get_or_head("/client/{path:.*}", site::client::file))
        .service(get_or_head("/openapi.json", openapi_json))
        .service(get_or_head("/docs", site::docs::page))
        .service(get_or_head(&format!("/docs/{}", site::docs::REDOC_BUNDLE), site::docs::redoc))
        .service(get_or_head("/healthz", site::health::healthz))
        .service(get_or_head("/readyz", site::health::readyz))
        .service(get("/metrics", site::health::metrics))
        .service(
            web::scope("/jobs")
                .service(get("", jobs::list))
                // `/jobs/{id}` reads a job, `/jobs/{type}` submits one.
                .service(id_or_type().route(web::get().to(jobs::get)).route(web::post().to(jobs::submit)))
                .service(get("/{id}/result", jobs::result))
                .service(post("/{id}/cancel", jobs::cancel)),
        )
        .service(
            web::scope("/schedules")
                .service(get("", schedules::list))
                // Before `/{id_or_type}`; two segments, so it never takes a schedule's path.
                .service(
                    resource("/pause/{token}", "GET, HEAD, POST")
                        .route(web::get().to(links::schedule_pause::ask))
                        .route(web::head().to(links::schedule_pause::ask))
                        .route(web::post().to(links::schedule_pause::confirm)),
                )
                // `/schedules/{type}` makes one, `/schedules/{id}` reads, changes or deletes one.
                .service(
                    id_or_type_answering("GET, PATCH, DELETE", "POST")
                        .route(web::get().to(schedules::get))
                        .route(web::patch().to(schedules::change))
                        .route(web::delete().to(schedules::delete))
                        .route(web::post().to(schedules::create)),
                ),
        )
        .service(
            web::scope("/batches")
                // `/batches/{id}` reads a batch, `/batches/{type}` submits one.
                .service(
                    id_or_type().route(web::get().to(jobs::batches::get)).route(web::post().to(jobs::batches::submit)),
                )
                .service(get("/{id}/report", jobs::batches::report))
                .service(post("/{id}/cancel", jobs::batches::cancel)),
        )
        .service(
            web::scope("/admin")
                .service(get("/jobs", admin::list))
                // Before `/jobs/{id}`, which would take the paths otherwise.
                .service(post("/jobs/retry", admin::bulk::retry_matching))
                .service(post("/jobs/cancel", admin::bulk::cancel_matching))
                .service(get("/jobs/{id}", admin::get))
                .service(post("/jobs/{id}/retry", admin::retry))
                .service(post("/jobs/{id}/cancel", admin::cancel))
                .service(get("/queues", admin::queues))
                .service(get("/actions", admin::actions::list))
                .service(get("/overview", admin::overview::read))
                .service(
                    resource("/tenants/{tenant}/quotas", "GET, PUT")
                        .route(web::get().to(admin::quotas::get))
                        .route(web::put().to(admin::quotas::set)),
                ),
        )
        .service(
            web::scope("/worker/v1")
                .service(post("/claim", worker_api::claim))
                .service(post("/jobs/{id}/heartbeat", worker_api::attempts::heartbeat))
                .service(post("/jobs/{id}/progress", worker_api::attempts::progress))
                .service(post("/jobs/{id}/checkpoint", worker_api::attempts::checkpoint))
                .service(post("/jobs/{id}/complete", worker_api::attempts::complete))
                .service(post("/jobs/{id}/fail", worker_api::attempts::fail))
                .service(resource("/jobs/{id}/result", "PUT").route(web::put().to(worker_api::files::upload)))
                .service(post("/jobs/{id}/result-url", worker_api::files::upload_url)),
        )
        .service(get("/files/{key:.*}", links::files::download))
        .service(get("/links/jobs/{id}", links::job_link::open))
        .service(
            resource("/unsubscribe/{token}", "GET, HEAD, POST")
                .route(web::get().to(links::unsubscribe::ask))
                .route(web::head().to(links::unsubscribe::ask))
                .route(web::post().to(links::unsubscribe::confirm)),
        )
        .service(
            web::scope("/notifications")
                .service(get("", notifications::list))
                .service(post("/read-all", notifications::mark_all_read))
                .service(post("/stream-tickets", notifications::stream_ticket))
                .service(get("/stream", notifications::stream))
                .service(post("/{id}/read", notifications::mark_read)),
        )
        .service(
            resource("/webhooks", "GET, HEAD, POST")
                .route(web::get().to(webhooks::list))
                .route(web::head().to(webhooks::list))
                .route(web::post().to(webhooks::register)),
        )
        // Before `/webhooks/{id}`, which would take the path otherwise.
        .service(get_or_head("/webhooks/preferences", webhooks::preferences::list))
        .service(resource("/webhooks/preferences/{category}", "PUT").route(web::put().to(webhooks::preferences::set)))
        .service(resource("/webhooks/{id}", "DELETE").route(web::delete().to(webhooks::remove)))
        .service(get("/webhooks/{id}/deliveries", webhooks::deliveries))
        .service(post("/webhooks/{id}/deliveries/{delivery}/redeliver", webhooks::redeliver))
        .service(
            web::scope("/me/notification-preferences")
                .service(get("", notifications::preferences::list))
                .service(resource("/{category}", "PUT").route(web::put().to(notifications::preferences::set))),
        )
        .app_data(
            web::QueryConfig::default()
                .error_handler(|error, _req| AppError::BadRequest(format!("invalid query string: {error}")).into()),
        )
        .app_data(web::PathConfig::default().error_handler(|_error, _req| AppError::NotFound.into()))
        .default_service(web::to(|| async { Err::<HttpResponse, _>(AppError::NotFound) }));
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

/// `/{id_or_type}` of `/jobs` and `/batches`: `GET` of an id reads one,
/// `POST` to a type submits one. Any other method gets a 405 naming the one
/// that path answers. (A `GET` of a type is the handlers' 405.)
fn id_or_type() -> Resource {
    id_or_type_answering("GET", "POST")
}

/// `/{id_or_type}`, whose id answers `by_id` and whose type `by_type`; any
/// other method gets a 405 naming what that path answers.
fn id_or_type_answering(by_id: &'static str, by_type: &'static str) -> Resource {
    web::resource("/{id_or_type}").default_service(web::to(move |req: HttpRequest| async move {
        let id = req.match_info().get("id_or_type").is_some_and(|s| uuid::Uuid::parse_str(s).is_ok());
        method_not_allowed(&req, if id { by_id } else { by_type })
    }))
}

/// For `GET /jobs/{id}` and `GET /batches/{id}`: a configured type's name
/// is where its kind is submitted (`POST` only); anything else is an id.
fn read_by_id(path: &str, state: &AppState) -> Result<uuid::Uuid, AppError> {
    if state.job_types.get(path).is_some() {
        return Err(AppError::MethodNotAllowed { method: "GET".into(), allow: "POST" });
    }
    path_id(path)
}

/// `path`, whose routes answer `allow`; any other method gets a 405 saying so.
fn resource(path: &str, allow: &'static str) -> Resource {
    web::resource(path).default_service(web::to(move |req: HttpRequest| async move { method_not_allowed(&req, allow) }))
}

fn get<F, Args>(path: &str, handler: F) -> Resource
where
    F: actix_web::Handler<Args>,
    Args: FromRequest + 'static,
    F::Output: Responder + 'static,
{
    resource(path, "GET").route(web::get().to(handler))
}

/// [`get`] that also answers `HEAD` (the same headers, no body: actix-web
/// leaves it out), for the pages, files and probes that load balancers, link
/// checkers and caches ask about. Not for routes whose GET does work.
fn get_or_head<F, Args>(path: &str, handler: F) -> Resource
where
    F: actix_web::Handler<Args>,
    Args: FromRequest + 'static,
    F::Output: Responder + 'static,
{
    let get_or_head = actix_web::guard::Any(actix_web::guard::Get()).or(actix_web::guard::Head());
    resource(path, "GET, HEAD").route(web::route().guard(get_or_head).to(handler))
}

fn post<F, Args>(path: &str, handler: F) -> Resource
where
    F: actix_web::Handler<Args>,
    Args: FromRequest + 'static,
    F::Output: Responder + 'static,
{
    resource(path, "POST").route(web::post().to(handler))
}

fn method_not_allowed(req: &HttpRequest, allow: &'static str) -> Result<HttpResponse, AppError> {
    Err(AppError::MethodNotAllowed { method: req.method().to_string(), allow })
}

/// The OpenAPI document (no token needed: it describes, it does not serve data).
async fn openapi_json(state: web::Data<AppState>) -> HttpResponse {
    HttpResponse::Ok().content_type(actix_web::http::header::ContentType::json()).body(state.openapi.clone())
}
