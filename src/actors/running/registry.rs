//! The SupervisorRegistry: makes each tenant's [`JobSupervisor`] on demand and
//! forgets it when it goes idle. It is the one place that decides whether a
//! tenant's supervisor exists, so an idle supervisor stops only with the
//! registry's consent and a new request never reaches a stopped one twice.

use std::collections::HashMap;

use actix::prelude::*;
use futures_util::future::join_all;

use crate::actors::running::supervisor::{JobSupervisor, RunJob, StopWorkers, SupervisorDeps, SupervisorIdle};
use crate::domain::TenantId;

/// The supervisor of `tenant`, started if need be.
#[derive(Debug, Message)]
#[rtype(result = "Addr<JobSupervisor>")]
pub struct SupervisorFor(pub TenantId);

/// How many tenant supervisors are alive (for operators and tests).
#[derive(Debug, Message)]
#[rtype(result = "usize")]
pub struct CountSupervisors;

/// Stop every worker of every supervisor (shutdown, after the grace period).
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub(in crate::actors) struct StopAllWorkers;

pub struct SupervisorRegistry {
    supervisors: HashMap<TenantId, Addr<JobSupervisor>>,
    deps: SupervisorDeps,
}

impl SupervisorRegistry {
    pub fn new(deps: SupervisorDeps) -> Self {
        Self { supervisors: HashMap::new(), deps }
    }

    fn supervisor(&mut self, tenant: TenantId, registry: Addr<Self>) -> Addr<JobSupervisor> {
        if let Some(existing) = self.supervisors.get(&tenant).filter(|addr| addr.connected()) {
            return existing.clone();
        }
        let addr = JobSupervisor::new(tenant.clone(), self.deps.clone(), registry.recipient()).start();
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
        // `do_send` cannot lose this: a supervisor stops only after this actor
        // consented and forgot it, so the one returned here is alive. (Were it
        // lost, the lease would expire and the rescuer would run the job.)
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
