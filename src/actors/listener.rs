//! Listens on the `errand_jobs` channel so this process hears of work another
//! process recorded, without waiting for the backstop poll. One dedicated
//! connection (LISTEN cannot share a pooled one); reconnects with backoff.

use std::time::Duration;

use actix::Recipient;
use futures_util::StreamExt;
use tokio_postgres::{AsyncMessage, NoTls};

use super::dispatcher::WorkAvailable;
use crate::store::WORK_CHANNEL;

/// Starts the listening loop on the current arbiter; it runs until the arbiter stops.
pub fn spawn(database_url: String, wake: Recipient<WorkAvailable>) {
    actix::spawn(async move {
        let mut backoff = Duration::from_millis(100);
        loop {
            match listen(&database_url, &wake).await {
                Ok(()) => backoff = Duration::from_millis(100),
                Err(error) => {
                    tracing::warn!(%error, "work listener lost its connection; reconnecting")
                }
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(Duration::from_secs(5));
        }
    });
}

async fn listen(
    database_url: &str,
    wake: &Recipient<WorkAvailable>,
) -> Result<(), tokio_postgres::Error> {
    let (client, mut connection) = tokio_postgres::connect(database_url, NoTls).await?;
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
        .batch_execute(&format!("LISTEN {WORK_CHANNEL}"))
        .await?;
    // Interest is registered before we look: anything committed from now on
    // notifies us, and this wake-up covers what was committed before.
    wake.do_send(WorkAvailable);
    while let Some(message) = messages.recv().await {
        match message {
            Ok(AsyncMessage::Notification(_)) => wake.do_send(WorkAvailable),
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
