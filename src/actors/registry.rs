//! The SupervisorRegistry: makes each tenant's [`JobSupervisor`] on demand and
//! forgets it when it goes idle. It is the one place that decides whether a
//! tenant's supervisor exists, so an idle supervisor stops only with the
//! registry's consent and a new request never reaches a stopped one twice.

use std::collections::HashMap;
use std::time::Duration;

use actix::prelude::*;
use futures_util::future::join_all;

use super::completer::Completer;
use super::dispatcher::{SlotFreed, WorkAvailable};
use super::notifier::JobFinished;
use super::supervisor::{JobSupervisor, StopWorkers, SupervisorDeps};
use crate::domain::TenantId;
use crate::jobs::JobTypes;
use crate::store::{ClaimedJob, Store};

/// The supervisor of `tenant`, started if need be.
#[derive(Debug, Message)]
#[rtype(result = "Addr<JobSupervisor>")]
pub struct SupervisorFor(pub TenantId);

/// How many tenant supervisors are alive (for operators and tests).
#[derive(Debug, Message)]
#[rtype(result = "usize")]
pub struct CountSupervisors;

/// Run a claimed job under its tenant's supervisor.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct RunJob(pub ClaimedJob);

/// A supervisor has been idle: may it stop? (Only if it is still the one on record.)
#[derive(Message)]
#[rtype(result = "bool")]
pub(super) struct SupervisorIdle {
    pub tenant: TenantId,
    pub supervisor: Addr<JobSupervisor>,
}

/// Stop every worker of every supervisor (shutdown, after the grace period).
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub(super) struct StopAllWorkers;

pub struct SupervisorRegistry {
    supervisors: HashMap<TenantId, Addr<JobSupervisor>>,
    store: Store,
    job_types: JobTypes,
    lease: Duration,
    idle_after: Duration,
    completer: Addr<Completer>,
    work_available: Recipient<WorkAvailable>,
    slot_freed: Recipient<SlotFreed>,
    notifier: Recipient<JobFinished>,
}

/// What the registry hands every supervisor it makes.
pub struct RegistryDeps {
    pub store: Store,
    pub job_types: JobTypes,
    pub lease: Duration,
    pub idle_after: Duration,
    pub completer: Addr<Completer>,
    pub work_available: Recipient<WorkAvailable>,
    pub slot_freed: Recipient<SlotFreed>,
    pub notifier: Recipient<JobFinished>,
}

impl SupervisorRegistry {
    pub fn new(deps: RegistryDeps) -> Self {
        let RegistryDeps { store, job_types, lease, idle_after, completer, work_available, slot_freed, notifier } =
            deps;
        Self {
            supervisors: HashMap::new(),
            store,
            job_types,
            lease,
            idle_after,
            completer,
            work_available,
            slot_freed,
            notifier,
        }
    }

    fn supervisor(&mut self, tenant: TenantId, registry: Addr<Self>) -> Addr<JobSupervisor> {
        if let Some(existing) = self.supervisors.get(&tenant).filter(|addr| addr.connected()) {
            return existing.clone();
        }
        let deps = SupervisorDeps {
            store: self.store.clone(),
            job_types: self.job_types.clone(),
            lease: self.lease,
            idle_after: self.idle_after,
            registry,
            completer: self.completer.clone(),
            work_available: self.work_available.clone(),
            slot_freed: self.slot_freed.clone(),
            notifier: self.notifier.clone(),
        };
        let addr = JobSupervisor::new(tenant.clone(), deps).start();
        self.supervisors.insert(tenant, addr.clone());
        addr
    }
}

impl Actor for SupervisorRegistry {
    type Context = Context<Self>;
}

impl Handler<SupervisorFor> for SupervisorRegistry {
    type Result = MessageResult<SupervisorFor>;

    fn handle(&mut self, SupervisorFor(tenant): SupervisorFor, ctx: &mut Self::Context) -> Self::Result {
        MessageResult(self.supervisor(tenant, ctx.address()))
    }
}

impl Handler<CountSupervisors> for SupervisorRegistry {
    type Result = usize;

    fn handle(&mut self, _: CountSupervisors, _ctx: &mut Self::Context) -> usize {
        self.supervisors.values().filter(|addr| addr.connected()).count()
    }
}

impl Handler<RunJob> for SupervisorRegistry {
    type Result = ();

    fn handle(&mut self, RunJob(job): RunJob, ctx: &mut Self::Context) {
        self.supervisor(job.tenant.clone(), ctx.address()).do_send(RunJob(job));
    }
}

impl Handler<SupervisorIdle> for SupervisorRegistry {
    type Result = bool;

    fn handle(&mut self, idle: SupervisorIdle, _ctx: &mut Self::Context) -> bool {
        if self.supervisors.get(&idle.tenant) == Some(&idle.supervisor) {
            self.supervisors.remove(&idle.tenant);
            true
        } else {
            false
        }
    }
}

impl Handler<StopAllWorkers> for SupervisorRegistry {
    type Result = ResponseFuture<()>;

    fn handle(&mut self, _: StopAllWorkers, _ctx: &mut Self::Context) -> Self::Result {
        let stops: Vec<_> = self.supervisors.values().map(|s| s.send(StopWorkers)).collect();
        Box::pin(async move {
            join_all(stops).await;
        })
    }
}
