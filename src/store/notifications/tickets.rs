//! The ledger of stream tickets issued and not yet used, per user. A ticket
//! opens one stream, once: its row is deleted by that use, in whichever
//! process, so a ticket seen in a log, a proxy or a browser's history opens
//! nothing afterwards. A cap on a user's unused tickets keeps a script from
//! minting them without end.

use std::time::Duration;

use uuid::Uuid;

use crate::domain::Caller;
use crate::store::{Queue, StoreError};

/// Records ticket $1 of the caller ($2, $3), valid for $4 seconds, unless
/// they hold $5 unexpired unused tickets already; sweeps their expired ones.
/// Two issues at the same instant may both pass the count: the cap is a
/// bound on what a script gains, not an exact number.
const ISSUE: &str = "
WITH swept AS (
    DELETE FROM stream_tickets WHERE tenant_id = $2 AND user_id = $3 AND expires_at <= now()
)
INSERT INTO stream_tickets (id, tenant_id, user_id, expires_at)
SELECT $1, $2, $3, now() + make_interval(secs => $4)
WHERE (SELECT count(*) FROM stream_tickets WHERE tenant_id = $2 AND user_id = $3 AND expires_at > now()) < $5
RETURNING id";

/// Checks off the caller's unexpired ticket $3: answers a row only the first time.
const REDEEM: &str = "
DELETE FROM stream_tickets WHERE tenant_id = $1 AND user_id = $2 AND id = $3 AND expires_at > now() RETURNING id";

/// Forgets up to $1 expired tickets (of users who never came back for them).
const FORGET_EXPIRED: &str = "
DELETE FROM stream_tickets WHERE id IN (SELECT id FROM stream_tickets WHERE expires_at <= now() LIMIT $1)";

/// Too many of a user's tickets are outstanding (the ledger's refusal).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("you already have {0} stream tickets that were never used, the most one person may; use one, or wait a minute")]
pub struct TooManyTickets(pub usize);

/// The stream tickets of one user of one tenant.
pub struct CallerTickets<'a> {
    pub(in crate::store) pool: crate::store::TenantPool,
    pub(in crate::store) caller: &'a Caller,
}

impl CallerTickets<'_> {
    /// Records a new ticket valid for `ttl`, or `None` when the caller holds
    /// `cap` unused ones already.
    pub async fn issue(&self, ttl: Duration, cap: usize) -> Result<Option<Uuid>, StoreError> {
        let client = self.pool.get().await?;
        let (id, ttl, cap) = (Uuid::new_v4(), ttl.as_secs_f64(), i64::try_from(cap).unwrap_or(i64::MAX));
        let (tenant, user) = (self.caller.tenant.as_str(), self.caller.user.as_str());
        let row = client.query_opt(&client.prepare_cached(ISSUE).await?, &[&id, &tenant, &user, &ttl, &cap]).await?;
        client.commit().await?;
        Ok(row.map(|_| id))
    }

    /// Uses the caller's ticket `id`: true the first time, while it is unexpired.
    pub async fn redeem(&self, id: Uuid) -> Result<bool, StoreError> {
        let client = self.pool.get().await?;
        let (tenant, user) = (self.caller.tenant.as_str(), self.caller.user.as_str());
        let redeemed = client.query_opt(&client.prepare_cached(REDEEM).await?, &[&tenant, &user, &id]).await?.is_some();
        client.commit().await?;
        Ok(redeemed)
    }
}

impl Queue<'_> {
    /// Forgets up to `limit` expired stream tickets; returns how many.
    pub async fn forget_expired_tickets(&self, limit: i64) -> Result<u64, StoreError> {
        let client = self.pool.get().await?;
        Ok(client.execute(&client.prepare_cached(FORGET_EXPIRED).await?, &[&limit]).await?)
    }
}
