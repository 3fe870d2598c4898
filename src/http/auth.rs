//! Bearer-token authentication: HS256 JWTs whose claims name the caller.

use std::future::{Ready, ready};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

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

/// The audience of stream tickets. API tokens must carry no audience, so a
/// ticket (which may appear in a URL) is useless against the rest of the API.
const STREAM_AUDIENCE: &str = "errand-stream";

/// A stream ticket's claims: who, until when, for streams only.
#[derive(Debug, Serialize, Deserialize)]
struct TicketClaims {
    sub: String,
    tenant: String,
    exp: u64,
    aud: String,
}

/// Checks tokens and stream tickets. Only HS256 is accepted, so `alg: none`
/// and algorithm confusion are refused by the library before any claim is read.
#[derive(Clone)]
pub struct Authenticator {
    key: Arc<DecodingKey>,
    validation: Arc<Validation>,
    ticket_validation: Arc<Validation>,
    issuer: Arc<TokenIssuer>,
}

impl Authenticator {
    pub fn new(secret: &str) -> Result<Self, jsonwebtoken::errors::Error> {
        let mut validation = Validation::new(Algorithm::HS256);
        validation.set_required_spec_claims(&["exp", "sub"]);
        // `nbf`, when present, is honoured like `exp`, with no leeway either.
        validation.validate_nbf = true;
        validation.leeway = 0;
        let mut ticket_validation = validation.clone();
        ticket_validation.set_required_spec_claims(&["exp", "sub", "aud"]);
        ticket_validation.set_audience(&[STREAM_AUDIENCE]);
        let key = DecodingKey::from_secret(secret.as_bytes())?;
        Ok(Self {
            key: Arc::new(key),
            validation: Arc::new(validation),
            ticket_validation: Arc::new(ticket_validation),
            issuer: Arc::new(TokenIssuer::new(secret)?),
        })
    }

    /// A short-lived ticket that lets `caller` open a notification stream,
    /// for clients (browsers' EventSource) that cannot send headers.
    pub fn stream_ticket(&self, caller: &Caller, ttl: Duration) -> Result<String, AppError> {
        let exp =
            (SystemTime::now() + ttl).duration_since(UNIX_EPOCH).map_err(|e| AppError::Internal(e.to_string()))?;
        let claims = TicketClaims {
            sub: caller.user.to_string(),
            tenant: caller.tenant.to_string(),
            exp: exp.as_secs(),
            aud: STREAM_AUDIENCE.into(),
        };
        jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &self.issuer.key)
            .map_err(|e| AppError::Internal(e.to_string()))
    }

    /// The caller a stream ticket names, if it is valid and unexpired.
    pub fn caller_from_ticket(&self, ticket: &str) -> Result<Caller, AppError> {
        let invalid = || AppError::Unauthorized("the stream ticket is invalid or expired");
        let claims = jsonwebtoken::decode::<TicketClaims>(ticket, &self.key, &self.ticket_validation)
            .map_err(|_| invalid())?
            .claims;
        Ok(Caller {
            tenant: TenantId::parse(claims.tenant).map_err(|_| invalid())?,
            user: UserId::parse(claims.sub).map_err(|_| invalid())?,
            email: None,
        })
    }

    /// The caller an `Authorization: Bearer` API token names.
    pub fn caller(&self, req: &HttpRequest) -> Result<Caller, AppError> {
        let value = req
            .headers()
            .get(header::AUTHORIZATION)
            .ok_or(AppError::Unauthorized("an Authorization: Bearer token is required"))?;
        let token = value
            .to_str()
            .ok()
            .and_then(|v| v.strip_prefix("Bearer "))
            .ok_or(AppError::Unauthorized("the Authorization header must be `Bearer <token>`"))?;
        let data = jsonwebtoken::decode::<Claims>(token.trim(), &self.key, &self.validation)
            .map_err(|_| AppError::Unauthorized("the token is invalid or expired"))?;
        let claims = data.claims;
        Ok(Caller {
            tenant: TenantId::parse(claims.tenant)
                .map_err(|_| AppError::Unauthorized("the token's tenant claim is invalid"))?,
            user: UserId::parse(claims.sub).map_err(|_| AppError::Unauthorized("the token's sub claim is invalid"))?,
            email: match claims.email.filter(|e| !e.is_empty()) {
                Some(email) if email.contains('\0') => {
                    return Err(AppError::Unauthorized("the token's email claim is invalid"));
                }
                email => email,
            },
        })
    }
}

impl FromRequest for Caller {
    type Error = AppError;
    type Future = Ready<Result<Self, AppError>>;

    fn from_request(req: &HttpRequest, _payload: &mut Payload) -> Self::Future {
        let state = req.app_data::<web::Data<AppState>>();
        let caller = match state {
            Some(state) => state.auth.caller(req),
            None => Err(AppError::Internal("AppState missing".into())),
        };
        if let Ok(caller) = &caller {
            super::request_id::record_caller(caller);
        }
        ready(caller)
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

    /// A signed HS256 token with these claims.
    pub fn issue(&self, claims: &Claims) -> Result<String, jsonwebtoken::errors::Error> {
        jsonwebtoken::encode(&Header::new(Algorithm::HS256), claims, &self.key)
    }
}
