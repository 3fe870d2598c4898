//! The LeaseKeeper: one per process. It renews the leases of every job this
//! process runs in one statement per interval (a third of the lease), instead
//! of one heartbeat per job, and tells a worker whose lease was taken away
//! (rescued after a stall, or the job ended elsewhere) to stop. Knowing which
//! jobs run here, it also passes on cancels (heard through `NOTIFY
//! errand_cancel`, or seen on a renewal, should the notice have come before
//! the worker started).
//!
//! Its map of held leases is a cache of what the workers told it: losing it
//! would let leases expire and the Rescuer would run the jobs again, which
//! fencing makes safe.
//!
//! A renewal that fails (the database restarting, failing over) is tried
//! again within moments, backing off to a second, not at the next interval:
//! once the database is back, this process's leases are renewed first
//! thing, before the Rescuer's grace runs out on them.

use std::collections::HashMap;
use std::time::Duration;

use actix::prelude::*;

use crate::domain::{JobId, LeaseId, RetryPolicy};
use crate::store::Store;

/// What the keeper tells a worker about its job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Message)]
#[rtype(result = "()")]
pub enum LeaseNotice {
    /// The lease is no longer this worker's: stop, write nothing.
    Lost,
    /// The job's owner or an operator asked for it to stop: stop the
    /// handler, then end the attempt `cancelled` under this lease.
    CancelRequested,
}

/// A worker's lease starts or stops needing renewal.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub enum LeaseChange {
    Hold { job: JobId, lease: LeaseId, holder: Recipient<LeaseNotice> },
    Release { job: JobId },
}

/// A cancel was asked for these jobs (they may run in another process).
#[derive(Debug, Clone, Message)]
#[rtype(result = "()")]
pub struct CancelRequested(pub Vec<JobId>);

/// Renew now (tests drive the keeper with it instead of waiting for the interval).
#[derive(Debug, Clone, Copy, Message)]
#[rtype(result = "()")]
pub struct RenewLeases;

/// The waits between tries of a renewal that failed.
const RETRYING: RetryPolicy =
    RetryPolicy { max_attempts: u32::MAX, base: Duration::from_millis(100), max: Duration::from_secs(1) };

pub struct LeaseKeeper {
    store: Store,
    lease: Duration,
    held: HashMap<JobId, (LeaseId, Recipient<LeaseNotice>)>,
    renewing: bool,
    /// Renewals failed in a row (a retry is scheduled while it is not 0).
    failures: u32,
}

impl LeaseKeeper {
    pub fn new(store: Store, lease: Duration) -> Self {
        Self { store, lease, held: HashMap::new(), renewing: false, failures: 0 }
    }

    fn renew(&mut self, ctx: &mut Context<Self>) {
        if self.renewing || self.held.is_empty() {
            return;
        }
        self.renewing = true;
        let held: Vec<(JobId, LeaseId)> = self.held.iter().map(|(job, (lease, _))| (*job, *lease)).collect();
        let (store, duration) = (self.store.clone(), self.lease);
        async move {
            let renewed = store.queue().renew_leases(&held, duration).await;
            (held, renewed)
        }
        .into_actor(self)
        .map(|(asked, renewed), act, ctx| {
            act.renewing = false;
            let renewed = match renewed {
                Ok(renewed) => {
                    act.failures = 0;
                    renewed
                }
                // The database may come back before the leases run out; the fence protects us if not.
                Err(error) => {
                    act.failures += 1;
                    if act.failures <= 3 || act.failures.is_power_of_two() {
                        tracing::warn!(%error, failures = act.failures, "lease renewal failed; trying again");
                    }
                    ctx.run_later(RETRYING.next_delay(act.failures), |act, ctx| act.renew(ctx));
                    return;
                }
            };
            for (job, _) in renewed.iter().filter(|(_, cancel_requested)| *cancel_requested) {
                if let Some((_, holder)) = act.held.get(job) {
                    holder.do_send(LeaseNotice::CancelRequested);
                }
            }
            let renewed: std::collections::HashSet<JobId> = renewed.into_iter().map(|(job, _)| job).collect();
            for (job, lease) in asked.into_iter().filter(|(job, _)| !renewed.contains(job)) {
                // Only the lease we asked about: the job may hold a new one by now.
                // (A job that ended since we asked has no queue row and is
                // not renewed either; its worker ignores the message.)
                if act.held.get(&job).is_some_and(|(held, _)| *held == lease)
                    && let Some((_, holder)) = act.held.remove(&job)
                {
                    holder.do_send(LeaseNotice::Lost);
                }
            }
        })
        .spawn(ctx);
    }
}

impl Actor for LeaseKeeper {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        ctx.run_interval(self.lease / 3, |act, ctx| act.renew(ctx));
    }
}

impl Handler<LeaseChange> for LeaseKeeper {
    type Result = ();

    fn handle(&mut self, change: LeaseChange, _ctx: &mut Self::Context) {
        match change {
            LeaseChange::Hold { job, lease, holder } => {
                self.held.insert(job, (lease, holder));
            }
            LeaseChange::Release { job } => {
                self.held.remove(&job);
            }
        }
    }
}

impl Handler<CancelRequested> for LeaseKeeper {
    type Result = ();

    fn handle(&mut self, CancelRequested(jobs): CancelRequested, _ctx: &mut Self::Context) {
        // Jobs running elsewhere are not ours to stop: their process heard it too.
        for job in jobs {
            if let Some((_, holder)) = self.held.get(&job) {
                holder.do_send(LeaseNotice::CancelRequested);
            }
        }
    }
}

impl Handler<RenewLeases> for LeaseKeeper {
    type Result = ();

    fn handle(&mut self, _: RenewLeases, ctx: &mut Self::Context) {
        self.renew(ctx);
    }
}
