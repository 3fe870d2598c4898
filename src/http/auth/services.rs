//! Backend services acting for a tenant's users: a service token (`scope`
//! `service`, no tenant) naming the person in `Errand-On-Behalf-Of:
//! tenant/user`, or a person's token carrying an RFC 8693 `act` claim (an
//! identity provider's token exchange). Either way the request is the
//! person's (their scope, quotas, notifications) and the service is recorded
//! with what it makes. A service reaches only the routes that start, read
//! and cancel jobs and batches ([`SERVICE_ROUTES`]): a person's feed,
//! preferences, devices and tenant settings stay theirs.

use actix_web::HttpRequest;
use percent_encoding::percent_decode_str;
use serde_json::{Map, Value};

use crate::domain::{ServiceId, TenantId, UserId};
use crate::http::support::problem::AppError;
use crate::http::support::routing::shape;

/// The header naming the person a service token acts for.
pub const ON_BEHALF_OF: &str = "Errand-On-Behalf-Of";

/// The routes a service may use for a person, as (method, route pattern).
/// Every other user route refuses it, so a route added later is closed to
/// services until it is listed here; the OpenAPI document names the header
/// on these operations ([`admits`]).
const SERVICE_ROUTES: [(&str, &str); 9] = [
    ("GET", "/jobs"),
    ("GET", "/jobs/{id_or_type}"),
    ("POST", "/jobs/{id_or_type}"),
    ("GET", "/jobs/{id}/result"),
    ("POST", "/jobs/{id}/cancel"),
    ("GET", "/batches/{id_or_type}"),
    ("POST", "/batches/{id_or_type}"),
    ("POST", "/batches/{id}/cancel"),
    ("GET", "/batches/{id}/report"),
];

/// A service acting for a person, and what its token lets it do.
#[derive(Debug, Clone)]
pub struct ServiceGrant {
    pub name: ServiceId,
    /// The job types it may start; `None`: any.
    types: Option<Vec<String>>,
    /// The tenants whose people it may act for; `None`: any.
    tenants: Option<Vec<String>>,
}

impl ServiceGrant {
    /// A service token's grant: its `user_claim` names it, `types` and
    /// `tenants` (lists of text) limit it.
    pub fn of_token(claims: &Map<String, Value>, user_claim: &str) -> Result<Self, AppError> {
        let name = claims.get(user_claim).and_then(Value::as_str).and_then(|name| ServiceId::parse(name).ok());
        let name = name.ok_or(AppError::Unauthorized("the token's user claim is missing or invalid"))?;
        let list = |claim: &str| -> Result<Option<Vec<String>>, AppError> {
            let refused = AppError::Unauthorized("a service token's types and tenants are lists of names");
            match claims.get(claim) {
                None => Ok(None),
                Some(Value::Array(items)) => {
                    let names = items.iter().map(|item| item.as_str().map(str::to_owned)).collect::<Option<Vec<_>>>();
                    names.map(Some).ok_or(refused)
                }
                Some(_) => Err(refused),
            }
        };
        Ok(Self { name, types: list("types")?, tenants: list("tenants")? })
    }

    /// The service of a person's token's RFC 8693 `act` claim (its `sub`:
    /// the outermost `act` is the one acting now), if it has one. An
    /// identity provider issued it, which is its grant: no limits of errand's.
    pub fn of_act_claim(claims: &Map<String, Value>) -> Result<Option<Self>, AppError> {
        let Some(act) = claims.get("act") else { return Ok(None) };
        let name = act.get("sub").and_then(Value::as_str).and_then(|name| ServiceId::parse(name).ok());
        let name = name.ok_or(AppError::Unauthorized("the token's act claim names no actor (act.sub)"))?;
        Ok(Some(Self { name, types: None, tenants: None }))
    }

    /// Refuses a tenant the token does not list.
    pub fn admit_tenant(&self, tenant: &TenantId) -> Result<(), AppError> {
        match &self.tenants {
            Some(tenants) if !tenants.iter().any(|t| t == tenant.as_str()) => {
                Err(AppError::Forbidden(format!("service {} may not act for tenant {tenant}'s users", self.name)))
            }
            _ => Ok(()),
        }
    }

    /// Refuses a route no service may use, and a job type the token does
    /// not list on the routes that start jobs.
    pub fn admit_route(&self, request: &HttpRequest) -> Result<(), AppError> {
        let method = request.method().as_str();
        let pattern = request.match_pattern().unwrap_or_default();
        if !admits(method, &pattern) {
            return Err(AppError::Forbidden(format!(
                "a service acting for a user may start, read and cancel jobs and batches only, not {method} {pattern}"
            )));
        }
        let starts = method == "POST" && pattern.ends_with("/{id_or_type}");
        let job_type = request.match_info().get("id_or_type").filter(|_| starts);
        match (job_type, &self.types) {
            (Some(job_type), Some(types)) if !types.iter().any(|t| t == job_type) => {
                Err(AppError::Forbidden(format!("service {} may not start jobs of type {job_type}", self.name)))
            }
            _ => Ok(()),
        }
    }
}

/// Whether a service may use `method` on the route of `path` (a route
/// pattern or an OpenAPI path: parameters' names do not matter).
pub fn admits(method: &str, path: &str) -> bool {
    let path = shape(path);
    SERVICE_ROUTES.iter().any(|&(m, p)| m.eq_ignore_ascii_case(method) && shape(p) == path)
}

/// The person `Errand-On-Behalf-Of` names: `tenant/user`, each part
/// percent-encoded where it holds `/`, `%` or anything but visible ASCII.
pub fn person(header: &str) -> Result<(TenantId, UserId), AppError> {
    let refused = || AppError::BadRequest(format!("{ON_BEHALF_OF} must be tenant/user (each percent-encoded)"));
    let (tenant, user) = header.trim().split_once('/').ok_or_else(refused)?;
    let decode = |part: &str| percent_decode_str(part).decode_utf8().map(|text| text.into_owned()).ok();
    let tenant = decode(tenant).and_then(|t| TenantId::parse(t).ok()).ok_or_else(refused)?;
    let user = decode(user).and_then(|u| UserId::parse(u).ok()).ok_or_else(refused)?;
    Ok((tenant, user))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_person_is_tenant_slash_user_with_either_part_percent_encoded() {
        let (tenant, user) = person("acme/alice").unwrap();
        assert_eq!((tenant.as_str(), user.as_str()), ("acme", "alice"));
        let (tenant, user) = person("org%2F7/auth0%7C42%2Fb").unwrap();
        assert_eq!((tenant.as_str(), user.as_str()), ("org/7", "auth0|42/b"));
        for bad in ["acme", "/alice", "acme/", "acme/%00", "%ff/alice"] {
            assert!(person(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_service_token_lists_its_limits_as_names() {
        let claims = |value: Value| value.as_object().cloned().unwrap();
        let grant = ServiceGrant::of_token(&claims(serde_json::json!({"sub": "billing", "tenants": ["acme"]})), "sub");
        let grant = grant.unwrap();
        assert!(grant.admit_tenant(&TenantId::parse("acme").unwrap()).is_ok());
        assert!(grant.admit_tenant(&TenantId::parse("globex").unwrap()).is_err());
        let odd = ServiceGrant::of_token(&claims(serde_json::json!({"sub": "billing", "types": "export"})), "sub");
        assert!(odd.is_err());
        let act =
            ServiceGrant::of_act_claim(&claims(serde_json::json!({"act": {"sub": "billing", "act": {"sub": "x"}}})));
        assert_eq!(act.unwrap().unwrap().name.as_str(), "billing");
        assert!(ServiceGrant::of_act_claim(&claims(serde_json::json!({"act": {}}))).is_err());
    }
}
