//! Never keep talking to a server that no longer takes writes.
//!
//! tokio-postgres checks `target_session_attrs=read-write` only when it
//! connects, and a pooled connection outlives a failover: an old primary
//! that stays up read-only (a fenced RDS or Patroni leader, or
//! `default_transaction_read_only`) answers every write with SQLSTATE 25006,
//! and River #1225 kept doing so until restarted. So:
//! - a statement that fails with 25006 marks every connection made before
//!   it stale, in every pool of the process: each is discarded when next
//!   checked out (the statement itself is retried on a fresh connection,
//!   see `retry_if_connection_lost`, and answers 503 if that fails too);
//! - a connection idle for a while is asked, when checked out, whether its
//!   server still takes writes (one round trip, only after an idle spell:
//!   a busy connection learns it from its next write).
//!
//! Connections that were cut (a restart, `57P01`–`57P03`, class `08`) are
//! closed, and the pool drops closed connections already.

use std::sync::LazyLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use deadpool_postgres::{Hook, HookError};

/// A connection idle longer than this is checked before it is used again.
const CHECK_IDLE_AFTER: Duration = Duration::from_secs(5);

/// Whether the server takes writes now: not a standby, not read-only by default.
const TAKES_WRITES: &str = "SELECT NOT pg_is_in_recovery() AND current_setting('transaction_read_only') = 'off'";

/// Instants are kept as nanoseconds since this one.
static EPOCH: LazyLock<Instant> = LazyLock::new(Instant::now);
/// Connections made before this many nanoseconds after [`EPOCH`] are stale (0: none).
static STALE_BEFORE: AtomicU64 = AtomicU64::new(0);

fn nanos_since_epoch(at: Instant) -> u64 {
    u64::try_from(at.saturating_duration_since(*EPOCH).as_nanos()).unwrap_or(u64::MAX)
}

/// Whether `error` says the server no longer takes writes (SQLSTATE 25006).
pub fn is_read_only(error: &tokio_postgres::Error) -> bool {
    error.code() == Some(&tokio_postgres::error::SqlState::READ_ONLY_SQL_TRANSACTION)
}

/// Notes what `error` says of the server: after a 25006, every connection
/// made until now is stale.
pub fn note(error: &tokio_postgres::Error) {
    if is_read_only(error) {
        let now = nanos_since_epoch(Instant::now());
        if STALE_BEFORE.fetch_max(now, Ordering::Relaxed) < now {
            tracing::warn!("the database refused a write as read-only: dropping every connection made before");
        }
    }
}

/// The pool hook that discards stale connections, and idle ones whose server no longer takes writes.
pub fn check_on_checkout() -> Hook {
    Hook::async_fn(|client, metrics| {
        Box::pin(async move {
            let created = nanos_since_epoch(metrics.created);
            if created < STALE_BEFORE.load(Ordering::Relaxed) {
                return Err(HookError::message("made before the server refused a write as read-only"));
            }
            if metrics.last_used() < CHECK_IDLE_AFTER {
                return Ok(());
            }
            let row = client.query_one(TAKES_WRITES, &[]).await.map_err(HookError::Backend)?;
            if row.try_get::<_, bool>(0).map_err(HookError::Backend)? {
                Ok(())
            } else {
                STALE_BEFORE.fetch_max(nanos_since_epoch(Instant::now()), Ordering::Relaxed);
                Err(HookError::message("its server no longer takes writes"))
            }
        })
    })
}
