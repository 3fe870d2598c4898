//! The ProgressWriter: one per process. Every second it writes the progress
//! that changed of every job this process runs, in one statement fenced on
//! each job's lease (a worker that lost its lease writes nothing), and the
//! statement tells the owners' streams (`NOTIFY errand_progress`). Handlers
//! only record their latest value in memory (`jobs/progress.rs`), so
//! progress costs at most one write per job per second however often they
//! report. The lines they log (`jobs/attempt_log.rs`) go the same way, in a
//! statement of their own, and an attempt's last ones as it ends.

use std::collections::HashMap;
use std::time::Duration;

use actix::prelude::*;

use crate::domain::{JobId, LeaseId, LogLine};
use crate::jobs::{AttemptLog, Progress};
use crate::store::Store;

/// How often changed progress is written.
const WRITE_EVERY: Duration = Duration::from_secs(1);

/// A running attempt's progress starts or stops being written.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub enum ProgressChange {
    Track { job: JobId, lease: LeaseId, progress: Progress, logs: AttemptLog },
    Untrack { job: JobId },
}

pub struct ProgressWriter {
    store: Store,
    tracked: HashMap<JobId, (LeaseId, Progress, AttemptLog)>,
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
            .filter_map(|(job, (lease, progress, _))| progress.take_changed().map(|report| (*job, *lease, report)))
            .collect();
        let logged: Vec<_> = self
            .tracked
            .iter()
            .flat_map(|(job, (lease, _, logs))| logs.take().into_iter().map(|line| (*job, *lease, line)))
            .collect();
        if changed.is_empty() && logged.is_empty() {
            return;
        }
        self.writing = true;
        let store = self.store.clone();
        async move {
            if !changed.is_empty()
                && let Err(error) = store.queue().write_progress(&changed).await
            {
                // Progress is for show: the next change is written next time.
                tracing::debug!(%error, "could not write progress");
            }
            write_logs(&store, &logged).await;
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
            ProgressChange::Track { job, lease, progress, logs } => {
                self.tracked.insert(job, (lease, progress, logs));
            }
            ProgressChange::Untrack { job } => {
                // Its last lines, now: the fence lets an attempt that just
                // ended under its lease write them.
                if let Some((lease, _, logs)) = self.tracked.remove(&job) {
                    let last: Vec<_> = logs.take().into_iter().map(|line| (job, lease, line)).collect();
                    let store = self.store.clone();
                    actix::spawn(async move { write_logs(&store, &last).await });
                }
            }
        }
    }
}

/// Writes attempts' log lines; a failure loses them (logs are for reading,
/// never for deciding), said in errand's own log.
async fn write_logs(store: &Store, lines: &[(JobId, LeaseId, LogLine)]) {
    if lines.is_empty() {
        return;
    }
    if let Err(error) = store.queue().write_logs(lines).await {
        tracing::warn!(%error, lines = lines.len(), "could not write attempts' log lines");
    }
}
