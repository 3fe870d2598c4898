//! The JobSupervisor: one per tenant, made on demand by the registry and
//! stopped when idle. It is the front door for the tenant's jobs (submit,
//! get, list: every one checked against its tenant) and the parent of the
//! tenant's running workers.
//!
//! Idempotency is the database's unique constraint, not this actor's memory:
//! two processes, each with its own supervisor for the tenant, still make one job.

mod batches;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;
use serde_json::Value;

pub use self::batches::SubmitBatch;
use crate::actors::completer::Complete;
use crate::actors::running::intake::{Overloaded, Record, RecordError};
use crate::actors::running::leases::LeaseChange;
use crate::actors::running::progress::ProgressChange;
use crate::actors::running::worker::{Abandon, JobWorker, WorkerDone, WorkerLinks};
use crate::actors::signals::WorkerSlot;
use crate::domain::{Caller, IdempotencyKey, JobId, Outcome, TenantId, TraceParent};
use crate::jobs::{FormatRefused, JobType, JobTypes, ParamsError};
use crate::store::{ClaimedJob, Completion, Ender, NewJob, Store, StoreError, Submission};

/// Record a job for the caller, or find the one its key already names.
#[derive(Debug, Clone, Message)]
#[rtype(result = "Result<Submission, SubmitError>")]
pub struct SubmitJob {
    pub caller: Caller,
    pub key: IdempotencyKey,
    pub job_type: String,
    pub params: Value,
    /// The request's move of its priority, within `domain::PRIORITY_RANGE`.
    pub priority: i8,
    /// The file format asked for (an export's), by name; its type's first when `None`.
    pub format: Option<String>,
    /// The trace of the request (`http::support::request_id::trace_of`).
    pub trace: Option<TraceParent>,
}

/// Run a claimed job (sent by the dispatcher, through the registry, which
/// finds the job's tenant's supervisor).
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct RunJob(pub ClaimedJob);

/// This supervisor has been idle: may it stop? Asked of the registry, which
/// consents only if it is still the one on record.
#[derive(Message)]
#[rtype(result = "bool")]
pub(in crate::actors) struct SupervisorIdle {
    pub tenant: TenantId,
    pub supervisor: Addr<JobSupervisor>,
}

/// Stop every worker now (shutdown).
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub(in crate::actors) struct StopWorkers;

/// Why a submission was refused.
#[derive(Debug, thiserror::Error)]
pub enum SubmitError {
    #[error("unknown job type {0:?}")]
    UnknownType(String),
    #[error(transparent)]
    InvalidParams(#[from] ParamsError),
    #[error(transparent)]
    InvalidFormat(#[from] FormatRefused),
    #[error(
        "job type {0:?} has an admission key: its jobs are submitted one at a time (POST /jobs/{0}), not in a batch"
    )]
    NotBatchable(String),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Overloaded(#[from] Overloaded),
    #[error("the intake is not answering: {0}")]
    Intake(#[from] MailboxError),
}

impl From<crate::domain::MissingField> for SubmitError {
    fn from(missing: crate::domain::MissingField) -> Self {
        let field = format!("/{}", missing.0.replace('.', "/"));
        Self::InvalidParams(ParamsError { field, reason: missing.to_string() })
    }
}

impl From<RecordError> for SubmitError {
    fn from(error: RecordError) -> Self {
        match error {
            RecordError::Store(e) => Self::Store(e),
            RecordError::Shed(e) => Self::Overloaded(e),
        }
    }
}

/// What every tenant supervisor needs from the rest of the process; the
/// registry keeps one and hands each supervisor it makes a copy.
#[derive(Clone)]
pub struct SupervisorDeps {
    pub store: Store,
    /// Records accepted submissions (in batches across tenants).
    pub intake: Recipient<Record>,
    pub job_types: JobTypes,
    pub idle_after: Duration,
    pub completer: Recipient<Complete>,
    pub leases: Recipient<LeaseChange>,
    /// Writes running jobs' progress.
    pub progress: Recipient<ProgressChange>,
    pub slots: Recipient<WorkerSlot>,
}

pub struct JobSupervisor {
    tenant: TenantId,
    deps: SupervisorDeps,
    /// Asked before stopping when idle (the registry, which made this supervisor).
    registry: Recipient<SupervisorIdle>,
    workers: HashMap<JobId, Addr<JobWorker>>,
    last_active: Instant,
}

impl JobSupervisor {
    pub(in crate::actors) fn new(tenant: TenantId, deps: SupervisorDeps, registry: Recipient<SupervisorIdle>) -> Self {
        Self { tenant, deps, registry, workers: HashMap::new(), last_active: Instant::now() }
    }

    /// Every request names its caller; a caller of another tenant reaching this
    /// supervisor would be a routing bug, and is refused rather than served.
    fn check_tenant(&mut self, caller: &Caller) -> Result<(), StoreError> {
        self.last_active = Instant::now();
        if caller.tenant == self.tenant {
            Ok(())
        } else {
            tracing::error!(supervisor = %self.tenant, caller = %caller.tenant, "request routed to the wrong tenant");
            Err(StoreError::Corrupt("request routed to another tenant's supervisor".into()))
        }
    }

    fn stop_if_idle(&mut self, ctx: &mut Context<Self>) {
        if !self.workers.is_empty() || self.last_active.elapsed() < self.deps.idle_after {
            return;
        }
        let idle = SupervisorIdle { tenant: self.tenant.clone(), supervisor: ctx.address() };
        self.registry
            .send(idle)
            .into_actor(self)
            .map(|may_stop, act, ctx| {
                if may_stop.unwrap_or(true) && act.workers.is_empty() {
                    ctx.stop();
                }
            })
            .wait(ctx);
    }

    /// Ends a claimed job that this process cannot run (its type is no longer configured).
    fn fail_unrunnable(&self, job: ClaimedJob, ctx: &mut Context<Self>) {
        let (completer, slots) = (self.deps.completer.clone(), self.deps.slots.clone());
        let outcome = Outcome::Failed { error: format!("job type {:?} is not configured", job.job_type) };
        let completion = Completion { id: job.id, lease: job.lease, outcome, ender: Ender::Worker };
        let (tenant, job_type) = (job.tenant, job.job_type);
        ctx.spawn(
            async move {
                match completer.send(Complete { completion, tenant, job_type }).await {
                    Ok(Ok(_)) => {}
                    // The lease will expire and the rescuer will end the job.
                    Ok(Err(error)) => tracing::warn!(%error, job = %job.id, "could not fail a job of an unknown type"),
                    Err(error) => tracing::warn!(%error, job = %job.id, "could not fail a job of an unknown type"),
                }
                slots.do_send(WorkerSlot::Stopped);
            }
            .into_actor(self),
        );
    }

    fn job_type(&self, name: &str) -> Option<Arc<JobType>> {
        self.deps.job_types.get(name).cloned()
    }
}

impl Actor for JobSupervisor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        tracing::debug!(tenant = %self.tenant, "supervisor started");
        let every = (self.deps.idle_after / 2).max(Duration::from_millis(50));
        ctx.run_interval(every, |act, ctx| act.stop_if_idle(ctx));
    }

    fn stopped(&mut self, _ctx: &mut Self::Context) {
        tracing::debug!(tenant = %self.tenant, "supervisor stopped");
    }
}

impl Handler<SubmitJob> for JobSupervisor {
    type Result = ResponseFuture<Result<Submission, SubmitError>>;

    fn handle(&mut self, msg: SubmitJob, _ctx: &mut Self::Context) -> Self::Result {
        let checked = self.check_tenant(&msg.caller);
        let job_type = self.job_type(&msg.job_type);
        let intake = self.deps.intake.clone();
        let store = self.deps.store.clone();
        Box::pin(async move {
            checked?;
            let job_type = job_type.ok_or_else(|| SubmitError::UnknownType(msg.job_type.clone()))?;
            let external = job_type.handler.is_none();
            job_type.validate_params(&msg.params)?;
            let format = job_type.format_for(msg.format.as_deref())?;
            let admission = job_type
                .admission
                .as_ref()
                .map(|(template, on_conflict)| {
                    let (tenant, user) = (msg.caller.tenant.as_str(), msg.caller.user.as_str());
                    template.key(tenant, user, &job_type.name, &msg.params).map(|key| (key, *on_conflict))
                })
                .transpose()?;
            let (admission_key, on_conflict) = admission.unzip();
            let sealed_params = store.sealer().seal(msg.caller.tenant.as_str(), &job_type.name, &msg.params).await?;
            let job = NewJob {
                caller: msg.caller,
                key: msg.key,
                job_type: job_type.name.clone(),
                params: msg.params,
                sealed_params,
                max_attempts: job_type.retry.max_attempts,
                priority: crate::domain::priority(crate::domain::Origin::Interactive, job_type.priority, msg.priority),
                format,
                admission_key,
                start_after: None,
                trace: msg.trace,
            };
            // A job with an admission key is decided under its key's lock,
            // in a transaction of its own; the others are batched.
            let mut submission = match on_conflict {
                Some(on_conflict) => store.submissions().submit_admitted(&job, on_conflict).await?,
                None => intake.send(Record(job)).await??,
            };
            // A replay answers the job as it stands: its result opened (its params are the request's own).
            if let Submission::Replayed(job) = &mut submission {
                store.sealer().open_job(job).await?;
            }
            let outcome = match &submission {
                Submission::Created(_) => "created",
                Submission::Replayed(_) => "replayed",
                Submission::KeyReused => "key_reused",
                Submission::OverQuota(_) => "over_quota",
                Submission::Joined(_) => "joined",
                Submission::Debounced(_) => "debounced",
                Submission::AdmissionConflict(_) => "admission_conflict",
            };
            crate::telemetry::metrics().jobs_submitted.add(outcome, 1);
            if matches!(submission, Submission::Created(_)) {
                // External workers may be waiting on any process, and a job
                // with an admission key was recorded beside the Intake (which
                // wakes this process's dispatcher): tell them all.
                if (external || on_conflict.is_some())
                    && let Err(error) = store.queue().announce_work().await
                {
                    tracing::warn!(%error, "could not announce a new job; waiting claims look again within a poll");
                }
            }
            Ok(submission)
        })
    }
}

impl Handler<RunJob> for JobSupervisor {
    type Result = ();

    fn handle(&mut self, RunJob(job): RunJob, ctx: &mut Self::Context) {
        self.last_active = Instant::now();
        let Some(job_type) = self.job_type(&job.job_type) else {
            self.fail_unrunnable(job, ctx);
            return;
        };
        let id = job.id;
        let links = WorkerLinks {
            completer: self.deps.completer.clone(),
            leases: self.deps.leases.clone(),
            progress: self.deps.progress.clone(),
            report_to: ctx.address().recipient(),
            slots: self.deps.slots.clone(),
            store: self.deps.store.clone(),
        };
        let worker = JobWorker::new(job, job_type, links);
        self.workers.insert(id, worker.start());
    }
}

impl Handler<WorkerDone> for JobSupervisor {
    type Result = ();

    fn handle(&mut self, WorkerDone { job, released }: WorkerDone, _ctx: &mut Self::Context) {
        self.last_active = Instant::now();
        self.workers.remove(&job);
        self.deps.slots.do_send(if released { WorkerSlot::Ended } else { WorkerSlot::Stopped });
    }
}

impl Handler<StopWorkers> for JobSupervisor {
    type Result = ResponseFuture<()>;

    fn handle(&mut self, _: StopWorkers, _ctx: &mut Self::Context) -> Self::Result {
        let abandons: Vec<_> = self.workers.values().map(|worker| worker.send(Abandon)).collect();
        Box::pin(async move {
            futures_util::future::join_all(abandons).await;
        })
    }
}
