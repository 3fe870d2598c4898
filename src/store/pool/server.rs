//! What errand needs of the PostgreSQL server under it, beyond a schema:
//! autovacuum looking at its database often. `job_queue` takes a row in and
//! out for every job; each claim walks its index past the dead versions a
//! vacuum has not yet removed, and with autovacuum's default of a visit a
//! minute, a few thousand jobs a second leave 100,000 of them: the claims
//! slow and a backlog feeds itself (docs/operations.md, BENCHMARKS.md). The
//! setting is the cluster's, not errand's: errand says so at start-up.

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
    /// What to tell the operator, if anything.
    pub fn advice(&self) -> Option<String> {
        if !self.autovacuum {
            return Some(
                "autovacuum is off on errand's database server: job_queue's dead rows will slow every claim; \
                 set autovacuum = on (docs/operations.md)"
                    .to_owned(),
            );
        }
        (self.naptime > NAPTIME_AT_MOST).then(|| {
            format!(
                "autovacuum_naptime is {} s on errand's database server: at a few thousand jobs a second, \
                 job_queue's dead rows between its visits slow the claims; set autovacuum_naptime = 5s \
                 (docs/operations.md)",
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errand_speaks_up_when_autovacuum_is_off_or_looks_rarely() {
        let settings = |autovacuum, seconds| VacuumSettings { autovacuum, naptime: Duration::from_secs(seconds) };
        assert!(settings(false, 5).advice().is_some_and(|a| a.contains("autovacuum = on")));
        assert!(settings(true, 60).advice().is_some_and(|a| a.contains("60 s") && a.contains("= 5s")));
        assert_eq!(settings(true, 5).advice(), None);
        assert_eq!(settings(true, 10).advice(), None);
    }
}
