//! The signing keys of an identity provider (Auth0, Cognito, Keycloak, Clerk
//! or a host app's own issuer), from its JWKS document: fetched on first
//! use, kept by key id, and fetched again when a token names a key id not
//! seen yet (the provider rotated its keys), but never more often than
//! `auth.jwks_min_refresh`, failed fetches included, so tokens with made-up
//! key ids cannot make errand hammer the provider, up or down. Known keys are
//! fetched again every `auth.jwks_refresh`, so a key the provider removed
//! stops being trusted; while the provider is down, the keys last fetched
//! stay in use.
//!
//! The fetch follows no redirect and no proxy (the document is trusted for
//! where it was configured, not where it sends errand), and reads at most
//! [`MAX_DOCUMENT`] bytes.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey};

/// How long fetching the JWKS may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);

/// The largest JWKS document read: a provider's holds a few keys of a few
/// KiB at most.
const MAX_DOCUMENT: usize = 256 * 1024;

/// The algorithms an identity provider's key may sign with. Shared-secret
/// algorithms (HS*) are never taken from a JWKS: that is how a token signed
/// with the public key as an HMAC secret would get in.
const ASYMMETRIC: [Algorithm; 9] = [
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

/// The keys of the last good fetch, and when it was.
#[derive(Default)]
struct KeySet {
    keys: Keys,
    fetched: Option<Instant>,
}

/// The last fetch tried, good or not: no other starts before
/// `min_refresh` has passed since it.
#[derive(Default)]
struct LastFetch {
    at: Option<Instant>,
    /// Why it failed, answered to every request it stands for.
    error: Option<String>,
}

/// The provider's keys, by key id.
pub struct JwksKeys {
    url: String,
    http: reqwest::Client,
    min_refresh: Duration,
    refresh: Duration,
    /// Read by every request, without waiting; replaced whole by a fetch.
    keys: RwLock<Arc<KeySet>>,
    /// Held while fetching: one fetch at a time, and requests for a new key
    /// id wait for it rather than each fetching (requests for known keys
    /// never wait, even when their keys are due for a refresh).
    last_fetch: tokio::sync::Mutex<LastFetch>,
}

impl JwksKeys {
    pub fn new(url: String, min_refresh: Duration, refresh: Duration) -> Self {
        let http = reqwest::Client::builder()
            .timeout(FETCH_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .build()
            .unwrap_or_default();
        Self {
            url,
            http,
            min_refresh,
            refresh,
            keys: RwLock::default(),
            last_fetch: tokio::sync::Mutex::new(LastFetch::default()),
        }
    }

    /// The key a token's header names, fetching the JWKS again if the key
    /// id is new (or the keys are due) and the last fetch is old enough.
    pub async fn key_for(&self, header: &jsonwebtoken::Header) -> Result<SigningKey, KeyError> {
        if !ASYMMETRIC.contains(&header.alg) {
            return Err(KeyError::Algorithm);
        }
        let kid = header.kid.as_deref().ok_or(KeyError::NoKeyId)?;
        let signing = |key| SigningKey { key, algorithm: header.alg };
        let set = self.current();
        if let Some(key) = set.keys.get(kid) {
            if self.due(&set)
                && let Ok(mut last_fetch) = self.last_fetch.try_lock()
            {
                self.refetch(&mut last_fetch).await;
                // The key as the refresh left it: gone if the provider removed it.
                return self.current().keys.get(kid).cloned().map(signing).ok_or_else(|| unknown(kid));
            }
            return Ok(signing(key.clone()));
        }
        let mut last_fetch = self.last_fetch.lock().await;
        // Another request may have fetched while this one waited.
        if !self.current().keys.contains_key(kid) {
            self.refetch(&mut last_fetch).await;
        }
        match (self.current().keys.get(kid), &last_fetch.error) {
            (Some(key), _) => Ok(signing(key.clone())),
            // The provider is down: the key may well exist.
            (None, Some(error)) => Err(KeyError::Fetch(error.clone())),
            (None, None) => Err(unknown(kid)),
        }
    }

    fn current(&self) -> Arc<KeySet> {
        self.keys.read().unwrap_or_else(|poisoned| poisoned.into_inner()).clone()
    }

    /// Whether known keys are old enough to be fetched again.
    fn due(&self, set: &KeySet) -> bool {
        set.fetched.is_none_or(|at| at.elapsed() >= self.refresh)
    }

    /// Fetches the keys unless the last try (good or failed) was less than
    /// `min_refresh` ago; a failure keeps the keys fetched before.
    async fn refetch(&self, last_fetch: &mut LastFetch) {
        if last_fetch.at.is_some_and(|at| at.elapsed() < self.min_refresh) {
            return;
        }
        last_fetch.at = Some(Instant::now());
        match self.fetch().await {
            Ok(keys) => {
                let set = Arc::new(KeySet { keys, fetched: Some(Instant::now()) });
                *self.keys.write().unwrap_or_else(|poisoned| poisoned.into_inner()) = set;
                last_fetch.error = None;
            }
            Err(error) => {
                tracing::warn!(url = %self.url, %error, "the identity provider's signing keys could not be fetched");
                last_fetch.error = Some(error);
            }
        }
    }

    async fn fetch(&self) -> Result<Keys, String> {
        let mut response = self.http.get(&self.url).send().await.map_err(|e| e.to_string())?;
        let status = response.status();
        if !status.is_success() {
            // Redirects included: they are not followed.
            return Err(format!("the JWKS URL answered {status}"));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| e.to_string())? {
            if body.len() + chunk.len() > MAX_DOCUMENT {
                return Err(format!("the JWKS document is larger than {MAX_DOCUMENT} bytes"));
            }
            body.extend_from_slice(&chunk);
        }
        let set: JwkSet = serde_json::from_slice(&body).map_err(|e| format!("the JWKS document is not valid: {e}"))?;
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

fn unknown(kid: &str) -> KeyError {
    KeyError::UnknownKey(kid.to_owned())
}
