//! Minting errand's own HS256 tokens: users' API tokens, worker, operator
//! and service tokens (for `errand token`, the HTTP push handler, tests and
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

/// A backend service's token's claims (for `errand token --service`): it
/// acts for a tenant's user named in each request's `Errand-On-Behalf-Of`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ServiceClaims {
    /// The service's name: recorded with what it makes.
    pub sub: String,
    /// `service`.
    pub scope: String,
    /// The job types it may start; `None`: any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub types: Option<Vec<String>>,
    /// The tenants whose users it may act for; `None`: any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenants: Option<Vec<String>>,
    /// Expiry, seconds since the epoch.
    pub exp: u64,
}

/// Whose token `errand token` makes, with what it may do.
#[derive(Debug, Clone)]
pub enum TokenFor {
    /// A tenant's user; `scope` `tenant_admin` for one who manages the tenant.
    User { tenant: String, user: String, email: Option<String>, scope: Option<String> },
    /// An operator: `scope` `operator` or `operator:read`, maybe with `operator:sensitive`.
    Operator { name: String, scope: &'static str },
    /// An external worker of these job types.
    Worker { name: String, types: Vec<String> },
    /// A backend service acting for users (of these tenants, starting these types: `None` for any).
    Service { name: String, types: Option<Vec<String>>, tenants: Option<Vec<String>> },
}

impl TokenFor {
    /// The token, signed with `secret`, valid for `ttl` from now.
    pub fn mint(self, secret: &str, ttl: std::time::Duration) -> Result<String, jsonwebtoken::errors::Error> {
        let issuer = TokenIssuer::new(secret)?;
        let exp = (std::time::SystemTime::now() + ttl).duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        let exp = exp.as_secs();
        match self {
            Self::User { tenant, user, email, scope } => {
                issuer.issue(&UserClaims { sub: user, tenant, email, scope, exp })
            }
            Self::Operator { name, scope } => issuer.issue(&OperatorClaims { sub: name, scope: scope.into(), exp }),
            Self::Worker { name, types } => {
                issuer.issue(&WorkerClaims { sub: name, scope: "worker".into(), types, exp })
            }
            Self::Service { name, types, tenants } => {
                issuer.issue(&ServiceClaims { sub: name, scope: "service".into(), types, tenants, exp })
            }
        }
    }
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
