//! The Intake: one per process. Supervisors hand it the jobs they accepted,
//! and it records them in batches, group-commit style: a submission that
//! arrives while no statement is under way is written at once (a quiet
//! errand adds no wait), and those arriving while one is share the next
//! statement. Under load, creation then costs one statement and one commit
//! per batch instead of one per job, so it can pass the single-row INSERT's
//! ceiling. A second statement starts beside the first only for a full
//! batch ([`MAX_BATCH`] waiting): most of a statement's cost is fixed, so
//! two small statements cost the database more than one of their sum.
//!
//! Batching changes no guarantee: each row keeps its caller's tenant, user and
//! key, the unique constraint still makes one job per key, and every
//! submission is answered only after its statement committed.
//!
//! A batch written while no other is under way first asks the dispatcher
//! for free slots ([`LendSlots`]); if it lends some, the batch's transaction
//! also claims the due jobs of the batch's tenants for them (see
//! `store::BatchClaim`: within the same limits as the dispatcher's claims),
//! so a quiet process starts a new job one transaction and commit sooner.
//! New jobs left unclaimed wake the dispatcher once their batch committed.
//!
//! Under overload it sheds new submissions at once rather than letting them
//! wait until their requests time out: when more than `max_pending` wait to
//! be written, or when the connection pool has stayed exhausted (every
//! connection in use and callers waiting) for `saturated_for`. Reads do not
//! pass through here and go on as long as the database answers them.

use std::time::{Duration, Instant};

use actix::prelude::*;
use tokio::sync::oneshot;

use crate::actors::signals::WorkAvailable;
use crate::store::{ClaimSpec, ClaimedJob, NewJob, Store, StoreError, Submission};

/// Record a job (or find the one its key names). Answered once committed,
/// or at once when shed.
#[derive(Debug, Message)]
#[rtype(result = "Result<Submission, RecordError>")]
pub struct Record(pub NewJob);

/// Why a submission was not recorded.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Shed(#[from] Overloaded),
}

/// A submission shed under overload: nothing of it was recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Overloaded {
    #[error("errand is overloaded: {0} submissions are already waiting to be recorded; try again shortly")]
    IntakeFull(usize),
    #[error("errand is overloaded: every database connection has been busy for a while; try again shortly")]
    PoolSaturated,
}

impl Overloaded {
    /// The metric label.
    pub fn reason(self) -> &'static str {
        match self {
            Self::IntakeFull(_) => "intake_full",
            Self::PoolSaturated => "pool_saturated",
        }
    }
}

/// When the Intake sheds new submissions.
#[derive(Debug, Clone, Copy)]
pub struct Shedding {
    /// Most submissions waiting for a statement.
    pub max_pending: usize,
    /// How long the pool must stay exhausted before submissions are shed.
    pub saturated_for: Duration,
}

/// Whether the pool has been exhausted for long enough to shed: updates
/// `since`, the first moment of the current exhaustion.
fn pool_saturated(
    status: deadpool_postgres::Status,
    since: &mut Option<Instant>,
    now: Instant,
    bound: Duration,
) -> bool {
    if status.available > 0 || status.waiting == 0 {
        *since = None;
        return false;
    }
    now.duration_since(*since.get_or_insert(now)) >= bound
}

/// Asked of the dispatcher before a batch of `wanted` submissions is
/// recorded: may the batch's own transaction claim jobs for this process?
/// While the dispatcher is quiet (no claim in flight or due, no other loan
/// out), it lends up to `wanted` free slots; else none, and its own claim serves.
#[derive(Debug, Clone, Message)]
#[rtype(result = "Option<SlotLoan>")]
pub struct LendSlots {
    pub wanted: usize,
}

/// Free slots lent to the Intake, counted as running until they come back
/// with [`SlotsUsed`], and the claim spec of the process they belong to.
#[derive(Debug, Clone)]
pub struct SlotLoan {
    pub slots: usize,
    pub spec: ClaimSpec,
}

/// What the Intake claimed with a [`SlotLoan`] of `lent` slots (the rest
/// come back free). The jobs are committed as running under the loan's lease owner.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct SlotsUsed {
    pub lent: usize,
    pub claimed: Vec<ClaimedJob>,
}

/// How often the Intake looks at the connection pool.
const POOL_SAMPLE_EVERY: Duration = Duration::from_millis(50);
/// Most submissions written in one statement.
const MAX_BATCH: usize = 128;
/// Statements under way at once, the second only for a full batch. A
/// statement of submissions costs about 0.4 ms plus 45 µs a job
/// (docs/benchmarks-log.md, "One statement of submissions under way"): two
/// always under way made each batch half as large, and creation from 32
/// clients ran at 0.76 of its rate with this rule (PostgreSQL's CPU a
/// request 128-140 against 84-89 µs). The second keeps a backlog of full
/// batches moving.
const MAX_WRITING: usize = 2;

type Reply = oneshot::Sender<Result<Submission, RecordError>>;

/// The dispatcher, as the Intake sees it.
#[derive(Clone)]
pub struct IntakeLinks {
    /// Asked for free slots to claim in a batch's transaction.
    pub lend_slots: Recipient<LendSlots>,
    /// Told what a batch claimed with them.
    pub slots_used: Recipient<SlotsUsed>,
    /// Told of new jobs no claim took yet.
    pub work_available: Recipient<WorkAvailable>,
}

pub struct Intake {
    store: Store,
    links: IntakeLinks,
    shedding: Shedding,
    pending: Vec<(NewJob, Reply)>,
    writing: usize,
    /// Since when the pool has been exhausted, if it is, as last sampled.
    saturated_since: Option<Instant>,
}

impl Intake {
    pub fn new(store: Store, links: IntakeLinks, shedding: Shedding) -> Self {
        Self { store, links, shedding, pending: Vec::new(), writing: 0, saturated_since: None }
    }

    /// Whether a new submission is to be shed now, and why.
    fn overloaded(&mut self) -> Option<Overloaded> {
        if self.pending.len() >= self.shedding.max_pending {
            return Some(Overloaded::IntakeFull(self.pending.len()));
        }
        let saturated = self.saturated_since.is_some_and(|since| since.elapsed() >= self.shedding.saturated_for);
        saturated.then_some(Overloaded::PoolSaturated)
    }

    /// Writes what waits, while a statement may start (`may_start`);
    /// `arriving`: called for a submission just handed in, not for those
    /// that waited while a statement was under way.
    fn write_batches(&mut self, ctx: &mut Context<Self>, arriving: bool) {
        while may_start(self.writing, self.pending.len()) {
            let batch: Vec<_> = self.pending.drain(..self.pending.len().min(MAX_BATCH)).collect();
            // A batch that waited for a statement under way meets load,
            // where the dispatcher's own claims, which gather many jobs
            // each, serve better.
            let quiet = arriving && self.writing == 0;
            self.writing += 1;
            let (store, links) = (self.store.clone(), self.links.clone());
            async move {
                let (jobs, replies): (Vec<_>, Vec<_>) = batch.into_iter().unzip();
                tracing::debug!(jobs = jobs.len(), "writing a batch of submissions");
                let loan = if quiet {
                    links.lend_slots.send(LendSlots { wanted: jobs.len() }).await.ok().flatten()
                } else {
                    None
                };
                let started = std::time::SystemTime::now();
                let (answers, claimed) = match &loan {
                    Some(loan) => {
                        store.submissions().submit_and_claim(&jobs, &loan.spec.beside_submissions(loan.slots)).await
                    }
                    None => (store.submissions().submit_many(&jobs).await, Vec::new()),
                };
                // (The claim's span is the whole statement's, which recorded the jobs too.)
                crate::telemetry::record_claimed("submission", started, ClaimedJob::traces(&claimed));
                let unclaimed = answers.iter().any(|answer| match answer {
                    Ok(Submission::Created(job)) => !claimed.iter().any(|claimed| claimed.id == job.id),
                    _ => false,
                });
                if let Some(loan) = loan {
                    links.slots_used.do_send(SlotsUsed { lent: loan.slots, claimed });
                }
                // Committed first, then the wake-up: the job cannot be lost if it is dropped.
                if unclaimed {
                    links.work_available.do_send(WorkAvailable);
                }
                crate::telemetry::metrics().submission_batch_size.observe(jobs.len() as f64);
                for (reply, answer) in replies.into_iter().zip(answers) {
                    // The request may have gone (client hung up): its job is recorded all the same.
                    let _ = reply.send(answer.map_err(RecordError::from));
                }
            }
            .into_actor(self)
            .map(|(), act, ctx| {
                act.writing -= 1;
                act.write_batches(ctx, false);
            })
            .spawn(ctx);
        }
    }
}

/// Whether a statement may start with `writing` under way and `waiting`
/// submissions to write: when none is under way, or when a full batch waits
/// and fewer than [`MAX_WRITING`] are.
fn may_start(writing: usize, waiting: usize) -> bool {
    match writing {
        0 => waiting > 0,
        n => n < MAX_WRITING && waiting >= MAX_BATCH,
    }
}

impl Actor for Intake {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        // The pool is watched continuously, not only when submissions
        // arrive: "stayed exhausted" is about the time between them too.
        ctx.run_interval(POOL_SAMPLE_EVERY, |act, _| {
            let status = act.store.pool().status();
            pool_saturated(status, &mut act.saturated_since, Instant::now(), act.shedding.saturated_for);
        });
    }
}

impl Handler<Record> for Intake {
    type Result = ResponseFuture<Result<Submission, RecordError>>;

    fn handle(&mut self, Record(job): Record, ctx: &mut Self::Context) -> Self::Result {
        if let Some(overloaded) = self.overloaded() {
            crate::telemetry::metrics().submissions_shed.add(overloaded.reason(), 1);
            return Box::pin(std::future::ready(Err(overloaded.into())));
        }
        let (reply, answer) = oneshot::channel();
        self.pending.push((job, reply));
        self.write_batches(ctx, true);
        Box::pin(async move {
            answer.await.unwrap_or_else(|_| Err(StoreError::ConnectionLost("the intake stopped".into()).into()))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(available: usize, waiting: usize) -> deadpool_postgres::Status {
        deadpool_postgres::Status { max_size: 4, size: 4, available, waiting }
    }

    #[test]
    fn a_second_statement_starts_only_for_a_full_batch() {
        assert!(!may_start(0, 0), "nothing to write");
        assert!(may_start(0, 1), "a lone submission is written at once");
        assert!(!may_start(1, MAX_BATCH - 1), "a partial batch waits for the statement under way");
        assert!(may_start(1, MAX_BATCH), "a full batch starts beside it");
        assert!(!may_start(MAX_WRITING, 10 * MAX_BATCH), "never more than MAX_WRITING");
    }

    #[test]
    fn only_a_pool_exhausted_for_long_enough_sheds() {
        let (bound, start) = (Duration::from_secs(1), Instant::now());
        let mut since = None;
        assert!(!pool_saturated(status(0, 3), &mut since, start, bound), "just exhausted");
        assert!(!pool_saturated(status(0, 3), &mut since, start + Duration::from_millis(900), bound));
        assert!(pool_saturated(status(0, 1), &mut since, start + Duration::from_millis(1000), bound));
        assert!(
            !pool_saturated(status(1, 0), &mut since, start + Duration::from_millis(1100), bound),
            "a free connection ends it"
        );
        assert!(
            !pool_saturated(status(0, 2), &mut since, start + Duration::from_millis(1200), bound),
            "and the clock starts again"
        );
        assert!(
            !pool_saturated(status(0, 0), &mut since, start + Duration::from_secs(5), bound),
            "busy but nobody waiting"
        );
    }
}
