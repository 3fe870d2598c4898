//! What a statement's failure means to its caller: [`StoreError`], and
//! which failures are worth a retry on another connection.

use crate::config::postgres;
use crate::store::pool::writable;

/// A database failure. The API turns it into a 500 (or 503) without details;
/// the cause is logged.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    // The causes are spelled out in the message (and are not `source`s, so
    // that a log of the chain does not repeat them).
    #[error("no database connection available: {}", pool_detail(.0))]
    Pool(deadpool_postgres::PoolError),
    #[error("database error: {}", postgres::detail(.0))]
    Postgres(tokio_postgres::Error),
    #[error("unexpected data in the database: {0}")]
    Corrupt(String),
    /// A statement shared with other requests lost its connection (each of
    /// them gets this copy of the cause).
    #[error("database connection lost: {0}")]
    ConnectionLost(String),
    /// Concurrent work kept overtaking this one: worth a retry later.
    #[error("too much contention: {0}")]
    Contended(String),
    /// The database (or what stands before it) cannot give errand what it needs.
    #[error("{0}")]
    Unsupported(String),
}

impl StoreError {
    /// Worth trying again later, and a 503 rather than a 500: the connection
    /// was lost (see [`Self::is_connection_lost`]) or other work kept overtaking this.
    pub fn is_temporary(&self) -> bool {
        self.is_connection_lost() || matches!(self, Self::Contended(_))
    }

    /// The statement was refused for what it was given (SQLSTATE class 22,
    /// a value it cannot take, or 23, a constraint): trying it again as it
    /// is cannot help, and in a batch one such row fails every other.
    pub fn is_bad_input(&self) -> bool {
        matches!(self, Self::Postgres(error)
            if error.code().is_some_and(|code| code.code().starts_with("22") || code.code().starts_with("23")))
    }

    /// The database could not be reached, the connection broke (it was
    /// terminated, the server restarts, the network dropped), or its server
    /// no longer takes writes (a demoted primary, SQLSTATE 25006: the
    /// connection is discarded, see `writable.rs`): worth a retry on a fresh
    /// connection, and a 503 rather than a 500 if that fails too.
    pub fn is_connection_lost(&self) -> bool {
        match self {
            Self::Pool(_) => true,
            Self::Postgres(error) => {
                let class_08_or_shutdown = error.code().is_some_and(|code| {
                    let code = code.code();
                    code.starts_with("08") || matches!(code, "57P01" | "57P02" | "57P03")
                });
                let io = std::error::Error::source(error).is_some_and(|cause| cause.is::<std::io::Error>());
                error.is_closed() || class_08_or_shutdown || io || writable::is_read_only(error)
            }
            Self::ConnectionLost(_) => true,
            Self::Corrupt(_) | Self::Contended(_) | Self::Unsupported(_) => false,
        }
    }
}

impl From<crate::domain::InvalidId> for StoreError {
    fn from(error: crate::domain::InvalidId) -> Self {
        Self::Corrupt(error.to_string())
    }
}

impl From<crate::domain::UnknownState> for StoreError {
    fn from(error: crate::domain::UnknownState) -> Self {
        Self::Corrupt(error.to_string())
    }
}

/// Runs `attempt` once more when it failed because its connection was lost:
/// the pool discards a closed connection, so the second try gets another.
/// Only for statements safe to repeat: reads, and the submission (its key
/// makes it idempotent).
pub(crate) async fn retry_if_connection_lost<T, F, Fut>(mut attempt: F) -> Result<T, StoreError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, StoreError>>,
{
    match attempt().await {
        Err(error) if error.is_connection_lost() => {
            tracing::info!(%error, "database connection lost; trying once more on another");
            attempt().await
        }
        other => other,
    }
}

impl From<deadpool_postgres::PoolError> for StoreError {
    fn from(error: deadpool_postgres::PoolError) -> Self {
        Self::Pool(error)
    }
}

impl From<tokio_postgres::Error> for StoreError {
    fn from(error: tokio_postgres::Error) -> Self {
        writable::note(&error);
        Self::Postgres(error)
    }
}

fn pool_detail(error: &deadpool_postgres::PoolError) -> String {
    match error {
        deadpool_postgres::PoolError::Backend(error) => postgres::detail(error),
        deadpool_postgres::PoolError::Timeout(_) => {
            format!("{error} (every connection busy, or the server slow to accept)")
        }
        other => other.to_string(),
    }
}
