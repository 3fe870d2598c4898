//! Claims whose reply was lost.
//!
//! A claim of jobs, emails, webhook deliveries or push messages commits on its own. If its connection breaks
//! after the server committed it but before its rows arrived (a failover, a
//! network cut), the claimer cannot tell whether it holds anything: the rows
//! would stay claimed by a process that never runs them until their lease or
//! lock runs out, and a job's next attempt would count a failure that never
//! happened.
//!
//! So every claim carries an id the claimer made before sending it, written
//! on each row the claim takes (`claim_id`, see `migrations/V1__baseline.sql`).
//! After a claim whose outcome is unknown, the claimer gives back exactly
//! the rows that claim took, if it committed at all: the database says,
//! nothing is guessed, and nothing another claim took is touched. The give-back
//! runs in the background, tried until the database answers, for as long as
//! the claim's lease (or lock) would have held the rows: past that the
//! rescuer, or the lock's end, frees them anyway.

use std::time::{Duration, Instant};

use deadpool_postgres::Pool;
use uuid::Uuid;

use crate::domain::RetryPolicy;
use crate::store::StoreError;
use crate::store::queue::attempts;

/// Which claim broke, and what it may have taken.
#[derive(Debug, Clone, Copy)]
pub(in crate::store) enum LostClaim {
    /// Jobs, leased to `owner` for `lease`.
    Jobs { owner: Uuid, claim: Uuid, lease: Duration },
    /// Emails, locked for `lock`.
    Emails { claim: Uuid, lock: Duration },
    /// Webhook deliveries, locked for `lock`.
    Webhooks { claim: Uuid, lock: Duration },
    /// Web Push messages, locked for `lock`.
    Pushes { claim: Uuid, lock: Duration },
}

/// Gives back the emails claim $1 took, as if that claim never happened.
const GIVE_BACK_EMAILS: &str = "
UPDATE email_outbox
SET state = 'pending', attempts = attempts - 1, next_attempt_at = now(), claim_id = NULL
WHERE claim_id = $1 AND state = 'sending'";

/// Gives back the webhook deliveries claim $1 took, as if that claim never happened.
const GIVE_BACK_WEBHOOKS: &str = "
UPDATE webhook_deliveries
SET state = 'pending', attempts = attempts - 1, next_attempt_at = now(), claim_id = NULL
WHERE claim_id = $1 AND state = 'sending'";

/// Gives back the Web Push messages claim $1 took, as if that claim never happened.
const GIVE_BACK_PUSHES: &str = "
UPDATE push_outbox
SET state = 'pending', attempts = attempts - 1, next_attempt_at = now(), claim_id = NULL
WHERE claim_id = $1 AND state = 'sending'";

impl LostClaim {
    /// The answer to this claim, as the store answers: when it failed in a
    /// way that leaves its outcome unknown, what it took is given back.
    pub(in crate::store) fn settle<T>(
        self,
        pool: &Pool,
        answer: Result<T, tokio_postgres::Error>,
    ) -> Result<T, StoreError> {
        answer.map_err(|error| self.settle_error(pool, error.into()))
    }

    /// [`Self::settle`] for a claim's error already read.
    pub(in crate::store) fn settle_error(self, pool: &Pool, error: StoreError) -> StoreError {
        if outcome_unknown(&error) {
            self.give_back(pool);
        }
        error
    }

    /// Gives back what this claim took, in the background (see the module doc).
    fn give_back(self, pool: &Pool) {
        let pool = pool.clone();
        tokio::spawn(async move {
            let started = Instant::now();
            for attempt in 1u32.. {
                match self.try_give_back(&pool).await {
                    Ok(0) => return,
                    Ok(n) => {
                        tracing::info!(claim = ?self, given_back = n, "a claim whose reply was lost had taken rows; given back");
                        crate::telemetry::metrics().lost_claims_given_back.add(self.of(), n);
                        return;
                    }
                    Err(error) if started.elapsed() >= self.holds_for() => {
                        tracing::warn!(%error, claim = ?self, "could not give back what a lost claim took; its lease or lock will run out");
                        return;
                    }
                    Err(error) => tracing::debug!(%error, attempt, "giving back a lost claim; trying again"),
                }
                tokio::time::sleep(RetryPolicy::UNTIL_RECORDED.next_delay(attempt)).await;
            }
        });
    }

    async fn try_give_back(&self, pool: &Pool) -> Result<u64, StoreError> {
        match *self {
            Self::Jobs { owner, claim, .. } => attempts::release(pool, owner, attempts::Released::Claim(claim)).await,
            Self::Emails { claim, .. } => {
                let client = pool.get().await?;
                Ok(client.execute(GIVE_BACK_EMAILS, &[&claim]).await?)
            }
            Self::Webhooks { claim, .. } => {
                let client = pool.get().await?;
                Ok(client.execute(GIVE_BACK_WEBHOOKS, &[&claim]).await?)
            }
            Self::Pushes { claim, .. } => {
                let client = pool.get().await?;
                Ok(client.execute(GIVE_BACK_PUSHES, &[&claim]).await?)
            }
        }
    }

    /// How long the claim holds what it took if nobody gives it back.
    fn holds_for(&self) -> Duration {
        match *self {
            Self::Jobs { lease, .. } => lease,
            Self::Emails { lock, .. } | Self::Webhooks { lock, .. } | Self::Pushes { lock, .. } => lock,
        }
    }

    fn of(&self) -> &'static str {
        match self {
            Self::Jobs { .. } => "jobs",
            Self::Emails { .. } => "emails",
            Self::Webhooks { .. } => "webhooks",
            Self::Pushes { .. } => "pushes",
        }
    }
}

/// Whether a claim that failed with `error` after it was sent may have
/// committed: its connection broke (or the server stopped) before it answered.
fn outcome_unknown(error: &StoreError) -> bool {
    matches!(error, StoreError::Postgres(_) | StoreError::ConnectionLost(_)) && error.is_connection_lost()
}
