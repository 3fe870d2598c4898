//! The Rescuer: one per process (several processes rescuing at once is safe:
//! every rescue is fenced on the expired lease). Every half lease it ends the
//! attempts whose lease expired a whole lease ago, because their worker died
//! (`kill -9`, a lost machine) or lost the database for longer: the job runs
//! again, or fails with its one notification when no attempts remain. The
//! ends are recorded through the Completer, the door every end goes through.
//!
//! Why wait a further lease: a process that lost the database (a failover,
//! a restart) still holds its jobs, and once the database is back it renews
//! their leases and records the ends it kept. Rescued as soon as they
//! expired, they would run twice. So no job is run again for an outage
//! shorter than about two leases less a renewal interval (50 s at the
//! default 30 s lease), and a dead process's jobs wait two leases to run again.

use std::future::Future;
use std::time::Duration;

use actix::prelude::*;

use crate::actors::completer::Rescue;
use crate::actors::signals::WorkAvailable;

/// Rescue now; answered when a pass begun after the request is done (tests
/// drive the rescuer with it instead of waiting for its timer).
#[derive(Debug, Clone, Copy, Message)]
#[rtype(result = "()")]
pub struct RescueExpired;

/// Rows one rescue pass handles at most.
const BATCH: i64 = 500;

pub struct Rescuer {
    every: Duration,
    /// How long past its expiry a lease is left to its process: one lease.
    grace: Duration,
    /// Records the rescues (and notifies the jobs that failed for good).
    completer: Recipient<Rescue>,
    /// Told when rescued jobs wait to run again.
    work_available: Recipient<WorkAvailable>,
}

impl Rescuer {
    pub fn new(
        every: Duration,
        grace: Duration,
        completer: Recipient<Rescue>,
        work_available: Recipient<WorkAvailable>,
    ) -> Self {
        Self { every, grace, completer, work_available }
    }

    /// One rescue pass.
    fn pass(&self) -> impl Future<Output = ()> + 'static {
        let (completer, work_available, grace) = (self.completer.clone(), self.work_available.clone(), self.grace);
        async move {
            let rescued = match completer.send(Rescue { limit: BATCH, grace }).await {
                Ok(Ok(rescued)) => rescued,
                Ok(Err(error)) => return tracing::warn!(%error, "rescuing expired leases failed"),
                Err(error) => return tracing::warn!(%error, "rescuing expired leases failed"),
            };
            let failed = rescued.failed.len() as u64;
            crate::telemetry::metrics().jobs_rescued.add("requeued", rescued.requeued);
            crate::telemetry::metrics().jobs_rescued.add("failed", failed);
            if rescued.requeued > 0 || failed > 0 {
                tracing::warn!(requeued = rescued.requeued, failed, "rescued jobs with expired leases");
            }
            if rescued.requeued > 0 {
                work_available.do_send(WorkAvailable);
            }
        }
    }
}

impl Actor for Rescuer {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        // `wait`: a timer's pass holds the mailbox, so a RescueExpired sent
        // meanwhile is answered by a whole pass of its own, run after it.
        // (Passes that do overlap are safe: each end is fenced on the lease
        // it saw expire.)
        ctx.wait(self.pass().into_actor(self));
        ctx.run_interval(self.every, |act, ctx| ctx.wait(act.pass().into_actor(act)));
    }
}

impl Handler<RescueExpired> for Rescuer {
    type Result = ResponseFuture<()>;

    fn handle(&mut self, _: RescueExpired, _ctx: &mut Self::Context) -> Self::Result {
        Box::pin(self.pass())
    }
}
