//! Listens on PostgreSQL's NOTIFY channels: `errand_jobs`, so this process
//! hears of work another process recorded without waiting for the backstop
//! poll, `errand_notifications`, so its live streams hear of notifications
//! committed anywhere, `errand_progress`, so they hear of progress written
//! anywhere, and `errand_cancel`, so a job asked to stop anywhere stops here
//! if it runs here. One dedicated connection (LISTEN cannot share a pooled
//! one); reconnects with backoff.

use std::time::Duration;

use actix::Recipient;
use futures_util::StreamExt;
use tokio_postgres::AsyncMessage;

use super::leases::CancelRequested;
use super::notifier::{NotificationsCommitted, ProgressCommitted};
use super::signals::WorkAvailable;
use crate::domain::{JobId, OwnerTag};
use crate::store::connection::Connection;
use crate::store::{CANCEL_CHANNEL, NOTIFICATION_CHANNEL, PROGRESS_CHANNEL, WORK_CHANNEL};

/// Who hears what the listener hears.
#[derive(Clone)]
pub struct Listeners {
    pub work: Recipient<WorkAvailable>,
    pub notifications: Recipient<NotificationsCommitted>,
    pub progress: Recipient<ProgressCommitted>,
    pub cancels: Recipient<CancelRequested>,
}

/// Starts the listening loop on the current arbiter; it runs until the arbiter stops.
pub fn spawn_listener(database_url: crate::config::PostgresUrl, listeners: Listeners) {
    // Read at start-up already (`config::PostgresUrl`): cannot fail here.
    let database = match Connection::parse(secrecy::ExposeSecret::expose_secret(&database_url)) {
        Ok(database) => database,
        Err(error) => return tracing::error!(%error, "work listener: the database URL cannot be used"),
    };
    actix::spawn(async move {
        let mut backoff = Duration::from_millis(100);
        loop {
            match listen(&database, &listeners).await {
                Ok(()) => backoff = Duration::from_millis(100),
                Err(error) => {
                    let error = crate::store::postgres_detail(&error);
                    tracing::warn!(%error, "work listener lost its connection; reconnecting")
                }
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(Duration::from_secs(5));
        }
    });
}

async fn listen(database: &Connection, listeners: &Listeners) -> Result<(), tokio_postgres::Error> {
    let (client, mut connection) = database.config.connect(database.tls.clone()).await?;
    let (messages_tx, mut messages) = tokio::sync::mpsc::unbounded_channel();
    let driver = actix::spawn(async move {
        let mut stream = futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(message) = stream.next().await {
            if messages_tx.send(message).is_err() {
                break;
            }
        }
    });
    client
        .batch_execute(&format!(
            "LISTEN {WORK_CHANNEL}; LISTEN {NOTIFICATION_CHANNEL}; LISTEN {PROGRESS_CHANNEL}; LISTEN {CANCEL_CHANNEL}"
        ))
        .await?;
    // Interest is registered before we look: anything committed from now on
    // notifies us, and this wake-up covers work committed before. (Streams
    // read what they have not sent whenever they wake: they need no catch-up.)
    listeners.work.do_send(WorkAvailable);
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
                return Err(error);
            }
        }
    }
    driver.abort();
    Ok(())
}
