//! The Broker: one per process, the external workers' side of the engine. It
//! leases jobs of external types (`handler = "external"`) to the workers that
//! pull them through the worker API, renews those leases on their heartbeats
//! and writes their progress (their ends go through the Completer), with
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
use chrono::{DateTime, Utc};
use tokio::sync::Notify;
use uuid::Uuid;

use crate::domain::{JobId, LeaseId, ProgressReport};
use crate::store::{ClaimSpec, ClaimedJob, Store, StoreError};

/// Lease up to `max` jobs of `types` to the worker named `worker`, waiting
/// up to `wait` for one to arrive. Types that are not external are ignored.
#[derive(Debug, Clone, Message)]
#[rtype(result = "Result<Leased, StoreError>")]
pub struct ClaimForWorker {
    pub worker: String,
    pub types: Vec<String>,
    pub max: usize,
    pub wait: Duration,
}

/// Jobs leased to an external worker, until when (unless renewed).
#[derive(Debug)]
pub struct Leased {
    pub jobs: Vec<ClaimedJob>,
    pub expires_at: DateTime<Utc>,
}

/// An external worker's heartbeat: extend its lease on `job`. `None`: the
/// lease is no longer its own.
#[derive(Debug, Clone, Copy, Message)]
#[rtype(result = "Result<Option<Renewed>, StoreError>")]
pub struct RenewWorkerLease {
    pub job: JobId,
    pub lease: LeaseId,
}

/// A lease renewed.
#[derive(Debug, Clone, Copy)]
pub struct Renewed {
    pub expires_at: DateTime<Utc>,
    /// The job's owner or an operator asked for it to stop.
    pub cancel_requested: bool,
}

/// How far an external worker's attempt on `job` has come. Answers `false`
/// when the lease is no longer its own.
#[derive(Debug, Clone, Message)]
#[rtype(result = "Result<bool, StoreError>")]
pub struct ReportProgress {
    pub job: JobId,
    pub lease: LeaseId,
    pub report: ProgressReport,
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
    type Result = ResponseFuture<Result<Leased, StoreError>>;

    fn handle(&mut self, pull: ClaimForWorker, ctx: &mut Self::Context) -> Self::Result {
        let types = pull.types.into_iter().filter(|t| self.spec.types.contains(t)).collect();
        // Each worker leases under an owner of its own, never a process's: a
        // process that shuts down gives back its own jobs, not a worker's.
        let spec = self.spec.for_owner(worker_owner(&pull.worker), types);
        let (broker, work_arrived) = (ctx.address(), self.work_arrived.clone());
        let (deadline, lease) = (tokio::time::Instant::now() + pull.wait, self.spec.lease);
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
                    for job in &jobs {
                        let trace_id =
                            crate::telemetry::traces::attempt_trace_id(None, job.trace.as_ref(), job.attempt.into());
                        crate::telemetry::record_job_wait(&job.job_type, job.due_at, trace_id);
                    }
                    return Ok(Leased { jobs, expires_at: expiry_of(lease) });
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
        let started = std::time::SystemTime::now();
        let claim = async move { store.queue().claim(&spec.request(max, &after_tenant)).await };
        Box::pin(claim.into_actor(self).map(move |claim, act, _| {
            let claim = claim?;
            crate::telemetry::record_claimed("worker", started, ClaimedJob::traces(&claim.jobs));
            act.after_tenant.clone_from(&claim.next_after_tenant);
            Ok((claim.jobs, !claim.next_after_tenant.is_empty()))
        }))
    }
}

impl Handler<RenewWorkerLease> for Broker {
    type Result = ResponseFuture<Result<Option<Renewed>, StoreError>>;

    fn handle(&mut self, RenewWorkerLease { job, lease }: RenewWorkerLease, _ctx: &mut Self::Context) -> Self::Result {
        let (store, duration, expires_at) = (self.store.clone(), self.spec.lease, expiry_of(self.spec.lease));
        Box::pin(async move {
            let renewed = store.queue().renew_leases(&[(job, lease)], duration).await?;
            Ok(renewed.first().map(|&(_, cancel_requested)| Renewed { expires_at, cancel_requested }))
        })
    }
}

impl Handler<ReportProgress> for Broker {
    type Result = ResponseFuture<Result<bool, StoreError>>;

    fn handle(&mut self, progress: ReportProgress, _ctx: &mut Self::Context) -> Self::Result {
        let store = self.store.clone();
        Box::pin(async move {
            let written = store.queue().write_progress(&[(progress.job, progress.lease, progress.report)]).await?;
            Ok(written > 0)
        })
    }
}

/// When a lease of `length` given or renewed now runs out.
fn expiry_of(length: Duration) -> DateTime<Utc> {
    Utc::now() + chrono::Duration::from_std(length).unwrap_or_default()
}

/// The lease owner of a worker's claims: derived from its name, so the same
/// worker always leases under the same owner.
fn worker_owner(worker: &str) -> Uuid {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(format!("errand-worker\0{worker}"));
    Uuid::from_slice(&digest[..16]).unwrap_or_default()
}
