//! The signing keys of an identity provider (Auth0, Cognito, Keycloak, Clerk
//! or a host app's own issuer), from its JWKS document: fetched on first
//! use, kept by key id, and fetched again when a token names a key id not
//! seen yet (the provider rotated its keys), but never more often than
//! `auth.jwks_min_refresh`, so tokens with made-up key ids cannot make errand
//! hammer the provider.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey};

/// How long fetching the JWKS may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);

/// The algorithms an identity provider's key may sign with. Shared-secret
/// algorithms (HS*) are never taken from a JWKS: that is how a token signed
/// with the public key as an HMAC secret would get in.
pub const ASYMMETRIC: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// Why no key could be had for a token.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("the token names no key id")]
    NoKeyId,
    #[error("no key {0:?} in the identity provider's JWKS")]
    UnknownKey(String),
    #[error("the token's algorithm is not one an identity provider's key signs with")]
    Algorithm,
    #[error("the identity provider's JWKS could not be fetched: {0}")]
    Fetch(String),
}

/// A key and the one algorithm it verifies.
#[derive(Clone)]
pub struct SigningKey {
    pub key: Arc<DecodingKey>,
    pub algorithm: Algorithm,
}

type Keys = HashMap<String, Arc<DecodingKey>>;

/// The provider's keys, by key id.
pub struct JwksKeys {
    url: String,
    http: reqwest::Client,
    min_refresh: Duration,
    /// Read by every request, without waiting; replaced whole by a fetch.
    keys: RwLock<Arc<Keys>>,
    /// When the keys were last fetched. Held while fetching: one fetch at a
    /// time, and requests for a new key id wait for it rather than each
    /// fetching (requests for known keys never wait).
    last_fetch: tokio::sync::Mutex<Option<Instant>>,
}

impl JwksKeys {
    pub fn new(url: String, min_refresh: Duration) -> Self {
        let http = reqwest::Client::builder().timeout(FETCH_TIMEOUT).build().unwrap_or_default();
        Self { url, http, min_refresh, keys: RwLock::default(), last_fetch: tokio::sync::Mutex::new(None) }
    }

    /// The key a token's header names, fetching the JWKS again if the key
    /// id is new and the last fetch is old enough.
    pub async fn key_for(&self, header: &jsonwebtoken::Header) -> Result<SigningKey, KeyError> {
        if !ASYMMETRIC.contains(&header.alg) {
            return Err(KeyError::Algorithm);
        }
        let kid = header.kid.as_deref().ok_or(KeyError::NoKeyId)?;
        let signing = |key| SigningKey { key, algorithm: header.alg };
        if let Some(key) = self.known(kid) {
            return Ok(signing(key));
        }
        let mut last_fetch = self.last_fetch.lock().await;
        // Another request may have fetched while this one waited.
        if self.known(kid).is_none() && last_fetch.is_none_or(|at| at.elapsed() >= self.min_refresh) {
            let keys = self.fetch().await?;
            *self.keys.write().unwrap_or_else(|poisoned| poisoned.into_inner()) = Arc::new(keys);
            *last_fetch = Some(Instant::now());
        }
        self.known(kid).map(signing).ok_or_else(|| KeyError::UnknownKey(kid.to_owned()))
    }

    fn known(&self, kid: &str) -> Option<Arc<DecodingKey>> {
        self.keys.read().unwrap_or_else(|poisoned| poisoned.into_inner()).get(kid).cloned()
    }

    async fn fetch(&self) -> Result<Keys, KeyError> {
        let fetch_error = |e: reqwest::Error| KeyError::Fetch(e.to_string());
        let response = self.http.get(&self.url).send().await.map_err(fetch_error)?;
        let set: JwkSet = response.error_for_status().map_err(fetch_error)?.json().await.map_err(fetch_error)?;
        let mut keys = HashMap::new();
        for jwk in &set.keys {
            // Keys without an id, or of a kind this build cannot use, are skipped.
            if let (Some(kid), Ok(key)) = (&jwk.common.key_id, DecodingKey::from_jwk(jwk)) {
                keys.insert(kid.clone(), Arc::new(key));
            }
        }
        tracing::info!(url = %self.url, keys = keys.len(), "fetched the identity provider's signing keys");
        Ok(keys)
    }
}
