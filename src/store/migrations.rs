//! Schema migrations (refinery, SQL files in `migrations/`), applied at
//! start-up and by `errand migrate`.

use crate::store::{Store, StoreError};

mod embedded {
    refinery::embed_migrations!("migrations");
}

/// Serialises migrations when several processes start at once.
const MIGRATION_LOCK: i64 = 0x6572_7261_6e64_0000;

/// Why migrating failed.
#[derive(Debug, thiserror::Error)]
pub enum MigrateError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("migration failed: {0}")]
    Refinery(#[from] refinery::Error),
}

/// Applies every migration not yet applied, holding a session advisory lock.
pub async fn migrate(store: &Store) -> Result<usize, MigrateError> {
    run(store, refinery::Target::Latest).await
}

async fn run(store: &Store, target: refinery::Target) -> Result<usize, MigrateError> {
    // Before the session lock below, which transaction pooling would never release.
    store.check_sessions().await?;
    let mut client = store.pool().get().await.map_err(StoreError::from)?;
    client.execute("SELECT pg_advisory_lock($1)", &[&MIGRATION_LOCK]).await.map_err(StoreError::from)?;
    let report = embedded::migrations::runner().set_target(target).run_async(&mut **client).await;
    client.execute("SELECT pg_advisory_unlock($1)", &[&MIGRATION_LOCK]).await.map_err(StoreError::from)?;
    Ok(report?.applied_migrations().len())
}

/// The newest migration this build knows (read once: every `/readyz` asks).
static LATEST: std::sync::LazyLock<refinery::SchemaVersion> = std::sync::LazyLock::new(|| {
    embedded::migrations::runner().get_migrations().iter().map(|m| m.version()).max().unwrap_or(0)
});

/// Whether the database has every migration this build knows.
pub async fn migrations_current(store: &Store) -> Result<bool, StoreError> {
    let latest = *LATEST;
    let client = store.pool().get().await?;
    let row = client.query_opt("SELECT max(version) FROM refinery_schema_history", &[]).await;
    match row {
        Ok(Some(row)) => {
            Ok(row.get::<_, Option<i32>>(0).is_some_and(|applied| i64::from(applied) >= i64::from(latest)))
        }
        Ok(None) => Ok(false),
        // The history table does not exist yet.
        Err(e) if e.code() == Some(&tokio_postgres::error::SqlState::UNDEFINED_TABLE) => Ok(false),
        Err(e) => Err(e.into()),
    }
}
