//! A tenant's own retentions (`tenant_retention`), set by operators
//! (`/admin/tenants/{tenant}/retention`), for all its job types or for one:
//! how long its finished jobs are kept (before their type's `retention` and
//! `history.retention`; the pruner reads it, `queue::history`), and how
//! long its result files are (the shortest applicable wins; the statement
//! that ends a job reads it, `queue::finish`, and a change shortens the
//! files already kept).

use std::collections::BTreeMap;
use std::time::Duration;

use deadpool_postgres::Pool;
use serde::Serialize;

use crate::domain::{Operator, TenantId};
use crate::store::StoreError;

/// The tenant's rows: ('' for all its types, or a type; both retentions in seconds).
const GET: &str = "
SELECT job_type, extract(epoch FROM retention)::float8 AS retention,
       extract(epoch FROM result_retention)::float8 AS result_retention
FROM tenant_retention WHERE tenant_id = $1 ORDER BY job_type";

const SET: &str = "
INSERT INTO tenant_retention (tenant_id, job_type, retention, result_retention, updated_by)
VALUES ($1, $2, $3 * interval '1 second', $4 * interval '1 second', $5)
ON CONFLICT (tenant_id, job_type) DO UPDATE
SET retention = EXCLUDED.retention, result_retention = EXCLUDED.result_retention, updated_at = now(),
    updated_by = EXCLUDED.updated_by";

const CLEAR: &str = "DELETE FROM tenant_retention WHERE tenant_id = $1 AND job_type = $2";

/// The files the tenant (`$1`; of type `$2`, or all when '') keeps past
/// `$3` seconds after their job ended now expire then, their records
/// saying so: a shorter retention holds for what is already stored. (Only
/// kept files are read, through `jobs_result_expiry`.)
const SHORTEN_FILES: &str = "
UPDATE jobs
SET result_expires_at = finished_at + $3 * interval '1 second',
    result = jsonb_set(result, '{expires_at}', to_jsonb(finished_at + $3 * interval '1 second'))
WHERE result_expires_at IS NOT NULL AND tenant_id = $1 AND ($2 = '' OR job_type = $2)
  AND result_expires_at > finished_at + $3 * interval '1 second'";

const AUDIT: &str = "
INSERT INTO operator_actions (operator, action, filter, affected)
VALUES ($1, 'set_retention',
        jsonb_strip_nulls(jsonb_build_object('tenant', $2::text, 'type', nullif($3::text, ''),
                                             'retention_seconds', $4::float8,
                                             'result_retention_seconds', $5::float8)),
        1)";

/// A tenant's retentions at one level; `None`: not set there.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Retention {
    /// How long its finished jobs are kept.
    #[serde(rename = "retention_seconds", serialize_with = "seconds")]
    pub history: Option<Duration>,
    /// How long its result files are kept (at most).
    #[serde(rename = "result_retention_seconds", serialize_with = "seconds")]
    pub results: Option<Duration>,
}

fn seconds<S: serde::Serializer>(value: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    value.map(|d| d.as_secs()).serialize(s)
}

/// A tenant's retentions: for all its types, and per type.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TenantRetention {
    #[serde(flatten)]
    pub all_types: Retention,
    pub types: BTreeMap<String, Retention>,
}

/// Tenants' retentions, for an operator.
pub struct TenantRetentions<'a> {
    pub(in crate::store) pool: &'a Pool,
    pub(in crate::store) operator: &'a Operator,
}

impl TenantRetentions<'_> {
    /// The tenant's own retentions.
    pub async fn get(&self, tenant: &TenantId) -> Result<TenantRetention, StoreError> {
        let client = self.pool.get().await?;
        let rows = client.query(&client.prepare_cached(GET).await?, &[&tenant.as_str()]).await?;
        let mut found = TenantRetention::default();
        for row in rows {
            let duration = |name| -> Result<Option<Duration>, StoreError> {
                Ok(row.try_get::<_, Option<f64>>(name)?.map(Duration::from_secs_f64))
            };
            let retention = Retention { history: duration("retention")?, results: duration("result_retention")? };
            match row.try_get::<_, String>("job_type")? {
                all if all.is_empty() => found.all_types = retention,
                job_type => {
                    found.types.insert(job_type, retention);
                }
            }
        }
        Ok(found)
    }

    /// Sets the tenant's retentions for `job_type` (`None`: all its types);
    /// both `None`: the levels below hold again. Audited; files kept longer
    /// than a new result retention expire at its end.
    pub async fn set(&self, tenant: &TenantId, job_type: Option<&str>, to: Retention) -> Result<(), StoreError> {
        let (tenant, job_type) = (tenant.as_str(), job_type.unwrap_or(""));
        let history = to.history.map(|r| r.as_secs_f64());
        let results = to.results.map(|r| r.as_secs_f64());
        let by = self.operator.name.as_str();
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        if to == Retention::default() {
            tx.execute(&tx.prepare_cached(CLEAR).await?, &[&tenant, &job_type]).await?;
        } else {
            tx.execute(&tx.prepare_cached(SET).await?, &[&tenant, &job_type, &history, &results, &by]).await?;
        }
        if let Some(results) = results {
            tx.execute(&tx.prepare_cached(SHORTEN_FILES).await?, &[&tenant, &job_type, &results]).await?;
        }
        tx.execute(&tx.prepare_cached(AUDIT).await?, &[&by, &tenant, &job_type, &history, &results]).await?;
        tx.commit().await?;
        Ok(())
    }
}
