//! Webhook endpoints' secrets kept sealed under their tenant's data key
//! (`pool/keys.rs`): `sealed:` and the base64 of the seal, in
//! `webhook_endpoints.secret`. A secret written in clear (before errand
//! sealed them, or by hand) still opens as it is, and `errand keys rotate`
//! seals it.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use deadpool_postgres::Pool;

use crate::domain::sealing::Purpose;
use crate::store::StoreError;
use crate::store::pool::keys::TenantKeys;

/// How a sealed secret's text begins.
const SEALED: &str = "sealed:";

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

/// Secrets sealed per statement.
const STEP: i64 = 500;

/// `secret` of `tenant`'s, sealed with `keys`, as `webhook_endpoints.secret` keeps it.
pub(in crate::store) async fn seal_secret(
    keys: &TenantKeys,
    pool: &Pool,
    tenant: &str,
    secret: &str,
) -> Result<String, StoreError> {
    let key = keys.key_for(pool, tenant).await?;
    Ok(format!("{SEALED}{}", STANDARD.encode(key.seal(secret.as_bytes(), Purpose::WebhookSecret))))
}

/// Seals every webhook secret still in clear (`errand keys rotate`); answers how many.
pub(in crate::store) async fn seal_secrets_in_clear(keys: &TenantKeys, pool: &Pool) -> Result<u64, StoreError> {
    let client = pool.get().await?;
    let mut sealed = 0;
    loop {
        let rows = client.query(&client.prepare_cached(IN_CLEAR).await?, &[&STEP]).await?;
        for row in &rows {
            let (id, tenant, secret): (uuid::Uuid, String, String) =
                (row.try_get("id")?, row.try_get("tenant_id")?, row.try_get("secret")?);
            let kept = seal_secret(keys, pool, &tenant, &secret).await?;
            sealed += client.execute(&client.prepare_cached(SEAL_ONE).await?, &[&id, &secret, &kept]).await?;
        }
        if (rows.len() as i64) < STEP {
            return Ok(sealed);
        }
    }
}
