//! `GET /openapi.json`: the API as an OpenAPI 3.1 document, derived from the
//! handlers' `#[utoipa::path]` annotations and their response types, plus
//! one `POST /jobs/{name}` operation per configured job type, carrying that
//! type's params JSON Schema, so a client generator makes one typed method
//! per job type. Built once at start-up.

use serde_json::{Value, json};
use utoipa::OpenApi;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme};

use crate::http::auth::services;
use crate::http::site::{health, words};
use crate::http::{admin, jobs, links, notifications, schedules, webhooks, worker_api};
use crate::jobs::JobTypes;

#[derive(OpenApi)]
#[openapi(
    info(title = "errand", description = "User-initiated heavy operations as durable, idempotent, tenant-scoped jobs."),
    paths(
        jobs::submit, jobs::get, jobs::list, jobs::result, jobs::cancel, links::files::download, links::job_link::open,
        jobs::batches::submit, jobs::batches::get, jobs::batches::cancel, jobs::batches::report,
        schedules::create, schedules::list, schedules::get, schedules::change, schedules::delete,
        links::schedule_pause::ask, links::schedule_pause::confirm,
        notifications::list, notifications::marks::mark_read, notifications::marks::mark_all_read,
        notifications::marks::mark_all_seen, notifications::marks::archive, notifications::marks::archive_read,
        notifications::stream_ticket, notifications::stream, notifications::preferences::list, notifications::preferences::set,
        notifications::push::list, notifications::push::subscribe, notifications::push::unsubscribe,
        notifications::settings::get, notifications::settings::set,
        notifications::defaults::list, notifications::defaults::set, notifications::branding::get,
        notifications::branding::set, notifications::branding::preview_for_tenant_admin,
        notifications::branding::preview_for_operator,
        links::unsubscribe::ask, links::unsubscribe::confirm, webhooks::register, webhooks::list, webhooks::remove,
        webhooks::deliveries, webhooks::redeliver, webhooks::preferences::list, webhooks::preferences::set,
        health::healthz, health::readyz, health::metrics, words::elements,
        admin::list, admin::get, admin::retry, admin::cancel, admin::hold, admin::release, admin::bulk::retry_matching, admin::bulk::cancel_matching, admin::queues, admin::pauses::list, admin::pauses::pause, admin::pauses::resume, admin::quotas::get, admin::quotas::set, admin::retention::get, admin::retention::set, admin::actions::list, admin::overview::read,
        admin::erasures::erase_for_operator, admin::erasures::erase_for_tenant_admin,
        schedules::managed::list_for_operator, schedules::managed::pause_for_operator,
        schedules::managed::delete_for_operator, schedules::managed::list_for_tenant_admin,
        schedules::managed::pause_for_tenant_admin, schedules::managed::delete_for_tenant_admin,
        worker_api::claim, worker_api::attempts::heartbeat, worker_api::attempts::progress, worker_api::attempts::logs,
        worker_api::attempts::checkpoint,
        worker_api::attempts::complete, worker_api::attempts::fail, worker_api::files::upload,
        worker_api::files::upload_url,
    ),
    modifiers(&BearerJwt),
)]
struct ApiDoc;

/// The `bearer` security scheme, named by every operation that can answer
/// 401 (and says nothing else of its security): a token is what it asks
/// for, so the annotations need not say so twice.
struct BearerJwt;

impl utoipa::Modify for BearerJwt {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        let scheme = HttpBuilder::new().scheme(HttpAuthScheme::Bearer).bearer_format("JWT").build();
        components.add_security_scheme("bearer", SecurityScheme::Http(scheme));
        for item in openapi.paths.paths.values_mut() {
            let operations =
                [&mut item.get, &mut item.put, &mut item.post, &mut item.delete, &mut item.head, &mut item.patch];
            for operation in operations.into_iter().flatten() {
                if operation.security.is_none() && operation.responses.responses.contains_key("401") {
                    operation.security = Some(vec![SecurityRequirement::new("bearer", Vec::<String>::new())]);
                }
            }
        }
    }
}

/// The document, with an operation of its own for each job type.
pub fn document(job_types: &JobTypes) -> Value {
    let mut doc = serde_json::to_value(ApiDoc::openapi()).unwrap_or_else(|_| json!({}));
    on_behalf_of(&mut doc);
    let generic = doc["paths"]["/jobs/{job_type}"]["post"].clone();
    for job_type in job_types.iter() {
        let mut operation = generic.clone();
        operation["operationId"] = json!(format!("create_{}", job_type.name.replace('-', "_")));
        operation["summary"] = json!(format!("Start a {}", job_type.display_name));
        if let Some(parameters) = operation["parameters"].as_array_mut() {
            parameters.retain(|p| p["name"] != "job_type");
        }
        let schema = job_type.params_schema.clone().unwrap_or_else(|| json!({ "type": "object" }));
        operation["requestBody"]["content"]["application/json"]["schema"] = schema;
        if let Some(responses) = operation["responses"].as_object_mut() {
            responses.remove("404");
        }
        doc["paths"][format!("/jobs/{}", job_type.name)] = json!({ "post": operation });
    }
    unique_operation_ids(&mut doc);
    doc
}

/// The routes a backend's service token may call for a tenant's user
/// (`services::admits`; each job type's own operation is a copy of
/// `POST /jobs/{job_type}`'s) take the header naming that user, and answer
/// 400 for a malformed one and 403 for one sent with another token, or for a
/// person the service may not act for.
fn on_behalf_of(doc: &mut Value) {
    let problem = |description: &str| {
        json!({
            "description": description,
            "content": { "application/problem+json": { "schema": { "$ref": "#/components/schemas/Problem" } } }
        })
    };
    let malformed = problem(
        "A malformed request: here, perhaps, an `Errand-On-Behalf-Of` that is not `tenant/user` (`bad_request`)",
    );
    let refused = problem(
        "`Errand-On-Behalf-Of` with a token that is not a service's, or a tenant or job type the service token does not list (`forbidden`)",
    );
    let header = json!({
        "name": services::ON_BEHALF_OF,
        "in": "header",
        "required": false,
        "description": "With a service token (scope `service`): the tenant's user it acts for, `tenant/user`, each part percent-encoded where it holds `/`, `%` or anything but visible ASCII",
        "schema": { "type": "string", "pattern": "^[!-~]+/[!-~]+$" }
    });
    let Some(paths) = doc["paths"].as_object_mut() else { return };
    for (path, operations) in paths.iter_mut() {
        let Some(operations) = operations.as_object_mut() else { continue };
        for (_, operation) in operations.iter_mut().filter(|(method, _)| services::admits(method, path)) {
            match operation["parameters"].as_array_mut() {
                Some(parameters) => parameters.push(header.clone()),
                None => operation["parameters"] = json!([header.clone()]),
            }
            if let Some(responses) = operation["responses"].as_object_mut() {
                responses.entry("400").or_insert_with(|| malformed.clone());
                responses.entry("403").or_insert_with(|| refused.clone());
            }
        }
    }
}

/// Gives each operation that shares its `operationId` (utoipa takes the
/// handler's name: `get`, `list`, `set` in many modules) one of its own,
/// from its method and path: `get_jobs_by_id`. Clients and tools find an
/// operation by its id (OpenAPI requires them unique; schemathesis' links
/// went to whichever `get` came last).
fn unique_operation_ids(doc: &mut Value) {
    let Some(paths) = doc["paths"].as_object_mut() else { return };
    let mut uses = std::collections::HashMap::<String, usize>::new();
    for operation in paths.values().filter_map(Value::as_object).flat_map(|ops| ops.values()) {
        if let Some(id) = operation["operationId"].as_str() {
            *uses.entry(id.to_owned()).or_default() += 1;
        }
    }
    for (path, operations) in paths.iter_mut() {
        let Some(operations) = operations.as_object_mut() else { continue };
        for (method, operation) in operations.iter_mut() {
            let shared = operation["operationId"].as_str().is_some_and(|id| uses.get(id).copied().unwrap_or(0) > 1);
            if shared {
                operation["operationId"] = json!(operation_id_of(method, path));
            }
        }
    }
}

/// `get /jobs/{id}/cancel` as `get_jobs_by_id_cancel`.
fn operation_id_of(method: &str, path: &str) -> String {
    let segments = path.split('/').filter(|s| !s.is_empty()).map(|segment| match segment.strip_prefix('{') {
        Some(parameter) => format!("by_{}", parameter.trim_end_matches('}')),
        None => segment.replace(['-', '.'], "_"),
    });
    std::iter::once(method.to_owned()).chain(segments).collect::<Vec<_>>().join("_")
}

/// The OpenAPI document (no token needed: it describes, it does not serve data).
pub async fn json(state: actix_web::web::Data<crate::http::AppState>) -> actix_web::HttpResponse {
    actix_web::HttpResponse::Ok().content_type(actix_web::http::header::ContentType::json()).body(state.openapi.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_routes_a_service_may_call_take_the_header_naming_its_user() {
        let doc = document(&JobTypes::default());
        let takes = |path: &str, method: &str| {
            let parameters = doc["paths"][path][method]["parameters"].as_array().cloned().unwrap_or_default();
            parameters.iter().any(|p| p["name"] == "Errand-On-Behalf-Of")
        };
        for (path, method) in [("/jobs/{job_type}", "post"), ("/jobs/{id}", "get"), ("/batches/{id}/cancel", "post")] {
            assert!(takes(path, method), "{method} {path}");
        }
        for (path, method) in [("/notifications", "get"), ("/files/{key}", "get"), ("/admin/jobs", "get")] {
            assert!(!takes(path, method), "{method} {path}");
        }
    }

    #[test]
    fn every_operation_id_is_its_own() {
        let doc = document(&JobTypes::default());
        let mut seen = std::collections::HashSet::new();
        for operations in doc["paths"].as_object().unwrap().values() {
            for operation in operations.as_object().unwrap().values() {
                let id = operation["operationId"].as_str().unwrap().to_owned();
                assert!(seen.insert(id.clone()), "{id} twice");
            }
        }
        assert_eq!(operation_id_of("get", "/jobs/{id}"), "get_jobs_by_id");
        assert_eq!(
            operation_id_of("put", "/me/notification-preferences/{category}"),
            "put_me_notification_preferences_by_category"
        );
    }
}
