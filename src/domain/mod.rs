//! The vocabulary of errand, free of I/O: who is asking ([`Caller`]), which job
//! ([`JobId`]), in what state ([`JobState`], [`JobStatus`]), and what makes two
//! submissions the same ([`IdempotencyKey`], [`Fingerprint`]).

mod idempotency;
mod ids;
mod job;

pub use idempotency::{Fingerprint, IdempotencyKey, InvalidIdempotencyKey};
pub use ids::{Caller, InvalidId, JobId, LeaseId, NotificationId, Operator, OwnerTag, TenantId, UserId};
pub use job::{Job, JobState, JobStatus, JobTypeName, UnknownState};
