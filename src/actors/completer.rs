//! The Completer: one per process, and the one door through which attempts
//! end, whoever ran them: errand's own workers ([`Complete`]), external
//! workers through the worker API ([`EndAttempt`]), and the rescue of
//! attempts whose lease expired ([`Rescue`]). Every terminal end
//! reaches the Notifier from here, once its statement has committed.
//!
//! It records ends in batches, one statement for all that arrived while the
//! previous batch was being written, or was on its way with the first (see
//! `soon.rs`). Under load that turns thousands of single-row transactions
//! into a few dozen.
//! Each end is still fenced on its own lease, and each terminal end writes
//! its notification in the same statement, so batching changes no guarantee.
//!
//! Batches are written in [`LANES`] lanes by their jobs' tenants, each lane
//! with one batch in flight: two batches are written at once, and as their
//! jobs' tenants differ, neither waits on the other's row locks (the counts
//! of unfinished jobs are kept per tenant, and locked until commit).

use std::collections::HashMap;

use actix::prelude::*;
use serde_json::Value;
use tokio::sync::oneshot;

use crate::actors::delivery::notifier::JobFinished;
use crate::actors::soon::after_arrivals;
use crate::domain::{Failure, JobId, JobState, LeaseId, Outcome, TenantId, storable};
use crate::jobs::JobTypes;
use crate::store::{Completion, EndedAttempt, Ender, Rescued, RunningAttempt, Store, StoreError};

/// Record the end of an attempt of one of errand's own workers, a job of
/// `tenant`. Idempotent for the same lease: a worker that retries after an
/// answer was lost (the end committed, the connection broke) is told how the
/// job stands.
#[derive(Debug, Message)]
#[rtype(result = "Result<Recorded, CompletionFailed>")]
pub struct Complete {
    pub completion: Completion,
    pub tenant: TenantId,
    /// The job's type: whether its result is kept sealed.
    pub job_type: String,
}

/// An external worker ends the attempt it holds under `lease`. Idempotent
/// for the same lease: a retried call is told how the job stands.
#[derive(Debug, Message)]
#[rtype(result = "Result<Recorded, CompletionFailed>")]
pub struct EndAttempt {
    pub id: JobId,
    pub lease: LeaseId,
    pub end: WorkerEnd,
    /// The attempt as the worker API read it under `lease` (checking the
    /// worker's types): its type and number decide what a failure means,
    /// its tenant and type whether a result is sealed. `None`: no longer
    /// running under the lease (the end is fenced off).
    pub running: Option<RunningAttempt>,
}

/// How an external worker says its attempt ended.
#[derive(Debug, Clone)]
pub enum WorkerEnd {
    Completed { result: Option<Value> },
    Failed(Failure),
}

/// What became of a [`Complete`] or an [`EndAttempt`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded {
    /// Recorded now: the job's new state (terminal, or waiting to run again).
    Now(JobState),
    /// Recorded before under the same lease (a retried call, the first one's
    /// answer lost or refused): how the job stands.
    Before(JobState),
    /// The lease is not the caller's (expired and given to another, or the job ended).
    LeaseLost,
}

/// End the attempts whose lease expired (their worker died or lost the
/// database): they run again, or fail with their one notification when no
/// attempts remain. Answers what the pass did.
#[derive(Debug, Clone, Copy, Message)]
#[rtype(result = "Result<Rescued, CompletionFailed>")]
pub struct Rescue {
    /// Rows one pass handles at most.
    pub limit: i64,
    /// How long past its expiry a lease is left to its process (see `Queue::rescue_expired`).
    pub grace: std::time::Duration,
}

/// Writes each of `batch` alone, after the statement of them all was refused
/// for what one of them holds: the others are recorded as if it were not
/// there, and an end the database cannot take becomes a failure that says so
/// (its job ends rather than being answered an error on every retry).
async fn one_by_one(store: &Store, batch: &[Completion]) -> Vec<Result<Vec<EndedAttempt>, StoreError>> {
    let mut results = Vec::with_capacity(batch.len());
    for completion in batch {
        let result = match store.queue().finish_many_if_running(std::slice::from_ref(completion)).await {
            Err(error) if error.is_bad_input() => {
                tracing::error!(job = %completion.id, %error, "an end the database refused; the job fails instead");
                let error = "the job finished but its end could not be stored".to_owned();
                let failed = Completion { outcome: Outcome::Failed { error }, ..completion.clone() };
                store.queue().finish_many_if_running(std::slice::from_ref(&failed)).await
            }
            other => other,
        };
        results.push(result);
    }
    results
}

/// The batch holding this completion could not be written (database trouble).
#[derive(Debug, Clone, thiserror::Error)]
#[error("recording the attempt failed: {0}")]
pub struct CompletionFailed(String);

impl From<StoreError> for CompletionFailed {
    fn from(error: StoreError) -> Self {
        Self(error.to_string())
    }
}

/// Most completions written in one statement.
const MAX_BATCH: usize = 500;
/// Batches written at once (see the module doc).
const LANES: usize = 2;
type Answer = Result<Option<JobState>, CompletionFailed>;
type Reply = oneshot::Sender<Answer>;

pub struct Completer {
    store: Store,
    /// Told of every terminal end, once committed.
    notifier: Recipient<JobFinished>,
    /// Their retry policies decide what an external worker's failure means.
    job_types: JobTypes,
    lanes: [Lane; LANES],
}

/// Ends waiting to be written, and whether a batch of them is being written.
#[derive(Default)]
struct Lane {
    pending: Vec<(Completion, Reply)>,
    writing: bool,
    /// A write is scheduled for when the first completions have gathered.
    scheduled: bool,
}

/// The lane of a job of `tenant`'s ends; an end whose tenant the caller does
/// not know (an external worker's) goes by its job's id.
fn lane_of(tenant: Option<&TenantId>, job: JobId) -> usize {
    use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
    let hasher = BuildHasherDefault::<DefaultHasher>::default();
    let hash = match tenant {
        Some(tenant) => hasher.hash_one(tenant.as_str()),
        None => hasher.hash_one(job.0),
    };
    (hash % LANES as u64) as usize
}

impl Completer {
    pub fn new(store: Store, notifier: Recipient<JobFinished>, job_types: JobTypes) -> Self {
        Self { store, notifier, job_types, lanes: Default::default() }
    }

    /// Records `completion` in the next batch. An attempt found not running
    /// under its lease was either ended before under it (a retried end) or
    /// lost its lease: the database says which.
    fn record(
        &mut self,
        completion: Completion,
        tenant: Option<&TenantId>,
        ctx: &mut Context<Self>,
    ) -> impl Future<Output = Result<Recorded, CompletionFailed>> + use<> {
        let (id, lease) = (completion.id, completion.lease);
        let answer = self.enqueue(lane_of(tenant, id), completion, ctx);
        let store = self.store.clone();
        async move {
            let recorded = answer.await.unwrap_or_else(|_| Err(CompletionFailed("the completer stopped".into())))?;
            if let Some(state) = recorded {
                return Ok(Recorded::Now(state));
            }
            Ok(match store.queue().ended_under(id, lease).await? {
                Some(state) => Recorded::Before(state),
                None => Recorded::LeaseLost,
            })
        }
    }

    /// Queues `completion` for its lane's next batch; the answer comes once it is written.
    fn enqueue(&mut self, lane: usize, completion: Completion, ctx: &mut Context<Self>) -> oneshot::Receiver<Answer> {
        let (reply, answer) = oneshot::channel();
        let waiting = &mut self.lanes[lane];
        waiting.pending.push((completion, reply));
        if !waiting.writing && !waiting.scheduled {
            waiting.scheduled = true;
            // The others of its claim end within a few task polls of it
            // when its jobs are short; waiting longer would only hold their
            // tenants' room (their rows count as running until written).
            after_arrivals(ctx, move |act, ctx| {
                act.lanes[lane].scheduled = false;
                act.write_batch(lane, ctx);
            });
        }
        answer
    }

    fn write_batch(&mut self, lane: usize, ctx: &mut Context<Self>) {
        let waiting = &mut self.lanes[lane];
        if waiting.writing || waiting.pending.is_empty() {
            return;
        }
        waiting.writing = true;
        let take = waiting.pending.len().min(MAX_BATCH);
        let (batch, replies): (Vec<_>, Vec<_>) = waiting.pending.drain(..take).unzip();
        let store = self.store.clone();
        async move {
            let result = store.queue().finish_many_if_running(&batch).await;
            let results = match result {
                Err(error) if error.is_bad_input() => one_by_one(&store, &batch).await,
                whole => vec![whole],
            };
            (batch, results)
        }
        .into_actor(self)
        .map(move |(batch, mut results), act, ctx| {
            if results.len() == 1 {
                act.settle(&batch, replies, results.remove(0));
            } else {
                for ((completion, reply), result) in batch.iter().zip(replies).zip(results) {
                    act.settle(std::slice::from_ref(completion), vec![reply], result);
                }
            }
            act.lanes[lane].writing = false;
            act.write_batch(lane, ctx);
        })
        .spawn(ctx);
    }

    /// Answers the enders of `completions`, written in one statement with `result`.
    fn settle(&self, completions: &[Completion], replies: Vec<Reply>, result: Result<Vec<EndedAttempt>, StoreError>) {
        match result {
            Ok(ended) => {
                let by_job: HashMap<JobId, JobState> = ended.iter().map(|e| (e.job, e.state)).collect();
                for e in ended {
                    crate::telemetry::record_attempt_ended(&e.job_type, e.state.as_sql());
                    self.notify_if_terminal(e);
                }
                // A job missing from the answer was fenced off: its ender hears `None`.
                for (completion, reply) in completions.iter().zip(replies) {
                    let _ = reply.send(Ok(by_job.get(&completion.id).copied()));
                }
            }
            Err(error) => {
                let failed = CompletionFailed::from(error);
                for reply in replies {
                    let _ = reply.send(Err(failed.clone()));
                }
            }
        }
    }

    /// Wakes the owner's streams and mail (`do_send`: the notification is
    /// already committed, so a lost wake-up only delays it).
    fn notify_if_terminal(&self, ended: EndedAttempt) {
        if ended.state.is_terminal() {
            self.notifier.do_send(JobFinished(ended));
        }
    }
}

impl Actor for Completer {
    type Context = Context<Self>;
}

impl Handler<Complete> for Completer {
    type Result = ResponseActFuture<Self, Result<Recorded, CompletionFailed>>;

    fn handle(&mut self, Complete { completion, tenant, job_type }: Complete, ctx: &mut Self::Context) -> Self::Result {
        let sealed = matches!(completion.outcome, Outcome::Completed { result: Some(_) })
            && self.store.sealer().seals(&job_type);
        if !sealed {
            return Box::pin(actix::fut::wrap_future(self.record(completion, Some(&tenant), ctx)));
        }
        let store = self.store.clone();
        let kept = async move {
            let outcome = kept_outcome(&store, &tenant, &job_type, completion.outcome).await?;
            Ok::<_, CompletionFailed>((Completion { outcome, ..completion }, tenant))
        };
        Box::pin(kept.into_actor(self).then(move |kept, act, ctx| {
            let recorded = kept.map(|(completion, tenant)| act.record(completion, Some(&tenant), ctx));
            async move { recorded?.await }.into_actor(act)
        }))
    }
}

/// `outcome` as the end statement keeps it: a completion's result sealed
/// where its type keeps results sealed (`Sealer::seal_result`).
async fn kept_outcome(
    store: &Store,
    tenant: &TenantId,
    job_type: &str,
    outcome: Outcome,
) -> Result<Outcome, CompletionFailed> {
    let Outcome::Completed { result: Some(result) } = outcome else { return Ok(outcome) };
    let kept = store.sealer().seal_result(tenant.as_str(), job_type, &result).await?;
    Ok(Outcome::Completed { result: Some(kept.unwrap_or(result)) })
}

impl Handler<EndAttempt> for Completer {
    type Result = ResponseActFuture<Self, Result<Recorded, CompletionFailed>>;

    fn handle(&mut self, EndAttempt { id, lease, end, running }: EndAttempt, _ctx: &mut Self::Context) -> Self::Result {
        let (store, job_types) = (self.store.clone(), self.job_types.clone());
        let outcome = async move {
            Ok::<_, CompletionFailed>(match (end, running) {
                // Its result sealed where its type keeps results sealed.
                (WorkerEnd::Completed { result }, Some(running)) => {
                    let outcome = Outcome::Completed { result };
                    kept_outcome(&store, &running.tenant, &running.job_type, outcome).await?
                }
                // Fenced off: nothing will be written.
                (WorkerEnd::Completed { result }, None) => Outcome::Completed { result },
                // The attempt's number and type decide, as for errand's own
                // workers; an attempt no longer running is fenced off anyway.
                (WorkerEnd::Failed(failure), running) => {
                    let policy = running.and_then(|r| Some((job_types.get(&r.job_type)?.retry, r.attempt)));
                    match policy {
                        Some((retry, attempt)) => retry.outcome(attempt, failure),
                        None => Outcome::Failed { error: storable(failure.into_message()) },
                    }
                }
            })
        };
        Box::pin(outcome.into_actor(self).then(move |outcome, act, ctx| {
            let recorded =
                outcome.map(|outcome| act.record(Completion { id, lease, outcome, ender: Ender::Worker }, None, ctx));
            async move { recorded?.await }.into_actor(act)
        }))
    }
}

impl Handler<Rescue> for Completer {
    type Result = ResponseActFuture<Self, Result<Rescued, CompletionFailed>>;

    fn handle(&mut self, Rescue { limit, grace }: Rescue, _ctx: &mut Self::Context) -> Self::Result {
        let store = self.store.clone();
        Box::pin(async move { store.queue().rescue_expired(limit, grace).await }.into_actor(self).map(
            |rescued, act, _| {
                let rescued = rescued?;
                rescued.failed.iter().cloned().for_each(|ended| act.notify_if_terminal(ended));
                Ok(rescued)
            },
        ))
    }
}
