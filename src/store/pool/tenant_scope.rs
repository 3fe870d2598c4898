//! Row-level security as a floor under the caller doors (`Store::jobs_for`
//! and the other `<rows>_for(caller)` and `<rows>_for_tenant(tenant)`
//! doors). Every statement they run already names its tenant; the database
//! holds them to it as well: each runs in a transaction that takes the role
//! `errand_caller` and sets `errand.tenant`, and the policies on the tables
//! that hold people's data (`migrations/V1__baseline.sql`, section 14) let
//! that role see and write only rows of `errand.tenant`. A statement of a
//! caller door that forgot its `WHERE tenant_id = $1` returns the caller's
//! tenant's rows, not everyone's. The process's own sides (claims, ends,
//! the pruner) and the operators' doors read across tenants and run as the
//! login role, as before.
//!
//! Both settings are transaction-local (`set_config(…, true)`), so a
//! connection given back to the pool, or reused by PgBouncer in transaction
//! mode, keeps neither.

use std::ops::Deref;

use deadpool_postgres::{Object, Pool};

use crate::domain::TenantId;
use crate::store::StoreError;

/// The role the caller doors' transactions take (created by the migrations).
pub const CALLER_ROLE: &str = "errand_caller";

/// Takes the caller role (`$1`) and the tenant (`$2`) for the rest of the transaction.
const SCOPE: &str = "SELECT set_config('role', $1, true), set_config('errand.tenant', $2, true)";

/// The pool as a caller door sees it: every connection it hands out is in a
/// transaction scoped to one tenant. (Owned, so that a stream read page by
/// page may keep it: a pool is an `Arc`.)
#[derive(Clone)]
pub struct TenantPool {
    pool: Pool,
    tenant: TenantId,
}

impl TenantPool {
    pub fn new(pool: &Pool, tenant: &TenantId) -> Self {
        Self { pool: pool.clone(), tenant: tenant.clone() }
    }

    /// The pool under the scope, for what is no tenant's rows (the tenant's
    /// data key, read by `keys.rs` on a connection of its own).
    pub(in crate::store) fn unscoped(&self) -> &Pool {
        &self.pool
    }

    /// A connection in a transaction that sees and writes only the tenant's
    /// rows. [`Scoped::commit`] ends it; dropped, it is rolled back.
    pub async fn get(&self) -> Result<Scoped, StoreError> {
        let (scoped, scope) = self.checkout().await?;
        // `BEGIN` and the settings go out together (pipelined, in that
        // order): one round trip. The caller's first statement is sent only
        // once both answered.
        let (began, scoped_to) = futures_util::future::join(
            scoped.batch_execute("BEGIN"),
            scoped.execute(&scope, &[&CALLER_ROLE, &self.tenant.as_str()]),
        )
        .await;
        began?;
        scoped_to?;
        Ok(scoped)
    }

    /// One read in a scoped transaction of its own, sent with `BEGIN` and
    /// the settings: one round trip, as an unscoped read takes. Pipelined
    /// safely: were the settings to fail, the transaction is aborted and
    /// the read fails with it; it never runs unscoped. Rolled back after.
    pub async fn read(
        &self,
        statement: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> Result<Vec<tokio_postgres::Row>, StoreError> {
        let (scoped, scope) = self.checkout().await?;
        let statement = scoped.prepare_cached(statement).await?;
        let (began, scoped_to, rows) = futures_util::future::join3(
            scoped.batch_execute("BEGIN"),
            scoped.execute(&scope, &[&CALLER_ROLE, &self.tenant.as_str()]),
            scoped.query(&statement, params),
        )
        .await;
        began?;
        scoped_to?;
        Ok(rows?)
    }

    /// A connection of the pool, which from here on is rolled back when
    /// dropped, and the settings' statement prepared on it.
    async fn checkout(&self) -> Result<(Scoped, tokio_postgres::Statement), StoreError> {
        let scoped = Scoped { client: Some(self.pool.get().await?) };
        let scope = scoped.prepare_cached(SCOPE).await?;
        Ok((scoped, scope))
    }
}

/// A pooled connection in a tenant-scoped transaction.
pub struct Scoped {
    client: Option<Object>,
}

impl Scoped {
    /// Commits what the transaction wrote, and gives the connection back.
    pub async fn commit(mut self) -> Result<(), StoreError> {
        let client = self.client.take().expect("a Scoped holds its client until committed or dropped");
        match client.batch_execute("COMMIT").await {
            Ok(()) => Ok(()),
            Err(error) => {
                // Its state unknown: never back to the pool.
                drop(Object::take(client));
                Err(error.into())
            }
        }
    }
}

impl Deref for Scoped {
    type Target = Object;

    fn deref(&self) -> &Object {
        self.client.as_ref().expect("a Scoped holds its client until committed or dropped")
    }
}

impl Drop for Scoped {
    /// Rolls back (a read's usual end, or an error's), then gives the
    /// connection back; with no runtime to do it on, closes it instead, so
    /// that no connection goes back to the pool inside the transaction.
    fn drop(&mut self) {
        let Some(client) = self.client.take() else { return };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move {
                    if client.batch_execute("ROLLBACK").await.is_err() {
                        drop(Object::take(client));
                    }
                });
            }
            Err(_) => drop(Object::take(client)),
        }
    }
}
