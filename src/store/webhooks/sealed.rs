//! Secrets kept sealed (`domain::sealing`): each tenant's data key, kept
//! wrapped in `tenant_keys` and made the first time the tenant has a secret
//! to seal; webhook endpoints' secrets sealed under it (`sealed:` and the
//! base64 of the seal, in `webhook_endpoints.secret`). A secret written in
//! clear (before errand sealed them, or by hand) still opens as it is, and
//! `errand keys rotate` seals it. Opened data keys are kept in memory by
//! their wrapped form, which the database holds: a key shredded and made
//! anew, or rewrapped, is a new entry, never an old key taken for it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use deadpool_postgres::{GenericClient, Pool};

use crate::domain::sealing::{DataKey, Keyring, Purpose};
use crate::store::StoreError;

/// How a sealed secret's text begins.
const SEALED: &str = "sealed:";

const KEY_OF: &str = "SELECT version, wrapped FROM tenant_keys WHERE tenant_id = $1";

/// A tenant's new data key, unless another process made one first.
const MAKE_KEY: &str =
    "INSERT INTO tenant_keys (tenant_id, version, wrapped) VALUES ($1, $2, $3) ON CONFLICT (tenant_id) DO NOTHING";

/// Up to `$2` data keys not wrapped under `$1` (the current key).
const NOT_CURRENT: &str = "SELECT tenant_id, version, wrapped FROM tenant_keys WHERE version <> $1 LIMIT $2";

const REWRAP: &str = "UPDATE tenant_keys SET version = $3, wrapped = $4, rewrapped_at = now()
                      WHERE tenant_id = $1 AND version = $2";

/// Up to `$1` endpoints whose secret is still in clear.
const IN_CLEAR: &str = "SELECT id, tenant_id, secret FROM webhook_endpoints WHERE secret NOT LIKE 'sealed:%' LIMIT $1";

const SEAL_ONE: &str = "UPDATE webhook_endpoints SET secret = $3 WHERE id = $1 AND secret = $2";

/// A kept secret (`stored`) of `tenant`'s, opened with `keys` and its data
/// key (`version`, `wrapped`; `None` if the tenant has none). One kept in
/// clear is as it is, with or without keys.
pub(in crate::store) fn open_secret(
    keys: Option<&TenantKeys>,
    tenant: &str,
    key: Option<(&str, &[u8])>,
    stored: &str,
) -> Result<String, StoreError> {
    let Some(sealed) = stored.strip_prefix(SEALED) else { return Ok(stored.to_owned()) };
    let corrupt = |why: &str| StoreError::Corrupt(format!("a webhook secret of tenant {tenant:?}: {why}"));
    let keys = keys.ok_or_else(|| corrupt("sealed, and this store has no keyring"))?;
    let (version, wrapped) = key.ok_or_else(|| corrupt("its tenant has no data key (erased?)"))?;
    let sealed = STANDARD.decode(sealed).map_err(|e| corrupt(&e.to_string()))?;
    let opened = keys.open_key(tenant, version, wrapped)?.open(&sealed, Purpose::WebhookSecret);
    String::from_utf8(opened.map_err(|e| corrupt(&e.to_string()))?).map_err(|e| corrupt(&e.to_string()))
}

/// Rows rewrapped or sealed per statement.
const STEP: i64 = 500;

/// Which data key: its tenant, and its wrapped form as the database holds it.
type WrappedKey = (String, Vec<u8>);

/// The keyring, and the data keys opened so far.
pub struct TenantKeys {
    ring: Keyring,
    opened: Mutex<HashMap<WrappedKey, Arc<DataKey>>>,
}

impl std::fmt::Debug for TenantKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TenantKeys").field("ring", &self.ring).finish_non_exhaustive()
    }
}

impl TenantKeys {
    pub fn new(ring: Keyring) -> Self {
        Self { ring, opened: Mutex::default() }
    }

    /// `tenant`'s data key wrapped under `version` as `wrapped`, opened.
    fn open_key(&self, tenant: &str, version: &str, wrapped: &[u8]) -> Result<Arc<DataKey>, StoreError> {
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
    async fn key_for(&self, client: &impl GenericClient, tenant: &str) -> Result<Arc<DataKey>, StoreError> {
        let read = client.prepare_cached(KEY_OF).await?;
        if let Some(row) = client.query_opt(&read, &[&tenant]).await? {
            return self.open_key(tenant, row.try_get("version")?, row.try_get("wrapped")?);
        }
        let made = self.ring.new_data_key(tenant);
        client.execute(&client.prepare_cached(MAKE_KEY).await?, &[&tenant, &made.version, &made.wrapped]).await?;
        // Another process's, if it made one first.
        let row = client.query_one(&read, &[&tenant]).await?;
        self.open_key(tenant, row.try_get("version")?, row.try_get("wrapped")?)
    }

    /// `secret` of `tenant`'s, sealed, as `webhook_endpoints.secret` keeps it.
    pub(in crate::store) async fn seal_secret(
        &self,
        client: &impl GenericClient,
        tenant: &str,
        secret: &str,
    ) -> Result<String, StoreError> {
        let key = self.key_for(client, tenant).await?;
        Ok(format!("{SEALED}{}", STANDARD.encode(key.seal(secret.as_bytes(), Purpose::WebhookSecret))))
    }

    /// Rewraps every data key under the current key-encryption key, and
    /// seals every webhook secret still in clear: `errand keys rotate`.
    /// Answers (data keys rewrapped, secrets sealed).
    pub async fn rotate(&self, pool: &Pool) -> Result<(u64, u64), StoreError> {
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
                break;
            }
        }
        let mut sealed = 0;
        loop {
            let rows = client.query(&client.prepare_cached(IN_CLEAR).await?, &[&STEP]).await?;
            for row in &rows {
                let (id, tenant, secret): (uuid::Uuid, String, String) =
                    (row.try_get("id")?, row.try_get("tenant_id")?, row.try_get("secret")?);
                let kept = self.seal_secret(&client, &tenant, &secret).await?;
                sealed += client.execute(&client.prepare_cached(SEAL_ONE).await?, &[&id, &secret, &kept]).await?;
            }
            if (rows.len() as i64) < STEP {
                break;
            }
        }
        Ok((rewrapped, sealed))
    }
}
