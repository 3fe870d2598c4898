//! The vocabulary of errand, free of I/O: who is asking ([`Caller`]), which job
//! ([`JobId`]), in what state ([`JobState`], [`JobStatus`]), and what makes two
//! submissions the same ([`IdempotencyKey`], [`Fingerprint`]), how an
//! attempt ends ([`Outcome`]), when a failed one runs again ([`RetryPolicy`]),
//! how much unfinished work one user or tenant may have ([`Quotas`]),
//! how job ends reach people ([`NotificationRules`]), and when a schedule
//! fires ([`Recurrence`], [`firing`]), and what file an export writes
//! ([`ExportFormat`]), and which jobs are one piece of work ([`AdmissionTemplate`]).

mod admission;
mod batch;
mod export;
mod idempotency;
mod ids;
mod job;
pub mod keys;
mod notifications;
mod quota;
mod schedule;
pub mod tokens;

pub use keys::{sealing, signing};

pub use admission::{AdmissionKey, AdmissionTemplate, MissingField, OnConflict};
pub use batch::{BatchCounts, BatchStatus};
pub use export::format::{ExportFormat, UnknownFormat};
pub use export::spreadsheet::{FORMULA_STARTS, defused};
pub use idempotency::{Fingerprint, IdempotencyKey, InvalidIdempotencyKey};
pub use ids::{
    BatchId, Caller, InvalidId, JobId, LeaseId, NotificationId, Operator, OwnerTag, ScheduleId, ServiceId, TenantId,
    UserId,
};
pub use job::attempt::{Failure, Outcome, ProgressReport, foreign_result_refusal, holds_nul, storable};
pub use job::log::{LogLevel, LogLine, MAX_LOG_BYTES, MAX_LOG_LINES, MAX_LOG_MESSAGE};
pub use job::priority::{Origin, PRIORITY_RANGE, priority};
pub use job::retry::RetryPolicy;
pub use job::trace::{JobTrace, TraceParent};
pub use job::{Job, JobState, JobStatus, JobTypeName, UnknownState};
pub use notifications::{
    Arg, Branding, BrandingError, Channel, Delivery, DigestEvery, Locale, NotificationRules, Unsaid,
};
pub use quota::{Cap, QuotaExceeded, QuotaScope, Quotas, TenantCaps, Usage};
pub use schedule::date_expression::{DateExpressionError, Occasion, holds_date_expressions, resolve_dates};
pub use schedule::{Firing, Missed, Occurrence, Recurrence, RecurrenceError, firing};
