//! The HTTP API: one route table, one file per resource. Handlers parse and
//! authenticate, then ask the caller's tenant supervisor; they never touch
//! the job table themselves and never do the work.

mod auth;
mod body;
mod docs;
mod files;
mod health;
mod jobs;
mod jwks;
mod notifications;
mod openapi;
mod page;
mod request_id;

use actix::prelude::*;
use actix_web::{HttpResponse, web};

pub use auth::{Claims, TokenIssuer};
pub use request_id::{REQUEST_ID, request_id};

use crate::actors::{Notifier, SupervisorFor, SupervisorRegistry};
use crate::config::{NotificationSettings, Settings};
use crate::domain::Caller;
use crate::error::AppError;
use crate::jobs::JobTypes;
use crate::storage::{ObjectKey, ResultFile, Storage};
use crate::store::Store;

/// What handlers share.
#[derive(Clone)]
pub struct AppState {
    pub registry: Addr<SupervisorRegistry>,
    pub notifier: Addr<Notifier>,
    pub store: Store,
    pub job_types: JobTypes,
    pub stream: NotificationSettings,
    pub auth: auth::Authenticator,
    pub storage: Storage,
    /// How long a download URL handed out works.
    pub url_expiry: std::time::Duration,
    /// `GET /openapi.json`, built once.
    pub openapi: std::sync::Arc<serde_json::Value>,
}

impl AppState {
    pub fn new(
        registry: Addr<SupervisorRegistry>,
        notifier: Addr<Notifier>,
        store: Store,
        job_types: JobTypes,
        storage: Storage,
        settings: &Settings,
    ) -> Result<Self, jsonwebtoken::errors::Error> {
        let openapi = std::sync::Arc::new(openapi::document(&job_types));
        Ok(Self {
            registry,
            notifier,
            store,
            job_types,
            stream: settings.notifications.clone(),
            auth: auth::Authenticator::new(&settings.auth)?,
            storage,
            url_expiry: settings.storage.url_expiry,
            openapi,
        })
    }

    /// A fresh signed URL of a job's result file.
    async fn download_url(&self, file: &ResultFile) -> Result<String, AppError> {
        let key = ObjectKey::from_stored(file.storage_key.clone());
        self.storage
            .download_url(&key, &file.file_name, self.url_expiry)
            .await
            .map_err(|e| AppError::Unavailable(e.to_string()))
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

/// The route table.
pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/openapi.json", web::get().to(openapi_json))
        .route("/docs", web::get().to(docs::page))
        .route(&format!("/docs/{}", docs::REDOC_BUNDLE), web::get().to(docs::redoc))
        .route("/healthz", web::get().to(health::healthz))
        .route("/readyz", web::get().to(health::readyz))
        .route("/metrics", web::get().to(health::metrics))
        .service(
            web::scope("/jobs")
                .route("", web::get().to(jobs::list))
                .route("/{id}", web::get().to(jobs::get))
                .route("/{id}/result", web::get().to(jobs::result))
                .route("/{job_type}", web::post().to(jobs::submit)),
        )
        .route("/files/{key:.*}", web::get().to(files::download))
        .service(
            web::scope("/notifications")
                .route("", web::get().to(notifications::list))
                .route("/read-all", web::post().to(notifications::mark_all_read))
                .route("/stream-tickets", web::post().to(notifications::stream_ticket))
                .route("/stream", web::get().to(notifications::stream))
                .route("/{id}/read", web::post().to(notifications::mark_read)),
        )
        .app_data(
            web::QueryConfig::default()
                .error_handler(|error, _req| AppError::BadRequest(format!("invalid query string: {error}")).into()),
        )
        .app_data(web::PathConfig::default().error_handler(|_error, _req| AppError::NotFound.into()))
        .default_service(web::to(not_found));
}

/// The OpenAPI document (no token needed: it describes, it does not serve data).
async fn openapi_json(state: web::Data<AppState>) -> HttpResponse {
    HttpResponse::Ok().json(&*state.openapi)
}

/// No route matched: 405 with `Allow` when the path is one of ours asked
/// with another method (`TRACE /healthz`), else 404.
async fn not_found(req: actix_web::HttpRequest) -> Result<HttpResponse, AppError> {
    if !req.resource_map().has_resource(req.path()) {
        return Err(AppError::NotFound);
    }
    Err(AppError::MethodNotAllowed { method: req.method().to_string(), allow: allowed_methods(req.path()) })
}

/// The methods the route table answers on `path` (one of its paths).
fn allowed_methods(path: &str) -> &'static str {
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    match segments.as_slice() {
        // `/jobs/{id}` reads a job, `/jobs/{type}` submits one.
        ["jobs", id_or_type] if uuid::Uuid::parse_str(id_or_type).is_ok() => "GET",
        ["jobs", _] => "POST",
        ["notifications", "read-all" | "stream-tickets"] | ["notifications", _, "read"] => "POST",
        _ => "GET",
    }
}
