//! Building and running an errand process: the library entry point that
//! `errand serve` and the tests both call. It starts the engine (the actors'
//! tree, `engine.rs`), then the HTTP server over it (`http::serve`).

mod engine;

use std::future::Future;

use actix::prelude::*;
use actix_web::dev::Server;

pub use engine::Engine;

use crate::actors::{
    Dispatcher, Drain, FinishSending, FireDue, Prune, PruneAsOf, RenewLeases, RescueExpired, SupervisorRegistry,
    WriteSightings,
};
use crate::config::{ConfigError, Settings, invalid};
use crate::http::{self, AppState};
use crate::jobs::HandlerRegistry;
use crate::store::Store;
use crate::store::migrations::MigrateError;

/// Why errand could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartupError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("database.url: {0}")]
    Database(#[from] crate::store::UrlError),
    #[error(transparent)]
    Migrate(#[from] MigrateError),
    #[error("cannot listen on {bind}: {source}")]
    Bind { bind: std::net::SocketAddr, source: std::io::Error },
}

/// A started errand: the HTTP server bound, the actors running.
pub struct Application {
    address: std::net::SocketAddr,
    registry: Addr<SupervisorRegistry>,
    server: Server,
    dispatcher: Addr<Dispatcher>,
    /// The outboxes' senders, told at shutdown to finish what they claimed.
    senders: Vec<Recipient<FinishSending>>,
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
    /// Prune the history as of a given time (tests move the clock with it).
    pub prune_as_of: Recipient<PruneAsOf>,
    pub renew_leases: Recipient<RenewLeases>,
    /// Fire due schedules as of a given time (tests move the clock with it).
    pub fire_schedules: Recipient<FireDue>,
    /// Write the sightings gathered so far (tests, instead of waiting).
    pub write_sightings: Recipient<WriteSightings>,
}

impl Application {
    /// Migrates the database, starts the actors and binds the HTTP server.
    /// Must be called inside an actix system (`#[actix_web::main]`, `#[actix_web::test]`).
    pub async fn build(settings: Settings, handlers: HandlerRegistry) -> Result<Self, StartupError> {
        let engine = Engine::start(&settings, handlers).await?;
        let closing_streams = tokio_util::sync::CancellationToken::new();
        let (registry, dispatcher, ticks) = (engine.registry.clone(), engine.dispatcher.clone(), engine.ticks.clone());
        let senders = engine.senders.clone();
        let state = AppState::new(engine.into_parts(closing_streams.clone()), &settings)
            .map_err(|e| invalid("auth.jwt_secret", e.to_string()))?;
        share_rate_limits(state.store.clone(), state.rate_limits.clone());
        let bind = settings.http.bind;
        let (server, address) = http::serve(&settings, state).map_err(|source| StartupError::Bind { bind, source })?;
        Ok(Self { address, registry, server, dispatcher, senders, ticks, settings, closing_streams })
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
    /// `workers.shutdown_grace`, and release the rest to other processes;
    /// then the emails, pushes and webhook deliveries the senders claimed go
    /// out (within the same grace), and the rest wait for the other processes.
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
        let finishing = futures_util::future::join_all(self.senders.iter().map(|sender| sender.send(FinishSending)));
        if tokio::time::timeout(grace, finishing).await.is_err() {
            tracing::warn!("the outboxes' senders did not finish their round within the grace; its lock frees it");
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
