//! Bearer-token authentication: HS256 JWTs whose claims name the caller.

use std::future::{Ready, ready};
use std::sync::Arc;

use actix_web::{FromRequest, HttpRequest, dev::Payload, http::header, web};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};

use super::AppState;
use crate::domain::{Caller, TenantId, UserId};
use crate::error::AppError;

/// The claims errand reads from a token.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Claims {
    /// The user id.
    pub sub: String,
    /// The tenant id.
    pub tenant: String,
    /// Where completion emails go.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    /// Expiry, seconds since the epoch. Required.
    pub exp: u64,
}

/// Checks tokens. Only HS256 is accepted, so `alg: none` and algorithm
/// confusion are refused by the library before any claim is read.
#[derive(Clone)]
pub struct Authenticator {
    key: Arc<DecodingKey>,
    validation: Arc<Validation>,
}

impl Authenticator {
    pub fn new(secret: &str) -> Result<Self, jsonwebtoken::errors::Error> {
        let mut validation = Validation::new(Algorithm::HS256);
        validation.set_required_spec_claims(&["exp", "sub"]);
        validation.leeway = 0;
        let key = DecodingKey::from_secret(secret.as_bytes())?;
        Ok(Self {
            key: Arc::new(key),
            validation: Arc::new(validation),
        })
    }

    fn caller(&self, req: &HttpRequest) -> Result<Caller, AppError> {
        let value = req
            .headers()
            .get(header::AUTHORIZATION)
            .ok_or(AppError::Unauthorized(
                "an Authorization: Bearer token is required",
            ))?;
        let token = value
            .to_str()
            .ok()
            .and_then(|v| v.strip_prefix("Bearer "))
            .ok_or(AppError::Unauthorized(
                "the Authorization header must be `Bearer <token>`",
            ))?;
        let data = jsonwebtoken::decode::<Claims>(token.trim(), &self.key, &self.validation)
            .map_err(|_| AppError::Unauthorized("the token is invalid or expired"))?;
        let claims = data.claims;
        Ok(Caller {
            tenant: TenantId::parse(claims.tenant)
                .map_err(|_| AppError::Unauthorized("the token's tenant claim is invalid"))?,
            user: UserId::parse(claims.sub)
                .map_err(|_| AppError::Unauthorized("the token's sub claim is invalid"))?,
            email: claims.email.filter(|e| !e.is_empty()),
        })
    }
}

impl FromRequest for Caller {
    type Error = AppError;
    type Future = Ready<Result<Self, AppError>>;

    fn from_request(req: &HttpRequest, _payload: &mut Payload) -> Self::Future {
        let state = req.app_data::<web::Data<AppState>>();
        ready(match state {
            Some(state) => state.auth.caller(req),
            None => Err(AppError::Internal("AppState missing".into())),
        })
    }
}

/// Mints tokens, for `errand token`, for tests and benchmarks.
pub struct TokenIssuer {
    key: EncodingKey,
}

impl TokenIssuer {
    pub fn new(secret: &str) -> Result<Self, jsonwebtoken::errors::Error> {
        Ok(Self {
            key: EncodingKey::from_secret(secret.as_bytes())?,
        })
    }

    /// A signed HS256 token with these claims.
    pub fn issue(&self, claims: &Claims) -> Result<String, jsonwebtoken::errors::Error> {
        jsonwebtoken::encode(&Header::new(Algorithm::HS256), claims, &self.key)
    }
}
