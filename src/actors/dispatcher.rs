//! The Dispatcher: one per process. It claims runnable jobs when told there is
//! work (a local submission, a NOTIFY from another process, the backstop poll,
//! a freed slot), within this process's worker limit, and hands each claimed
//! job to its tenant's supervisor. It also rescues jobs whose lease expired and,
//! at shutdown, drains: waits for running jobs, then releases the rest.
//!
//! Its counters are a cache: the jobs table says which jobs are running.

use std::time::{Duration, Instant};

use actix::prelude::*;
use tokio::sync::oneshot;
use uuid::Uuid;

use super::notifier::JobFinished;
use super::registry::{RunJob, StopAllWorkers, SupervisorRegistry};
use crate::store::{ClaimedJob, Store};

/// There may be work to claim.
#[derive(Debug, Clone, Copy, Message)]
#[rtype(result = "()")]
pub struct WorkAvailable;

/// A worker of this process ended (however it ended): one slot is free.
#[derive(Debug, Clone, Copy, Message)]
#[rtype(result = "()")]
pub struct SlotFreed;

/// Stop claiming, wait up to `grace` for running jobs, then stop the rest and
/// release their leases so another process takes them at once.
#[derive(Debug, Clone, Copy, Message)]
#[rtype(result = "()")]
pub struct Drain {
    pub grace: Duration,
}

/// How the dispatcher works.
#[derive(Debug, Clone)]
pub struct DispatcherSettings {
    pub global_limit: usize,
    pub tenant_limit: u32,
    pub lease: Duration,
    pub poll_interval: Duration,
}

/// Rows one rescue pass handles at most.
const RESCUE_BATCH: i64 = 500;
/// Telling other processes about work we cannot take ourselves happens at most this often.
const ANNOUNCE_EVERY: Duration = Duration::from_millis(100);

pub struct Dispatcher {
    store: Store,
    settings: DispatcherSettings,
    /// This process's identity as a lease owner.
    owner: Uuid,
    registry: Addr<SupervisorRegistry>,
    notifier: Recipient<JobFinished>,
    running: usize,
    claiming: bool,
    /// A wake-up arrived while a claim was in flight: claim again after it.
    wake_pending: bool,
    accepting: bool,
    last_announce: Option<Instant>,
    announce_scheduled: bool,
    drained: Option<oneshot::Sender<()>>,
}

impl Dispatcher {
    pub fn new(
        store: Store,
        settings: DispatcherSettings,
        registry: Addr<SupervisorRegistry>,
        notifier: Recipient<JobFinished>,
    ) -> Self {
        Self {
            store,
            settings,
            owner: Uuid::new_v4(),
            registry,
            notifier,
            running: 0,
            claiming: false,
            wake_pending: false,
            accepting: true,
            last_announce: None,
            announce_scheduled: false,
            drained: None,
        }
    }

    fn claim(&mut self, ctx: &mut Context<Self>) {
        if !self.accepting {
            return;
        }
        if self.claiming {
            self.wake_pending = true;
            return;
        }
        let free = self.settings.global_limit.saturating_sub(self.running);
        if free == 0 {
            self.announce_to_peers(ctx);
            return;
        }
        self.claiming = true;
        self.wake_pending = false;
        let store = self.store.clone();
        let (owner, tenant_limit, lease) = (self.owner, self.settings.tenant_limit, self.settings.lease);
        async move { store.queue().claim(owner, free, tenant_limit, lease).await }
            .into_actor(self)
            .map(move |claimed, act, ctx| {
                act.claiming = false;
                match claimed {
                    Ok(jobs) => {
                        metrics::counter!("errand_jobs_claimed_total").increment(jobs.len() as u64);
                        let full = jobs.len() == free;
                        jobs.into_iter().for_each(|job| act.start(job));
                        if full {
                            // There may be more than we could take: let idle peers know.
                            act.announce_to_peers(ctx);
                        }
                    }
                    Err(error) => {
                        tracing::warn!(%error, "claiming jobs failed; the next poll retries")
                    }
                }
                if act.wake_pending {
                    act.claim(ctx);
                }
            })
            .spawn(ctx);
    }

    fn start(&mut self, job: ClaimedJob) {
        tracing::debug!(job = %job.id, tenant = %job.tenant, attempt = job.attempt, "claimed");
        self.running += 1;
        metrics::gauge!("errand_jobs_running").set(self.running as f64);
        // The job is committed as running under our lease: if this message were
        // lost, the lease would expire and the rescuer would run the job again.
        self.registry.do_send(RunJob(job));
    }

    /// NOTIFYs other processes of work this one cannot take, at most once per
    /// [`ANNOUNCE_EVERY`]; a request inside the window is sent at its end
    /// rather than dropped, so no submission goes unannounced.
    fn announce_to_peers(&mut self, ctx: &mut Context<Self>) {
        if self.announce_scheduled {
            return;
        }
        self.announce_scheduled = true;
        let wait = self.last_announce.map_or(Duration::ZERO, |at| ANNOUNCE_EVERY.saturating_sub(at.elapsed()));
        ctx.run_later(wait, |act, ctx| {
            act.announce_scheduled = false;
            act.last_announce = Some(Instant::now());
            let store = act.store.clone();
            ctx.spawn(
                async move {
                    if let Err(error) = store.queue().announce_work().await {
                        tracing::warn!(%error, "could not announce work to other processes");
                    }
                }
                .into_actor(act),
            );
        });
    }

    fn rescue(&mut self, ctx: &mut Context<Self>) {
        if !self.accepting {
            return;
        }
        let store = self.store.clone();
        async move { store.queue().rescue_expired(RESCUE_BATCH).await }
            .into_actor(self)
            .map(|rescued, act, ctx| match rescued {
                Ok(rescued) => {
                    metrics::counter!("errand_jobs_rescued_total", "outcome" => "requeued").increment(rescued.requeued);
                    metrics::counter!("errand_jobs_rescued_total", "outcome" => "failed")
                        .increment(rescued.failed.len() as u64);
                    if rescued.requeued > 0 || !rescued.failed.is_empty() {
                        tracing::warn!(
                            requeued = rescued.requeued,
                            failed = rescued.failed.len(),
                            "rescued jobs with expired leases"
                        );
                    }
                    for finished in rescued.failed {
                        act.notifier.do_send(JobFinished(finished));
                    }
                    if rescued.requeued > 0 {
                        act.claim(ctx);
                    }
                }
                Err(error) => tracing::warn!(%error, "rescuing expired leases failed"),
            })
            .spawn(ctx);
    }
}

impl Actor for Dispatcher {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        tracing::info!(owner = %self.owner, "dispatcher started");
        ctx.run_interval(self.settings.poll_interval, |act, ctx| act.claim(ctx));
        let rescue_every = (self.settings.lease / 2).max(self.settings.poll_interval);
        ctx.run_interval(rescue_every, |act, ctx| act.rescue(ctx));
        self.rescue(ctx);
        self.claim(ctx);
    }
}

impl Handler<WorkAvailable> for Dispatcher {
    type Result = ();

    fn handle(&mut self, _: WorkAvailable, ctx: &mut Self::Context) {
        self.claim(ctx);
    }
}

impl Handler<SlotFreed> for Dispatcher {
    type Result = ();

    fn handle(&mut self, _: SlotFreed, ctx: &mut Self::Context) {
        self.running = self.running.saturating_sub(1);
        metrics::gauge!("errand_jobs_running").set(self.running as f64);
        if self.running == 0
            && let Some(done) = self.drained.take()
        {
            let _ = done.send(());
        }
        self.claim(ctx);
    }
}

impl Handler<Drain> for Dispatcher {
    type Result = ResponseActFuture<Self, ()>;

    fn handle(&mut self, Drain { grace }: Drain, _ctx: &mut Self::Context) -> Self::Result {
        self.accepting = false;
        let (done, finished) = oneshot::channel();
        if self.running == 0 {
            let _ = done.send(());
        } else {
            self.drained = Some(done);
        }
        let (store, owner, registry, running) = (self.store.clone(), self.owner, self.registry.clone(), self.running);
        tracing::info!(running, ?grace, "draining: waiting for running jobs");
        Box::pin(
            async move {
                if tokio::time::timeout(grace, finished).await.is_err() {
                    // Stop our workers first: a released job must have no attempt left running here.
                    let _ = registry.send(StopAllWorkers).await;
                    match store.queue().release_all(owner).await {
                        Ok(released) => tracing::info!(released, "released unfinished jobs to other processes"),
                        Err(error) => tracing::warn!(%error, "could not release jobs; their leases will expire"),
                    }
                }
            }
            .into_actor(self),
        )
    }
}
