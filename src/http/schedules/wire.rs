//! What `/schedules` reads and writes: the request bodies and query, and
//! the schedule as the API shows it. The handlers in the parent module check
//! and apply them.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::domain::{ExportFormat, Missed, ScheduleId};
use crate::http::support::pagination;
use crate::store::{Overlap, PausedBy, Schedule};

/// A schedule as the API shows it.
#[derive(Serialize, utoipa::ToSchema)]
pub struct ScheduleView {
    #[schema(value_type = String, format = Uuid)]
    id: ScheduleId,
    #[serde(rename = "type")]
    job_type: String,
    /// As written: `{"$date": …}` expressions are kept (each job gets them resolved).
    #[schema(value_type = Object)]
    params: Value,
    /// An export's file format for its jobs (absent for a type that writes no file).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, example = "xlsx")]
    format: Option<ExportFormat>,
    cron: String,
    timezone: String,
    ends_at: Option<String>,
    /// `skip` or `catch_up` (with `catch_up_limit`).
    missed: &'static str,
    catch_up_limit: u32,
    /// `skip`, `queue` or `cancel_previous`.
    #[schema(value_type = String)]
    overlap: Overlap,
    paused: bool,
    /// Who paused it, while it is paused: `owner`, `administrator` (a
    /// tenant admin or an operator), or `owner_inactive` (errand: its owner
    /// had not signed in for `schedules.owner_inactive_after`).
    #[schema(value_type = Option<String>)]
    paused_by: Option<&'static str>,
    /// When it fires next (`null`: never again); while paused, when it would have.
    next_run_at: Option<String>,
    /// The job its latest occurrence made.
    #[schema(value_type = Option<String>, format = Uuid)]
    last_job_id: Option<uuid::Uuid>,
    created_at: String,
    updated_at: String,
}

impl ScheduleView {
    pub(super) fn of(s: Schedule) -> Self {
        let (missed, catch_up_limit) = match s.missed {
            Missed::Skip => ("skip", 1),
            Missed::CatchUp { limit } => ("catch_up", limit),
        };
        Self {
            id: s.id,
            job_type: s.job_type,
            params: s.params,
            format: s.format,
            cron: s.cron,
            timezone: s.timezone,
            ends_at: s.ends_at.map(pagination::rfc3339),
            missed,
            catch_up_limit,
            overlap: s.overlap,
            paused: s.paused.is_some(),
            paused_by: s.paused.map(PausedBy::as_str),
            next_run_at: s.next.map(|o| pagination::rfc3339(o.at)),
            last_job_id: s.last_job.map(|j| j.0),
            created_at: pagination::rfc3339(s.created_at),
            updated_at: pagination::rfc3339(s.updated_at),
        }
    }
}

/// `POST /schedules/{type}`'s body.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewScheduleRequest {
    /// The jobs' params, checked against the type's schema. A value may be a
    /// date that moves with each occurrence: `{"$date": "start_of_previous_week"}`
    /// (see docs/schedules.md, "Dates that move").
    #[schema(value_type = Object)]
    pub(super) params: Value,
    /// An export's file format for its jobs, one its type offers (its first when absent).
    #[schema(example = "xlsx")]
    pub(super) format: Option<String>,
    /// Five fields (minute hour day-of-month month day-of-week) or a shorthand (`@daily`, `@weekly`, …).
    pub(super) cron: String,
    /// An IANA time zone (`Europe/Paris`): the expression is read on its wall clock.
    pub(super) timezone: String,
    /// No occurrence after this.
    pub(super) ends_at: Option<DateTime<Utc>>,
    /// Occurrences missed while errand was down or the schedule paused:
    /// `skip` (default) or `catch_up` (the latest `catch_up_limit` of them run).
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub(super) missed: MissedName,
    /// 1 to 100, default 1.
    pub(super) catch_up_limit: Option<u32>,
    /// When an occurrence comes while the job of the one before is
    /// unfinished: `skip` (default), `queue` or `cancel_previous`.
    #[serde(default = "skip")]
    #[schema(value_type = Option<String>)]
    pub(super) overlap: Overlap,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum MissedName {
    #[default]
    Skip,
    CatchUp,
}

fn skip() -> Overlap {
    Overlap::Skip
}

/// `PATCH /schedules/{id}`'s body: what to change (a field left out stays).
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ScheduleChange {
    pub(super) paused: Option<bool>,
    #[schema(value_type = Option<Object>)]
    pub(super) params: Option<Value>,
    pub(super) format: Option<String>,
    pub(super) cron: Option<String>,
    pub(super) timezone: Option<String>,
    /// `null` removes the end.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub(super) ends_at: Option<Option<DateTime<Utc>>>,
    #[schema(value_type = Option<String>)]
    pub(super) missed: Option<MissedName>,
    pub(super) catch_up_limit: Option<u32>,
    #[schema(value_type = Option<String>)]
    pub(super) overlap: Option<Overlap>,
}

/// A field given, as its value or `null`; a field left out is `None` (by `default`).
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

#[derive(Deserialize)]
pub struct ListQuery {
    pub(super) limit: Option<u32>,
    pub(super) cursor: Option<String>,
}

/// A page of the caller's schedules.
#[derive(Serialize, utoipa::ToSchema)]
pub struct ScheduleList {
    pub(super) schedules: Vec<ScheduleView>,
    pub(super) next_cursor: Option<String>,
}
