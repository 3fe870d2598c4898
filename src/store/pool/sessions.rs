//! Whether each connection is a session of errand's own from start to end.
//!
//! errand needs it: LISTEN hears only its own session, the migration lock is
//! a session advisory lock, and statements are prepared once per
//! connection. A direct connection gives it, and so does PgBouncer's
//! `pool_mode = session`; transaction or statement pooling hands each
//! transaction to whichever server connection is free, and then
//! notifications go unheard and the migration lock is never released. So
//! before anything else errand checks, the way that matters: a session of
//! its own LISTENs, another sends a NOTIFY, and the first must hear it.

use std::time::Duration;

use futures_util::StreamExt;
use tokio_postgres::AsyncMessage;

use crate::store::{Store, StoreError};

/// How long the listening session waits for the notification it was sent.
const HEARD_WITHIN: Duration = Duration::from_secs(3);

const NOT_A_SESSION: &str = "a NOTIFY sent to a LISTENing connection was not heard: errand needs a session \
of its own per connection (LISTEN, its migration lock, prepared statements), which PgBouncer's \
pool_mode = transaction or statement does not give; use pool_mode = session, or connect directly";

impl Store {
    /// Fails, saying why, unless this database's connections keep their sessions.
    pub async fn check_sessions(&self) -> Result<(), StoreError> {
        let channel = format!("errand_session_check_{}", uuid::Uuid::new_v4().simple());
        let (listening, mut connection) = self.target.config.connect(self.target.tls.clone()).await?;
        let (heard, mut hearing) = tokio::sync::mpsc::unbounded_channel();
        let driver = tokio::spawn(async move {
            let mut messages = futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
            // The first error ends it: a broken connection errs on every poll.
            while let Some(Ok(message)) = messages.next().await {
                if let AsyncMessage::Notification(notification) = message {
                    let _ = heard.send(notification.channel().to_owned());
                }
            }
        });
        let checked = async {
            listening.batch_execute(&format!("LISTEN {channel}")).await?;
            self.pool.get().await?.batch_execute(&format!("NOTIFY {channel}")).await?;
            match tokio::time::timeout(HEARD_WITHIN, hearing.recv()).await {
                Ok(Some(heard)) if heard == channel => Ok(()),
                _ => Err(StoreError::Unsupported(NOT_A_SESSION.into())),
            }
        }
        .await;
        driver.abort();
        checked
    }
}
