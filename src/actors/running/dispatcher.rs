//! The Dispatcher: one per process. It claims due jobs when told there is
//! work (a local submission, a NOTIFY from another process, the backstop poll,
//! a freed slot, a rescue), within this process's worker limit, and hands each
//! claimed job to its tenant's supervisor. At shutdown it drains: waits for
//! running jobs, then releases the rest.
//!
//! Claims batch themselves: one claim is in flight at a time, and slots freed
//! meanwhile are filled by the next claim, all in one statement. Each claim
//! considers a bounded number of tenants, walking them round-robin from where
//! the previous claim stopped, so its cost does not grow with the number of
//! tenants waiting and every tenant's turn comes.
//!
//! Slots bound the handlers running at once. A worker releases its slot as
//! soon as its attempt's outcome is known, while the Completer records the
//! end: the next claim need not wait for that write, which is most of a
//! short job's time in the process. Those ends stay bounded (at most one
//! more global limit of them), and their jobs count against their tenants'
//! limits in the database until written, so released slots never let a
//! tenant run more than its share.
//!
//! Claims also run a little ahead of the free slots, while handlers start
//! jobs fast (see `claimed_ahead.rs`): a freed slot then takes its next job
//! at once, and claims stay large when jobs are short.
//!
//! Its counters, cursor and jobs claimed ahead are a cache: the queue table
//! says which jobs are running, and a job held ahead here when the process
//! dies is rescued like a running one.

mod claimed_ahead;

use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;
use tokio::sync::oneshot;

use crate::actors::running::intake::{LendSlots, SlotLoan, SlotsUsed};
use crate::actors::running::registry::{StopAllWorkers, SupervisorRegistry};
use crate::actors::running::supervisor::RunJob;
use crate::actors::signals::{WorkAvailable, WorkerSlot};
use crate::actors::soon::after_arrivals;
use crate::domain::LeaseId;
use crate::store::{ClaimSpec, ClaimedJob, Store};
use claimed_ahead::ClaimedAhead;

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
    pub poll_interval: Duration,
    /// Every claim's terms, with this process's identity as the lease owner
    /// and the job types it runs (external ones are left to external workers).
    pub spec: ClaimSpec,
    /// Woken with every wake-up of the dispatcher: the worker API's waiting claims.
    pub work_arrived: Arc<tokio::sync::Notify>,
}

/// When a claim asked for runs.
#[derive(Debug, Clone, Copy)]
enum ClaimAfter {
    /// New work (submissions while busy, slots freed): at the runtime
    /// timer's next millisecond, a timer of zero (tokio rounds every
    /// deadline up to the end of a millisecond, so the 500 µs this was
    /// waited 0.5-1.5 ms). Under a flood of submissions that wait makes
    /// claims fuller: claiming on the next turn instead ran creation with
    /// its jobs about 10 % slower (6 pairs; the Completer's next turn alone
    /// cost nothing).
    Gathering,
    /// Rooms freed by ends: once the other rooms freed with them have
    /// arrived (a batch of ends frees them in one burst: `soon.rs`), with no
    /// timer, since a tenant at its limit waits on every one.
    Arrivals,
}

/// Telling other processes about work we cannot take ourselves happens at most this often.
const ANNOUNCE_EVERY: Duration = Duration::from_millis(100);

pub struct Dispatcher {
    store: Store,
    settings: DispatcherSettings,
    registry: Addr<SupervisorRegistry>,
    /// Slots held: handlers running here, and slots lent to the Intake.
    running: usize,
    /// Jobs claimed and waiting for a slot.
    claimed_ahead: ClaimedAhead,
    /// Jobs whose worker released its slot and whose end is being recorded.
    ending: usize,
    /// The last claim took all it asked for: the tenants had room, so a
    /// released slot may be filled at once (after a short claim, room comes
    /// with recorded ends instead).
    last_claim_full: bool,
    /// Slots lent to the Intake and not back yet (also counted in `running`).
    lent: usize,
    /// Where the next claim starts walking the tenants.
    after_tenant: String,
    claiming: bool,
    /// A claim for freed slots is scheduled.
    claim_scheduled: bool,
    /// A wake-up arrived while a claim was in flight: claim again after it.
    wake_pending: bool,
    accepting: bool,
    last_announce: Option<Instant>,
    announce_scheduled: bool,
    drained: Option<oneshot::Sender<()>>,
}

impl Dispatcher {
    pub fn new(store: Store, settings: DispatcherSettings, registry: Addr<SupervisorRegistry>) -> Self {
        let claimed_ahead = ClaimedAhead::new(settings.global_limit, settings.spec.lease, Instant::now());
        Self {
            store,
            settings,
            registry,
            running: 0,
            claimed_ahead,
            ending: 0,
            last_claim_full: true,
            lent: 0,
            after_tenant: String::new(),
            claiming: false,
            claim_scheduled: false,
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
        self.hand_back_overdue(ctx);
        let ahead = self.claimed_ahead.wanted(Instant::now());
        let free = self.room(ahead);
        if free == 0 {
            self.announce_to_peers(ctx);
            return;
        }
        // At most half the slots (and jobs ahead) per claim: the halves then
        // take turns, one being claimed while the other's ends are recorded,
        // so the two statements overlap on the database instead of alternating.
        let free = free.min((self.settings.global_limit + ahead).div_ceil(2));
        self.claiming = true;
        self.wake_pending = false;
        let (store, spec, after_tenant) = (self.store.clone(), self.settings.spec.clone(), self.after_tenant.clone());
        let started = std::time::SystemTime::now();
        async move { store.queue().claim(&spec.request(free, &after_tenant)).await }
            .into_actor(self)
            .map(move |claimed, act, ctx| {
                act.claiming = false;
                match claimed {
                    Ok(claim) => {
                        let jobs = claim.jobs;
                        act.after_tenant = claim.next_after_tenant;
                        crate::telemetry::record_claimed("dispatcher", started, ClaimedJob::traces(&jobs));
                        let full = jobs.len() == free;
                        act.last_claim_full = full;
                        act.claimed_ahead.hold(jobs, Instant::now());
                        act.start_held();
                        if !act.accepting {
                            // Claimed as the drain began: what found no slot goes back.
                            let held = act.claimed_ahead.take_all();
                            act.hand_back(held, ctx);
                        }
                        // A full claim, or one that stopped part-way through the
                        // tenants, may have left work: look again at once (a full
                        // process then tells its idle peers instead).
                        if full || !act.after_tenant.is_empty() {
                            act.wake_pending = true;
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

    /// Claims soon, once per burst: slots free up in bursts (the Completer
    /// records a batch of ends at once) and submissions arrive in bursts
    /// under load, and one claim for the whole burst costs one commit where
    /// a claim per slot or per job costs one each.
    fn claim_soon(&mut self, after: ClaimAfter, ctx: &mut Context<Self>) {
        if self.claim_scheduled {
            return;
        }
        self.claim_scheduled = true;
        let claim = |act: &mut Self, ctx: &mut Context<Self>| {
            act.claim_scheduled = false;
            act.claim(ctx);
        };
        match after {
            ClaimAfter::Gathering => {
                ctx.run_later(Duration::ZERO, claim);
            }
            ClaimAfter::Arrivals => after_arrivals(ctx, claim),
        }
    }

    /// Jobs a claim may take now: the free slots and `ahead` more, less
    /// those already held ahead, while the ends being recorded beside the
    /// running handlers stay within one global limit.
    fn room(&self, ahead: usize) -> usize {
        let limit = self.settings.global_limit;
        let held = self.running + self.claimed_ahead.len();
        (limit + ahead).saturating_sub(held).min((2 * limit).saturating_sub(self.running + self.ending))
    }

    /// `n` fewer slots held (workers released or stopped, or lent slots
    /// came back): jobs held ahead take them.
    fn free_slots(&mut self, n: usize) {
        self.running = self.running.saturating_sub(n);
        self.start_held();
        crate::telemetry::metrics().jobs_running.set(self.running as i64);
        self.drained_if_idle();
    }

    /// Starts jobs held ahead while slots are free.
    fn start_held(&mut self) {
        while self.running < self.settings.global_limit
            && let Some(job) = self.claimed_ahead.next(Instant::now())
        {
            self.start(job);
        }
        self.count_held();
    }

    fn count_held(&self) {
        crate::telemetry::metrics().jobs_claimed_ahead.set(self.claimed_ahead.len() as i64);
    }

    /// Hands jobs held ahead too long back to the queue, unstarted (see
    /// `claimed_ahead.rs`); the announcement wakes whichever process has room.
    fn hand_back_overdue(&mut self, ctx: &mut Context<Self>) {
        let overdue = self.claimed_ahead.take_overdue(Instant::now());
        self.hand_back(overdue, ctx);
    }

    fn hand_back(&mut self, leases: Vec<LeaseId>, ctx: &mut Context<Self>) {
        if leases.is_empty() {
            return;
        }
        self.count_held();
        let (store, owner) = (self.store.clone(), self.settings.spec.owner);
        ctx.spawn(
            async move {
                match store.queue().release_unstarted(owner, &leases).await {
                    Ok(released) => tracing::debug!(released, "handed back jobs claimed ahead and not started"),
                    Err(error) => {
                        tracing::warn!(%error, "could not hand back jobs claimed ahead; their leases will expire")
                    }
                }
            }
            .into_actor(self),
        );
    }

    /// Ends a drain once no handler runs and no end is being recorded here.
    fn drained_if_idle(&mut self) {
        if self.running + self.ending == 0
            && let Some(done) = self.drained.take()
        {
            let _ = done.send(());
        }
    }

    /// Runs a claimed job in a slot (a free one: the caller checked).
    fn start(&mut self, job: ClaimedJob) {
        self.running += 1;
        crate::telemetry::metrics().jobs_running.set(self.running as i64);
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
}

impl Actor for Dispatcher {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        tracing::info!(owner = %self.settings.spec.owner, "dispatcher started");
        ctx.run_interval(self.settings.poll_interval, |act, ctx| act.claim(ctx));
        // Jobs held ahead while no claim runs (slow handlers, nothing new) go back in time too.
        ctx.run_interval(self.claimed_ahead.check_every(), |act, ctx| act.hand_back_overdue(ctx));
        self.claim(ctx);
    }
}

impl Handler<WorkAvailable> for Dispatcher {
    type Result = ();

    fn handle(&mut self, _: WorkAvailable, ctx: &mut Self::Context) {
        self.settings.work_arrived.notify_waiters();
        // An idle process claims at once (latency); a busy one lets a burst
        // of submissions gather into one claim (throughput).
        if self.running == 0 {
            self.claim(ctx);
        } else {
            self.claim_soon(ClaimAfter::Gathering, ctx);
        }
    }
}

impl Handler<WorkerSlot> for Dispatcher {
    type Result = ();

    fn handle(&mut self, change: WorkerSlot, ctx: &mut Self::Context) {
        match change {
            WorkerSlot::Released => {
                self.ending += 1;
                self.free_slots(1);
                if self.last_claim_full {
                    self.claim_soon(ClaimAfter::Gathering, ctx);
                }
            }
            WorkerSlot::Ended => {
                self.ending = self.ending.saturating_sub(1);
                self.drained_if_idle();
                self.claim_soon(ClaimAfter::Arrivals, ctx);
            }
            WorkerSlot::Stopped => {
                self.free_slots(1);
                self.claim_soon(ClaimAfter::Gathering, ctx);
            }
        }
    }
}

impl Handler<LendSlots> for Dispatcher {
    type Result = Option<SlotLoan>;

    fn handle(&mut self, LendSlots { wanted }: LendSlots, _ctx: &mut Self::Context) -> Self::Result {
        let quiet = self.accepting
            && !self.claiming
            && !self.claim_scheduled
            && self.lent == 0
            && self.claimed_ahead.is_empty();
        // Slots only: the Intake starts what it claims.
        let slots = wanted.min(self.room(0));
        if !quiet || slots == 0 {
            return None;
        }
        self.lent = slots;
        self.running += slots;
        Some(SlotLoan { slots, spec: self.settings.spec.clone() })
    }
}

impl Handler<SlotsUsed> for Dispatcher {
    type Result = ();

    fn handle(&mut self, SlotsUsed { lent, claimed }: SlotsUsed, _ctx: &mut Self::Context) {
        self.lent = self.lent.saturating_sub(lent);
        // Started first, so that a drain cannot see zero running in between
        // (a loan is never larger than the slots free, so each has one).
        claimed.into_iter().for_each(|job| self.start(job));
        self.free_slots(lent);
    }
}

impl Handler<Drain> for Dispatcher {
    type Result = ResponseActFuture<Self, ()>;

    fn handle(&mut self, Drain { grace }: Drain, ctx: &mut Self::Context) -> Self::Result {
        self.accepting = false;
        // Jobs held ahead never started here: another process takes them now.
        let held = self.claimed_ahead.take_all();
        self.hand_back(held, ctx);
        let (done, finished) = oneshot::channel();
        if self.running + self.ending == 0 {
            let _ = done.send(());
        } else {
            self.drained = Some(done);
        }
        let (store, owner, registry, running, ending) =
            (self.store.clone(), self.settings.spec.owner, self.registry.clone(), self.running, self.ending);
        tracing::info!(running, ending, ?grace, "draining: waiting for running jobs and the ends being recorded");
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
