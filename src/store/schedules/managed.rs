//! Schedules as the people responsible for a tenant see them: its admin
//! (their own tenant only) or an operator (any tenant) lists a user's
//! schedules, pauses one (a person who left the company keeps being mailed
//! otherwise) or deletes it. Each change is audited in `operator_actions`
//! in its own transaction. Only the owner resumes or changes a schedule:
//! their request, their params.

use deadpool_postgres::Pool;

use crate::domain::{ScheduleId, TenantId, UserId};
use crate::store::StoreError;
use crate::store::schedules::{Schedule, columns, schedule_from_row};

/// `$1`'s schedules (every tenant's when NULL), of user `$2` (every user's
/// when NULL), newest first, `$3` at most: each with its owner.
const LIST: &str = concat!(
    "SELECT user_id, tenant_id, ",
    columns!(),
    " FROM schedules
     WHERE ($1::text IS NULL OR tenant_id = $1) AND ($2::text IS NULL OR user_id = $2)
     ORDER BY id DESC LIMIT $3"
);

/// Pauses schedule `$2` (of tenant `$1`, any when NULL), audited as `$3` did it.
const PAUSE: &str = concat!(
    "WITH paused AS (
         UPDATE schedules
         SET paused_at = coalesce(paused_at, now()), paused_by = coalesce(paused_by, 'administrator'), updated_at = now()
         WHERE id = $2 AND ($1::text IS NULL OR tenant_id = $1)
         RETURNING *
     ), audited AS (
         INSERT INTO operator_actions (operator, action, filter, affected)
         SELECT $3, 'schedule_pause', jsonb_build_object('schedule', id, 'tenant', tenant_id), 1 FROM paused
     )
     SELECT user_id, tenant_id, ",
    columns!(),
    " FROM paused"
);

/// Deletes schedule `$2` (of tenant `$1`, any when NULL; its jobs stay), audited as `$3` did it.
const DELETE: &str = "
WITH deleted AS (
    DELETE FROM schedules WHERE id = $2 AND ($1::text IS NULL OR tenant_id = $1) RETURNING id, tenant_id
)
INSERT INTO operator_actions (operator, action, filter, affected)
SELECT $3, 'schedule_delete', jsonb_build_object('schedule', id, 'tenant', tenant_id), 1 FROM deleted";

/// A schedule and whose it is.
#[derive(Debug)]
pub struct OwnedSchedule {
    pub tenant: TenantId,
    pub user: UserId,
    pub schedule: Schedule,
}

/// The schedules one tenant admin (their tenant's) or operator (every
/// tenant's) manages: `Store::schedules_managed_by_tenant_admin`,
/// `Store::schedules_managed_by_operator`.
pub struct ManagedSchedules<'a> {
    pub(in crate::store) pool: &'a Pool,
    /// Only this tenant's (a tenant admin's); `None`: any tenant's.
    pub(in crate::store) tenant: Option<TenantId>,
    /// Who acts, as the audit names them.
    pub(in crate::store) by: String,
    /// Opens the schedules' sealed params.
    pub(in crate::store) sealer: &'a crate::store::Sealer,
}

/// The most schedules one listing answers.
pub const MANAGED_LIST_LIMIT: i64 = 500;

impl ManagedSchedules<'_> {
    /// The schedules of `tenant` (an operator's choice; a tenant admin's is
    /// their own, whatever they name) and `user`, newest first.
    pub async fn list(
        &self,
        tenant: Option<&TenantId>,
        user: Option<&UserId>,
    ) -> Result<Vec<OwnedSchedule>, StoreError> {
        let tenant = self.tenant.as_ref().or(tenant).map(TenantId::as_str);
        let user = user.map(UserId::as_str);
        let client = self.pool.get().await?;
        let rows = client.query(&client.prepare_cached(LIST).await?, &[&tenant, &user, &MANAGED_LIST_LIMIT]).await?;
        drop(client);
        let mut schedules = Vec::with_capacity(rows.len());
        for row in &rows {
            schedules.push(self.owned(row).await?);
        }
        Ok(schedules)
    }

    /// Pauses schedule `id`, if it is one of these; answers it.
    pub async fn pause(&self, id: ScheduleId) -> Result<Option<OwnedSchedule>, StoreError> {
        let tenant = self.tenant.as_ref().map(TenantId::as_str);
        let client = self.pool.get().await?;
        let row = client.query_opt(&client.prepare_cached(PAUSE).await?, &[&tenant, &id.0, &self.by]).await?;
        drop(client);
        match row {
            Some(row) => Ok(Some(self.owned(&row).await?)),
            None => Ok(None),
        }
    }

    /// The schedule of `row`, its params opened.
    async fn owned(&self, row: &tokio_postgres::Row) -> Result<OwnedSchedule, StoreError> {
        let mut owned = owned_from_row(row)?;
        let params = crate::domain::sealing::Purpose::Params;
        self.sealer.open_for_view(owned.tenant.as_str(), &mut owned.schedule.params, params).await?;
        Ok(owned)
    }

    /// Deletes schedule `id`, if it is one of these (its jobs stay); whether it was.
    pub async fn delete(&self, id: ScheduleId) -> Result<bool, StoreError> {
        let tenant = self.tenant.as_ref().map(TenantId::as_str);
        let client = self.pool.get().await?;
        Ok(client.execute(&client.prepare_cached(DELETE).await?, &[&tenant, &id.0, &self.by]).await? == 1)
    }
}

fn owned_from_row(row: &tokio_postgres::Row) -> Result<OwnedSchedule, StoreError> {
    Ok(OwnedSchedule {
        tenant: TenantId::parse(row.try_get::<_, String>("tenant_id")?)?,
        user: UserId::parse(row.try_get::<_, String>("user_id")?)?,
        schedule: schedule_from_row(row)?,
    })
}
