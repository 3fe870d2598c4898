//! What errand needs of the PostgreSQL server under it, beyond a schema:
//! autovacuum looking at its database often. `job_queue` takes a row in and
//! out for every job; each claim walks its index past the dead versions a
//! vacuum has not yet removed, and with autovacuum's default of a visit a
//! minute, a few thousand jobs a second leave 100,000 of them: the claims
//! slow and a backlog feeds itself (docs/operations.md, BENCHMARKS.md). The
//! setting is the cluster's, not errand's: errand says so at start-up, and
//! vacuums `job_queue` itself when it may ([`Store::vacuum_queue`]).

use std::time::Duration;

use crate::store::{Store, StoreError};

/// The longest `autovacuum_naptime` errand runs well with.
const NAPTIME_AT_MOST: Duration = Duration::from_secs(10);

/// The server's autovacuum, as it applies to errand's database.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VacuumSettings {
    pub autovacuum: bool,
    /// How often autovacuum looks at each database.
    pub naptime: Duration,
}

impl VacuumSettings {
    /// What to tell the operator, if anything: errand vacuums the queue
    /// itself when `errand_vacuums_queue`, and autovacuum's visits then
    /// matter less (but never none: the history's tables and the planner's
    /// statistics are still its).
    pub fn advice(&self, errand_vacuums_queue: bool) -> Option<String> {
        if !self.autovacuum {
            return Some(
                "autovacuum is off on errand's database server: job_queue's dead rows will slow every claim; \
                 set autovacuum = on (docs/operations.md)"
                    .to_owned(),
            );
        }
        (self.naptime > NAPTIME_AT_MOST && !errand_vacuums_queue).then(|| {
            format!(
                "autovacuum_naptime is {} s on errand's database server: at a few thousand jobs a second, \
                 job_queue's dead rows between its visits slow the claims; set autovacuum_naptime = 5s, \
                 or let errand vacuum the queue itself (docs/operations.md)",
                self.naptime.as_secs()
            )
        })
    }
}

const VACUUM_SETTINGS: &str = "
SELECT current_setting('autovacuum')::bool AS autovacuum,
       extract(epoch FROM current_setting('autovacuum_naptime')::interval)::float8 AS naptime";

impl Store {
    /// The server's autovacuum settings.
    pub async fn vacuum_settings(&self) -> Result<VacuumSettings, StoreError> {
        let client = self.pool.get().await?;
        let row = client.query_one(VACUUM_SETTINGS, &[]).await?;
        let naptime: f64 = row.try_get("naptime")?;
        Ok(VacuumSettings {
            autovacuum: row.try_get("autovacuum")?,
            naptime: Duration::from_secs_f64(naptime.max(0.0)),
        })
    }
}

/// The tables errand vacuums itself: the queue, which every job enters and
/// leaves. (`unfinished_counts` is updated in place: its pages prune their
/// own HOT chains as they are read.)
const QUEUE_TABLES: [&str; 1] = ["job_queue"];

/// Dead rows in a queue table past which a pass vacuums it: below the
/// table's own autovacuum threshold (2,000), so that errand gets there
/// first, and about a second of a busy queue's churn.
const VACUUM_AT_DEAD_ROWS: i64 = 1000;

const MAY_VACUUM: &str = "
SELECT coalesce(bool_and(pg_has_role(c.relowner, 'USAGE')), false) AS may
FROM pg_class c WHERE c.oid = ANY ($1::text[]::regclass[])";

const DEAD_ROWS: &str = "
SELECT relname::text AS name, n_dead_tup AS dead FROM pg_stat_user_tables WHERE relid = ANY ($1::text[]::regclass[])";

/// The session of this database holding back the xmin horizon longest,
/// when it has for over `$1` seconds: what no vacuum of this database's
/// tables may remove while it lasts. (Another database's sessions do not
/// hold its tables back.)
const HORIZON_HELD: &str = "
SELECT pid, coalesce(application_name, '') AS application, coalesce(state, '') AS state,
       extract(epoch FROM now() - xact_start)::float8 AS seconds
FROM pg_stat_activity
WHERE datname = current_database() AND backend_xmin IS NOT NULL
  AND xact_start <= now() - $1 * interval '1 second' AND pid <> pg_backend_pid()
ORDER BY age(backend_xmin) DESC LIMIT 1";

/// A session whose open transaction keeps vacuums from removing dead rows.
#[derive(Debug, Clone, PartialEq)]
pub struct HorizonHeld {
    pub pid: i32,
    pub application: String,
    pub state: String,
    pub seconds: f64,
}

/// What one pass of [`Store::vacuum_queue`] did.
#[derive(Debug, Default)]
pub struct VacuumPass {
    /// The tables it vacuumed.
    pub vacuumed: Vec<&'static str>,
    /// Who holds the horizon back, if a vacuum ran while someone did.
    pub horizon_held: Option<HorizonHeld>,
}

impl Store {
    /// Whether errand's role may vacuum the queue tables (it owns them, or
    /// is a member of their owner): not so when it runs as a role that owns
    /// nothing (`database.migration_url`), and autovacuum alone then keeps
    /// them.
    pub async fn may_vacuum_queue(&self) -> Result<bool, StoreError> {
        let client = self.pool.get().await?;
        Ok(client.query_one(MAY_VACUUM, &[&QUEUE_TABLES.as_slice()]).await?.try_get("may")?)
    }

    /// Vacuums each queue table whose dead rows passed
    /// [`VACUUM_AT_DEAD_ROWS`], skipping one another vacuum (autovacuum,
    /// or another errand process) is already at: the table's vacuum lock
    /// makes one at a time, and several processes may pass at once. Then,
    /// if it vacuumed, who has held the horizon back for `held_over`.
    pub async fn vacuum_queue(&self, held_over: Duration) -> Result<VacuumPass, StoreError> {
        let client = self.pool.get().await?;
        let mut pass = VacuumPass::default();
        for row in client.query(DEAD_ROWS, &[&QUEUE_TABLES.as_slice()]).await? {
            let (name, dead): (String, i64) = (row.try_get("name")?, row.try_get("dead")?);
            let Some(table) = QUEUE_TABLES.into_iter().find(|t| *t == name) else { continue };
            // No truncation: giving the table's empty last pages back takes
            // a lock that stops every claim and submission while it is held,
            // and a queue fills them again at once.
            if dead >= VACUUM_AT_DEAD_ROWS {
                client.batch_execute(&format!("VACUUM (SKIP_LOCKED, TRUNCATE false) {table}")).await?;
                pass.vacuumed.push(table);
            }
        }
        if !pass.vacuumed.is_empty()
            && let Some(row) = client.query_opt(HORIZON_HELD, &[&held_over.as_secs_f64()]).await?
        {
            pass.horizon_held = Some(HorizonHeld {
                pid: row.try_get("pid")?,
                application: row.try_get("application")?,
                state: row.try_get("state")?,
                seconds: row.try_get("seconds")?,
            });
        }
        Ok(pass)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errand_speaks_up_when_autovacuum_is_off_or_looks_rarely() {
        let settings = |autovacuum, seconds| VacuumSettings { autovacuum, naptime: Duration::from_secs(seconds) };
        for errand_vacuums in [false, true] {
            assert!(settings(false, 5).advice(errand_vacuums).is_some_and(|a| a.contains("autovacuum = on")));
            assert_eq!(settings(true, 5).advice(errand_vacuums), None);
            assert_eq!(settings(true, 10).advice(errand_vacuums), None);
        }
        assert!(settings(true, 60).advice(false).is_some_and(|a| a.contains("60 s") && a.contains("= 5s")));
        assert_eq!(settings(true, 60).advice(true), None, "errand vacuums the queue itself");
    }
}
