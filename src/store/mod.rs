//! Every SQL statement errand runs on jobs and notifications lives under this
//! module, behind two doors:
//!
//! * [`Store::for_caller`] gives a [`CallerJobs`]: reads and submissions of the
//!   jobs of one user of one tenant; [`Store::notifications_for`] gives the
//!   same for notifications, [`Store::preferences_for`] for notification
//!   preferences. There is no other way to read any of them, so an
//!   unscoped read cannot be written by accident. [`Store::submissions`]
//!   records jobs, each under its own caller's key (`submit.rs`).
//! * [`Store::queue`] gives the [`Queue`]: claiming (`queue.rs`), ending
//!   attempts fenced by lease and rescuing (`finish.rs`), and pruning what
//!   finished jobs leave (`history.rs`). It returns claimed work, never a
//!   caller's view of jobs.

mod batches;
pub mod demo;
mod jobs;
pub mod migrations;
mod notifications;
mod operator;
pub(crate) mod pool;
mod queue;
mod schedules;
mod webhooks;

use std::sync::Arc;

use deadpool_postgres::{HookError, Manager, ManagerConfig, Pool, RecyclingMethod};

pub use batches::{Batch, BatchSubmission, CallerBatches, NewBatch, UnfinishedChild};
pub use jobs::{CallerJobs, JobFilter, JobPage};
pub use notifications::emails::{Outbox, OutboxEmail};
pub use notifications::preferences::{CallerPreferences, CategoryPreferences};
pub use notifications::tickets::{CallerTickets, TooManyTickets};
pub use notifications::{
    CallerNotifications, NewerPage, Notification, NotificationKind, NotificationPage, NotificationSubject,
};
pub use operator::actions::{ActionPage, ActionQuery, OperatorAction, OperatorAudit};
pub use operator::bulk::{BULK_STEP, BulkAction, BulkFilter, BulkStep};
pub use operator::overview::{FINISHED_COUNT_CAP, FinishedCounts, OperatorOverview, Overview};
pub use operator::quotas::{Caps, NearQuota, NearestQuotas, QuotaOverrides, TenantQuota};
pub use operator::timeline::{Attempt, AttemptOutcome, JobTimeline, SentEmail, SentNotification, SentWebhook};
pub use operator::{AttemptError, JobQuery, OperatorJobs, QueueCount, RetryOutcome};
pub use queue::attempts::{QueueDepth, RunningAttempt};
pub use queue::cancel::{CancelOutcome, CancelledBy};
pub use queue::claim::{BatchClaim, Claim, ClaimRequest, ClaimSpec, ClaimedJob, TypeLimits};
pub use queue::finish::{Completion, EndedAttempt, Ender, Rescued};
pub use queue::submit::{NewJob, Submission, Submissions};
pub use schedules::firing::{Fired, FiringTerms, ParamsCheck, ScheduleFiring, ScheduledType};
pub use schedules::{CallerSchedules, NewSchedule, Overlap, Schedule, ScheduleCreation};
pub use webhooks::deliveries::{DeliveryOutcome, WebhookDelivery, WebhookOutbox};
pub use webhooks::preferences::{TenantWebhookPreferences, WebhookCategory};
pub use webhooks::{DeliveryRecord, Redelivery, Registered, TenantWebhooks, WebhookEndpoint};

use crate::domain::{Caller, NotificationRules, Operator, Quotas};

/// A database failure. The API turns it into a 500 (or 503) without details;
/// the cause is logged.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    // The causes are spelled out in the message (and are not `source`s, so
    // that a log of the chain does not repeat them).
    #[error("no database connection available: {}", pool_detail(.0))]
    Pool(deadpool_postgres::PoolError),
    #[error("database error: {}", crate::store::pool::postgres::detail(.0))]
    Postgres(tokio_postgres::Error),
    #[error("unexpected data in the database: {0}")]
    Corrupt(String),
    /// A statement shared with other requests lost its connection (each of
    /// them gets this copy of the cause).
    #[error("database connection lost: {0}")]
    ConnectionLost(String),
    /// Concurrent work kept overtaking this one: worth a retry later.
    #[error("too much contention: {0}")]
    Contended(String),
    /// The database (or what stands before it) cannot give errand what it needs.
    #[error("{0}")]
    Unsupported(String),
}

impl StoreError {
    /// Worth trying again later, and a 503 rather than a 500: the connection
    /// was lost (see [`Self::is_connection_lost`]) or other work kept overtaking this.
    pub fn is_temporary(&self) -> bool {
        self.is_connection_lost() || matches!(self, Self::Contended(_))
    }

    /// The statement was refused for what it was given (SQLSTATE class 22,
    /// a value it cannot take, or 23, a constraint): trying it again as it
    /// is cannot help, and in a batch one such row fails every other.
    pub fn is_bad_input(&self) -> bool {
        matches!(self, Self::Postgres(error)
            if error.code().is_some_and(|code| code.code().starts_with("22") || code.code().starts_with("23")))
    }

    /// The database could not be reached, the connection broke (it was
    /// terminated, the server restarts, the network dropped), or its server
    /// no longer takes writes (a demoted primary, SQLSTATE 25006: the
    /// connection is discarded, see `writable.rs`): worth a retry on a fresh
    /// connection, and a 503 rather than a 500 if that fails too.
    pub fn is_connection_lost(&self) -> bool {
        match self {
            Self::Pool(_) => true,
            Self::Postgres(error) => {
                let class_08_or_shutdown = error.code().is_some_and(|code| {
                    let code = code.code();
                    code.starts_with("08") || matches!(code, "57P01" | "57P02" | "57P03")
                });
                let io = std::error::Error::source(error).is_some_and(|cause| cause.is::<std::io::Error>());
                error.is_closed() || class_08_or_shutdown || io || pool::writable::is_read_only(error)
            }
            Self::ConnectionLost(_) => true,
            Self::Corrupt(_) | Self::Contended(_) | Self::Unsupported(_) => false,
        }
    }
}

impl From<crate::domain::InvalidId> for StoreError {
    fn from(error: crate::domain::InvalidId) -> Self {
        Self::Corrupt(error.to_string())
    }
}

impl From<crate::domain::UnknownState> for StoreError {
    fn from(error: crate::domain::UnknownState) -> Self {
        Self::Corrupt(error.to_string())
    }
}

/// Runs `attempt` once more when it failed because its connection was lost:
/// the pool discards a closed connection, so the second try gets another.
/// Only for statements safe to repeat: reads, and the submission (its key
/// makes it idempotent).
pub(crate) async fn retry_if_connection_lost<T, F, Fut>(mut attempt: F) -> Result<T, StoreError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, StoreError>>,
{
    match attempt().await {
        Err(error) if error.is_connection_lost() => {
            tracing::info!(%error, "database connection lost; trying once more on another");
            attempt().await
        }
        other => other,
    }
}

impl From<deadpool_postgres::PoolError> for StoreError {
    fn from(error: deadpool_postgres::PoolError) -> Self {
        Self::Pool(error)
    }
}

impl From<tokio_postgres::Error> for StoreError {
    fn from(error: tokio_postgres::Error) -> Self {
        pool::writable::note(&error);
        Self::Postgres(error)
    }
}

fn pool_detail(error: &deadpool_postgres::PoolError) -> String {
    match error {
        deadpool_postgres::PoolError::Backend(error) => crate::store::pool::postgres::detail(error),
        deadpool_postgres::PoolError::Timeout(_) => {
            format!("{error} (every connection busy, or the server slow to accept)")
        }
        other => other.to_string(),
    }
}

/// The PostgreSQL NOTIFY channel on which processes announce new work.
pub const WORK_CHANNEL: &str = "errand_jobs";
/// The channel on which committed notifications are announced, with the
/// payload of comma-separated [`crate::domain::OwnerTag`]s: who should be
/// woken, not what happened (and no tenant or user names).
pub const NOTIFICATION_CHANNEL: &str = "errand_notifications";
/// The NOTIFY channel of running jobs' progress (payload: owner tags, as for notifications).
pub const PROGRESS_CHANNEL: &str = "errand_progress";
/// The NOTIFY channel of cancels of running jobs (payload: job ids).
pub const CANCEL_CHANNEL: &str = "errand_cancel";

/// A page of at most `limit` rows, from up to `limit + 1` fetched (one more
/// than the page holds says another page follows): the page, and its last
/// row's key when another follows.
pub(crate) fn keyset_page<T, K>(mut rows: Vec<T>, limit: u32, key: impl Fn(&T) -> K) -> (Vec<T>, Option<K>) {
    if rows.len() <= limit as usize {
        return (rows, None);
    }
    rows.truncate(limit as usize);
    let next = rows.last().map(key);
    (rows, next)
}

/// The `application_name` of errand's connections: this, then the process's own id.
const PROCESS_NAME_PREFIX: &str = "errand/";

/// This process's `application_name`, the same for all its pools (the API's,
/// the exports'), so that it counts once among the live processes.
static PROCESS_NAME: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| format!("{PROCESS_NAME_PREFIX}{}", uuid::Uuid::new_v4()));

/// This process's totals `$2` claims and `$3` attempt ends, under its name
/// `$1`; those of processes silent for a day go.
const PUBLISH_TOTALS: &str = "
WITH forgotten AS (DELETE FROM process_totals WHERE updated_at < now() - interval '1 day')
INSERT INTO process_totals (process, claimed, attempts_ended) VALUES ($1, $2, $3)
ON CONFLICT (process) DO UPDATE SET claimed = excluded.claimed, attempts_ended = excluded.attempts_ended,
                                    updated_at = now()";

/// The errand processes connected to the database now: the distinct
/// `application_name`s of their connections.
const LIVE_PROCESSES: &str = "
SELECT count(DISTINCT application_name) AS processes
FROM pg_stat_activity
WHERE datname = current_database() AND starts_with(application_name, $1)";

/// How long anything waits for a database connection.
const POOL_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// The worker side of the queue: claims (`claim.rs`), ends (`finish.rs`),
/// leases and progress (`queue.rs`), history (`history.rs`).
pub struct Queue<'a> {
    pool: &'a Pool,
    endings: &'a Endings,
}

/// What the statements that end jobs write for each job's owner, besides
/// its notification: its completion email (when the outbox is on), and both
/// as the owner's notification preferences allow.
#[derive(Debug, Clone, Default)]
pub(crate) struct Endings {
    email_outbox: bool,
    rules: NotificationRules,
}

/// A duration as the float milliseconds errand's statements take.
fn millis(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// errand's database: cheap to clone (it is a pool).
#[derive(Clone)]
pub struct Store {
    pool: Pool,
    endings: Arc<Endings>,
    quotas: Arc<Quotas>,
    /// The configured caps as the recording statement binds them, made once.
    batch_caps: Arc<queue::quota::BatchCaps>,
    /// Where the pool connects, for connections of errand's own outside it.
    target: Arc<crate::store::pool::postgres::Connection>,
}

impl Store {
    /// A pool of up to `size` connections to `url`, the database errand
    /// writes to: a connection to a server that no longer takes writes is
    /// discarded (`writable.rs`). Connects lazily; the connections do their
    /// I/O on the runtime this is called on (see `connect.rs`).
    pub fn connect(url: &str, size: usize) -> Result<Self, crate::store::pool::postgres::UrlError> {
        Self::build(url, size, true, tokio::runtime::Handle::try_current().ok())
    }

    /// [`Self::connect`] for a pool that only job handlers use (an export's
    /// source): its connections do their I/O on the handlers' runtime, which
    /// first asks for them, not on the actors' (an export streams its rows
    /// through it).
    pub fn connect_for_handlers(url: &str, size: usize) -> Result<Self, crate::store::pool::postgres::UrlError> {
        Self::build(url, size, true, None)
    }

    /// [`Self::connect_for_handlers`] for a database errand only reads (an
    /// export's source, which may be a standby).
    pub fn connect_for_reads(url: &str, size: usize) -> Result<Self, crate::store::pool::postgres::UrlError> {
        Self::build(url, size, false, None)
    }

    fn build(
        url: &str,
        size: usize,
        writes: bool,
        io_on: Option<tokio::runtime::Handle>,
    ) -> Result<Self, crate::store::pool::postgres::UrlError> {
        let target = crate::store::pool::postgres::Connection::parse(url)?;
        let crate::store::pool::postgres::Connection { config: mut pg_config, tls } = target.clone();
        // errand's statements are short and planned with generic estimates
        // that can look expensive (a claim's were 600k): JIT then compiled
        // for 70-400 ms to run a statement of 2 ms. Set on each new
        // connection, not as a startup option (PgBouncer refuses `options`).
        // A URL's own options win.
        let jit_off = pg_config.get_options().is_none();
        // Names this process's connections, so that processes can count each
        // other (`live_processes`). A URL's own name wins.
        if pg_config.get_application_name().is_none() {
            pg_config.application_name(PROCESS_NAME.as_str());
        }
        let connect = pool::connect::ConnectOn { tls, runtime: io_on };
        let manager =
            Manager::from_connect(pg_config, connect, ManagerConfig { recycling_method: RecyclingMethod::Fast });
        let mut pool = Pool::builder(manager);
        if jit_off {
            pool = pool.post_create(deadpool_postgres::Hook::async_fn(|client, _| {
                Box::pin(async move { client.batch_execute("SET jit = off").await.map_err(HookError::Backend) })
            }));
        }
        if writes {
            pool = pool.post_recycle(pool::writable::check_on_checkout());
        }
        let pool = pool
            .max_size(size)
            // A request that cannot get a connection soon gets a 503, rather than hanging.
            .wait_timeout(Some(POOL_WAIT))
            .create_timeout(Some(POOL_WAIT))
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .build()
            .expect("a pool with a runtime always builds");
        let quotas = Quotas::off();
        Ok(Self {
            pool,
            endings: Arc::new(Endings::default()),
            batch_caps: Arc::new(queue::quota::BatchCaps::of(&quotas)),
            quotas: Arc::new(quotas),
            target: Arc::new(target),
        })
    }

    /// Where this store's pool connects: for a connection outside the pool (the listener's).
    pub fn connection(&self) -> Arc<crate::store::pool::postgres::Connection> {
        self.target.clone()
    }

    /// Makes the statements that end jobs also queue their completion emails.
    pub fn with_email_outbox(mut self, enabled: bool) -> Self {
        Arc::make_mut(&mut self.endings).email_outbox = enabled;
        self
    }

    /// Makes the statements that end jobs keep to `rules` and each owner's
    /// preferences (every channel on for everyone otherwise).
    pub fn with_notification_rules(mut self, rules: NotificationRules) -> Self {
        Arc::make_mut(&mut self.endings).rules = rules;
        self
    }

    /// The notification preferences' rules that job ends keep to.
    pub fn notification_rules(&self) -> &NotificationRules {
        &self.endings.rules
    }

    /// Makes every submission keep to `quotas` (none are kept otherwise).
    pub fn with_quotas(mut self, quotas: Quotas) -> Self {
        self.batch_caps = Arc::new(queue::quota::BatchCaps::of(&quotas));
        self.quotas = Arc::new(quotas);
        self
    }

    /// The quotas submissions keep to.
    pub fn quotas(&self) -> &Quotas {
        &self.quotas
    }

    /// The completion emails waiting to be sent (the Mailer's side).
    pub fn outbox(&self) -> Outbox<'_> {
        Outbox::new(&self.pool)
    }

    /// The jobs of the caller's user in the caller's tenant.
    pub fn for_caller<'a>(&'a self, caller: &'a Caller) -> CallerJobs<'a> {
        CallerJobs::new(&self.pool, caller)
    }

    /// Every tenant's jobs, for an operator (proved by an operator token).
    pub fn for_operator<'a>(&'a self, operator: &'a Operator) -> OperatorJobs<'a> {
        OperatorJobs { pool: &self.pool, operator, endings: &self.endings }
    }

    /// How the queue stands, for an operator.
    pub fn overview_for_operator<'a>(&'a self, operator: &'a Operator) -> OperatorOverview<'a> {
        OperatorOverview { pool: &self.pool, _operator: operator }
    }

    /// The operators' audit trail, for an operator.
    pub fn audit_for_operator<'a>(&'a self, operator: &'a Operator) -> OperatorAudit<'a> {
        OperatorAudit { pool: &self.pool, _operator: operator }
    }

    /// Tenants' quota overrides, and who is near their caps, for an operator.
    pub fn quotas_for_operator<'a>(&'a self, operator: &'a Operator) -> QuotaOverrides<'a> {
        QuotaOverrides { pool: &self.pool, operator, quotas: &self.quotas }
    }

    /// Recording new jobs, each for its own caller.
    pub fn submissions(&self) -> Submissions<'_> {
        Submissions { pool: &self.pool, quotas: &self.quotas, batch_caps: &self.batch_caps, endings: &self.endings }
    }

    /// The schedules of the caller's user in the caller's tenant.
    pub fn schedules_for<'a>(&'a self, caller: &'a Caller) -> CallerSchedules<'a> {
        CallerSchedules { pool: &self.pool, caller }
    }

    /// Every tenant's due schedules, for a process's scheduler.
    pub fn schedule_firing(&self) -> ScheduleFiring<'_> {
        ScheduleFiring { pool: &self.pool, quotas: &self.quotas, batch_caps: &self.batch_caps }
    }

    /// The batches of the caller's user in the caller's tenant.
    pub fn batches_for<'a>(&'a self, caller: &'a Caller) -> CallerBatches<'a> {
        CallerBatches {
            pool: &self.pool,
            caller,
            batch_caps: &self.batch_caps,
            quotas: &self.quotas,
            rules: &self.endings.rules,
        }
    }

    /// The notifications of the caller's user in the caller's tenant.
    pub fn notifications_for<'a>(&'a self, caller: &'a Caller) -> CallerNotifications<'a> {
        CallerNotifications::new(&self.pool, caller)
    }

    /// The unused stream tickets of the caller's user in the caller's tenant.
    pub fn tickets_for<'a>(&'a self, caller: &'a Caller) -> CallerTickets<'a> {
        CallerTickets { pool: &self.pool, caller }
    }

    /// The notification preferences of the caller's user in the caller's tenant.
    pub fn preferences_for<'a>(&'a self, caller: &'a Caller) -> CallerPreferences<'a> {
        CallerPreferences { pool: &self.pool, caller, rules: &self.endings.rules }
    }

    /// The webhook deliveries waiting to be made (the WebhookSender's side).
    pub fn webhook_outbox(&self) -> WebhookOutbox<'_> {
        WebhookOutbox { pool: &self.pool }
    }

    /// The webhook endpoints of `tenant` (for its admins).
    pub fn webhooks_of<'a>(&'a self, tenant: &'a crate::domain::TenantId) -> TenantWebhooks<'a> {
        TenantWebhooks { pool: &self.pool, tenant }
    }

    /// The webhook channel's preferences of `tenant` (for its admins).
    pub fn webhook_preferences_of<'a>(&'a self, tenant: &'a crate::domain::TenantId) -> TenantWebhookPreferences<'a> {
        TenantWebhookPreferences { pool: &self.pool, tenant, rules: &self.endings.rules }
    }

    /// The worker side of the job table.
    pub fn queue(&self) -> Queue<'_> {
        Queue { pool: &self.pool, endings: &self.endings }
    }

    /// How many errand processes (this one included, once it has a
    /// connection) are connected to the database now.
    pub async fn live_processes(&self) -> Result<u32, StoreError> {
        let client = self.pool.get().await?;
        let row = client.query_one(&client.prepare_cached(LIVE_PROCESSES).await?, &[&PROCESS_NAME_PREFIX]).await?;
        Ok(u32::try_from(row.try_get::<_, i64>("processes")?).unwrap_or(u32::MAX))
    }

    /// Writes this process's running totals of claims and attempt ends
    /// (`process_totals`), and forgets those of processes silent for a day.
    pub async fn publish_totals(&self, claimed: u64, attempts_ended: u64) -> Result<(), StoreError> {
        let client = self.pool.get().await?;
        let (claimed, ended) =
            (i64::try_from(claimed).unwrap_or(i64::MAX), i64::try_from(attempts_ended).unwrap_or(i64::MAX));
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 3] = [&PROCESS_NAME.as_str(), &claimed, &ended];
        client.execute(&client.prepare_cached(PUBLISH_TOTALS).await?, &params).await?;
        Ok(())
    }

    /// The pool, for migrations and health checks.
    pub fn pool(&self) -> &Pool {
        &self.pool
    }
}
