//! The errand processes sharing one database: each names its connections
//! (`application_name`), so that they can count each other, and publishes
//! its running totals of claims and attempt ends.

use crate::store::{Store, StoreError};

/// The `application_name` of errand's connections: this, then the process's own id.
pub(in crate::store) const PROCESS_NAME_PREFIX: &str = "errand/";

/// This process's `application_name`, the same for all its pools (the API's,
/// the exports'), so that it counts once among the live processes.
pub(in crate::store) static PROCESS_NAME: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| format!("{PROCESS_NAME_PREFIX}{}", uuid::Uuid::new_v4()));

/// This process's totals `$2` claims and `$3` attempt ends, under its name
/// `$1`; those of processes silent for a day go.
const PUBLISH_TOTALS: &str = "
WITH forgotten AS (DELETE FROM process_totals WHERE updated_at < now() - interval '1 day')
INSERT INTO process_totals (process, claimed, attempts_ended) VALUES ($1, $2, $3)
ON CONFLICT (process) DO UPDATE SET claimed = excluded.claimed, attempts_ended = excluded.attempts_ended,
                                    updated_at = now()";

/// The errand processes connected to the database now: the distinct
/// `application_name`s of their connections.
const LIVE_PROCESSES: &str = "
SELECT count(DISTINCT application_name) AS processes
FROM pg_stat_activity
WHERE datname = current_database() AND starts_with(application_name, $1)";

impl Store {
    /// How many errand processes (this one included, once it has a
    /// connection) are connected to the database now.
    pub async fn live_processes(&self) -> Result<u32, StoreError> {
        let client = self.pool.get().await?;
        let row = client.query_one(&client.prepare_cached(LIVE_PROCESSES).await?, &[&PROCESS_NAME_PREFIX]).await?;
        Ok(u32::try_from(row.try_get::<_, i64>("processes")?).unwrap_or(u32::MAX))
    }

    /// Writes this process's running totals of claims and attempt ends
    /// (`process_totals`), and forgets those of processes silent for a day.
    pub async fn publish_totals(&self, claimed: u64, attempts_ended: u64) -> Result<(), StoreError> {
        let client = self.pool.get().await?;
        let (claimed, ended) =
            (i64::try_from(claimed).unwrap_or(i64::MAX), i64::try_from(attempts_ended).unwrap_or(i64::MAX));
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 3] = [&PROCESS_NAME.as_str(), &claimed, &ended];
        client.execute(&client.prepare_cached(PUBLISH_TOTALS).await?, &params).await?;
        Ok(())
    }
}
