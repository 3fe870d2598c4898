//! Every SQL statement errand runs lives under this module, one folder per
//! feature (`queue/`, `notifications/`, `webhooks/`, `schedules/`,
//! `operator/`, `pool/`), and is reached through a door on [`Store`] that
//! names whose rows it may touch. The doors follow one pattern:
//!
//! * `<rows>_for(caller)`: one user of one tenant ([`Store::jobs_for`],
//!   [`Store::batches_for`], [`Store::schedules_for`],
//!   [`Store::notifications_for`], [`Store::preferences_for`],
//!   [`Store::notification_settings_for`], [`Store::push_subscriptions_for`],
//!   [`Store::tickets_for`]). There is no other way to read a caller's rows,
//!   so an unscoped read cannot be written by accident.
//! * `<rows>_for_tenant(tenant)`: a tenant's own settings, for its admins
//!   ([`Store::webhooks_for_tenant`], [`Store::webhook_preferences_for_tenant`],
//!   [`Store::notification_defaults_for_tenant_admin`], [`Store::branding_for_tenant_admin`]).
//! * `<rows>_for_operator(operator)`: every tenant, only with an
//!   [`Operator`] (proved by an operator token; each action audited).
//! * the process's own sides, named for what they hold: [`Store::submissions`]
//!   (recording jobs, each under its own caller's key), [`Store::queue`]
//!   (claims, fenced ends, rescue, pruning: claimed work, never a caller's
//!   view), [`Store::outbox`], [`Store::push_outbox`], [`Store::webhook_outbox`],
//!   [`Store::schedule_firing`] and [`Store::people`].
//!
//! How a `Store` is made (`setup.rs`) and its pool (`pool/`) are apart.

mod batches;
pub mod demo;
mod jobs;
pub mod migrations;
mod notifications;
mod operator;
pub(crate) mod pool;
mod queue;
mod schedules;
mod setup;
mod webhooks;

use std::sync::Arc;

use deadpool_postgres::Pool;

pub use crate::config::postgres::{Connection, UrlError};
pub use batches::{Batch, BatchSubmission, CallerBatches, NewBatch, UnfinishedChild};
pub use jobs::{CallerJobs, JobFilter, JobPage};
pub use notifications::branding::TenantBranding;
pub use notifications::defaults::{DefaultChoices, TenantNotificationDefaults};
pub use notifications::digests::{Digests, DigestsFired};
pub use notifications::emails::{DigestItem, EmailAbout, JobEmail, Outbox, OutboxEmail};
pub use notifications::preferences::{CallerPreferences, CategoryPreferences, ChannelChoices, Source};
pub use notifications::push::{
    CallerPushSubscriptions, NewPushSubscription, OutboxPush, PushDevice, PushOutbox, PushOutcome, PushSubscription,
    Subscribed,
};
pub use notifications::settings::{CallerNotificationSettings, NotificationSettings, QuietHours, SettingsRefused};
pub use notifications::tickets::{CallerTickets, TooManyTickets};
pub use notifications::{
    CallerNotifications, FeedCounts, FeedFilter, NewerPage, Notification, NotificationKind, NotificationPage,
    NotificationSubject,
};
pub use operator::actions::{ActionPage, ActionQuery, OperatorAction, OperatorAudit};
pub use operator::bulk::{BULK_STEP, BulkAction, BulkFilter, BulkStep};
pub use operator::erasures::{Erasure, ErasureScope, Inventory};
pub use operator::holds::HoldOutcome;
pub use operator::overview::{FINISHED_COUNT_CAP, FinishedCounts, OperatorOverview, Overview};
pub use operator::pauses::{NewPause, OperatorPauses, Pause, Paused};
pub use operator::quotas::{Caps, NearQuota, NearestQuotas, QuotaOverrides, TenantQuota};
pub use operator::retention::{Retention, TenantRetention, TenantRetentions};
pub use operator::timeline::{
    Attempt, AttemptOutcome, JobTimeline, SentEmail, SentNotification, SentPush, SentWebhook,
};
pub use operator::{AttemptError, JobQuery, OperatorJobs, QueueCount, RetryOutcome};
pub use pool::error::StoreError;
pub(crate) use pool::error::retry_if_connection_lost;
pub use pool::keys::{Sealer, TenantKeys};
pub use pool::tenant_scope::CALLER_ROLE;
use pool::tenant_scope::TenantPool;
pub use pool::{CANCEL_CHANNEL, NOTIFICATION_CHANNEL, PROGRESS_CHANNEL, WORK_CHANNEL};
pub use queue::Queue;
pub use queue::attempts::{QueueDepth, RunningAttempt};
pub use queue::cancel::{CancelOutcome, CancelledBy};
pub use queue::claim::{BatchClaim, Claim, ClaimRequest, ClaimSpec, ClaimedJob, TypeLimits};
pub use queue::finish::{Completion, EndedAttempt, Ender, OutboxDue, Rescued};
pub use queue::history::HistoryCutoffs;
pub use queue::submit::{NewJob, Submission, Submissions};
pub use schedules::firing::{Fired, FiringTerms, ParamsCheck, ScheduleFiring, ScheduledType};
pub use schedules::managed::{MANAGED_LIST_LIMIT, ManagedSchedules, OwnedSchedule};
pub use schedules::owners::{People, Sighting};
pub use schedules::{CallerSchedules, NewSchedule, Overlap, PausedBy, Schedule, ScheduleCreation};
pub use webhooks::deliveries::{DeliveryOutcome, DeliverySubject, WebhookDelivery, WebhookOutbox};
pub use webhooks::preferences::{TenantWebhookPreferences, WebhookCategory};
pub use webhooks::{DeliveryRecord, Redelivery, Registered, TenantWebhooks, WebhookEndpoint};

use crate::domain::{Caller, NotificationRules, Operator, Quotas, TenantId, UserId};

/// What the statements that end jobs write for each job's owner, besides
/// its notification: its completion email (when the outbox is on), its Web
/// Push messages (when push is on), and all as the owner's notification
/// preferences allow.
#[derive(Debug, Clone, Default)]
pub(crate) struct Endings {
    email_outbox: bool,
    push_outbox: bool,
    rules: NotificationRules,
    /// The job types with a breaker, and beside them their `breaker_after`.
    breaker_types: Vec<String>,
    breaker_after: Vec<i32>,
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
    target: Arc<Connection>,
    /// What seals secrets at rest (`None`: this store seals none, e.g. a
    /// migration's; registering a webhook then fails).
    keys: Option<Arc<TenantKeys>>,
    /// Which job types' params and results are kept sealed, and with `keys`.
    sealer: Sealer,
}

impl Store {
    /// The completion emails waiting to be sent (the Mailer's side).
    pub fn outbox(&self) -> Outbox<'_> {
        Outbox::new(&self.pool, &self.sealer)
    }

    /// People's digests (the Scheduler's side).
    pub fn digests(&self) -> Digests<'_> {
        Digests { pool: &self.pool }
    }

    /// The Web Push messages waiting to be sent (the PushSender's side).
    pub fn push_outbox(&self) -> PushOutbox<'_> {
        PushOutbox { pool: &self.pool, sealer: &self.sealer }
    }

    /// The jobs of the caller's user in the caller's tenant.
    pub fn jobs_for<'a>(&'a self, caller: &'a Caller) -> CallerJobs<'a> {
        CallerJobs::new(TenantPool::new(&self.pool, &caller.tenant), caller, &self.sealer)
    }

    /// Every tenant's jobs, for an operator (proved by an operator token).
    pub fn jobs_for_operator<'a>(&'a self, operator: &'a Operator) -> OperatorJobs<'a> {
        OperatorJobs { pool: &self.pool, operator, endings: &self.endings, sealer: &self.sealer }
    }

    /// Tenants' own history retentions, for an operator.
    pub fn retentions_for_operator<'a>(&'a self, operator: &'a Operator) -> TenantRetentions<'a> {
        TenantRetentions { pool: &self.pool, operator }
    }

    /// Every tenant's schedules, as an operator manages them.
    pub fn schedules_managed_by_operator(&self, operator: &Operator) -> ManagedSchedules<'_> {
        ManagedSchedules { pool: &self.pool, tenant: None, by: operator.name.to_string(), sealer: &self.sealer }
    }

    /// The schedules of the tenant admin `admin`'s own tenant.
    pub fn schedules_managed_by_tenant_admin(&self, admin: &Caller) -> ManagedSchedules<'_> {
        let by = tenant_admin_name(admin);
        ManagedSchedules { pool: &self.pool, tenant: Some(admin.tenant.clone()), by, sealer: &self.sealer }
    }

    /// The erasure of `scope` (any tenant's), by an operator who may act.
    pub fn erasure_by_operator(&self, operator: &Operator, scope: ErasureScope) -> Erasure<'_> {
        Erasure { pool: &self.pool, keys: self.keys.as_deref(), by: operator.name.to_string(), scope }
    }

    /// The erasure of `user` of the tenant admin `admin`'s own tenant.
    pub fn erasure_by_tenant_admin(&self, admin: &Caller, user: UserId) -> Erasure<'_> {
        let scope = ErasureScope { tenant: admin.tenant.clone(), user: Some(user) };
        Erasure { pool: &self.pool, keys: self.keys.as_deref(), by: tenant_admin_name(admin), scope }
    }

    /// How the queue stands, for an operator.
    pub fn overview_for_operator<'a>(&'a self, operator: &'a Operator) -> OperatorOverview<'a> {
        OperatorOverview { pool: &self.pool, _operator: operator }
    }

    /// The operators' audit trail, for an operator.
    pub fn audit_for_operator<'a>(&'a self, operator: &'a Operator) -> OperatorAudit<'a> {
        OperatorAudit { pool: &self.pool, _operator: operator }
    }

    /// The operators' pauses of job types and tenants, for an operator.
    pub fn pauses_for_operator<'a>(&'a self, operator: &'a Operator) -> OperatorPauses<'a> {
        OperatorPauses { pool: &self.pool, operator }
    }

    /// Tenants' quota overrides, and who is near their caps, for an operator.
    pub fn quotas_for_operator<'a>(&'a self, operator: &'a Operator) -> QuotaOverrides<'a> {
        QuotaOverrides { pool: &self.pool, operator, quotas: &self.quotas }
    }

    /// Recording new jobs, each for its own caller.
    pub fn submissions(&self) -> Submissions<'_> {
        Submissions {
            pool: &self.pool,
            quotas: &self.quotas,
            batch_caps: &self.batch_caps,
            endings: &self.endings,
            sealer: &self.sealer,
        }
    }

    /// The schedules of the caller's user in the caller's tenant.
    pub fn schedules_for<'a>(&'a self, caller: &'a Caller) -> CallerSchedules<'a> {
        CallerSchedules { pool: TenantPool::new(&self.pool, &caller.tenant), caller, sealer: &self.sealer }
    }

    /// When people signed in, for the sightings this process gathered (and
    /// the pruner): every tenant's, and only ever fed authenticated callers.
    pub fn people(&self) -> People<'_> {
        People { pool: &self.pool }
    }

    /// Every tenant's due schedules, for a process's scheduler.
    pub fn schedule_firing(&self) -> ScheduleFiring<'_> {
        ScheduleFiring { pool: &self.pool, quotas: &self.quotas, batch_caps: &self.batch_caps, sealer: &self.sealer }
    }

    /// The batches of the caller's user in the caller's tenant.
    pub fn batches_for<'a>(&'a self, caller: &'a Caller) -> CallerBatches<'a> {
        CallerBatches {
            pool: TenantPool::new(&self.pool, &caller.tenant),
            caller,
            batch_caps: &self.batch_caps,
            quotas: &self.quotas,
            rules: &self.endings.rules,
            email_outbox: self.endings.email_outbox,
            sealer: &self.sealer,
        }
    }

    /// The notifications of the caller's user in the caller's tenant.
    pub fn notifications_for<'a>(&'a self, caller: &'a Caller) -> CallerNotifications<'a> {
        CallerNotifications::new(TenantPool::new(&self.pool, &caller.tenant), caller)
    }

    /// The time zone and quiet hours of the caller's user in the caller's tenant.
    pub fn notification_settings_for<'a>(&'a self, caller: &'a Caller) -> CallerNotificationSettings<'a> {
        CallerNotificationSettings { pool: TenantPool::new(&self.pool, &caller.tenant), caller }
    }

    /// The devices the caller's user in the caller's tenant subscribed to Web Push.
    pub fn push_subscriptions_for<'a>(&'a self, caller: &'a Caller) -> CallerPushSubscriptions<'a> {
        CallerPushSubscriptions { pool: TenantPool::new(&self.pool, &caller.tenant), caller }
    }

    /// The unused stream tickets of the caller's user in the caller's tenant.
    pub fn tickets_for<'a>(&'a self, caller: &'a Caller) -> CallerTickets<'a> {
        CallerTickets { pool: TenantPool::new(&self.pool, &caller.tenant), caller }
    }

    /// The notification preferences of the caller's user in the caller's tenant.
    pub fn preferences_for<'a>(&'a self, caller: &'a Caller) -> CallerPreferences<'a> {
        CallerPreferences { pool: TenantPool::new(&self.pool, &caller.tenant), caller, rules: &self.endings.rules }
    }

    /// The webhook deliveries waiting to be made (the WebhookSender's side).
    pub fn webhook_outbox(&self) -> WebhookOutbox<'_> {
        WebhookOutbox { pool: &self.pool, keys: self.keys.as_deref(), sealer: &self.sealer }
    }

    /// The webhook endpoints of `tenant` (for its admins).
    pub fn webhooks_for_tenant<'a>(&'a self, tenant: &'a crate::domain::TenantId) -> TenantWebhooks<'a> {
        TenantWebhooks { pool: TenantPool::new(&self.pool, tenant), tenant, keys: self.keys.as_deref() }
    }

    /// The default notification preferences of the tenant admin `admin`'s
    /// tenant, for its users (changes audited as `admin`'s).
    pub fn notification_defaults_for_tenant_admin<'a>(&'a self, admin: &'a Caller) -> TenantNotificationDefaults<'a> {
        TenantNotificationDefaults {
            pool: TenantPool::new(&self.pool, &admin.tenant),
            tenant: &admin.tenant,
            rules: &self.endings.rules,
            by: tenant_admin_name(admin),
        }
    }

    /// The branding of the tenant admin `admin`'s tenant (changes audited as `admin`'s).
    pub fn branding_for_tenant_admin<'a>(&'a self, admin: &'a Caller) -> TenantBranding<'a> {
        TenantBranding {
            pool: TenantPool::new(&self.pool, &admin.tenant),
            tenant: &admin.tenant,
            by: tenant_admin_name(admin),
        }
    }

    /// What `tenant` set as its branding (for its pages, its users' elements
    /// and the previews of its emails; only its admins change it,
    /// `branding_for_tenant_admin`).
    pub async fn branding_of(&self, tenant: &TenantId) -> Result<crate::domain::Branding, StoreError> {
        TenantBranding { pool: TenantPool::new(&self.pool, tenant), tenant, by: String::new() }.read().await
    }

    /// The webhook channel's preferences of `tenant` (for its admins).
    pub fn webhook_preferences_for_tenant<'a>(
        &'a self,
        tenant: &'a crate::domain::TenantId,
    ) -> TenantWebhookPreferences<'a> {
        TenantWebhookPreferences { pool: TenantPool::new(&self.pool, tenant), tenant, rules: &self.endings.rules }
    }

    /// The worker side of the job table.
    pub fn queue(&self) -> Queue<'_> {
        Queue { pool: &self.pool, endings: &self.endings, sealer: &self.sealer }
    }
}

/// How the operators' audit names a tenant admin who acted.
fn tenant_admin_name(admin: &Caller) -> String {
    format!("tenant_admin:{}:{}", admin.tenant, admin.user)
}
