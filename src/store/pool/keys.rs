//! Each tenant's data key (`domain::sealing`): kept wrapped in
//! `tenant_keys`, made the first time the tenant has something to seal, and
//! what seals with it: webhook secrets (`webhooks/sealed.rs`) and the params
//! and results of the job types that ask for it ([`Sealer`]).
//!
//! Opened data keys are kept in memory by their wrapped form, which the
//! database holds: a key shredded and made anew, or rewrapped, is a new
//! entry, never an old key taken for it. Which key is a tenant's now is
//! read again after [`CURRENT_FOR`], so a key shredded by a tenant's erasure
//! on another process seals nothing new here after that long.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use deadpool_postgres::{Client, Pool};
use serde_json::{Map, Value};

use crate::domain::sealing::{self, DataKey, Keyring, Purpose};
use crate::store::StoreError;

/// How long a tenant's key, once read, is taken as its current one.
const CURRENT_FOR: Duration = Duration::from_secs(60);

const KEY_OF: &str = "SELECT version, wrapped FROM tenant_keys WHERE tenant_id = $1";

/// A tenant's new data key, unless another process made one first.
const MAKE_KEY: &str =
    "INSERT INTO tenant_keys (tenant_id, version, wrapped) VALUES ($1, $2, $3) ON CONFLICT (tenant_id) DO NOTHING";

/// Up to `$2` data keys not wrapped under `$1` (the current key).
const NOT_CURRENT: &str = "SELECT tenant_id, version, wrapped FROM tenant_keys WHERE version <> $1 LIMIT $2";

const REWRAP: &str = "UPDATE tenant_keys SET version = $3, wrapped = $4, rewrapped_at = now()
                      WHERE tenant_id = $1 AND version = $2";

/// Rows rewrapped per statement.
const STEP: i64 = 500;

/// Which data key: its tenant, and its wrapped form as the database holds it.
type WrappedKey = (String, Vec<u8>);

/// The keyring, and the data keys opened so far.
pub struct TenantKeys {
    ring: Keyring,
    opened: Mutex<HashMap<WrappedKey, Arc<DataKey>>>,
    /// Each tenant's key as last read, and when.
    current: Mutex<HashMap<String, (Instant, Arc<DataKey>)>>,
}

impl std::fmt::Debug for TenantKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TenantKeys").field("ring", &self.ring).finish_non_exhaustive()
    }
}

impl TenantKeys {
    pub fn new(ring: Keyring) -> Self {
        Self { ring, opened: Mutex::default(), current: Mutex::default() }
    }

    /// `tenant`'s data key wrapped under `version` as `wrapped`, opened.
    pub(in crate::store) fn open_key(
        &self,
        tenant: &str,
        version: &str,
        wrapped: &[u8],
    ) -> Result<Arc<DataKey>, StoreError> {
        let id = (tenant.to_owned(), wrapped.to_vec());
        if let Some(key) = self.opened.lock().ok().and_then(|opened| opened.get(&id).cloned()) {
            return Ok(key);
        }
        let key = Arc::new(
            self.ring
                .unwrap(tenant, version, wrapped)
                .map_err(|e| StoreError::Corrupt(format!("tenant {tenant:?}'s data key: {e}")))?,
        );
        if let Ok(mut opened) = self.opened.lock() {
            opened.insert(id, key.clone());
        }
        Ok(key)
    }

    /// `tenant`'s data key, made (and kept, wrapped) if it has none yet.
    pub(in crate::store) async fn key_for(&self, pool: &Pool, tenant: &str) -> Result<Arc<DataKey>, StoreError> {
        if let Some(key) = self.existing_key(pool, tenant).await? {
            return Ok(key);
        }
        let made = self.ring.new_data_key(tenant);
        let client = pool.get().await?;
        client.execute(&client.prepare_cached(MAKE_KEY).await?, &[&tenant, &made.version, &made.wrapped]).await?;
        // Another process's, if it made one first.
        self.read_key(&client, tenant)
            .await?
            .ok_or_else(|| StoreError::Corrupt(format!("tenant {tenant:?}'s data key was made and is gone")))
    }

    /// `tenant`'s data key, if it has one (erasing a tenant deletes it): as
    /// read less than [`CURRENT_FOR`] ago, else read again.
    async fn existing_key(&self, pool: &Pool, tenant: &str) -> Result<Option<Arc<DataKey>>, StoreError> {
        let known = self.current.lock().ok().and_then(|current| current.get(tenant).cloned());
        if let Some((_, key)) = known.filter(|(read_at, _)| read_at.elapsed() < CURRENT_FOR) {
            return Ok(Some(key));
        }
        self.read_key(&pool.get().await?, tenant).await
    }

    async fn read_key(&self, client: &Client, tenant: &str) -> Result<Option<Arc<DataKey>>, StoreError> {
        let Some(row) = client.query_opt(&client.prepare_cached(KEY_OF).await?, &[&tenant]).await? else {
            return Ok(None);
        };
        let key = self.open_key(tenant, row.try_get("version")?, row.try_get("wrapped")?)?;
        if let Ok(mut current) = self.current.lock() {
            current.insert(tenant.to_owned(), (Instant::now(), key.clone()));
        }
        Ok(Some(key))
    }

    /// Forgets which key is `tenant`'s (its key was just shredded here).
    pub(in crate::store) fn forget(&self, tenant: &str) {
        if let Ok(mut current) = self.current.lock() {
            current.remove(tenant);
        }
    }

    /// Rewraps every data key under the current key-encryption key; answers how many.
    pub(in crate::store) async fn rewrap_all(&self, pool: &Pool) -> Result<u64, StoreError> {
        let client = pool.get().await?;
        let mut rewrapped = 0;
        loop {
            let rows = client.query(&client.prepare_cached(NOT_CURRENT).await?, &[&self.ring.current(), &STEP]).await?;
            for row in &rows {
                let (tenant, version): (String, String) = (row.try_get("tenant_id")?, row.try_get("version")?);
                let wrapped: Vec<u8> = row.try_get("wrapped")?;
                let again = self
                    .ring
                    .rewrap(&tenant, &version, &wrapped)
                    .map_err(|e| StoreError::Corrupt(format!("tenant {tenant:?}'s data key: {e}")))?;
                if let Some(again) = again {
                    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 4] =
                        [&tenant, &version, &self.ring.current(), &again];
                    rewrapped += client.execute(&client.prepare_cached(REWRAP).await?, &params).await?;
                }
            }
            if (rows.len() as i64) < STEP {
                return Ok(rewrapped);
            }
        }
    }
}

/// Which job types' params and results are kept sealed, and the keys they
/// are sealed with: the one rule every door that writes or reads them keeps to.
#[derive(Clone)]
pub struct Sealer {
    pub(in crate::store) pool: Pool,
    pub(in crate::store) keys: Option<Arc<TenantKeys>>,
    pub(in crate::store) types: Arc<HashSet<String>>,
}

impl Sealer {
    /// Whether `job_type`'s params and results are kept sealed.
    pub fn seals(&self, job_type: &str) -> bool {
        self.types.contains(job_type)
    }

    /// `tenant`'s data key, made if it has none: what else errand seals for
    /// the tenant seals with it (its result files on the local backend).
    pub async fn tenant_key(&self, tenant: &str) -> Result<Arc<DataKey>, StoreError> {
        let keys = self.keys.as_deref().ok_or_else(|| StoreError::Corrupt("no keyring".into()))?;
        keys.key_for(&self.pool, tenant).await
    }

    /// `tenant`'s data key, if it has one (an erased tenant has none).
    pub async fn existing_tenant_key(&self, tenant: &str) -> Result<Option<Arc<DataKey>>, StoreError> {
        let keys = self.keys.as_deref().ok_or_else(|| StoreError::Corrupt("no keyring".into()))?;
        keys.existing_key(&self.pool, tenant).await
    }

    /// `params` of a job (or schedule) of `tenant` and `job_type`, as kept:
    /// sealed whole for a type that seals them, `None` (kept as they are)
    /// for another.
    pub async fn seal(&self, tenant: &str, job_type: &str, params: &Value) -> Result<Option<Value>, StoreError> {
        if !self.seals(job_type) {
            return Ok(None);
        }
        let sealed = self.sealed(tenant, params, Purpose::Params).await?;
        Ok(Some(sealing::envelope(Map::new(), &sealed)))
    }

    /// A job's `result`, as kept: for a type that seals it, its file record
    /// in clear (`sealing::FILE_RECORD`) and the rest sealed beside it;
    /// `None` (kept as it is) for another type, or a result that is a file
    /// record alone (an export's).
    pub async fn seal_result(&self, tenant: &str, job_type: &str, result: &Value) -> Result<Option<Value>, StoreError> {
        if !self.seals(job_type) {
            return Ok(None);
        }
        let (clear, rest) = match result {
            Value::Object(members) => {
                let (clear, rest): (Map<String, Value>, Map<String, Value>) =
                    members.clone().into_iter().partition(|(name, _)| sealing::FILE_RECORD.contains(&name.as_str()));
                if rest.is_empty() {
                    return Ok(None);
                }
                (clear, Value::Object(rest))
            }
            other => (Map::new(), other.clone()),
        };
        let sealed = self.sealed(tenant, &rest, Purpose::Result).await?;
        Ok(Some(sealing::envelope(clear, &sealed)))
    }

    async fn sealed(&self, tenant: &str, value: &Value, purpose: Purpose) -> Result<Vec<u8>, StoreError> {
        let keys = self.keys.as_deref().ok_or_else(|| StoreError::Corrupt("values to seal, and no keyring".into()))?;
        let key = keys.key_for(&self.pool, tenant).await?;
        Ok(key.seal(value.to_string().as_bytes(), purpose))
    }

    /// Opens a job's params and result in place, for a view (see [`Self::open_for_view`]).
    pub async fn open_job(&self, job: &mut crate::domain::Job) -> Result<(), StoreError> {
        self.open_for_view(job.tenant.as_str(), &mut job.params, Purpose::Params).await?;
        if let Some(result) = &mut job.result {
            self.open_for_view(job.tenant.as_str(), result, Purpose::Result).await?;
        }
        Ok(())
    }

    /// [`Self::open_job`] for each of `jobs`.
    pub async fn open_jobs(&self, jobs: &mut [crate::domain::Job]) -> Result<(), StoreError> {
        for job in jobs {
            self.open_job(job).await?;
        }
        Ok(())
    }

    /// Opens `kept` (params or a result of `tenant`, as `purpose` says) in
    /// place, for a view: a value whose seal does not open shows as null
    /// (and is logged), as params that no longer decode do, rather than
    /// failing a whole list.
    pub async fn open_for_view(&self, tenant: &str, kept: &mut Value, purpose: Purpose) -> Result<(), StoreError> {
        // (A value in clear comes back as it went.)
        match self.open(tenant, std::mem::take(kept), purpose).await {
            Ok(opened) => *kept = opened,
            Err(error @ StoreError::Corrupt(_)) => {
                tracing::warn!(%error, "a sealed value does not open: shown as null")
            }
            Err(error) => return Err(error),
        }
        Ok(())
    }

    /// A kept value, opened: what an envelope holds, whatever its type says
    /// now (a type no longer sealed still reads what it sealed), put back
    /// beside what it kept in clear; anything else as it is.
    pub async fn open(&self, tenant: &str, kept: Value, purpose: Purpose) -> Result<Value, StoreError> {
        let Some(sealed) = sealing::enveloped(&kept) else { return Ok(kept) };
        let corrupt = |why: &str| StoreError::Corrupt(format!("a sealed value of tenant {tenant:?}: {why}"));
        let sealed = sealed.map_err(|e| corrupt(&e.0))?;
        let keys = self.keys.as_deref().ok_or_else(|| corrupt("this store has no keyring"))?;
        let mut opened = Err(corrupt("its tenant has no data key (erased?)"));
        // A key taken as current a minute ago may have been shredded and
        // made anew since: the second try reads the tenant's key again.
        for _ in 0..2 {
            let Some(key) = keys.existing_key(&self.pool, tenant).await? else { break };
            opened = key.open(&sealed, purpose).map_err(|e| corrupt(&e.0));
            if opened.is_ok() {
                break;
            }
            keys.forget(tenant);
        }
        let opened: Value = serde_json::from_slice(&opened?).map_err(|e| corrupt(&e.to_string()))?;
        Ok(sealing::unveiled(kept, opened))
    }
}
