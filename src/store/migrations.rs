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
    /// With `database.migration_url` set, `database.url`'s role owns the tables.
    #[error(
        "database.url connects as {0:?}, which owns errand's tables: with database.migration_url set, errand runs as a \
         role that owns none (a member of errand_runtime: GRANT errand_runtime TO it)"
    )]
    RuntimeOwnsTables(String),
    /// With `database.migration_url` set, `database.url`'s role cannot read and write the tables.
    #[error("database.url connects as {0:?}, which is no member of errand_runtime: GRANT errand_runtime TO {0}")]
    RuntimeNotGranted(String),
    #[error("database.migration_url: {0}")]
    OwnerUrl(crate::store::UrlError),
    /// `database.migrate_at_start` is off and the database lacks some.
    #[error(
        "database.migrate_at_start is false and the database lacks this build's migrations {0}: apply them \
         (errand migrate --print-sql --from <its newest>, or errand migrate)"
    )]
    Behind(String),
}

/// Applies every migration not yet applied, holding a session advisory lock.
pub async fn migrate(store: &Store) -> Result<usize, MigrateError> {
    run(store, refinery::Target::Latest).await
}

/// What `serve` does with migrations as it starts: applies what the database
/// lacks ([`migrate_as`]), or with `apply` off only checks that it lacks
/// nothing; the number applied.
pub async fn at_start(runtime: &Store, owner_url: Option<&str>, apply: bool) -> Result<usize, MigrateError> {
    if apply {
        return migrate_as(runtime, owner_url).await;
    }
    match schema_standing(runtime).await? {
        SchemaStanding::Behind(pending) => Err(MigrateError::Behind(version_names(&pending))),
        SchemaStanding::Current | SchemaStanding::Ahead(_) => Ok(0),
    }
}

/// The runtime role (`current_user`): whether it owns the `jobs` table, and
/// whether it is a member of `errand_runtime`.
const RUNTIME_ROLE: &str = "
SELECT current_user::text AS role,
       EXISTS (SELECT 1 FROM pg_tables WHERE schemaname = current_schema() AND tablename = 'jobs'
                                         AND tableowner = current_user) AS owns,
       pg_has_role(current_user, 'errand_runtime', 'MEMBER') AS granted";

/// Migrates as the tables' owner, at `owner_url` (`database.migration_url`)
/// when given, else through `runtime`; with an owner apart, then refuses a
/// runtime role that owns the tables or may not use them.
pub async fn migrate_as(runtime: &Store, owner_url: Option<&str>) -> Result<usize, MigrateError> {
    let Some(owner_url) = owner_url else { return migrate(runtime).await };
    let owner = Store::connect(owner_url, 1).map_err(MigrateError::OwnerUrl)?;
    let applied = migrate(&owner).await?;
    let client = runtime.pool().get().await.map_err(StoreError::from)?;
    let row = client.query_one(RUNTIME_ROLE, &[]).await.map_err(StoreError::from)?;
    let role: String = row.get("role");
    if row.get::<_, bool>("owns") {
        return Err(MigrateError::RuntimeOwnsTables(role));
    }
    if !row.get::<_, bool>("granted") {
        return Err(MigrateError::RuntimeNotGranted(role));
    }
    Ok(applied)
}

async fn run(store: &Store, target: refinery::Target) -> Result<usize, MigrateError> {
    // Before the session lock below, which transaction pooling would never release.
    store.check_sessions().await?;
    let mut client = store.pool().get().await.map_err(StoreError::from)?;
    client.execute("SELECT pg_advisory_lock($1)", &[&MIGRATION_LOCK]).await.map_err(StoreError::from)?;
    // A newer release's migrations, already applied, do not stop this one:
    // each release's schema works with the previous release's binary (expand
    // now, contract a release later), so an old process restarting during a
    // rolling upgrade starts (`errand migrate --check` tells it apart: 2).
    let runner = embedded::migrations::runner().set_target(target).set_abort_missing(false);
    let report = runner.run_async(&mut **client).await;
    client.execute("SELECT pg_advisory_unlock($1)", &[&MIGRATION_LOCK]).await.map_err(StoreError::from)?;
    Ok(report?.applied_migrations().len())
}

/// The versions of this build's migrations, oldest first (read once: every
/// `/readyz` asks for the newest).
static KNOWN: std::sync::LazyLock<Vec<i64>> = std::sync::LazyLock::new(|| {
    let mut known: Vec<i64> =
        embedded::migrations::runner().get_migrations().iter().map(|m| i64::from(m.version())).collect();
    known.sort_unstable();
    known
});

/// `V1, V2`: migrations as people name them.
pub fn version_names(versions: &[i64]) -> String {
    versions.iter().map(|v| format!("V{v}")).collect::<Vec<_>>().join(", ")
}

/// Whether the database has every migration this build knows.
pub async fn migrations_current(store: &Store) -> Result<bool, StoreError> {
    let latest = KNOWN.last().copied().unwrap_or(0);
    let client = store.pool().get().await?;
    let row = client.query_opt("SELECT max(version) FROM refinery_schema_history", &[]).await;
    match row {
        Ok(Some(row)) => Ok(row.get::<_, Option<i32>>(0).is_some_and(|applied| i64::from(applied) >= latest)),
        Ok(None) => Ok(false),
        // The history table does not exist yet.
        Err(e) if e.code() == Some(&tokio_postgres::error::SqlState::UNDEFINED_TABLE) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// One of this build's migrations: `V{version}__{name}.sql`.
pub struct KnownMigration {
    pub version: i64,
    pub name: String,
    pub sql: String,
}

/// This build's migrations after version `from` (all for 0), oldest first:
/// what `errand migrate --print-sql` prints for teams that run their own
/// migration tool.
pub fn migrations_after(from: i64) -> Vec<KnownMigration> {
    let mut known: Vec<KnownMigration> = embedded::migrations::runner()
        .get_migrations()
        .iter()
        .map(|m| KnownMigration {
            version: i64::from(m.version()),
            name: m.name().to_owned(),
            sql: m.sql().unwrap_or_default().to_owned(),
        })
        .filter(|m| m.version > from)
        .collect();
    known.sort_by_key(|m| m.version);
    known
}

/// How a database's schema stands against this build's migrations.
#[derive(Debug, PartialEq, Eq)]
pub enum SchemaStanding {
    /// It has exactly this build's migrations.
    Current,
    /// Migrations of this build it lacks (versions, oldest first).
    Behind(Vec<i64>),
    /// Migrations it has that this build does not know: a newer errand migrated it.
    Ahead(Vec<i64>),
}

/// The versions `refinery_schema_history` records (none before errand first migrated).
const APPLIED: &str = "SELECT version::bigint FROM refinery_schema_history ORDER BY version";

/// How the database stands (`errand migrate --check`, Oban's check at boot).
pub async fn schema_standing(store: &Store) -> Result<SchemaStanding, StoreError> {
    let client = store.pool().get().await?;
    let applied: Vec<i64> = match client.query(APPLIED, &[]).await {
        Ok(rows) => rows.iter().map(|row| row.get(0)).collect(),
        Err(e) if e.code() == Some(&tokio_postgres::error::SqlState::UNDEFINED_TABLE) => Vec::new(),
        Err(e) => return Err(e.into()),
    };
    let known = &*KNOWN;
    let ahead: Vec<i64> = applied.iter().copied().filter(|v| !known.contains(v)).collect();
    let behind: Vec<i64> = known.iter().copied().filter(|v| !applied.contains(v)).collect();
    Ok(match (ahead.is_empty(), behind.is_empty()) {
        (false, _) => SchemaStanding::Ahead(ahead),
        (true, false) => SchemaStanding::Behind(behind),
        (true, true) => SchemaStanding::Current,
    })
}
