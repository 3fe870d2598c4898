//! The operators' audit trail, read: who did what, when, to which jobs.
//! Written only by the actions themselves, each in its own transaction
//! (`operator/mod.rs`, `quotas.rs`); only an [`Operator`] reads it.

use chrono::{DateTime, Utc};
use deadpool_postgres::Pool;
use uuid::Uuid;

use crate::domain::Operator;
use crate::store::StoreError;

/// Which actions to list: any filter may be left out.
#[derive(Debug, Clone, Default)]
pub struct ActionQuery {
    /// Whose (the operator token's `sub`).
    pub operator: Option<String>,
    /// `retry`, `cancel`, `bulk_retry`, `bulk_cancel`, `set_quotas`, `pause`, `resume`, `hold`, `release`.
    pub action: Option<String>,
    pub job: Option<Uuid>,
    pub after: Option<DateTime<Utc>>,
    pub before_time: Option<DateTime<Utc>>,
    /// Only actions older than this one (the previous page's last).
    pub before: Option<Uuid>,
    pub limit: u32,
}

/// One action, as recorded.
#[derive(Debug, Clone, serde::Serialize)]
pub struct OperatorAction {
    pub id: Uuid,
    pub at: DateTime<Utc>,
    pub operator: String,
    pub action: String,
    /// The one job it acted on, if it acted on one.
    pub job_id: Option<Uuid>,
    /// The filter it acted on (bulk retry, quota overrides), if any.
    pub filter: Option<serde_json::Value>,
    /// How many jobs it changed.
    pub affected: i32,
}

/// A page of actions, newest first.
#[derive(Debug)]
pub struct ActionPage {
    pub actions: Vec<OperatorAction>,
    /// The last action of this page, when there may be more.
    pub next_before: Option<Uuid>,
}

/// Actions newest first (ids are UUID v7), by operator `$1`, action `$2`,
/// job `$3`, at or after `$4`, before `$5`, older than action `$6`; `$7` rows.
const LIST: &str = "
SELECT id, at, operator, action, job_id, filter, affected
FROM operator_actions
WHERE ($1::text IS NULL OR operator = $1)
  AND ($2::text IS NULL OR action = $2)
  AND ($3::uuid IS NULL OR job_id = $3)
  AND ($4::timestamptz IS NULL OR at >= $4)
  AND ($5::timestamptz IS NULL OR at < $5)
  AND ($6::uuid IS NULL OR id < $6)
ORDER BY id DESC
LIMIT $7";

/// The audit trail, for an operator.
pub struct OperatorAudit<'a> {
    pub(in crate::store) pool: &'a Pool,
    /// Proof that an operator asked (reading it is all this door does).
    pub(in crate::store) _operator: &'a Operator,
}

impl OperatorAudit<'_> {
    /// A page of actions, newest first (keyset on the v7 id).
    pub async fn list(&self, query: &ActionQuery) -> Result<ActionPage, StoreError> {
        let client = self.pool.get().await?;
        let fetch = i64::from(query.limit) + 1;
        let q = query;
        let rows = client
            .query(
                &client.prepare_cached(LIST).await?,
                &[&q.operator, &q.action, &q.job, &q.after, &q.before_time, &q.before, &fetch],
            )
            .await?;
        let actions = rows
            .iter()
            .map(|row| {
                Ok(OperatorAction {
                    id: row.try_get("id")?,
                    at: row.try_get("at")?,
                    operator: row.try_get("operator")?,
                    action: row.try_get("action")?,
                    job_id: row.try_get("job_id")?,
                    filter: row.try_get("filter")?,
                    affected: row.try_get("affected")?,
                })
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        let (actions, next_before) = crate::store::jobs::keyset_page(actions, query.limit, |a| a.id);
        Ok(ActionPage { actions, next_before })
    }
}
