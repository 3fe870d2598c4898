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

use actix::prelude::*;
use tokio::sync::oneshot;

use crate::store::{NewJob, Store, StoreError, Submission};

/// Record a job (or find the one its key names). Answered once committed.
#[derive(Debug, Message)]
#[rtype(result = "Result<Submission, StoreError>")]
pub struct Record(pub NewJob);

/// Most submissions written in one statement.
const MAX_BATCH: usize = 128;
/// Statements under way at once. Two keep the database busy while the next
/// batch gathers; more would only make each batch smaller.
const MAX_WRITING: usize = 2;

type Reply = oneshot::Sender<Result<Submission, StoreError>>;

pub struct Intake {
    store: Store,
    pending: Vec<(NewJob, Reply)>,
    writing: usize,
}

impl Intake {
    pub fn new(store: Store) -> Self {
        Self { store, pending: Vec::new(), writing: 0 }
    }

    fn write_batches(&mut self, ctx: &mut Context<Self>) {
        while self.writing < MAX_WRITING && !self.pending.is_empty() {
            let batch: Vec<_> = self.pending.drain(..self.pending.len().min(MAX_BATCH)).collect();
            self.writing += 1;
            let store = self.store.clone();
            async move {
                let (jobs, replies): (Vec<_>, Vec<_>) = batch.into_iter().unzip();
                tracing::debug!(jobs = jobs.len(), "writing a batch of submissions");
                let answers = store.submissions().submit_many(&jobs).await;
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
