//! The Rescuer: one per process (several processes rescuing at once is safe:
//! every rescue is fenced on the expired lease). Every half lease it ends the
//! attempts whose lease expired, because their worker died (`kill -9`, a lost
//! machine) or lost the database: the job runs again, or fails with its one
//! notification when no attempts remain.

use std::time::Duration;

use actix::prelude::*;

use super::dispatcher::WorkAvailable;
use super::notifier::JobFinished;
use crate::store::Store;

/// Rescue now; answered when the pass is done (tests drive the rescuer with
/// it instead of waiting for its timer).
#[derive(Debug, Clone, Copy, Message)]
#[rtype(result = "()")]
pub struct RescueExpired;

/// Rows one rescue pass handles at most.
const BATCH: i64 = 500;

pub struct Rescuer {
    store: Store,
    every: Duration,
    /// Told when rescued jobs wait to run again.
    work_available: Recipient<WorkAvailable>,
    /// Told of each job the rescue failed for good.
    notifier: Recipient<JobFinished>,
    rescuing: bool,
}

impl Rescuer {
    pub fn new(
        store: Store,
        every: Duration,
        work_available: Recipient<WorkAvailable>,
        notifier: Recipient<JobFinished>,
    ) -> Self {
        Self { store, every, work_available, notifier, rescuing: false }
    }

    /// One rescue pass (none if one is under way).
    fn pass(&mut self) -> ResponseActFuture<Self, ()> {
        if self.rescuing {
            return Box::pin(fut::ready(()));
        }
        self.rescuing = true;
        let store = self.store.clone();
        let pass =
            async move { store.queue().rescue_expired(BATCH).await }.into_actor(self).map(|rescued, act, _ctx| {
                act.rescuing = false;
                let rescued = match rescued {
                    Ok(rescued) => rescued,
                    Err(error) => return tracing::warn!(%error, "rescuing expired leases failed"),
                };
                let failed = rescued.failed.len() as u64;
                metrics::counter!("errand_jobs_rescued_total", "outcome" => "requeued").increment(rescued.requeued);
                metrics::counter!("errand_jobs_rescued_total", "outcome" => "failed").increment(failed);
                if rescued.requeued > 0 || failed > 0 {
                    tracing::warn!(requeued = rescued.requeued, failed, "rescued jobs with expired leases");
                }
                for ended in rescued.failed {
                    act.notifier.do_send(JobFinished(ended));
                }
                if rescued.requeued > 0 {
                    act.work_available.do_send(WorkAvailable);
                }
            });
        Box::pin(pass)
    }
}

impl Actor for Rescuer {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        ctx.run_interval(self.every, |act, ctx| {
            ctx.spawn(act.pass());
        });
        ctx.spawn(self.pass());
    }
}

impl Handler<RescueExpired> for Rescuer {
    type Result = ResponseActFuture<Self, ()>;

    fn handle(&mut self, _: RescueExpired, _ctx: &mut Self::Context) -> Self::Result {
        self.pass()
    }
}
