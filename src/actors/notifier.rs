//! The Notifier: told of every job that reached a terminal state in this
//! process, after its `job_completed` notification row was committed with it.
//!
//! The row is the guarantee (one per job, written in the job's final
//! transaction); this actor only fans out what is already durable. Today it
//! records the event; live push and email attach here.

use actix::prelude::*;

use crate::store::EndedAttempt;

/// A job ended (completed or failed) and its notification is committed.
#[derive(Debug, Clone, Message)]
#[rtype(result = "()")]
pub struct JobFinished(pub EndedAttempt);

/// Owns the user-facing channels of completion.
#[derive(Default)]
pub struct Notifier;

impl Actor for Notifier {
    type Context = Context<Self>;
}

impl Handler<JobFinished> for Notifier {
    type Result = ();

    fn handle(&mut self, JobFinished(finished): JobFinished, _ctx: &mut Self::Context) {
        tracing::debug!(
            job = %finished.job,
            tenant = %finished.tenant,
            state = ?finished.state,
            notification = ?finished.notification,
            "job finished"
        );
    }
}
