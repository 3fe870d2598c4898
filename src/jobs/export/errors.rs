//! How an export's failures are told: to the person in words that quote no
//! data, to the operators in the log with the cause.

use super::JobError;

/// What the person who asked reads when the export fails on errand's side
/// (the cause, which may name tables and servers, goes to the log).
pub(super) const COULD_NOT_RUN: &str = "the export could not be produced because of a problem on our side";
pub(super) const COULD_NOT_SAVE: &str = "the export's file could not be saved because of a problem on our side";

/// Data errors (a bad date, a failed cast) will fail again: permanent, and
/// said by kind, never in PostgreSQL's words, which quote the value (one of
/// the exported rows', perhaps, which the error message would carry into
/// emails, webhooks and logs others read); the whole message is logged for
/// operators. Anything else (connection lost, server restarting, a broken
/// query) is worth a retry, and is told in words meant for the person, with
/// the cause logged.
pub(super) fn classify(job: crate::domain::JobId, error: tokio_postgres::Error) -> JobError {
    match error.as_db_error() {
        Some(db) if db.code().code().starts_with("22") => {
            tracing::info!(%job, sqlstate = db.code().code(), error = db.message(), "export refused its data");
            JobError::Permanent(format!("the export's input is invalid: {}", data_error_kind(db.code().code())))
        }
        _ => {
            tracing::warn!(%job, error = %crate::store::StoreError::from(error), "export failed");
            JobError::Retryable(COULD_NOT_RUN.into())
        }
    }
}

/// What a data error (SQLSTATE class 22) is, in words that quote nothing.
fn data_error_kind(sqlstate: &str) -> String {
    match sqlstate {
        "22P02" => "a value is not written as the type it is read as".into(),
        "22007" | "22008" => "a date or time is invalid or out of range".into(),
        "22003" => "a number is out of range".into(),
        "22012" => "a division by zero".into(),
        "22001" => "a value is too long for its type".into(),
        "22023" => "a parameter's value is invalid".into(),
        other => format!("a value is invalid (SQLSTATE {other})"),
    }
}
