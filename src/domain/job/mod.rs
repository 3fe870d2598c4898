//! A job as the API and the workers see it.

pub mod attempt;
pub mod log;
pub mod priority;
pub mod retry;
pub mod trace;

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;

use crate::domain::{JobId, TenantId, UserId};

/// A registered job type's name, e.g. `noop` or `export_sales_report`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct JobTypeName(String);

impl JobTypeName {
    /// Lower-case ASCII letters, digits, `_` and `-`, 1 to 64 of them.
    pub fn parse(raw: &str) -> Option<Self> {
        let ok = !raw.is_empty()
            && raw.len() <= 64
            && raw.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-');
        ok.then(|| Self(raw.to_owned()))
    }

    /// The name as configured.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for JobTypeName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Where a job is in its life cycle, as stored (the `job_state` enum).
/// See `job_queue` in `migrations/` for who moves jobs between states.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, postgres_types::ToSql, postgres_types::FromSql)]
#[serde(rename_all = "snake_case")]
#[postgres(name = "job_state", rename_all = "snake_case")]
pub enum JobState {
    /// Waiting for a worker.
    Available,
    /// Claimed by a worker that holds a lease.
    Running,
    /// Failed an attempt; waiting for its backoff to pass.
    Retryable,
    /// Done; its notification was written with this state.
    Completed,
    /// Out of attempts, or failed permanently; notified too.
    Failed,
    /// Stopped by its owner or an operator before it ended; it never runs again.
    Cancelled,
}

impl JobState {
    /// The state's name in SQL.
    pub fn as_sql(self) -> &'static str {
        match self {
            Self::Available => "available",
            Self::Running => "running",
            Self::Retryable => "retryable",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
        }
    }

    /// Completed, failed or cancelled: nothing moves the job any more
    /// (but an operator's retry).
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::Failed | Self::Cancelled)
    }

    /// Failed or cancelled: the ends the database indexes (`unsuccessful_state`).
    pub fn is_unsuccessful(self) -> bool {
        matches!(self, Self::Failed | Self::Cancelled)
    }

    /// The word the API shows for the state (a job's `state`), finer than
    /// its [`JobStatus`]: the one table for every view of a job.
    pub fn api_word(self, cancel_requested: bool) -> &'static str {
        match self {
            Self::Available => "queued",
            Self::Running if cancel_requested => "cancelling",
            Self::Running => "running",
            Self::Retryable => "retry_scheduled",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
        }
    }

    /// The coarse status the API shows.
    pub fn status(self) -> JobStatus {
        match self {
            Self::Available | Self::Running | Self::Retryable => JobStatus::Processing,
            Self::Completed => JobStatus::Completed,
            Self::Failed => JobStatus::Failed,
            Self::Cancelled => JobStatus::Cancelled,
        }
    }
}

/// An unknown state name read from the database.
#[derive(Debug, thiserror::Error)]
#[error("unknown job state {0:?}")]
pub struct UnknownState(String);

impl FromStr for JobState {
    type Err = UnknownState;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "available" => Self::Available,
            "running" => Self::Running,
            "retryable" => Self::Retryable,
            "completed" => Self::Completed,
            "failed" => Self::Failed,
            "cancelled" => Self::Cancelled,
            other => return Err(UnknownState(other.to_owned())),
        })
    }
}

/// The status of the API contract.
///
/// `pending` means "recorded but not yet queued". errand records and queues a
/// job in one transaction, so it never reports `pending` today; the value is
/// kept in the contract for clients and for future scheduled jobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum JobStatus {
    Pending,
    Processing,
    Completed,
    Failed,
    Cancelled,
}

impl JobStatus {
    /// The status as the API writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Processing => "processing",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
        }
    }

    /// The states a status filter matches.
    pub fn states(self) -> &'static [JobState] {
        match self {
            Self::Pending => &[],
            Self::Processing => &[JobState::Available, JobState::Running, JobState::Retryable],
            Self::Completed => &[JobState::Completed],
            Self::Failed => &[JobState::Failed],
            Self::Cancelled => &[JobState::Cancelled],
        }
    }
}

impl FromStr for JobStatus {
    type Err = ();

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "pending" => Ok(Self::Pending),
            "processing" => Ok(Self::Processing),
            "completed" => Ok(Self::Completed),
            "failed" => Ok(Self::Failed),
            "cancelled" => Ok(Self::Cancelled),
            _ => Err(()),
        }
    }
}

/// A job row, as read through a caller's scope.
#[derive(Debug, Clone)]
pub struct Job {
    pub id: JobId,
    pub tenant: TenantId,
    pub user: UserId,
    pub job_type: String,
    pub params: Value,
    pub state: JobState,
    pub attempt: i32,
    pub max_attempts: i32,
    pub run_at: DateTime<Utc>,
    pub result: Option<Value>,
    pub error_message: Option<String>,
    pub created_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
    /// What the running attempt last reported: `{done, total, message, updated_at}`.
    pub progress: Option<Value>,
    /// A cancel was asked for while it ran; its worker is stopping it.
    pub cancel_requested: bool,
    /// The schedule that made it, and the occurrence it was made for.
    pub schedule: Option<(crate::domain::ScheduleId, DateTime<Utc>)>,
    /// Its place among its tenant's jobs (see `domain::priority`).
    pub priority: i16,
    /// An export's file format; `None` for a job of another kind.
    pub format: Option<crate::domain::ExportFormat>,
    /// Where the running (or last) attempt resumed from: its checkpoint's
    /// progress; `None` for one that began at the start.
    pub resumed_from: Option<u64>,
    /// Waiting, and kept waiting by an operator: its type or tenant paused,
    /// or the job held. Read for its owner's views of it (where it shows as
    /// `paused`); false where a job is read otherwise.
    pub held_back: bool,
    /// The operator holding it (`POST /admin/jobs/{id}/hold`), where an
    /// operator's read of the one job says so; `None` elsewhere.
    pub held_by: Option<String>,
    /// The backend service that asked for it for its owner, where an
    /// operator's read of the one job says so; `None` elsewhere (and for a
    /// job its owner asked for).
    pub acted_by: Option<String>,
}
