//! What jobs do, apart from how they are scheduled: the [`JobHandler`] trait a
//! crate user implements, the built-in handlers, and the table of
//! configured [`JobTypes`].

pub mod attempt_log;
mod builtin;
mod checkpoint;
mod export;
mod progress;
mod push;
mod types;
mod view;

use std::future::Future;
use std::pin::Pin;

use serde_json::Value;

pub use attempt_log::AttemptLog;
pub use builtin::{NoopHandler, SleepHandler};
pub use checkpoint::Checkpoints;
pub use export::{ExportEnv, SqlExport};
pub use progress::Progress;
pub use push::{HttpPush, PushEnv, signature as push_signature};
pub use types::{FormatRefused, HandlerRegistry, JobType, JobTypes, ParamsError};
pub use view::{JobView, downloadable, rfc3339};

use crate::domain::{JobId, LogLevel, LogLine, ProgressReport, TenantId, UserId};

/// What a handler is given for one attempt of one job.
#[derive(Debug, Clone)]
pub struct JobContext {
    pub job_id: JobId,
    pub tenant: TenantId,
    pub user: UserId,
    pub job_type: String,
    /// The params as submitted; already valid against the type's schema.
    pub params: Value,
    /// 1 for the first attempt.
    pub attempt: u32,
    /// Where [`JobContext::progress`] reports to.
    pub progress: Progress,
    /// The attempt's lease (what an `http` push hands the app, for the worker API).
    pub lease: crate::domain::LeaseId,
    /// The file format asked for (an export's; its type's first when the
    /// job was recorded without one).
    pub format: Option<crate::domain::ExportFormat>,
    /// The occurrence it was made for, if a schedule made it.
    pub scheduled_for: Option<chrono::DateTime<chrono::Utc>>,
    /// The checkpoint an earlier attempt of this run recorded (see [`JobContext::resumed`]).
    pub resumed: Option<Value>,
    /// Where [`JobContext::checkpoint`] records.
    pub checkpoints: Checkpoints,
    /// Set when the process is stopping (SIGTERM, past its grace): see
    /// [`JobContext::is_stopping`].
    pub stopping: tokio::sync::watch::Receiver<bool>,
    /// Where [`JobContext::log`] appends.
    pub logs: AttemptLog,
    /// The trace this attempt's own requests continue (send it as their
    /// `traceparent` header): the attempt's span when errand exports spans,
    /// else the `traceparent` recorded with the job, on its first attempt.
    pub trace: Option<crate::domain::TraceParent>,
}

impl JobContext {
    /// Logs a line of this attempt, for the operators' timeline of the job
    /// (`GET /admin/jobs/{id}`, the console): `fields` a JSON object of
    /// details, if any. Kept in memory and written about once a second; an
    /// attempt keeps at most 1,000 lines (256 KiB), then one line says it
    /// was cut. Operators who may not see the type's params do not see its
    /// logs either: never log secrets, and know who reads the rest.
    pub fn log(&self, level: LogLevel, message: &str, fields: Option<Value>) {
        self.logs.push(LogLine::now(level, message, fields));
    }

    /// Reports how far the attempt has come: `done` of `total` (when known),
    /// with an optional message for a person. Call it as often as is
    /// convenient: it is stored at most about once a second, and shown in
    /// `GET /jobs/{id}` and on the owner's streams (`job_progress`).
    pub fn progress(&self, done: u64, total: Option<u64>, message: Option<&str>) {
        self.progress.report(ProgressReport { done, total, message: message.map(str::to_owned) });
    }

    /// Where an earlier attempt of this run got to: the value it last gave
    /// [`JobContext::checkpoint`]; `None` for an attempt that starts from
    /// the beginning. An attempt that resumes must not redo, nor skip, what
    /// the checkpoint says was done.
    pub fn resumed(&self) -> Option<&Value> {
        self.resumed.as_ref()
    }

    /// Records how far the attempt has come: after a crash, a rescue or a
    /// deploy, the run's next attempt is handed `value` ([`JobContext::resumed`]).
    /// `done` is its progress then (what the job's view shows an attempt
    /// resumed from). Write it once what it says is durable (an uploaded
    /// part, a committed batch), and not more often than every few seconds:
    /// each is a write to the database. An error means stop, and return it.
    pub async fn checkpoint(&self, value: &Value, done: u64) -> Result<(), JobError> {
        self.checkpoints.record(Some(value), done).await
    }

    /// Whether the process is stopping and the attempt is about to be
    /// given back (its lease released, it runs again elsewhere): a handler
    /// that checkpoints records what it has done now, then returns (any
    /// result; it is not recorded). It has a few seconds before it is
    /// cancelled.
    pub fn is_stopping(&self) -> bool {
        *self.stopping.borrow()
    }

    /// Forgets the checkpoint: the next attempt starts from the beginning
    /// (one that could not use what it was handed, say).
    pub async fn forget_checkpoint(&self) -> Result<(), JobError> {
        self.checkpoints.record(None, 0).await
    }
}

/// What a successful attempt produced, stored with the job.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JobOutput {
    /// Free-form result metadata (exports put their storage key here).
    pub result: Option<Value>,
}

/// Why an attempt failed. The message is shown to the user who asked for
/// the job, so it must be written for a person and carry no secrets.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JobError {
    /// Worth trying again after a backoff, while attempts remain.
    #[error("{0}")]
    Retryable(String),
    /// Will never succeed (bad input, missing data): fail the job now.
    #[error("{0}")]
    Permanent(String),
}

/// The future a handler returns. `Send`, so handlers may be run on any thread.
pub type HandlerFuture = Pin<Box<dyn Future<Output = Result<JobOutput, JobError>> + Send>>;

/// The work of a job type. Implement this to add a job type from Rust, register
/// it in a [`HandlerRegistry`] under a name, and point a `[job_types.*]` entry's
/// `handler` at that name.
///
/// An attempt may be cancelled at any `.await` (timeout, lost lease, shutdown),
/// and may run again after a crash, so a handler must be safe to repeat:
/// write results under keys derived from the job id, so a repeat overwrites.
pub trait JobHandler: Send + Sync + 'static {
    /// Runs one attempt.
    fn run(&self, ctx: JobContext) -> HandlerFuture;

    /// Whether the handler watches [`JobContext::is_stopping`] and returns
    /// soon after it turns true (having recorded a checkpoint): errand then
    /// gives it a few seconds at shutdown before cancelling it. Others are
    /// cancelled at once.
    fn stops_when_asked(&self) -> bool {
        false
    }
}
