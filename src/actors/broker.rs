//! The Broker: one per process. It leases jobs of external types (`handler =
//! "external"`) to the workers that pull them through the worker API, with
//! the claim spec of errand's own dispatcher (tenant and type limits, the
//! same bounded walk of tenants), under a lease owner of the worker's own.
//! A pull waits up to the time it asked for, and is answered as soon as a
//! job arrives: the dispatcher's wake-ups wake waiting pulls.
//!
//! Its cursor (where the next pull starts walking the tenants) is a cache,
//! like the dispatcher's: the queue table says which jobs are leased.

use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use tokio::sync::Notify;
use uuid::Uuid;

use crate::store::{ClaimSpec, ClaimedJob, Store, StoreError};

/// Lease up to `max` jobs of `types` to the worker named `worker`, waiting
/// up to `wait` for one to arrive. Types that are not external are ignored.
#[derive(Debug, Clone, Message)]
#[rtype(result = "Result<Vec<ClaimedJob>, StoreError>")]
pub struct ClaimForWorker {
    pub worker: String,
    pub types: Vec<String>,
    pub max: usize,
    pub wait: Duration,
}

/// One claim with `spec`, from the broker's cursor; answers the jobs and
/// whether the walk stopped part-way round the tenants.
#[derive(Debug, Message)]
#[rtype(result = "Result<(Vec<ClaimedJob>, bool), StoreError>")]
struct ClaimRound {
    spec: ClaimSpec,
    max: usize,
}

/// A waiting pull looks again at least this often, whatever it heard.
const BACKSTOP: Duration = Duration::from_secs(1);

pub struct Broker {
    store: Store,
    /// The dispatcher's terms (limits, lease), for the external types.
    spec: ClaimSpec,
    /// Where the next pull starts walking the tenants (fairness across
    /// pulls, as the dispatcher keeps its own).
    after_tenant: String,
    /// Woken with every wake-up of the dispatcher.
    work_arrived: Arc<Notify>,
}

impl Broker {
    pub fn new(store: Store, spec: ClaimSpec, work_arrived: Arc<Notify>) -> Self {
        Self { store, spec, after_tenant: String::new(), work_arrived }
    }
}

impl Actor for Broker {
    type Context = Context<Self>;
}

impl Handler<ClaimForWorker> for Broker {
    type Result = ResponseFuture<Result<Vec<ClaimedJob>, StoreError>>;

    fn handle(&mut self, pull: ClaimForWorker, ctx: &mut Self::Context) -> Self::Result {
        let types = pull.types.into_iter().filter(|t| self.spec.types.contains(t)).collect();
        // Each worker leases under an owner of its own, never a process's: a
        // process that shuts down gives back its own jobs, not a worker's.
        let spec = self.spec.for_owner(worker_owner(&pull.worker), types);
        let (broker, work_arrived) = (ctx.address(), self.work_arrived.clone());
        let deadline = tokio::time::Instant::now() + pull.wait;
        Box::pin(async move {
            loop {
                // Listen before looking, so that work arriving meanwhile wakes us.
                let arrived = work_arrived.notified();
                tokio::pin!(arrived);
                arrived.as_mut().enable();
                let (jobs, walk_unfinished) = if spec.types.is_empty() {
                    (Vec::new(), false)
                } else {
                    broker
                        .send(ClaimRound { spec: spec.clone(), max: pull.max })
                        .await
                        .map_err(|e| StoreError::ConnectionLost(format!("the broker stopped: {e}")))??
                };
                let now = tokio::time::Instant::now();
                // A walk that stopped part-way round the tenants (those it saw
                // were at their limit, or locked by another claim) goes on at
                // once: the tenants it has not seen may have work.
                if jobs.is_empty() && walk_unfinished && now < deadline {
                    continue;
                }
                if !jobs.is_empty() || now >= deadline {
                    jobs.iter().for_each(|job| crate::telemetry::record_job_wait(&job.job_type, job.due_at));
                    return Ok(jobs);
                }
                let _ = tokio::time::timeout((deadline - now).min(BACKSTOP), arrived).await;
            }
        })
    }
}

impl Handler<ClaimRound> for Broker {
    type Result = ResponseActFuture<Self, Result<(Vec<ClaimedJob>, bool), StoreError>>;

    fn handle(&mut self, ClaimRound { spec, max }: ClaimRound, _ctx: &mut Self::Context) -> Self::Result {
        let (store, after_tenant) = (self.store.clone(), self.after_tenant.clone());
        let claim = async move { store.queue().claim(&spec.request(max, &after_tenant)).await };
        Box::pin(claim.into_actor(self).map(|claim, act, _| {
            let claim = claim?;
            act.after_tenant.clone_from(&claim.next_after_tenant);
            Ok((claim.jobs, !claim.next_after_tenant.is_empty()))
        }))
    }
}

/// The lease owner of a worker's claims: derived from its name, so the same
/// worker always leases under the same owner.
fn worker_owner(worker: &str) -> Uuid {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(format!("errand-worker\0{worker}"));
    Uuid::from_slice(&digest[..16]).unwrap_or_default()
}
