//! The Rescuer: one per process (several processes rescuing at once is safe:
//! every rescue is fenced on the expired lease). Every half lease it ends the
//! attempts whose lease expired, because their worker died (`kill -9`, a lost
//! machine) or lost the database: the job runs again, or fails with its one
//! notification when no attempts remain. The ends are recorded through the
//! Completer, the door every end goes through.

use std::future::Future;
use std::time::Duration;

use actix::prelude::*;

use super::completer::Rescue;
use super::signals::WorkAvailable;

/// Rescue now; answered when a pass begun after the request is done (tests
/// drive the rescuer with it instead of waiting for its timer).
#[derive(Debug, Clone, Copy, Message)]
#[rtype(result = "()")]
pub struct RescueExpired;

/// Rows one rescue pass handles at most.
const BATCH: i64 = 500;

pub struct Rescuer {
    every: Duration,
    /// Records the rescues (and notifies the jobs that failed for good).
    completer: Recipient<Rescue>,
    /// Told when rescued jobs wait to run again.
    work_available: Recipient<WorkAvailable>,
}

impl Rescuer {
    pub fn new(every: Duration, completer: Recipient<Rescue>, work_available: Recipient<WorkAvailable>) -> Self {
        Self { every, completer, work_available }
    }

    /// One rescue pass.
    fn pass(&self) -> impl Future<Output = ()> + 'static {
        let (completer, work_available) = (self.completer.clone(), self.work_available.clone());
        async move {
            let rescued = match completer.send(Rescue { limit: BATCH }).await {
                Ok(Ok(rescued)) => rescued,
                Ok(Err(error)) => return tracing::warn!(%error, "rescuing expired leases failed"),
                Err(error) => return tracing::warn!(%error, "rescuing expired leases failed"),
            };
            let failed = rescued.failed.len() as u64;
            metrics::counter!("errand_jobs_rescued_total", "outcome" => "requeued").increment(rescued.requeued);
            metrics::counter!("errand_jobs_rescued_total", "outcome" => "failed").increment(failed);
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
