//! Minting errand's own HS256 tokens: users' API tokens, worker and
//! operator tokens (for `errand token`, the HTTP push handler, tests and
//! benchmarks), and the claims each kind carries. Checking tokens is the
//! HTTP layer's (`http/auth.rs`), which reads these same claims.

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde::{Deserialize, Serialize};

/// A user's API token's claims, as errand mints them (an identity
/// provider's tokens name them by `auth.*_claim`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct UserClaims {
    /// The user id.
    pub sub: String,
    /// The tenant id.
    pub tenant: String,
    /// Where completion emails go.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    /// Space-separated: `tenant_admin` lets the user manage their tenant's
    /// webhooks. None for an ordinary user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// Expiry, seconds since the epoch. Required.
    pub exp: u64,
}

/// A worker token's claims (for `errand token --worker` and tests).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WorkerClaims {
    /// The worker's name.
    pub sub: String,
    /// `worker`.
    pub scope: String,
    /// The job types it may take.
    pub types: Vec<String>,
    /// Expiry, seconds since the epoch.
    pub exp: u64,
}

/// An operator token's claims (for `errand token --operator` and tests).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OperatorClaims {
    /// Who: recorded with every action.
    pub sub: String,
    /// `operator`, or `operator:read` for one who may only look.
    pub scope: String,
    /// Expiry, seconds since the epoch.
    pub exp: u64,
}

/// Mints tokens, for `errand token`, for tests and benchmarks.
pub struct TokenIssuer {
    key: EncodingKey,
}

impl TokenIssuer {
    pub fn new(secret: &str) -> Result<Self, jsonwebtoken::errors::Error> {
        Ok(Self { key: EncodingKey::from_secret(secret.as_bytes())? })
    }

    /// A signed HS256 token with these claims (a user's, a worker's or an operator's, or a stream ticket's).
    pub fn issue(&self, claims: &impl Serialize) -> Result<String, jsonwebtoken::errors::Error> {
        jsonwebtoken::encode(&Header::new(Algorithm::HS256), claims, &self.key)
    }
}
