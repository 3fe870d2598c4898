//! The ProgressWriter: one per process. Every second it writes the progress
//! that changed of every job this process runs, in one statement fenced on
//! each job's lease (a worker that lost its lease writes nothing), and the
//! statement tells the owners' streams (`NOTIFY errand_progress`). Handlers
//! only record their latest value in memory (`jobs/progress.rs`), so
//! progress costs at most one write per job per second however often they
//! report.

use std::collections::HashMap;
use std::time::Duration;

use actix::prelude::*;

use crate::domain::{JobId, LeaseId};
use crate::jobs::Progress;
use crate::store::Store;

/// How often changed progress is written.
const WRITE_EVERY: Duration = Duration::from_secs(1);

/// A running attempt's progress starts or stops being written.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub enum ProgressChange {
    Track { job: JobId, lease: LeaseId, progress: Progress },
    Untrack { job: JobId },
}

pub struct ProgressWriter {
    store: Store,
    tracked: HashMap<JobId, (LeaseId, Progress)>,
    writing: bool,
}

impl ProgressWriter {
    pub fn new(store: Store) -> Self {
        Self { store, tracked: HashMap::new(), writing: false }
    }

    fn write_changed(&mut self, ctx: &mut Context<Self>) {
        if self.writing {
            return;
        }
        let changed: Vec<_> = self
            .tracked
            .iter()
            .filter_map(|(job, (lease, progress))| progress.take_changed().map(|report| (*job, *lease, report)))
            .collect();
        if changed.is_empty() {
            return;
        }
        self.writing = true;
        let store = self.store.clone();
        async move {
            if let Err(error) = store.queue().write_progress(&changed).await {
                // Progress is for show: the next change is written next time.
                tracing::debug!(%error, "could not write progress");
            }
        }
        .into_actor(self)
        .map(|(), act, _ctx| act.writing = false)
        .spawn(ctx);
    }
}

impl Actor for ProgressWriter {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        ctx.run_interval(WRITE_EVERY, |act, ctx| act.write_changed(ctx));
    }
}

impl Handler<ProgressChange> for ProgressWriter {
    type Result = ();

    fn handle(&mut self, change: ProgressChange, _ctx: &mut Self::Context) {
        match change {
            ProgressChange::Track { job, lease, progress } => {
                self.tracked.insert(job, (lease, progress));
            }
            ProgressChange::Untrack { job } => {
                self.tracked.remove(&job);
            }
        }
    }
}
