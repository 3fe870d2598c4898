//! The schedules' owners (`people` in `migrations/V1__baseline.sql`): when
//! each person last signed in, and the email address their latest token
//! gave. A schedule's jobs are mailed there, and a schedule whose owner has
//! been away for `schedules.owner_inactive_after` pauses itself
//! (`firing.rs`). Each process gathers sightings in memory
//! (`actors::upkeep::sightings`) and records many in one statement.

use chrono::{DateTime, Utc};
use deadpool_postgres::Pool;

use crate::domain::{TenantId, UserId};
use crate::store::StoreError;

/// Records sightings, a newer one's email replacing an older one's. Rows
/// are locked in key order, so two processes writing at once cannot
/// deadlock; the input holds each person once (`ON CONFLICT` could not
/// update one row twice).
const RECORD: &str = "
INSERT INTO people AS p (tenant_id, user_id, email, seen_at)
SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[]) ORDER BY 1, 2
ON CONFLICT (tenant_id, user_id) DO UPDATE
SET email = CASE WHEN excluded.seen_at >= p.seen_at THEN excluded.email ELSE p.email END,
    seen_at = greatest(p.seen_at, excluded.seen_at)";

/// The caller (`$1`, `$2`, email `$3`) seen now, in a transaction that
/// writes one of their schedules: a resumed schedule's owner is not taken
/// for away before the sightings gathered in memory are written.
pub(super) const SEEN_NOW: &str = "
INSERT INTO people (tenant_id, user_id, email, seen_at) VALUES ($1, $2, $3, now())
ON CONFLICT (tenant_id, user_id) DO UPDATE SET email = excluded.email, seen_at = excluded.seen_at";

/// The email address a person (`$1`, `$2`) last signed in with.
const EMAIL_OF: &str = "SELECT email FROM people WHERE tenant_id = $1 AND user_id = $2";

/// Up to `$2` people not seen since `$1` who own no schedule: what errand
/// kept of them serves no one now.
const PRUNE: &str = "
DELETE FROM people WHERE (tenant_id, user_id) IN (
    SELECT p.tenant_id, p.user_id FROM people p
    WHERE p.seen_at < $1
      AND NOT EXISTS (SELECT 1 FROM schedules s WHERE s.tenant_id = p.tenant_id AND s.user_id = p.user_id)
    LIMIT $2)";

/// A person seen signing in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sighting {
    pub tenant: TenantId,
    pub user: UserId,
    /// Their token's email address; `None`: it gave none.
    pub email: Option<String>,
    pub at: DateTime<Utc>,
}

/// The record of when people signed in (every tenant's: the process's own
/// side, fed only with authenticated callers).
pub struct People<'a> {
    pub(in crate::store) pool: &'a Pool,
}

impl People<'_> {
    /// Records `sightings` (each person at most once) in one statement.
    pub async fn record(&self, sightings: &[Sighting]) -> Result<(), StoreError> {
        if sightings.is_empty() {
            return Ok(());
        }
        let tenants: Vec<&str> = sightings.iter().map(|s| s.tenant.as_str()).collect();
        let users: Vec<&str> = sightings.iter().map(|s| s.user.as_str()).collect();
        let emails: Vec<Option<&str>> = sightings.iter().map(|s| s.email.as_deref()).collect();
        let times: Vec<DateTime<Utc>> = sightings.iter().map(|s| s.at).collect();
        let client = self.pool.get().await?;
        client.execute(&client.prepare_cached(RECORD).await?, &[&tenants, &users, &emails, &times]).await?;
        Ok(())
    }

    /// The email address `tenant`'s `user` last signed in with, if errand
    /// has seen them with one (for what a service starts for them).
    pub async fn email_of(&self, tenant: &TenantId, user: &UserId) -> Result<Option<String>, StoreError> {
        let client = self.pool.get().await?;
        let row =
            client.query_opt(&client.prepare_cached(EMAIL_OF).await?, &[&tenant.as_str(), &user.as_str()]).await?;
        Ok(row.and_then(|row| row.get(0)))
    }

    /// Forgets up to `limit` people not seen since `cutoff` who own no
    /// schedule; how many.
    pub async fn prune(&self, cutoff: DateTime<Utc>, limit: i64) -> Result<u64, StoreError> {
        let client = self.pool.get().await?;
        Ok(client.execute(&client.prepare_cached(PRUNE).await?, &[&cutoff, &limit]).await?)
    }
}
