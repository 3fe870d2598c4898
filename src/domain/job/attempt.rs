//! How an attempt ends, as whoever ran it reports it, and what a running
//! attempt reports of its progress. Every runner (errand's own workers,
//! external workers through the worker API, the HTTP push handler) ends
//! attempts in these words; [`crate::domain::RetryPolicy::outcome`] is the one
//! place a failure becomes a retry or the job's end.

use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

/// How an attempt ended, as its ender reports it.
#[derive(Debug, Clone)]
pub enum Outcome {
    Completed {
        result: Option<Value>,
    },
    /// Try again after `delay`.
    Retry {
        error: String,
        delay: Duration,
    },
    /// Run again now, as a fresh claim would (a rescue with attempts left).
    Requeue {
        error: String,
    },
    /// No more attempts: the job fails.
    Failed {
        error: String,
    },
    /// Its worker stopped it because a cancel was asked for.
    Cancelled,
}

/// Why an attempt failed. The message is shown to the person who asked for
/// the job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// Another attempt may succeed (within the type's attempts and backoff).
    Retryable(String),
    /// No attempt will: the job fails now.
    Permanent(String),
}

impl Failure {
    /// The message, whichever kind of failure it is.
    pub fn into_message(self) -> String {
        match self {
            Self::Retryable(message) | Self::Permanent(message) => message,
        }
    }
}

/// What a running attempt last reported of its progress.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProgressReport {
    pub done: u64,
    /// When the handler knows how much there is to do.
    pub total: Option<u64>,
    pub message: Option<String>,
}

/// A message as PostgreSQL text can hold it: NUL would make the statement
/// that ends the job fail, again on every try.
pub fn storable(message: String) -> String {
    if message.contains('\0') { message.replace('\0', "\u{FFFD}") } else { message }
}

/// Why a result from outside errand (an external worker's end, a pushed
/// app's answer) is refused, if it is: it may not name `storage_key` or
/// `expires_at`, which errand writes itself for a file it stored (a storage
/// key would make errand sign URLs for a file it did not store; an expiry is
/// that file's, and one in another form could fail the statement that
/// records the end with others), nor hold NUL.
pub fn foreign_result_refusal(result: &serde_json::Map<String, Value>) -> Option<&'static str> {
    if ["storage_key", "expires_at"].iter().any(|field| result.contains_key(*field)) {
        return Some("a result may hold neither `storage_key` nor `expires_at`: errand sets them for an uploaded file");
    }
    if result.contains_key(crate::domain::sealing::SEALED_MEMBER) {
        return Some("a result may not hold `errand:sealed`: it is errand's own name");
    }
    let nul = result.iter().any(|(key, value)| key.contains('\0') || holds_nul(value));
    nul.then_some("a result may not hold NUL")
}

/// Whether any key or string in `value` holds NUL (PostgreSQL's jsonb and
/// text cannot store it).
pub fn holds_nul(value: &Value) -> bool {
    match value {
        Value::String(text) => text.contains('\0'),
        Value::Array(items) => items.iter().any(holds_nul),
        Value::Object(fields) => fields.iter().any(|(key, value)| key.contains('\0') || holds_nul(value)),
        _ => false,
    }
}
