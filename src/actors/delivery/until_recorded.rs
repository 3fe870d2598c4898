//! Writes that must land once what they record has happened: what became
//! of an email's send, or of a webhook's delivery.

use std::fmt::Display;

use crate::domain::RetryPolicy;
use crate::store::StoreError;

/// Records what became of a send, trying again until the database answers
/// (a failover, a restart): given up, the record would be lost, and the send
/// made again once its lock ran out. The database's answer also says
/// whether the lock was still this sender's (else another sent it: nothing
/// is written). `what` names the send in the logs.
pub async fn until_answered<F, Fut, T>(what: impl Display, mut record: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, StoreError>>,
{
    for attempt in 1u32.. {
        match record().await {
            Ok(_) => return,
            Err(error) if attempt <= 3 || attempt.is_power_of_two() => {
                tracing::warn!(%error, %what, attempt, "could not record a delivery; trying again")
            }
            Err(_) => {}
        }
        tokio::time::sleep(RetryPolicy::UNTIL_RECORDED.next_delay(attempt)).await;
    }
}
