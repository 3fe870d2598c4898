//! A job as the API shows it: `GET /jobs/{id}`, and the `data` of a webhook
//! delivery, one shape for both.

use chrono::{DateTime, SecondsFormat, Utc};
use serde::Serialize;
use serde_json::Value;

use crate::domain::{ExportFormat, Job, JobId, JobState, JobStatus, ScheduleId};
use crate::storage::ResultFile;

/// What a job's owner reads of why it waits while operators hold it back
/// (their own reason is theirs: it may name systems and incidents).
const PAUSED_REASON: &str = "Paused by the service's operators: it will start when they resume it.";

/// A job as the API shows it.
#[derive(Serialize, utoipa::ToSchema)]
pub struct JobView {
    #[schema(value_type = String, format = Uuid)]
    id: JobId,
    #[serde(rename = "type")]
    job_type: String,
    /// `pending`, `processing`, `completed`, `failed` or `cancelled`.
    #[schema(value_type = String)]
    status: JobStatus,
    /// Finer than `status`: `queued`, `running`, `cancelling` (asked to stop),
    /// `retry_scheduled`, `paused` (waiting while the service's operators
    /// hold it back: see `paused_reason`), `completed`, `failed`, `cancelled`.
    #[schema(value_type = String)]
    state: &'static str,
    /// Why a `paused` job waits, in words its owner may read.
    #[serde(skip_serializing_if = "Option::is_none")]
    paused_reason: Option<&'static str>,
    #[schema(value_type = Object)]
    params: Value,
    /// What the job produced: for a file (exports, uploads) its key, size,
    /// rows, type, name and expiry; an external worker's fields beside them.
    #[schema(value_type = Option<Object>)]
    result: Option<Value>,
    /// A fresh signed download URL, while the result exists.
    result_url: Option<String>,
    error_message: Option<String>,
    attempts: i32,
    max_attempts: i32,
    /// When a job waiting to retry runs next.
    next_attempt_at: Option<String>,
    created_at: String,
    /// When the job reached `completed`, `failed` or `cancelled`.
    completed_at: Option<String>,
    /// While it runs, what its handler last reported (throttled to about once
    /// a second): `{done, total, message, updated_at}`.
    #[schema(value_type = Option<Object>)]
    progress: Option<Value>,
    /// The schedule that made it (absent for a job made otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, format = Uuid)]
    schedule_id: Option<ScheduleId>,
    /// The schedule's occurrence it was made for (with `schedule_id`).
    #[serde(skip_serializing_if = "Option::is_none")]
    scheduled_for: Option<String>,
    /// Where it stands among its tenant's jobs: interactive 0, scheduled
    /// -10, bulk -20, each moved by its type's and (interactive) the
    /// request's, -4 to 4. Higher runs first, within the tenant's share.
    priority: i16,
    /// An export's file format (absent for a job of another kind).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, example = "xlsx")]
    format: Option<ExportFormat>,
    /// Where the running (or last) attempt resumed from, in its progress's
    /// units (an export's rows): an earlier attempt's checkpoint. Absent for
    /// an attempt that began at the start.
    #[serde(skip_serializing_if = "Option::is_none")]
    resumed_from: Option<u64>,
}

impl JobView {
    /// `job`, with `result_url` (signed by the caller, for the [`downloadable`] file).
    pub fn of(job: Job, result_url: Option<String>) -> Self {
        let paused = job.held_back && matches!(job.state, JobState::Available | JobState::Retryable);
        Self {
            id: job.id,
            job_type: job.job_type,
            status: job.state.status(),
            state: if paused { "paused" } else { job.state.api_word(job.cancel_requested) },
            paused_reason: paused.then_some(PAUSED_REASON),
            params: job.params,
            result_url,
            result: job.result,
            error_message: job.error_message.filter(|_| job.state == JobState::Failed),
            attempts: job.attempt,
            max_attempts: job.max_attempts,
            next_attempt_at: (job.state == JobState::Retryable).then(|| rfc3339(job.run_at)),
            created_at: rfc3339(job.created_at),
            completed_at: job.finished_at.map(rfc3339),
            progress: job.progress,
            schedule_id: job.schedule.map(|(id, _)| id),
            scheduled_for: job.schedule.map(|(_, at)| rfc3339(at)),
            priority: job.priority,
            format: job.format,
            resumed_from: job.resumed_from,
        }
    }
}

/// The file a job's `result_url` downloads: a completed job's, while it is kept.
pub fn downloadable(job: &Job) -> Option<ResultFile> {
    ResultFile::of(job.result.as_ref()).filter(|file| job.state == JobState::Completed && !file.is_expired())
}

/// RFC 3339 with milliseconds, in UTC: every time the API shows.
pub fn rfc3339(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Millis, true)
}
