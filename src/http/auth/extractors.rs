//! Who holds a request's token, as actix-web extractors: each reads the
//! `Authorization` header, has the app's [`Authenticator`] check it, and
//! refuses with the problem the route's callers should see.

use actix_web::{FromRequest, HttpMessage, HttpRequest, dev::Payload, http::header, web};
use futures_util::future::LocalBoxFuture;

use super::services::ON_BEHALF_OF;
use super::{Authenticator, Holder, TENANT_ADMIN};
use crate::domain::{Caller, Operator, UserId};
use crate::http::AppState;
use crate::http::support::problem::AppError;
use crate::http::support::rate_limit::Spend;

/// What every extractor of a token's holder does: hands the app's
/// Authenticator and the request's `Authorization` header to `check`.
fn authenticated<T, F, Fut>(req: &HttpRequest, check: F) -> LocalBoxFuture<'static, Result<T, AppError>>
where
    T: 'static,
    F: FnOnce(Authenticator, Option<String>) -> Fut + 'static,
    Fut: std::future::Future<Output = Result<T, AppError>> + 'static,
{
    let auth = req.app_data::<web::Data<AppState>>().map(|state| state.auth.clone());
    let header = authorization(req);
    Box::pin(async move {
        let auth = auth.ok_or_else(|| AppError::Internal("AppState missing".into()))?;
        check(auth, header).await
    })
}

/// The request's `Authorization` header ("" when it is not text, which the
/// check then refuses like any malformed header).
fn authorization(req: &HttpRequest) -> Option<String> {
    req.headers().get(header::AUTHORIZATION).map(|value| value.to_str().map(str::to_owned).unwrap_or_default())
}

impl FromRequest for Caller {
    type Error = AppError;
    type Future = LocalBoxFuture<'static, Result<Self, AppError>>;

    /// Authenticates the caller, then spends a request of their rate limits
    /// (leaving its standing on the request for the `RateLimit` headers).
    fn from_request(req: &HttpRequest, _payload: &mut Payload) -> Self::Future {
        let request = req.clone();
        authenticated(req, move |auth, header| async move { Ok(user(&auth, header, &request).await?.caller) })
    }
}

/// A tenant's user whose token's `scope` holds `tenant_admin`: they may
/// manage the tenant's webhooks. Any other user gets 403.
#[derive(Debug, Clone)]
pub struct TenantAdmin(pub Caller);

impl FromRequest for TenantAdmin {
    type Error = AppError;
    type Future = LocalBoxFuture<'static, Result<Self, AppError>>;

    fn from_request(req: &HttpRequest, _payload: &mut Payload) -> Self::Future {
        let request = req.clone();
        authenticated(req, move |auth, header| async move {
            match user(&auth, header, &request).await? {
                Holder { caller, tenant_admin: true, .. } => Ok(Self(caller)),
                _ => Err(AppError::Forbidden(format!(
                    "this route is for a tenant's admins (a user token whose scope includes {TENANT_ADMIN})"
                ))),
            }
        })
    }
}

/// A tenant's user, authenticated, with a request of their rate limits spent
/// (its standing left on the request for the `RateLimit` headers). A service
/// acting for them must be on one of its routes; the person's email (for
/// what a `POST` starts) is the one errand last saw in their own token, and
/// the request is no sighting of them (they did not sign in).
async fn user(auth: &Authenticator, header: Option<String>, request: &HttpRequest) -> Result<Holder, AppError> {
    let text = |name| request.headers().get(name).map(|value| value.to_str().unwrap_or_default());
    let on_behalf_of = text(ON_BEHALF_OF);
    let mut holder = auth.user(header.as_deref(), text(header::ACCEPT_LANGUAGE.as_str()), on_behalf_of).await?;
    if let Some(service) = &holder.service {
        service.admit_route(request)?;
    }
    crate::http::support::request_id::record_caller(&holder.caller);
    if let Some(state) = request.app_data::<web::Data<AppState>>() {
        spend_a_request(state, &holder.caller, request)?;
        match holder.service {
            None => state.sightings.saw(&holder.caller),
            // Only what starts jobs needs it (their emails): reads skip the lookup.
            Some(_) if holder.caller.email.is_none() && request.method() == actix_web::http::Method::POST => {
                let caller = &holder.caller;
                holder.caller.email = state.store.people().email_of(&caller.tenant, &caller.user).await?;
            }
            Some(_) => {}
        }
    }
    Ok(holder)
}

/// Spends a request of `caller`'s rate limits, leaving its standing on the
/// request for the `RateLimit` headers (429 when none is left, with how long
/// its answer waits, if it does: see `rate_limit`).
pub fn spend_a_request(state: &AppState, caller: &Caller, request: &HttpRequest) -> Result<(), AppError> {
    match state.rate_limits.spend(caller, Spend::of(request)) {
        Ok(standing) => {
            if let Some(standing) = standing {
                request.extensions_mut().insert(standing);
            }
            Ok(())
        }
        Err(refused) => {
            if let Some(hold) = state.rate_limits.hold_for(&refused) {
                request.extensions_mut().insert(hold);
            }
            Err(refused.into())
        }
    }
}

impl FromRequest for Operator {
    type Error = AppError;
    type Future = LocalBoxFuture<'static, Result<Self, AppError>>;

    fn from_request(req: &HttpRequest, _payload: &mut Payload) -> Self::Future {
        authenticated(req, |auth, header| async move { auth.operator(header.as_deref()).await })
    }
}

/// An operator who may act (retry, cancel, set quotas): an `operator`
/// token. A read-only operator's (`operator:read`) gets 403 on every route
/// that takes this, before anything is read or written.
#[derive(Debug, Clone)]
pub struct ActingOperator(pub Operator);

impl FromRequest for ActingOperator {
    type Error = AppError;
    type Future = LocalBoxFuture<'static, Result<Self, AppError>>;

    fn from_request(req: &HttpRequest, _payload: &mut Payload) -> Self::Future {
        authenticated(req, |auth, header| async move {
            let operator = auth.operator(header.as_deref()).await?;
            if !operator.may_act {
                return Err(AppError::Forbidden(
                    "this operator token may only read (scope operator:read): it cannot act".into(),
                ));
            }
            Ok(ActingOperator(operator))
        })
    }
}

/// An external worker, as its token names it.
#[derive(Debug, Clone)]
pub struct ExternalWorker {
    /// The token's `sub`.
    pub name: UserId,
    /// The job types it may take.
    pub types: Vec<String>,
}

impl FromRequest for ExternalWorker {
    type Error = AppError;
    type Future = LocalBoxFuture<'static, Result<Self, AppError>>;

    fn from_request(req: &HttpRequest, _payload: &mut Payload) -> Self::Future {
        authenticated(req, |auth, header| async move { auth.worker(header.as_deref()).await })
    }
}
