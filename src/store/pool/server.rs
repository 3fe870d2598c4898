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

/// The table errand vacuums itself: the queue, which every job enters and
/// leaves. (`unfinished_counts` is updated in place within a second: its
/// pages prune their own HOT chains as they are read, and its rows of
/// earlier seconds, one a key a second at most, are left to autovacuum.)
const QUEUE_TABLE: &str = "job_queue";

/// Dead rows in the queue past which a pass vacuums it: below the table's
/// own autovacuum threshold (2,000), so that errand gets there first, and
/// about a second of a busy queue's churn.
const VACUUM_AT_DEAD_ROWS: i64 = 1000;

const MAY_VACUUM: &str = "SELECT pg_has_role(relowner, 'USAGE') AS may FROM pg_class WHERE oid = 'job_queue'::regclass";

const DEAD_ROWS: &str = "SELECT n_dead_tup AS dead FROM pg_stat_user_tables WHERE relid = 'job_queue'::regclass";

/// The sessions of this database that hold a snapshot (`a`, of
/// `pg_stat_activity`), the one asking left out: what none of them may
/// still see, no vacuum of this database's tables removes. (Another
/// database's sessions do not hold its tables back; another role's are
/// seen only with `pg_read_all_stats`.) Read by the queue's vacuum, which
/// names the oldest, and by `/metrics` (`store/queue/attempts.rs`).
macro_rules! horizon_holders {
    () => {
        "pg_stat_activity a
         WHERE a.datname = current_database() AND a.backend_xmin IS NOT NULL AND a.pid <> pg_backend_pid()"
    };
}
pub(in crate::store) use horizon_holders;

/// The holder open longest, when it has been for over `$1` seconds.
const HORIZON_HELD: &str = concat!(
    "
SELECT a.pid, coalesce(a.application_name, '') AS application, coalesce(a.state, '') AS state,
       extract(epoch FROM now() - a.xact_start)::float8 AS seconds
FROM ",
    horizon_holders!(),
    "
  AND a.xact_start <= now() - $1 * interval '1 second'
ORDER BY a.xact_start LIMIT 1"
);

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
    /// Whether it started a vacuum of the queue.
    pub vacuumed: bool,
    /// Who holds the horizon back, if a vacuum ran while someone did.
    pub horizon_held: Option<HorizonHeld>,
}

impl Store {
    /// Whether errand's role may vacuum the queue (it owns it, or is a
    /// member of its owner): not so when it runs as a role that owns
    /// nothing (`database.migration_url`), and autovacuum alone then keeps
    /// it.
    pub async fn may_vacuum_queue(&self) -> Result<bool, StoreError> {
        let client = self.pool.get().await?;
        Ok(client.query_one(MAY_VACUUM, &[]).await?.try_get("may")?)
    }

    /// Vacuums the queue once its dead rows passed [`VACUUM_AT_DEAD_ROWS`],
    /// unless another vacuum (autovacuum, or another errand process) is at
    /// it: the table's vacuum lock makes one at a time, and several
    /// processes may pass at once. Then, if it vacuumed, who has held the
    /// horizon back for `held_over`.
    pub async fn vacuum_queue(&self, held_over: Duration) -> Result<VacuumPass, StoreError> {
        let client = self.pool.get().await?;
        let dead: i64 = match client.query_opt(DEAD_ROWS, &[]).await? {
            Some(row) => row.try_get("dead")?,
            None => 0,
        };
        if dead < VACUUM_AT_DEAD_ROWS {
            return Ok(VacuumPass::default());
        }
        // No truncation: giving the table's empty last pages back takes a
        // lock that stops every claim and submission while it is held, and
        // a queue fills them again at once.
        client.batch_execute(&format!("VACUUM (SKIP_LOCKED, TRUNCATE false) {QUEUE_TABLE}")).await?;
        let horizon_held = match client.query_opt(HORIZON_HELD, &[&held_over.as_secs_f64()]).await? {
            Some(row) => Some(HorizonHeld {
                pid: row.try_get("pid")?,
                application: row.try_get("application")?,
                state: row.try_get("state")?,
                seconds: row.try_get("seconds")?,
            }),
            None => None,
        };
        Ok(VacuumPass { vacuumed: true, horizon_held })
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
