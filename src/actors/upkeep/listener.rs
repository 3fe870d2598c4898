//! Listens on PostgreSQL's NOTIFY channels: `errand_jobs`, so this process
//! hears of work another process recorded without waiting for the backstop
//! poll, `errand_notifications`, so its live streams hear of notifications
//! committed anywhere, `errand_progress`, so they hear of progress written
//! anywhere, and `errand_cancel`, so a job asked to stop anywhere stops here
//! if it runs here. One dedicated connection (LISTEN cannot share a pooled
//! one), outside the pool.
//!
//! It comes back by itself (Oban #1499, graphile-worker #224 did not): on
//! every connection it checks that it reached a primary (LISTEN on a standby
//! would hear nothing written on the new primary), LISTENs, then wakes the
//! dispatcher and every live stream to look at what was announced while it
//! was away. Reconnects back off with jitter, to 5 s. Whether it listens
//! shows in `/readyz` and in `errand_listener_connected`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use actix::Recipient;
use futures_util::StreamExt;
use tokio_postgres::AsyncMessage;

use crate::actors::delivery::notifier::{CatchUp, NotificationsCommitted, ProgressCommitted};
use crate::actors::running::leases::CancelRequested;
use crate::actors::signals::WorkAvailable;
use crate::config::postgres::Connection;
use crate::domain::{JobId, OwnerTag, RetryPolicy};
use crate::store::{CANCEL_CHANNEL, NOTIFICATION_CHANNEL, PROGRESS_CHANNEL, WORK_CHANNEL};

/// Who hears what the listener hears.
#[derive(Clone)]
pub struct Listeners {
    pub work: Recipient<WorkAvailable>,
    pub notifications: Recipient<NotificationsCommitted>,
    pub progress: Recipient<ProgressCommitted>,
    pub cancels: Recipient<CancelRequested>,
    /// Every live stream, after the listener was away.
    pub catch_up: Recipient<CatchUp>,
}

/// Whether the listener listens now (shared with `/readyz`).
#[derive(Debug, Default)]
pub struct ListenerHealth {
    listening: AtomicBool,
}

impl ListenerHealth {
    pub fn is_listening(&self) -> bool {
        self.listening.load(Ordering::Relaxed)
    }

    fn set(&self, listening: bool) {
        self.listening.store(listening, Ordering::Relaxed);
        crate::telemetry::metrics().listener_connected.set(i64::from(listening));
    }
}

/// Why the listener is not listening.
#[derive(Debug, thiserror::Error)]
enum ListenError {
    #[error("{}", crate::config::postgres::detail(.0))]
    Postgres(#[from] tokio_postgres::Error),
    #[error("reached a standby (in recovery), not the primary")]
    Standby,
}

/// The waits between reconnects.
const RECONNECTING: RetryPolicy =
    RetryPolicy { max_attempts: u32::MAX, base: Duration::from_millis(100), max: Duration::from_secs(5) };

/// Starts the listening loop on the current arbiter; it runs until the arbiter stops.
pub fn spawn_listener(database: Arc<Connection>, listeners: Listeners, health: Arc<ListenerHealth>) {
    actix::spawn(async move {
        let mut failures = 0u32;
        loop {
            let result = listen(&database, &listeners, &health).await;
            if health.is_listening() {
                // It had listened: this is a new outage, backed off from the start.
                failures = 0;
            }
            health.set(false);
            match result {
                Ok(()) => failures = 0,
                Err(error) => {
                    failures += 1;
                    if failures <= 3 || failures.is_power_of_two() {
                        tracing::warn!(%error, failures, "work listener is not listening; reconnecting");
                    }
                }
            }
            crate::telemetry::metrics().listener_reconnects.inc();
            tokio::time::sleep(RECONNECTING.next_delay(failures.max(1))).await;
        }
    });
}

async fn listen(database: &Connection, listeners: &Listeners, health: &ListenerHealth) -> Result<(), ListenError> {
    let (client, mut connection) = database.config.connect(database.tls.clone()).await?;
    let (messages_tx, mut messages) = tokio::sync::mpsc::unbounded_channel();
    let driver = actix::spawn(async move {
        let mut stream = futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(message) = stream.next().await {
            // A broken connection answers every poll with an error at once
            // (over TLS, at least): the first one ends this driver, or it
            // would spin, filling the channel, and never yield to its abort.
            let failed = message.is_err();
            if messages_tx.send(message).is_err() || failed {
                break;
            }
        }
    });
    if client.query_one("SELECT pg_is_in_recovery()", &[]).await?.try_get::<_, bool>(0)? {
        driver.abort();
        return Err(ListenError::Standby);
    }
    client
        .batch_execute(&format!(
            "LISTEN {WORK_CHANNEL}; LISTEN {NOTIFICATION_CHANNEL}; LISTEN {PROGRESS_CHANNEL}; LISTEN {CANCEL_CHANNEL}"
        ))
        .await?;
    health.set(true);
    // Interest is registered before we look: anything committed from now on
    // notifies us, and these wake-ups cover what was committed before (or
    // while we were away): the dispatcher claims, every stream reads what it
    // has not sent.
    listeners.work.do_send(WorkAvailable);
    listeners.catch_up.do_send(CatchUp);
    while let Some(message) = messages.recv().await {
        match message {
            Ok(AsyncMessage::Notification(n)) if n.channel() == NOTIFICATION_CHANNEL => {
                let owners: Vec<OwnerTag> = n.payload().split(',').filter_map(OwnerTag::parse).collect();
                if owners.is_empty() {
                    tracing::warn!(payload = n.payload(), "unreadable notification announcement");
                } else {
                    listeners.notifications.do_send(NotificationsCommitted(owners));
                }
            }
            Ok(AsyncMessage::Notification(n)) if n.channel() == PROGRESS_CHANNEL => {
                let owners: Vec<OwnerTag> = n.payload().split(',').filter_map(OwnerTag::parse).collect();
                listeners.progress.do_send(ProgressCommitted(owners));
            }
            Ok(AsyncMessage::Notification(n)) if n.channel() == CANCEL_CHANNEL => {
                let jobs: Vec<JobId> =
                    n.payload().split(',').filter_map(|id| uuid::Uuid::parse_str(id).ok().map(JobId)).collect();
                listeners.cancels.do_send(CancelRequested(jobs));
            }
            Ok(AsyncMessage::Notification(_)) => listeners.work.do_send(WorkAvailable),
            Ok(_) => {}
            Err(error) => {
                driver.abort();
                return Err(error.into());
            }
        }
    }
    driver.abort();
    Ok(())
}
