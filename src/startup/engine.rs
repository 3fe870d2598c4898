//! The engine: every actor of one errand process, wired as the picture in
//! `actors/mod.rs` draws them, over the store, the result storage and the
//! configured job types. The HTTP side talks to it through the parts it
//! hands over ([`Engine::into_parts`]).

use std::sync::Arc;

use actix::prelude::*;
use futures_util::future::BoxFuture;
use secrecy::ExposeSecret;
use sha2::{Digest, Sha256};

use crate::actors::{
    Broker, Completer, Dispatcher, DispatcherSettings, FinishSending, Intake, IntakeLinks, LeaseKeeper, ListenerHealth,
    Listeners, Mailer, Notifier, OutboxSenders, PUBLISH_EVERY, ProgressWriter, Pruner, PushSender, QueueVacuum,
    Rescuer, ResultUrls, Retentions, Scheduler, Shedding, Sightings, SightingsWriter, StreamLimits, SupervisorDeps,
    SupervisorRegistry, TotalsPublisher, WebhookSender, spawn_listener,
};
use crate::config::{ConfigError, Settings, StorageBackend, invalid};
use crate::domain::sealing::DataKey;
use crate::domain::tokens::TokenIssuer;
use crate::http::AppParts;
use crate::jobs::{ExportEnv, HandlerRegistry, JobTypes, PushEnv};
use crate::outbound::links::JobLinks;
use crate::outbound::mail::SmtpMailer;
use crate::startup::{StartupError, Ticks};
use crate::storage::{LocalStorage, S3Storage, Storage, StorageError};
use crate::store::{ClaimSpec, ScheduledType, Store};

/// A started engine: its actors run until the system stops.
pub struct Engine {
    pub store: Store,
    pub storage: Storage,
    pub job_types: JobTypes,
    pub links: JobLinks,
    pub registry: Addr<SupervisorRegistry>,
    pub dispatcher: Addr<Dispatcher>,
    pub notifier: Addr<Notifier>,
    pub completer: Addr<Completer>,
    pub broker: Addr<Broker>,
    pub ticks: Ticks,
    pub listener: std::sync::Arc<ListenerHealth>,
    /// Who signed in: the HTTP side gathers, the SightingsWriter writes.
    pub sightings: std::sync::Arc<Sightings>,
    /// What renders emails (where email is enabled): the Mailer's, and the previews'.
    pub emails: Option<SmtpMailer>,
    /// The outboxes' senders (the WebhookSender, and the Mailer and the
    /// PushSender where enabled), told to finish what they claimed when the
    /// process stops.
    pub senders: Vec<Recipient<FinishSending>>,
}

/// Who tells people, and the one door every attempt's end goes through.
struct Delivery {
    links: JobLinks,
    emails: Option<SmtpMailer>,
    notifier: Addr<Notifier>,
    completer: Addr<Completer>,
    senders: Vec<Recipient<FinishSending>>,
}

/// Who runs jobs: the supervisors' registry, the dispatcher that claims for
/// them, the lease keeper, and the broker that claims for external workers.
struct Running {
    registry: Addr<SupervisorRegistry>,
    dispatcher: Addr<Dispatcher>,
    leases: Addr<LeaseKeeper>,
    broker: Addr<Broker>,
}

impl Engine {
    /// Connects, migrates, and starts every actor.
    pub async fn start(settings: &Settings, handlers: HandlerRegistry) -> Result<Self, StartupError> {
        let store = Store::connect(settings.database.url.expose_secret(), settings.database.pool_size)?
            .with_email_outbox(settings.email.enabled)
            .with_push_outbox(settings.push.enabled)
            .with_notification_rules(settings.notification_rules())
            .with_breakers(settings.breakers())
            .with_sealed_types(settings.sealed_types())
            .with_quotas(settings.quotas())
            .with_keyring(settings.keyring().map_err(|why| invalid("encryption.keys", why))?);
        let storage = storage_from(settings, &store)?;
        let job_types = job_types_from(settings, &handlers, &storage)?;
        let owner_url = settings.database.migration_url.as_ref().map(|url| url.expose_secret());
        let apply = settings.database.migrate_at_start;
        let applied = crate::store::migrations::at_start(&store, owner_url, apply).await?;
        if applied > 0 {
            tracing::info!(applied, "applied migrations");
        }
        start_queue_vacuum(settings, &store).await;
        let delivery = Delivery::start(settings, &store, &storage, &job_types)?;
        let running = Running::start(settings, &store, &job_types, &delivery.completer);
        let sightings = std::sync::Arc::new(Sightings::default());
        let ticks = start_upkeep(settings, &store, &storage, &job_types, &delivery, &running, &sightings);
        let listener = std::sync::Arc::new(ListenerHealth::default());
        let listeners = Listeners {
            work: running.dispatcher.clone().recipient(),
            notifications: delivery.notifier.clone().recipient(),
            progress: delivery.notifier.clone().recipient(),
            cancels: running.leases.clone().recipient(),
            catch_up: delivery.notifier.clone().recipient(),
        };
        spawn_listener(store.connection(), listeners, listener.clone());
        Ok(Self {
            store,
            storage,
            job_types,
            links: delivery.links,
            registry: running.registry,
            dispatcher: running.dispatcher,
            notifier: delivery.notifier,
            completer: delivery.completer,
            broker: running.broker,
            ticks,
            listener,
            sightings,
            emails: delivery.emails,
            senders: delivery.senders,
        })
    }

    /// What the HTTP side talks to.
    pub fn into_parts(self, closing_streams: tokio_util::sync::CancellationToken) -> AppParts {
        AppParts {
            registry: self.registry,
            notifier: self.notifier,
            store: self.store,
            job_types: self.job_types,
            storage: self.storage,
            links: self.links,
            broker: self.broker,
            completer: self.completer,
            closing_streams,
            listener: self.listener,
            sightings: self.sightings,
            emails: self.emails,
        }
    }
}

impl Delivery {
    fn start(settings: &Settings, store: &Store, storage: &Storage, job_types: &JobTypes) -> Result<Self, ConfigError> {
        let urls = ResultUrls { storage: storage.clone(), expiry: settings.storage.url_expiry };
        let webhooks = WebhookSender::new(store.clone(), settings.webhooks.clone(), urls)
            .map_err(|e| invalid("webhooks", e.to_string()))?
            .start();
        let links = job_links_from(settings);
        let emails = match settings.email.enabled {
            true => Some(
                SmtpMailer::new(&settings.email, links.clone(), settings.storage.retention)
                    .map_err(|e| invalid("email", e.to_string()))?,
            ),
            false => None,
        };
        let mut senders = vec![webhooks.recipient()];
        let mailer = emails.as_ref().map(|smtp| {
            let mailer = Mailer::new(store.clone(), smtp.clone(), job_types.clone(), settings.email.clone()).start();
            senders.push(mailer.clone().recipient());
            mailer.recipient()
        });
        let pusher = match settings.push.vapid()? {
            Some(vapid) => {
                let (push, lifetime) = (settings.push.clone(), settings.storage.retention);
                let sender = PushSender::new(store.clone(), vapid, push, job_types.clone(), links.clone(), lifetime)
                    .map_err(|e| invalid("push", e.to_string()))?
                    .start();
                senders.push(sender.clone().recipient());
                Some(sender.recipient())
            }
            None => None,
        };
        let stream_limits = StreamLimits {
            per_user: settings.notifications.max_streams_per_user.get(),
            per_tenant: settings.notifications.max_streams_per_tenant.get(),
            per_process: settings.notifications.max_streams.get(),
        };
        let notifier = Notifier::new(OutboxSenders { mailer, pusher }, stream_limits).start();
        let completer = Completer::new(store.clone(), notifier.clone().recipient(), job_types.clone()).start();
        Ok(Self { links, emails, notifier, completer, senders })
    }
}

impl Running {
    fn start(settings: &Settings, store: &Store, job_types: &JobTypes, completer: &Addr<Completer>) -> Self {
        let w = &settings.workers;
        let work_arrived = std::sync::Arc::new(tokio::sync::Notify::new());
        // The one claim spec: this process's, and (for the external types,
        // under each worker's own owner) the Broker's.
        let spec = ClaimSpec::new(
            uuid::Uuid::new_v4(),
            (w.tenant_limit.get(), w.user_limit()),
            w.lease,
            std::sync::Arc::new(job_types.limits()),
            job_types.in_process(),
        );
        let broker =
            Broker::new(store.clone(), spec.for_owner(uuid::Uuid::nil(), job_types.external()), work_arrived.clone());
        let dispatcher_settings =
            DispatcherSettings { global_limit: w.global_limit, poll_interval: w.poll_interval, spec, work_arrived };
        // The dispatcher and the registry point at each other (claims go
        // down, freed slots come back up): make the dispatcher's mailbox
        // first, wire the registry to it, then start the dispatcher in it.
        let leases = LeaseKeeper::new(store.clone(), w.lease).start();
        let dispatcher_context = Context::<Dispatcher>::new();
        let dispatcher = dispatcher_context.address();
        let intake_links = IntakeLinks {
            lend_slots: dispatcher.clone().recipient(),
            slots_used: dispatcher.clone().recipient(),
            work_available: dispatcher.clone().recipient(),
        };
        let shedding = Shedding {
            max_pending: settings.overload.max_pending_submissions.get(),
            saturated_for: settings.overload.pool_saturated_for,
        };
        let registry = SupervisorRegistry::new(SupervisorDeps {
            store: store.clone(),
            intake: Intake::new(store.clone(), intake_links, shedding).start().recipient(),
            job_types: job_types.clone(),
            idle_after: w.supervisor_idle,
            completer: completer.clone().recipient(),
            leases: leases.clone().recipient(),
            progress: ProgressWriter::new(store.clone()).start().recipient(),
            slots: dispatcher.clone().recipient(),
        })
        .start();
        dispatcher_context.run(Dispatcher::new(store.clone(), dispatcher_settings, registry.clone()));
        Self { registry, dispatcher, leases, broker: broker.start() }
    }
}

/// The periodic actors: rescue, prune, fire schedules, publish totals.
fn start_upkeep(
    settings: &Settings,
    store: &Store,
    storage: &Storage,
    job_types: &JobTypes,
    delivery: &Delivery,
    running: &Running,
    sightings: &std::sync::Arc<Sightings>,
) -> Ticks {
    let w = &settings.workers;
    let rescue_every = (w.lease / 2).max(w.poll_interval);
    let rescuer = Rescuer::new(
        rescue_every,
        w.lease,
        delivery.completer.clone().recipient(),
        running.dispatcher.clone().recipient(),
    )
    .start();
    let pruner =
        Pruner::new(store.clone(), storage.clone(), settings.storage.prune_interval, retentions(settings)).start();
    let scheduler = Scheduler::new(store.clone(), &settings.schedules, scheduled_types(settings, job_types)).start();
    let sightings = SightingsWriter::new(store.clone(), sightings.clone()).start();
    TotalsPublisher::new(store.clone(), PUBLISH_EVERY).start();
    Ticks {
        rescue: rescuer.recipient(),
        prune: pruner.clone().recipient(),
        prune_as_of: pruner.recipient(),
        renew_leases: running.leases.clone().recipient(),
        fire_schedules: scheduler.recipient(),
        write_sightings: sightings.recipient(),
    }
}

/// errand's own vacuum of the queue, where its role may run it; and what
/// autovacuum must do (alone, if errand may not), told if its settings fall
/// short.
async fn start_queue_vacuum(settings: &Settings, store: &Store) {
    let may_vacuum = match store.may_vacuum_queue().await {
        Ok(may) => may,
        Err(error) => {
            tracing::debug!(%error, "could not tell whether errand may vacuum its queue");
            false
        }
    };
    let vacuums = match settings.database.vacuum_queue_every {
        Some(every) if may_vacuum => {
            QueueVacuum::new(store.clone(), every).start();
            true
        }
        Some(_) => {
            tracing::info!("errand's role does not own job_queue: vacuuming the queue is left to autovacuum");
            false
        }
        None => false,
    };
    match store.vacuum_settings().await.map(|server| server.advice(vacuums)) {
        Ok(Some(advice)) => tracing::warn!("{advice}"),
        Ok(None) => {}
        Err(error) => tracing::debug!(%error, "could not read the server's autovacuum settings"),
    }
}

/// The job types schedules may make, each with its params' check.
fn scheduled_types(settings: &Settings, job_types: &JobTypes) -> std::collections::HashMap<String, ScheduledType> {
    let schedulable = settings.job_types.iter().filter(|(_, t)| t.schedulable);
    schedulable
        .filter_map(|(name, t)| {
            let priority = crate::domain::priority(crate::domain::Origin::Scheduled, t.priority, 0);
            let job_type = job_types.get(name)?.clone();
            let check_params: crate::store::ParamsCheck =
                std::sync::Arc::new(move |params| job_type.validate_params(params).map_err(|e| e.to_string()));
            let admission = t.admission_key.clone();
            Some((
                name.clone(),
                ScheduledType { max_attempts: t.max_attempts.get(), priority, check_params, admission },
            ))
        })
        .collect()
}

/// The configured job types, with what exports and HTTP push need.
fn job_types_from(
    settings: &Settings,
    handlers: &HandlerRegistry,
    storage: &Storage,
) -> Result<JobTypes, StartupError> {
    let exports = ExportEnv {
        storage: storage.clone(),
        // Exports hold a connection for as long as they stream: a pool of
        // their own, so that running exports can never starve the API,
        // as large as this process can run exports at once.
        default_source: Store::connect_for_handlers(settings.database.url.expose_secret(), export_slots(settings))?,
        retention: settings.storage.retention,
        part_size: usize::try_from(settings.storage.part_size).unwrap_or(usize::MAX),
    };
    let push = PushEnv {
        tokens: std::sync::Arc::new(
            TokenIssuer::new(settings.auth.jwt_secret.expose_secret())
                .map_err(|e| invalid("auth.jwt_secret", e.to_string()))?,
        ),
        public_base_url: settings.http.public_base_url.clone(),
    };
    Ok(JobTypes::build(&settings.job_types, handlers, &exports, &push)?)
}

/// The configured result storage. The local backend signs its URLs with
/// `storage.signing_key`, or a key derived from the JWT secret, and keeps
/// its files sealed under their tenants' keys (the store's) unless
/// `storage.seal_files` is off (it still reads sealed ones then).
fn storage_from(settings: &Settings, store: &Store) -> Result<Storage, ConfigError> {
    let key = match &settings.storage.signing_key {
        Some(key) => key.expose_secret().as_bytes().to_vec(),
        None => Sha256::digest(format!("errand-files\0{}", settings.auth.jwt_secret.expose_secret())).to_vec(),
    };
    Ok(match (settings.storage.backend, &settings.storage.s3) {
        (StorageBackend::S3, Some(s3)) => Storage::S3(S3Storage::new(s3).map_err(|e| invalid("storage.s3", e))?),
        _ => {
            let local = LocalStorage::new(settings.storage.local_dir.clone(), &settings.http.public_base_url, key)
                .with_keys(Arc::new(TenantFileKeys(store.sealer().clone())));
            Storage::Local(if settings.storage.seal_files { local } else { local.writing_in_clear() })
        }
    })
}

/// The tenants' data keys, as the local backend asks for them.
struct TenantFileKeys(crate::store::Sealer);

impl crate::storage::sealed_file::FileKeys for TenantFileKeys {
    fn key_for<'a>(&'a self, tenant: &'a str) -> BoxFuture<'a, Result<Arc<DataKey>, StorageError>> {
        Box::pin(async move { self.0.tenant_key(tenant).await.map_err(|e| StorageError::Remote(e.to_string())) })
    }

    fn existing_key<'a>(&'a self, tenant: &'a str) -> BoxFuture<'a, Result<Option<Arc<DataKey>>, StorageError>> {
        Box::pin(
            async move { self.0.existing_tenant_key(tenant).await.map_err(|e| StorageError::Remote(e.to_string())) },
        )
    }
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

/// How long finished jobs are kept, in general and by type.
fn retentions(settings: &Settings) -> Retentions {
    let types = settings.job_types.iter();
    let by_type = types.filter_map(|(name, t)| t.retention.map(|retention| (name.clone(), retention))).collect();
    // With schedules never pausing, a sign-in is still kept as long as by default.
    let sign_ins = settings.schedules.owner_inactive_after.unwrap_or(crate::config::OWNER_INACTIVE_AFTER);
    Retentions { history: settings.history.clone(), by_type, sign_ins }
}
