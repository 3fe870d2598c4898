//! Building and running an errand process: the library entry point that
//! `errand serve` and the tests both call.

use std::future::Future;
use std::net::TcpListener;

use actix::prelude::*;
use actix_web::{App, HttpServer, dev::Server, web};

use crate::actors::{
    Broker, Completer, Dispatcher, DispatcherSettings, Drain, FireDue, Intake, IntakeLinks, LeaseKeeper,
    ListenerHealth, Listeners, Mailer, Notifier, PUBLISH_EVERY, ProgressWriter, Prune, Pruner, RenewLeases,
    RescueExpired, Rescuer, ResultUrls, Scheduler, Shedding, StreamLimits, SupervisorDeps, SupervisorRegistry,
    TotalsPublisher, WebhookSender, spawn_listener,
};
use crate::config::StorageBackend;
use crate::config::{ConfigError, Settings, invalid};
use crate::http::{self, AppParts, AppState};
use crate::jobs::{ExportEnv, HandlerRegistry, JobTypes, PushEnv};
use crate::outbound::links::JobLinks;
use crate::outbound::mail::SmtpMailer;
use crate::storage::{LocalStorage, S3Storage, Storage};
use crate::store::migrations::MigrateError;
use crate::store::{ClaimSpec, ScheduledType, Store};
use secrecy::ExposeSecret;
use sha2::{Digest, Sha256};

/// Why errand could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartupError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("database.url: {0}")]
    Database(#[from] crate::store::pool::postgres::UrlError),
    #[error(transparent)]
    Migrate(#[from] MigrateError),
    #[error("cannot listen on {bind}: {source}")]
    Bind { bind: std::net::SocketAddr, source: std::io::Error },
}

/// The configured result storage. The local backend signs its URLs with
/// `storage.signing_key`, or a key derived from the JWT secret.
fn storage_from(settings: &Settings) -> Result<Storage, ConfigError> {
    let key = match &settings.storage.signing_key {
        Some(key) => key.expose_secret().as_bytes().to_vec(),
        None => Sha256::digest(format!("errand-files\0{}", settings.auth.jwt_secret.expose_secret())).to_vec(),
    };
    Ok(match (settings.storage.backend, &settings.storage.s3) {
        (StorageBackend::S3, Some(s3)) => Storage::S3(S3Storage::new(s3).map_err(|e| invalid("storage.s3", e))?),
        _ => Storage::Local(LocalStorage::new(settings.storage.local_dir.clone(), &settings.http.public_base_url, key)),
    })
}

/// The signer of links in emails: `email.link_secret`, or a key derived from
/// the JWT secret (never the secret itself, and not the file-URL key).
fn job_links_from(settings: &Settings) -> JobLinks {
    let key = match &settings.email.link_secret {
        Some(key) => key.expose_secret().as_bytes().to_vec(),
        None => Sha256::digest(format!("errand-email-links\0{}", settings.auth.jwt_secret.expose_secret())).to_vec(),
    };
    JobLinks::new(key, &settings.http.public_base_url)
}

/// How many exports this process may run at once: each export type's
/// `concurrency` (or the worker limit without one), at most the worker limit.
fn export_slots(settings: &Settings) -> usize {
    let limit = settings.workers.global_limit;
    let exports = settings.job_types.values().filter(|t| t.export.is_some());
    let slots: usize = exports.map(|t| t.concurrency.map_or(limit, |c| c.get() as usize)).sum();
    slots.min(limit).max(2)
}

/// A started errand: the HTTP server bound, the actors running.
pub struct Application {
    address: std::net::SocketAddr,
    registry: Addr<SupervisorRegistry>,
    server: Server,
    dispatcher: Addr<Dispatcher>,
    ticks: Ticks,
    settings: Settings,
    /// Cancelled at shutdown: open notification streams end, so that their
    /// clients reconnect to another process at once (with `Last-Event-ID`)
    /// instead of holding this one's shutdown for the whole grace period.
    closing_streams: tokio_util::sync::CancellationToken,
}

/// The periodic actors' wake-ups: they run on their own timers, and tests
/// send these to make a pass happen now instead of waiting for one.
#[derive(Clone)]
pub struct Ticks {
    pub rescue: Recipient<RescueExpired>,
    pub prune: Recipient<Prune>,
    pub renew_leases: Recipient<RenewLeases>,
    /// Fire due schedules as of a given time (tests move the clock with it).
    pub fire_schedules: Recipient<FireDue>,
}

impl Application {
    /// Migrates the database, starts the actors and binds the HTTP server.
    /// Must be called inside an actix system (`#[actix_web::main]`, `#[actix_web::test]`).
    pub async fn build(settings: Settings, handlers: HandlerRegistry) -> Result<Self, StartupError> {
        crate::telemetry::prometheus();
        let store = Store::connect(settings.database.url.expose_secret(), settings.database.pool_size)?
            .with_email_outbox(settings.email.enabled)
            .with_notification_rules(settings.notification_rules())
            .with_quotas(settings.quotas());
        let storage = storage_from(&settings)?;
        let exports = ExportEnv {
            storage: storage.clone(),
            // Exports hold a connection for as long as they stream: a pool of
            // their own, so that running exports can never starve the API,
            // as large as this process can run exports at once.
            default_source: Store::connect_for_handlers(
                settings.database.url.expose_secret(),
                export_slots(&settings),
            )?
            .pool()
            .clone(),
            retention: settings.storage.retention,
            part_size: usize::try_from(settings.storage.part_size).unwrap_or(usize::MAX),
        };
        let push = PushEnv {
            tokens: std::sync::Arc::new(
                crate::domain::tokens::TokenIssuer::new(settings.auth.jwt_secret.expose_secret())
                    .map_err(|e| invalid("auth.jwt_secret", e.to_string()))?,
            ),
            public_base_url: settings.http.public_base_url.clone(),
        };
        let job_types = JobTypes::build(&settings.job_types, &handlers, &exports, &push)?;
        let applied = crate::store::migrations::migrate(&store).await?;
        let pruner =
            Pruner::new(store.clone(), storage.clone(), settings.storage.prune_interval, settings.history.retention)
                .start();
        if applied > 0 {
            tracing::info!(applied, "applied migrations");
        }

        let urls = ResultUrls { storage: storage.clone(), expiry: settings.storage.url_expiry };
        WebhookSender::new(store.clone(), settings.webhooks.clone(), urls)
            .map_err(|e| invalid("webhooks", e.to_string()))?
            .start();
        let links = job_links_from(&settings);
        let mailer = if settings.email.enabled {
            let smtp = SmtpMailer::new(&settings.email, links.clone(), settings.storage.retention)
                .map_err(|e| invalid("email", e.to_string()))?;
            let mailer = Mailer::new(store.clone(), smtp, job_types.clone(), settings.email.clone()).start();
            Some(mailer.recipient())
        } else {
            None
        };
        let stream_limits = StreamLimits {
            per_user: settings.notifications.max_streams_per_user.get(),
            per_tenant: settings.notifications.max_streams_per_tenant.get(),
            per_process: settings.notifications.max_streams.get(),
        };
        let notifier = Notifier::new(store.clone(), mailer, stream_limits).start();
        let completer = Completer::new(store.clone(), notifier.clone().recipient(), job_types.clone()).start();
        let w = &settings.workers;
        let work_arrived = std::sync::Arc::new(tokio::sync::Notify::new());
        // The one claim spec: this process's, and (for the external types,
        // under each worker's own owner) the Broker's.
        let type_limits = std::sync::Arc::new(job_types.limits());
        let spec = ClaimSpec::new(
            uuid::Uuid::new_v4(),
            (w.tenant_limit.get(), w.user_limit()),
            w.lease,
            type_limits,
            job_types.in_process(),
        );
        let external_spec = spec.for_owner(uuid::Uuid::nil(), job_types.external());
        let dispatcher_settings = DispatcherSettings {
            global_limit: w.global_limit,
            poll_interval: w.poll_interval,
            spec,
            work_arrived: work_arrived.clone(),
        };
        // The dispatcher and the registry point at each other (claims go
        // down, freed slots come back up): make the dispatcher's mailbox
        // first, wire the registry to it, then start the dispatcher in it.
        let leases = LeaseKeeper::new(store.clone(), w.lease).start();
        let dispatcher_context = Context::<Dispatcher>::new();
        let dispatcher = dispatcher_context.address();
        let registry = SupervisorRegistry::new(SupervisorDeps {
            store: store.clone(),
            intake: Intake::new(
                store.clone(),
                IntakeLinks {
                    lend_slots: dispatcher.clone().recipient(),
                    slots_used: dispatcher.clone().recipient(),
                    work_available: dispatcher.clone().recipient(),
                },
                Shedding {
                    max_pending: settings.overload.max_pending_submissions.get(),
                    saturated_for: settings.overload.pool_saturated_for,
                },
            )
            .start()
            .recipient(),
            job_types: job_types.clone(),
            idle_after: w.supervisor_idle,
            completer: completer.clone().recipient(),
            leases: leases.clone().recipient(),
            progress: ProgressWriter::new(store.clone()).start().recipient(),
            slots: dispatcher.clone().recipient(),
        })
        .start();
        dispatcher_context.run(Dispatcher::new(store.clone(), dispatcher_settings, registry.clone()));
        let rescue_every = (w.lease / 2).max(w.poll_interval);
        let rescuer =
            Rescuer::new(rescue_every, w.lease, completer.clone().recipient(), dispatcher.clone().recipient()).start();
        let broker = Broker::new(store.clone(), external_spec, work_arrived.clone()).start();
        let schedulable = settings.job_types.iter().filter(|(_, t)| t.schedulable);
        let types = schedulable
            .filter_map(|(name, t)| {
                let priority = crate::domain::priority(crate::domain::Origin::Scheduled, t.priority, 0);
                let job_type = job_types.get(name)?.clone();
                let check_params: crate::store::ParamsCheck =
                    std::sync::Arc::new(move |params| job_type.validate_params(params).map_err(|e| e.to_string()));
                Some((name.clone(), ScheduledType { max_attempts: t.max_attempts.get(), priority, check_params }))
            })
            .collect();
        let s = &settings.schedules;
        let scheduler = Scheduler::new(store.clone(), s.poll_interval, s.misfire_grace, types).start();
        TotalsPublisher::new(store.clone(), PUBLISH_EVERY).start();
        let ticks = Ticks {
            rescue: rescuer.recipient(),
            prune: pruner.recipient(),
            renew_leases: leases.clone().recipient(),
            fire_schedules: scheduler.recipient(),
        };
        let listeners = Listeners {
            work: dispatcher.clone().recipient(),
            notifications: notifier.clone().recipient(),
            progress: notifier.clone().recipient(),
            cancels: leases.clone().recipient(),
            catch_up: notifier.clone().recipient(),
        };
        let listener_health = std::sync::Arc::new(ListenerHealth::default());
        spawn_listener(store.connection(), listeners, listener_health.clone());

        let closing_streams = tokio_util::sync::CancellationToken::new();
        let parts = AppParts {
            registry: registry.clone(),
            notifier,
            store,
            job_types,
            storage,
            links,
            broker,
            completer,
            closing_streams: closing_streams.clone(),
            listener: listener_health,
        };
        let state = AppState::new(parts, &settings).map_err(|e| invalid("auth.jwt_secret", e.to_string()))?;
        let state = web::Data::new(state);
        share_rate_limits(state.store.clone(), state.rate_limits.clone());
        let listener = TcpListener::bind(settings.http.bind)
            .map_err(|source| StartupError::Bind { bind: settings.http.bind, source })?;
        // Accepted connections inherit it: a peer that takes nothing for this
        // long (a zero window: a reader who stopped) is dropped by the kernel,
        // which a response body cannot do, since nothing polls it then.
        socket2::SockRef::from(&listener)
            .set_tcp_user_timeout(Some(settings.http.send_timeout))
            .map_err(|source| StartupError::Bind { bind: settings.http.bind, source })?;
        let address =
            listener.local_addr().map_err(|source| StartupError::Bind { bind: settings.http.bind, source })?;
        let mut server = HttpServer::new(move || {
            App::new()
                .wrap(actix_web::middleware::from_fn(http::guard_body))
                .wrap(actix_web::middleware::from_fn(http::support::rate_limit::headers))
                .wrap(actix_web::middleware::from_fn(http::request_id))
                .app_data(state.clone())
                .configure(http::routes)
        })
        .disable_signals()
        .shutdown_timeout(settings.workers.shutdown_grace.as_secs().max(1));
        if let Some(workers) = settings.http.workers {
            server = server.workers(workers.get());
        }
        let server =
            server.listen(listener).map_err(|source| StartupError::Bind { bind: settings.http.bind, source })?.run();
        Ok(Self { address, registry, server, dispatcher, ticks, settings, closing_streams })
    }

    /// The port the HTTP server listens on.
    pub fn port(&self) -> u16 {
        self.address.port()
    }

    /// The address the HTTP server is bound to.
    pub fn address(&self) -> std::net::SocketAddr {
        self.address
    }

    /// Wake-ups for the periodic actors.
    pub fn ticks(&self) -> Ticks {
        self.ticks.clone()
    }

    /// The registry of tenant supervisors.
    pub fn registry(&self) -> Addr<SupervisorRegistry> {
        self.registry.clone()
    }

    /// Serves until `shutdown` resolves, then shuts down gracefully: stop
    /// accepting requests and claiming jobs, let running jobs finish within
    /// `workers.shutdown_grace`, and release the rest to other processes.
    pub async fn run_until(self, shutdown: impl Future<Output = ()>) -> std::io::Result<()> {
        let handle = self.server.handle();
        let server = actix_web::rt::spawn(self.server);
        shutdown.await;
        tracing::info!("shutting down");
        self.closing_streams.cancel();
        let grace = self.settings.workers.shutdown_grace;
        let stop_http = handle.stop(true);
        let drain = self.dispatcher.send(Drain { grace });
        let (_, drained) = futures_util::future::join(stop_http, drain).await;
        if drained.is_err() {
            tracing::warn!("the dispatcher stopped before draining");
        }
        server.await.map_err(std::io::Error::other)?
    }
}

/// How often a process counts the others it shares the rate limits with.
const RATE_LIMIT_SHARE_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

/// Keeps `limits` divided among the errand processes on the database, and
/// their memory to recent callers (see `http::rate_limit`).
fn share_rate_limits(store: Store, limits: http::support::rate_limit::RateLimits) {
    if !limits.any() {
        return;
    }
    actix_web::rt::spawn(async move {
        let mut every = tokio::time::interval(RATE_LIMIT_SHARE_EVERY);
        loop {
            every.tick().await;
            match store.live_processes().await {
                Ok(processes) => limits.share_among(processes),
                Err(error) => tracing::debug!(%error, "could not count errand processes; rate limits stay as they are"),
            }
            limits.forget_idle();
        }
    });
}
