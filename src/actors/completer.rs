//! The Completer: one per process. Workers hand it the end of their attempt;
//! it records ends in batches, one statement for all that arrived while the
//! previous batch was being written, or within half a millisecond of the
//! first. Under load that turns thousands of single-row transactions into a
//! few dozen.
//!
//! Each end is still fenced on its own lease, and each terminal end writes
//! its notification in the same statement, so batching changes no guarantee.

use std::collections::HashMap;

use actix::prelude::*;
use tokio::sync::oneshot;

use crate::store::{Completion, EndedAttempt, Store};

/// Record the end of an attempt. Answers with the recorded end, `None` when
/// the lease was no longer the worker's, or an error to retry.
#[derive(Debug, Message)]
#[rtype(result = "Result<Option<EndedAttempt>, CompletionFailed>")]
pub struct Complete(pub Completion);

/// The batch holding this completion could not be written (database trouble).
#[derive(Debug, Clone, thiserror::Error)]
#[error("recording the attempt failed: {0}")]
pub struct CompletionFailed(String);

/// Most completions written in one statement.
const MAX_BATCH: usize = 500;
/// How long the first completion waits for others to share its statement,
/// when no batch is being written (while one is, the next gathers anyway).
const GATHER: std::time::Duration = std::time::Duration::from_micros(500);

type Reply = oneshot::Sender<Result<Option<EndedAttempt>, CompletionFailed>>;

pub struct Completer {
    store: Store,
    pending: Vec<(Completion, Reply)>,
    writing: bool,
    /// A write is scheduled for when the first completions have gathered.
    scheduled: bool,
}

impl Completer {
    pub fn new(store: Store) -> Self {
        Self { store, pending: Vec::new(), writing: false, scheduled: false }
    }

    fn write_batch(&mut self, ctx: &mut Context<Self>) {
        if self.writing || self.pending.is_empty() {
            return;
        }
        self.writing = true;
        let take = self.pending.len().min(MAX_BATCH);
        let (batch, replies): (Vec<_>, Vec<_>) = self.pending.drain(..take).unzip();
        let store = self.store.clone();
        async move {
            let result = store.queue().finish_many_if_running(&batch).await;
            (batch, result)
        }
        .into_actor(self)
        .map(move |(batch, result), act, ctx| {
            match result {
                Ok(ended) => {
                    let mut by_job = HashMap::with_capacity(ended.len());
                    for e in ended {
                        let labels = [("job_type", e.job_type.clone()), ("state", e.state.as_sql().to_owned())];
                        metrics::counter!("errand_job_attempts_ended_total", &labels).increment(1);
                        by_job.insert(e.job, e);
                    }
                    // A job missing from the answer was fenced off: its worker hears `None`.
                    for (completion, reply) in batch.iter().zip(replies) {
                        let _ = reply.send(Ok(by_job.remove(&completion.id)));
                    }
                }
                Err(error) => {
                    let failed = CompletionFailed(error.to_string());
                    for reply in replies {
                        let _ = reply.send(Err(failed.clone()));
                    }
                }
            }
            act.writing = false;
            act.write_batch(ctx);
        })
        .spawn(ctx);
    }
}

impl Actor for Completer {
    type Context = Context<Self>;
}

impl Handler<Complete> for Completer {
    type Result = ResponseFuture<Result<Option<EndedAttempt>, CompletionFailed>>;

    fn handle(&mut self, Complete(completion): Complete, ctx: &mut Self::Context) -> Self::Result {
        let (reply, answer) = oneshot::channel();
        self.pending.push((completion, reply));
        if !self.writing && !self.scheduled {
            self.scheduled = true;
            ctx.run_later(GATHER, |act, ctx| {
                act.scheduled = false;
                act.write_batch(ctx);
            });
        }
        Box::pin(async move { answer.await.unwrap_or_else(|_| Err(CompletionFailed("the completer stopped".into()))) })
    }
}
