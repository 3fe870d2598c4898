//! The Intake: one per process. Supervisors hand it the jobs they accepted,
//! and it records them in batches, group-commit style: a submission that
//! arrives while fewer than [`MAX_WRITING`] statements are under way is
//! written at once (a quiet errand adds no wait), and those arriving while
//! they are share the next statement. Under load, creation then costs one
//! statement and one commit per batch instead of one per job, so it can pass
//! the single-row INSERT's ceiling.
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

use actix::prelude::*;
use tokio::sync::oneshot;

use super::signals::WorkAvailable;
use crate::store::{ClaimSpec, ClaimedJob, NewJob, Store, StoreError, Submission};

/// Record a job (or find the one its key names). Answered once committed.
#[derive(Debug, Message)]
#[rtype(result = "Result<Submission, StoreError>")]
pub struct Record(pub NewJob);

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

/// Most submissions written in one statement.
const MAX_BATCH: usize = 128;
/// Statements under way at once. Two keep the database busy while the next
/// batch gathers; more would only make each batch smaller.
const MAX_WRITING: usize = 2;

type Reply = oneshot::Sender<Result<Submission, StoreError>>;

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
    pending: Vec<(NewJob, Reply)>,
    writing: usize,
}

impl Intake {
    pub fn new(store: Store, links: IntakeLinks) -> Self {
        Self { store, links, pending: Vec::new(), writing: 0 }
    }

    fn write_batches(&mut self, ctx: &mut Context<Self>) {
        while self.writing < MAX_WRITING && !self.pending.is_empty() {
            let batch: Vec<_> = self.pending.drain(..self.pending.len().min(MAX_BATCH)).collect();
            // Under load (another batch under way) the dispatcher's own
            // claims, which gather many jobs each, serve better.
            let quiet = self.writing == 0;
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
                let (answers, claimed) = match &loan {
                    Some(loan) => {
                        store.submissions().submit_and_claim(&jobs, &loan.spec.beside_submissions(loan.slots)).await
                    }
                    None => (store.submissions().submit_many(&jobs).await, Vec::new()),
                };
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
                metrics::histogram!("errand_submission_batch_size").record(jobs.len() as f64);
                for (reply, answer) in replies.into_iter().zip(answers) {
                    // The request may have gone (client hung up): its job is recorded all the same.
                    let _ = reply.send(answer);
                }
            }
            .into_actor(self)
            .map(|(), act, ctx| {
                act.writing -= 1;
                act.write_batches(ctx);
            })
            .spawn(ctx);
        }
    }
}

impl Actor for Intake {
    type Context = Context<Self>;
}

impl Handler<Record> for Intake {
    type Result = ResponseFuture<Result<Submission, StoreError>>;

    fn handle(&mut self, Record(job): Record, ctx: &mut Self::Context) -> Self::Result {
        let (reply, answer) = oneshot::channel();
        self.pending.push((job, reply));
        self.write_batches(ctx);
        Box::pin(async move {
            answer.await.unwrap_or_else(|_| Err(StoreError::ConnectionLost("the intake stopped".into())))
        })
    }
}
