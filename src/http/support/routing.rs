//! Registering routes: each feature folder declares its own (`routes` in
//! its `mod.rs`) through a [`Routes`], which registers each resource with
//! actix-web and writes it into the [`RouteTable`] at the same time. The
//! table is what a test holds the OpenAPI document to, operation by
//! operation, so a handler is declared once, beside its feature.
//!
//! Each path is a resource that answers its own methods; any other method
//! gets a 405 naming them.

use actix_web::{FromRequest, HttpRequest, HttpResponse, Resource, Responder, web};

use crate::http::support::problem::AppError;

/// One registered path and the methods it answers (`HEAD` where a `GET`
/// also answers it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteEntry {
    pub path: String,
    pub methods: Vec<&'static str>,
}

/// Every route, in the order actix-web tries them.
pub type RouteTable = Vec<RouteEntry>;

/// A path with its parameters' names left out (`/jobs/{}`): the route table's
/// `/jobs/{id_or_type}` and the OpenAPI document's `/jobs/{id}` and
/// `/jobs/{job_type}` are one route.
pub fn shape(path: &str) -> String {
    let mut shape = String::new();
    let mut in_parameter = false;
    for c in path.chars() {
        match c {
            '{' => (in_parameter, shape) = (true, shape + "{}"),
            '}' => in_parameter = false,
            c if !in_parameter => shape.push(c),
            _ => {}
        }
    }
    shape
}

/// Registers routes and keeps the table of them.
pub struct Routes<'a> {
    cfg: &'a mut web::ServiceConfig,
    table: RouteTable,
}

impl<'a> Routes<'a> {
    pub fn new(cfg: &'a mut web::ServiceConfig) -> Self {
        Self { cfg, table: Vec::new() }
    }

    /// The table of what was registered.
    pub fn into_table(self) -> RouteTable {
        self.table
    }

    /// `resource`, at `path`, answering the methods `allow` names (its 405s
    /// say the same).
    pub fn resource(&mut self, path: &str, allow: &'static str, build: impl FnOnce(Resource) -> Resource) -> &mut Self {
        self.record(path, allow);
        self.cfg.service(build(answering(path, allow)));
        self
    }

    pub fn get<F, Args>(&mut self, path: &str, handler: F) -> &mut Self
    where
        F: actix_web::Handler<Args>,
        Args: FromRequest + 'static,
        F::Output: Responder + 'static,
    {
        self.resource(path, "GET", |r| r.route(web::get().to(handler)))
    }

    /// [`Self::get`] that also answers `HEAD` (the same headers, no body:
    /// actix-web leaves it out), for the pages, files and probes that load
    /// balancers, link checkers and caches ask about. Not for routes whose
    /// GET does work.
    pub fn get_or_head<F, Args>(&mut self, path: &str, handler: F) -> &mut Self
    where
        F: actix_web::Handler<Args>,
        Args: FromRequest + 'static,
        F::Output: Responder + 'static,
    {
        let get_or_head = actix_web::guard::Any(actix_web::guard::Get()).or(actix_web::guard::Head());
        self.resource(path, "GET, HEAD", |r| r.route(web::route().guard(get_or_head).to(handler)))
    }

    pub fn post<F, Args>(&mut self, path: &str, handler: F) -> &mut Self
    where
        F: actix_web::Handler<Args>,
        Args: FromRequest + 'static,
        F::Output: Responder + 'static,
    {
        self.resource(path, "POST", |r| r.route(web::post().to(handler)))
    }

    /// `<prefix>/{id_or_type}`: an id answers `by_id`, a configured type's
    /// name `by_type` (`/jobs/{id}` reads a job, `/jobs/{type}` submits
    /// one); any other method gets a 405 naming what that path answers.
    pub fn id_or_type(
        &mut self,
        prefix: &str,
        by_id: &'static str,
        by_type: &'static str,
        build: impl FnOnce(Resource) -> Resource,
    ) -> &mut Self {
        let path = format!("{prefix}/{{id_or_type}}");
        self.record(&path, by_id);
        self.record(&path, by_type);
        let resource = web::resource(path).default_service(web::to(move |req: HttpRequest| async move {
            let id = req.match_info().get("id_or_type").is_some_and(|s| uuid::Uuid::parse_str(s).is_ok());
            method_not_allowed(&req, if id { by_id } else { by_type })
        }));
        self.cfg.service(build(resource));
        self
    }

    /// Settings for every route (extractors' errors, the 404 of no route).
    pub fn config(&mut self) -> &mut web::ServiceConfig {
        self.cfg
    }

    fn record(&mut self, path: &str, allow: &'static str) {
        let methods = allow.split(", ");
        match self.table.iter_mut().find(|entry| entry.path == path) {
            Some(entry) => entry.methods.extend(methods),
            None => self.table.push(RouteEntry { path: path.to_owned(), methods: methods.collect() }),
        }
    }
}

/// `path`, whose routes answer `allow`; any other method gets a 405 saying so.
fn answering(path: &str, allow: &'static str) -> Resource {
    web::resource(path).default_service(web::to(move |req: HttpRequest| async move { method_not_allowed(&req, allow) }))
}

fn method_not_allowed(req: &HttpRequest, allow: &'static str) -> Result<HttpResponse, AppError> {
    Err(AppError::MethodNotAllowed { method: req.method().to_string(), allow })
}
