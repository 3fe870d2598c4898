//! Bearer-token authentication: JWTs whose claims name the caller, signed
//! either with errand's shared secret (HS256, for simple setups) or by an
//! identity provider whose keys errand reads from its JWKS (`auth.jwks_url`).
//! Stream tickets are errand's own HS256 tokens either way.
//!
//! This module checks tokens; `extractors` turns a request's token into
//! who holds it (a user, a tenant's admin, an operator, an external worker).

pub mod jwks;
pub mod services;
pub mod tickets;

mod extractors;

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::config::AuthSettings;
use crate::domain::tokens::TokenIssuer;
use crate::domain::{Caller, Locale, Operator, TenantId, UserId};
use crate::http::auth::jwks::JwksKeys;
use crate::http::auth::services::{ON_BEHALF_OF, ServiceGrant};
use crate::http::support::problem::AppError;

pub use self::extractors::{ActingOperator, ExternalWorker, TenantAdmin, spend_a_request};

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
    /// The ticket's id in the ledger of unused tickets (`store/tickets.rs`).
    jti: uuid::Uuid,
}

/// Who signs API tokens.
enum ApiKeys {
    /// errand's shared secret (`Authenticator::key`), HS256 only.
    Shared,
    /// An identity provider, asymmetric algorithms only: a token's own
    /// algorithm must be the one its key signs with.
    Jwks { keys: JwksKeys },
}

/// Which claims of an API token name the caller.
struct ClaimNames {
    tenant: String,
    user: String,
    email: String,
    locale: String,
}

/// Checks tokens and stream tickets. Each kind of key accepts only its own
/// algorithms (HS256 for the secret; RS/PS/ES/EdDSA for a JWKS), so
/// `alg: none` and algorithm confusion are refused before any claim is read.
#[derive(Clone)]
pub struct Authenticator {
    api_keys: Arc<ApiKeys>,
    /// For API tokens: `exp` required, `nbf` honoured (no leeway either),
    /// and `iss` / `aud` required and checked when configured.
    validation: Arc<Validation>,
    /// The same for operators' tokens, with `[auth.operators]`' issuer and
    /// audience where set (an identity provider's operators apart from its
    /// end users, so no end user's token can be an operator's).
    operator_validation: Arc<Validation>,
    /// The same for backend services' tokens, with `[auth.services]`'.
    service_validation: Arc<Validation>,
    claim_names: Arc<ClaimNames>,
    key: Arc<DecodingKey>,
    ticket_validation: Arc<Validation>,
    issuer: Arc<TokenIssuer>,
    /// The language of people whose token and browser name none errand ships.
    default_locale: Locale,
}

impl Authenticator {
    pub fn new(settings: &AuthSettings, default_locale: Locale) -> Result<Self, jsonwebtoken::errors::Error> {
        let secret = secrecy::ExposeSecret::expose_secret(&settings.jwt_secret);
        let mut base = Validation::new(Algorithm::HS256);
        base.set_required_spec_claims(&["exp"]);
        base.validate_nbf = true;
        base.leeway = 0;
        let mut ticket_validation = base.clone();
        ticket_validation.set_required_spec_claims(&["exp", "sub", "aud"]);
        ticket_validation.set_audience(&[STREAM_AUDIENCE]);
        let validation = api_validation(&base, settings.issuer.as_deref(), settings.audience.as_deref());
        // Operators from an issuer or audience of their own, where one is
        // configured; otherwise from the same as users.
        let apart = |source: &crate::config::TokenSourceSettings| match (&source.issuer, &source.audience) {
            (None, None) => validation.clone(),
            (issuer, audience) => api_validation(&base, issuer.as_deref(), audience.as_deref()),
        };
        let operator_validation = apart(&settings.operators);
        let service_validation = apart(&settings.services);
        let key = DecodingKey::from_secret(secret.as_bytes())?;
        let api_keys = match &settings.jwks_url {
            Some(url) => ApiKeys::Jwks {
                keys: JwksKeys::new(url.as_str().to_owned(), settings.jwks_min_refresh, settings.jwks_refresh),
            },
            None => ApiKeys::Shared,
        };
        let claim_names = ClaimNames {
            tenant: settings.tenant_claim.clone(),
            user: settings.user_claim.clone(),
            email: settings.email_claim.clone(),
            locale: settings.locale_claim.clone(),
        };
        Ok(Self {
            api_keys: Arc::new(api_keys),
            validation: Arc::new(validation),
            operator_validation: Arc::new(operator_validation),
            service_validation: Arc::new(service_validation),
            claim_names: Arc::new(claim_names),
            key: Arc::new(key),
            ticket_validation: Arc::new(ticket_validation),
            issuer: Arc::new(TokenIssuer::new(secret)?),
            default_locale,
        })
    }

    /// The language of people who name none errand ships.
    pub fn default_locale(&self) -> Locale {
        self.default_locale
    }

    /// A short-lived ticket that lets `caller` open a notification stream,
    /// for clients (browsers' EventSource) that cannot send headers.
    pub fn stream_ticket(&self, caller: &Caller, ttl: Duration, id: uuid::Uuid) -> Result<String, AppError> {
        let exp =
            (SystemTime::now() + ttl).duration_since(UNIX_EPOCH).map_err(|e| AppError::Internal(e.to_string()))?;
        let claims = TicketClaims {
            sub: caller.user.to_string(),
            tenant: caller.tenant.to_string(),
            exp: exp.as_secs(),
            aud: STREAM_AUDIENCE.into(),
            jti: id,
        };
        self.issuer.issue(&claims).map_err(|e| AppError::Internal(e.to_string()))
    }

    /// The caller a stream ticket names, if it is valid and unexpired, and the ticket's id.
    pub fn caller_from_ticket(&self, ticket: &str) -> Result<(Caller, uuid::Uuid), AppError> {
        let invalid = || AppError::Unauthorized("the stream ticket is invalid or expired");
        let claims = jsonwebtoken::decode::<TicketClaims>(ticket, &self.key, &self.ticket_validation)
            .map_err(|_| invalid())?
            .claims;
        let tenant = TenantId::parse(claims.tenant).map_err(|_| invalid())?;
        let caller = Caller::named(tenant, UserId::parse(claims.sub).map_err(|_| invalid())?);
        Ok((caller, claims.jti))
    }

    /// The claims of a valid `Authorization: Bearer` API token, checked as
    /// `validation` says (users' and workers' tokens, or operators').
    async fn claims(
        &self,
        authorization: Option<&str>,
        validation: &Validation,
    ) -> Result<Map<String, Value>, AppError> {
        let value = authorization.ok_or(AppError::Unauthorized("an Authorization: Bearer token is required"))?;
        let token = value
            .strip_prefix("Bearer ")
            .ok_or(AppError::Unauthorized("the Authorization header must be `Bearer <token>`"))?
            .trim();
        let invalid = || AppError::Unauthorized("the token is invalid or expired");
        let claims = match &*self.api_keys {
            ApiKeys::Shared => jsonwebtoken::decode::<Map<String, Value>>(token, &self.key, validation),
            ApiKeys::Jwks { keys } => {
                let header = jsonwebtoken::decode_header(token).map_err(|_| invalid())?;
                let signing = keys.key_for(&header).await.map_err(|error| match error {
                    // The provider is down: the token may well be good, so try again later.
                    crate::http::auth::jwks::KeyError::Fetch(cause) => AppError::Unavailable(cause),
                    refused => {
                        tracing::info!(error = %refused, "token refused");
                        invalid()
                    }
                })?;
                let mut validation = validation.clone();
                validation.algorithms = vec![signing.algorithm];
                jsonwebtoken::decode::<Map<String, Value>>(token, &signing.key, &validation)
            }
        }
        .map_err(|_| invalid())?;
        Ok(claims.claims)
    }

    /// Who a user route's `Authorization: Bearer` API token names: a
    /// tenant's user (a token of another kind, an operator's, gets 403), or
    /// the person `on_behalf_of` names for a service token; their language
    /// from the token's locale claim, else the request's `accept_language`,
    /// else the default.
    async fn user(
        &self,
        authorization: Option<&str>,
        accept_language: Option<&str>,
        on_behalf_of: Option<&str>,
    ) -> Result<Holder, AppError> {
        let browser_or_default =
            || accept_language.and_then(Locale::from_accept_language).unwrap_or(self.default_locale);
        if let Some(person) = on_behalf_of {
            return self.service_for(authorization, person, browser_or_default()).await;
        }
        let claims = self.claims(authorization, &self.validation).await?;
        match self.special(&claims)? {
            Some(TokenKind::Service) => {
                return Err(AppError::Forbidden(format!(
                    "a service token acts for a user it names in {ON_BEHALF_OF}: tenant/user"
                )));
            }
            Some(kind) => {
                return Err(AppError::Forbidden(format!("{kind} tokens cannot use the routes of a tenant's users")));
            }
            None => {}
        }
        let names = &self.claim_names;
        let text = |name: &str| claims.get(name).and_then(Value::as_str).map(str::to_owned);
        let service = ServiceGrant::of_act_claim(&claims)?;
        let caller = Caller {
            tenant: text(&names.tenant)
                .and_then(|t| TenantId::parse(t).ok())
                .ok_or(AppError::Unauthorized("the token's tenant claim is missing or invalid"))?,
            user: text(&names.user)
                .and_then(|u| UserId::parse(u).ok())
                .ok_or(AppError::Unauthorized("the token's user claim is missing or invalid"))?,
            email: match text(&names.email).filter(|e| !e.is_empty()) {
                Some(email) if email.contains('\0') => {
                    return Err(AppError::Unauthorized("the token's email claim is invalid"));
                }
                email => email,
            },
            // A zone chrono-tz does not know is no zone: ignored, not refused.
            zoneinfo: text("zoneinfo").filter(|zone| zone.parse::<chrono_tz::Tz>().is_ok()),
            // A tag errand has no catalogue for (or no tag) is no choice: the browser's is next.
            locale: text(&names.locale)
                .and_then(|tag| Locale::negotiate([tag.as_str()]))
                .unwrap_or_else(browser_or_default),
            acted_by: service.as_ref().map(|grant| grant.name.clone()),
        };
        let tenant_admin = service.is_none() && scopes(&claims).any(|scope| scope == TENANT_ADMIN);
        Ok(Holder { caller, tenant_admin, service })
    }

    /// The person `on_behalf_of` (`tenant/user`) names, for the service whose
    /// token `authorization` is, in `locale` (their own token is not here).
    async fn service_for(
        &self,
        authorization: Option<&str>,
        on_behalf_of: &str,
        locale: Locale,
    ) -> Result<Holder, AppError> {
        let claims = self.claims(authorization, &self.service_validation).await?;
        if self.special(&claims)? != Some(TokenKind::Service) {
            return Err(AppError::Forbidden(format!("{ON_BEHALF_OF} is for service tokens (scope service)")));
        }
        let grant = ServiceGrant::of_token(&claims, &self.claim_names.user)?;
        let (tenant, user) = services::person(on_behalf_of)?;
        grant.admit_tenant(&tenant)?;
        // Their email: the address errand last saw in their own token, filled
        // in by `extractors::user` once the route admits the service.
        let caller = Caller { tenant, user, email: None, zoneinfo: None, locale, acted_by: Some(grant.name.clone()) };
        Ok(Holder { caller, tenant_admin: false, service: Some(grant) })
    }

    /// The external worker an `Authorization: Bearer` token names: its
    /// `scope` must hold `worker`, and its `types` claim lists the job types
    /// it may take; any other valid token gets 403.
    pub async fn worker(&self, authorization: Option<&str>) -> Result<ExternalWorker, AppError> {
        let claims = self.claims(authorization, &self.validation).await?;
        if self.special(&claims)? != Some(TokenKind::Worker) {
            return Err(AppError::Forbidden(
                "this route is for external workers (a token whose scope is worker)".into(),
            ));
        }
        let name = claims.get(&self.claim_names.user).and_then(Value::as_str).and_then(|u| UserId::parse(u).ok());
        let name = name.ok_or(AppError::Unauthorized("the token's user claim is missing or invalid"))?;
        let types = claims
            .get("types")
            .and_then(Value::as_array)
            .map(|types| types.iter().filter_map(Value::as_str).map(str::to_owned).collect::<Vec<_>>());
        Ok(ExternalWorker {
            name,
            types: types
                .filter(|t| !t.is_empty())
                .ok_or(AppError::Unauthorized("a worker token lists its job types in `types`"))?,
        })
    }

    /// The operator an `Authorization: Bearer` token names: its `scope`
    /// must hold `operator`; any other valid token gets 403.
    pub async fn operator(&self, authorization: Option<&str>) -> Result<Operator, AppError> {
        let claims = self.claims(authorization, &self.operator_validation).await?;
        if self.special(&claims)? != Some(TokenKind::Operator) {
            return Err(AppError::Forbidden("this route is for operators (a token whose scope is operator)".into()));
        }
        let name = claims.get(&self.claim_names.user).and_then(Value::as_str).and_then(|u| UserId::parse(u).ok());
        let name = name.ok_or(AppError::Unauthorized("the token's user claim is missing or invalid"))?;
        let has = |wanted: &str| scopes(&claims).any(|s| s == wanted);
        Ok(Operator { name, may_act: has(OPERATOR), sees_sensitive: has(OPERATOR_SENSITIVE) })
    }
}

impl Authenticator {
    /// Which kind of token `claims` are, by their scope. Operator and worker
    /// tokens name no tenant (`errand token` makes them so): a token that
    /// names one and also claims such a scope is a tenant user's token whose
    /// identity provider let its client ask for more, and is refused.
    fn special(&self, claims: &Map<String, Value>) -> Result<Option<TokenKind>, AppError> {
        let kind = TokenKind::special(claims);
        match kind {
            Some(kind) if claims.contains_key(&self.claim_names.tenant) => Err(AppError::Forbidden(format!(
                "a token that names a tenant ({}) cannot carry the {kind} scope",
                self.claim_names.tenant
            ))),
            kind => Ok(kind),
        }
    }
}

/// Who a user route's token names.
struct Holder {
    caller: Caller,
    /// The token's `scope` holds `tenant_admin` (never with a service acting).
    tenant_admin: bool,
    /// The service acting for the caller, with its token's limits.
    service: Option<ServiceGrant>,
}

/// API tokens' checks: `base`'s, with `iss` and `aud` required to be present
/// and equal to `issuer` and `audience` when those are configured.
/// (jsonwebtoken checks a configured one only where the token carries it.)
fn api_validation(base: &Validation, issuer: Option<&str>, audience: Option<&str>) -> Validation {
    let mut validation = base.clone();
    let mut required = vec!["exp"];
    if let Some(issuer) = issuer {
        validation.set_issuer(&[issuer]);
        required.push("iss");
    }
    // Without a configured audience, a token carrying one is refused:
    // that keeps stream tickets (audience errand-stream) off the API.
    if let Some(audience) = audience {
        validation.set_audience(&[audience]);
        required.push("aud");
    }
    validation.set_required_spec_claims(&required);
    validation
}

/// A token's `scope` claim: a space-separated list, as OAuth writes it.
fn scopes(claims: &Map<String, Value>) -> impl Iterator<Item = &str> {
    claims.get("scope").and_then(Value::as_str).unwrap_or_default().split_ascii_whitespace()
}

/// The scope of a backend service acting for users (`services`).
const SERVICE: &str = "service";
/// The scope of a user who may also manage their tenant's webhooks.
const TENANT_ADMIN: &str = "tenant_admin";
/// The scope of an operator, who may look and act.
const OPERATOR: &str = "operator";
/// The scope of an operator who may only look: every action route refuses it.
const OPERATOR_READ: &str = "operator:read";
/// Beside either: the operator also sees what job types redact.
const OPERATOR_SENSITIVE: &str = "operator:sensitive";

/// Tokens that are not a tenant's user's, by their `scope` claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TokenKind {
    Operator,
    Worker,
    Service,
}

impl TokenKind {
    fn special(claims: &Map<String, Value>) -> Option<Self> {
        let has = |wanted: &str| scopes(claims).any(|s| s == wanted);
        if has(OPERATOR) || has(OPERATOR_READ) {
            Some(Self::Operator)
        } else if has("worker") {
            Some(Self::Worker)
        } else if has(SERVICE) {
            Some(Self::Service)
        } else {
            None
        }
    }
}

impl std::fmt::Display for TokenKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Operator => "operator",
            Self::Worker => "worker",
            Self::Service => "service",
        })
    }
}
