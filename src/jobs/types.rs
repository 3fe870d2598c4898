//! The configured job types: each a name, a handler, a retry policy, a
//! timeout and a params schema, built once at start-up.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::{ExportEnv, HttpPush, JobHandler, NoopHandler, PushEnv, SleepHandler, SqlExport};
use crate::config::{ConfigError, HandlerKind, JobTypeSettings, RedactedField, invalid};
use crate::domain::{AdmissionTemplate, ExportFormat, OnConflict, RetryPolicy};

/// Handlers by the name a `[job_types.*]` entry's `handler` refers to.
#[derive(Clone)]
pub struct HandlerRegistry {
    handlers: HashMap<String, Arc<dyn JobHandler>>,
}

impl HandlerRegistry {
    /// The built-in handlers: `noop` and `sleep`.
    pub fn builtin() -> Self {
        let mut registry = Self { handlers: HashMap::new() };
        registry.register("noop", NoopHandler);
        registry.register("sleep", SleepHandler);
        registry
    }

    /// Adds (or replaces) a handler under `name`.
    pub fn register(&mut self, name: &str, handler: impl JobHandler) -> &mut Self {
        self.handlers.insert(name.to_owned(), Arc::new(handler));
        self
    }

    /// The registered handler job type `job` names (`handler = "…"`).
    fn handler_of(&self, job: &str, settings: &JobTypeSettings) -> Result<Arc<dyn JobHandler>, ConfigError> {
        let name = settings.handler.name();
        let unknown = || invalid(format!("job_types.{job}.handler"), format!("unknown handler {name:?}"));
        self.handlers.get(name).cloned().ok_or_else(unknown)
    }

    /// What `JobTypes::build` would refuse of `settings` for a handler this
    /// registry lacks (`errand config check`, which builds nothing).
    pub fn unknown_handlers(&self, settings: &BTreeMap<String, JobTypeSettings>) -> Vec<String> {
        let registered = settings
            .iter()
            .filter(|(_, s)| s.export.is_none() && !matches!(s.handler, HandlerKind::External | HandlerKind::Http));
        registered.filter_map(|(job, s)| self.handler_of(job, s).err()).map(|e| e.to_string()).collect()
    }
}

/// One configured job type, ready to accept params and run.
pub struct JobType {
    pub name: String,
    /// For people: "sales report export".
    pub display_name: String,
    /// The same in other languages, by locale tag (`display_names` in config).
    pub display_names: std::collections::BTreeMap<String, String>,
    /// What runs its jobs in errand; `None` for `handler = "external"`:
    /// workers outside errand claim them through the worker API.
    pub handler: Option<Arc<dyn JobHandler>>,
    pub retry: RetryPolicy,
    pub timeout: Duration,
    /// Most jobs of this type running at once across all processes.
    pub concurrency: Option<u32>,
    /// The JSON Schema its params must satisfy, as configured (for the API document).
    pub params_schema: Option<Value>,
    schema: Option<jsonschema::Validator>,
    /// What operators without the `operator:sensitive` scope do not see.
    pub redact: Vec<RedactedField>,
    /// Its params and results are kept sealed at rest (`encrypt = true`).
    pub encrypt: bool,
    /// Users may schedule it, at most once per this (`None`: not schedulable).
    pub schedulable_every: Option<Duration>,
    /// How it moves its jobs within their class (see `domain::priority`).
    pub priority: i8,
    /// The file formats it writes, its default first (exports); none for
    /// a type that writes no file of errand's.
    pub formats: Vec<ExportFormat>,
    /// What makes two of its jobs one (see `domain::admission`), and what a
    /// request for an unfinished one does.
    pub admission: Option<(AdmissionTemplate, OnConflict)>,
    /// How long its result files are kept (the shorter of its own and the storage's).
    pub result_retention: Duration,
}

/// Params that the type's JSON Schema rejects.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("params field `{field}` is invalid: {reason}")]
pub struct ParamsError {
    /// A JSON pointer to the failing field (`/ms`), or `/` for the whole object.
    pub field: String,
    pub reason: String,
}

/// A format the job's type does not write (by the request's name for it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct FormatRefused(String);

impl JobType {
    /// The format a job asked for in `requested` is written in: the
    /// requested one among the type's formats, its first when none is asked
    /// for; `None` for a type that writes no file.
    pub fn format_for(&self, requested: Option<&str>) -> Result<Option<ExportFormat>, FormatRefused> {
        let Some(name) = requested else {
            return Ok(self.formats.first().copied());
        };
        if self.formats.is_empty() {
            return Err(FormatRefused(format!("job type {:?} writes no file: it takes no format", self.name)));
        }
        let offered = || self.formats.iter().map(|f| f.as_str()).collect::<Vec<_>>().join(", ");
        match name.parse::<ExportFormat>() {
            Ok(format) if self.formats.contains(&format) => Ok(Some(format)),
            _ => Err(FormatRefused(format!("format {name:?} is not one {:?} writes: {}", self.name, offered()))),
        }
    }

    /// Checks `params` against the type's schema; reports the first failure.
    /// Text holding NUL is refused whatever the schema: PostgreSQL's jsonb
    /// cannot store it.
    pub fn validate_params(&self, params: &Value) -> Result<(), ParamsError> {
        if let Some(field) = nul_at(params) {
            return Err(ParamsError { field, reason: "text must not contain the NUL character (\\u0000)".into() });
        }
        if let Some(field) = unreadable_number_at(params) {
            return Err(ParamsError { field, reason: "the number is too large to be stored and read back".into() });
        }
        // What a sealed value is kept as: never a submission's own.
        if params.get(crate::domain::sealing::SEALED_MEMBER).is_some() {
            let member = crate::domain::sealing::SEALED_MEMBER;
            return Err(ParamsError {
                field: format!("/{member}"),
                reason: format!("`{member}` is errand's own name"),
            });
        }
        let Some(schema) = &self.schema else {
            return Ok(());
        };
        match schema.iter_errors(params).next() {
            None => Ok(()),
            Some(error) => {
                let path = error.instance_path().to_string();
                Err(ParamsError { field: if path.is_empty() { "/".into() } else { path }, reason: error.to_string() })
            }
        }
    }
}

/// A key or a value met walking params.
enum Part<'a> {
    Key(&'a str),
    Value(&'a Value),
}

/// The JSON pointer of the first key or value of `value` that `refused`
/// refuses (`/` for the whole document), if any.
fn first_refused(value: &Value, at: String, refused: &impl Fn(Part) -> bool) -> Option<String> {
    if refused(Part::Value(value)) {
        return Some(if at.is_empty() { "/".into() } else { at });
    }
    match value {
        Value::Array(items) => {
            items.iter().enumerate().find_map(|(i, item)| first_refused(item, format!("{at}/{i}"), refused))
        }
        Value::Object(fields) => fields.iter().find_map(|(key, item)| {
            let here = format!("{at}/{}", key.replace('~', "~0").replace('/', "~1"));
            if refused(Part::Key(key)) { Some(here) } else { first_refused(item, here, refused) }
        }),
        _ => None,
    }
}

/// The JSON pointer of the first key or string holding NUL, if any.
fn nul_at(value: &Value) -> Option<String> {
    first_refused(value, String::new(), &|part| match part {
        Part::Key(key) => key.contains('\0'),
        Part::Value(Value::String(text)) => text.contains('\0'),
        Part::Value(_) => false,
    })
}

/// The JSON pointer of the first number that would not survive the trip
/// through PostgreSQL: jsonb keeps numbers as exact decimals and prints them
/// without an exponent (`1e308` comes back as 309 digits), and a float near
/// the edge of f64 then no longer parses. Such params would be stored, then
/// fail every read of the job.
fn unreadable_number_at(value: &Value) -> Option<String> {
    first_refused(value, String::new(), &|part| match part {
        Part::Value(Value::Number(n)) if !(n.is_i64() || n.is_u64()) => {
            n.as_f64().is_some_and(|f| serde_json::from_str::<serde_json::Number>(&format!("{f}")).is_err())
        }
        _ => false,
    })
}

/// All configured job types by name.
#[derive(Clone, Default)]
pub struct JobTypes {
    types: Arc<BTreeMap<String, Arc<JobType>>>,
}

impl JobTypes {
    /// Builds the types from settings, resolving each `handler` in `handlers`.
    pub fn build(
        settings: &BTreeMap<String, JobTypeSettings>,
        handlers: &HandlerRegistry,
        exports: &ExportEnv,
        push: &PushEnv,
    ) -> Result<Self, ConfigError> {
        let mut types = BTreeMap::new();
        for (name, s) in settings {
            let handler: Option<Arc<dyn JobHandler>> = match &s.export {
                Some(export) => {
                    check_formats(&export.formats)
                        .map_err(|e| invalid(format!("job_types.{name}.export.formats"), e))?;
                    let source = match &export.source_database_url {
                        Some(url) => {
                            crate::store::Store::connect_for_reads(secrecy::ExposeSecret::expose_secret(url), 4)
                                .map_err(|e| {
                                    invalid(format!("job_types.{name}.export.source_database_url"), e.to_string())
                                })?
                        }
                        None => exports.default_source.clone(),
                    };
                    let retention = s.result_retention_within(exports.retention);
                    let export = SqlExport::new(name, export, &source, exports, retention)
                        .map_err(|e| invalid(format!("job_types.{name}.export.query"), e))?;
                    Some(Arc::new(export))
                }
                None if s.handler == HandlerKind::External => None,
                None if s.handler == HandlerKind::Http => {
                    let push_settings =
                        s.http.as_ref().ok_or_else(|| invalid(format!("job_types.{name}.http"), "missing"))?;
                    let push = HttpPush::new(name, push_settings, s.timeout, push)
                        .map_err(|e| invalid(format!("job_types.{name}.http"), e))?;
                    Some(Arc::new(push))
                }
                None => Some(handlers.handler_of(name, s)?),
            };
            let schema = s
                .params_schema
                .as_ref()
                // Formats are checked, not just annotated: `"format": "date"`
                // refuses 0000-00-00 at submit instead of failing the job later.
                .map(|schema| jsonschema::options().should_validate_formats(true).build(schema))
                .transpose()
                .map_err(|e| invalid(format!("job_types.{name}.params_schema"), e.to_string()))?;
            let display_name = s.display_name.clone().unwrap_or_else(|| default_display_name(name));
            let job_type = JobType {
                name: name.clone(),
                display_name,
                display_names: s.display_names.clone(),
                handler,
                retry: s.retry_policy(),
                timeout: s.timeout,
                concurrency: s.concurrency.map(std::num::NonZeroU32::get),
                params_schema: s.params_schema.clone(),
                schema,
                redact: s.redact.clone(),
                encrypt: s.encrypt,
                schedulable_every: s.schedulable.then_some(s.min_schedule_interval),
                priority: s.priority,
                formats: s.export.as_ref().map(|e| e.formats.clone()).unwrap_or_default(),
                admission: s.admission(),
                result_retention: s.result_retention_within(exports.retention),
            };
            types.insert(name.clone(), Arc::new(job_type));
        }
        Ok(Self { types: Arc::new(types) })
    }

    /// How people who read `locale` are told about jobs of type `name`
    /// (also for types no longer configured).
    pub fn display_name(&self, name: &str, locale: crate::domain::Locale) -> String {
        match self.get(name) {
            Some(t) => t.display_names.get(locale.as_str()).unwrap_or(&t.display_name).clone(),
            None => default_display_name(name),
        }
    }

    /// Every configured type, by name.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<JobType>> {
        self.types.values()
    }

    /// The types limited across all processes, for claims.
    pub fn limits(&self) -> crate::store::TypeLimits {
        crate::store::TypeLimits::new(
            self.types.values().filter_map(|t| Some((t.name.clone(), t.concurrency?))).collect::<Vec<_>>(),
        )
    }

    /// The types whose jobs run in errand (for its dispatcher's claims).
    pub fn in_process(&self) -> Vec<String> {
        self.types.values().filter(|t| t.handler.is_some()).map(|t| t.name.clone()).collect()
    }

    /// The types run by external workers (for the Broker's claims).
    pub fn external(&self) -> Vec<String> {
        self.types.values().filter(|t| t.handler.is_none()).map(|t| t.name.clone()).collect()
    }

    /// The type called `name`, if configured.
    /// The types whose params operators without `operator:sensitive` may
    /// not see, nor search.
    pub fn params_redacted(&self) -> Vec<String> {
        let redacts = |t: &&Arc<JobType>| t.redact.contains(&RedactedField::Params);
        self.types.values().filter(redacts).map(|t| t.name.clone()).collect()
    }

    /// The types whose params are kept sealed: no search reads them.
    pub fn params_sealed(&self) -> Vec<String> {
        self.types.values().filter(|t| t.encrypt).map(|t| t.name.clone()).collect()
    }

    pub fn get(&self, name: &str) -> Option<&Arc<JobType>> {
        self.types.get(name)
    }
}

/// At least one format, none twice.
fn check_formats(formats: &[ExportFormat]) -> Result<(), String> {
    if formats.is_empty() {
        return Err("name at least one format (csv, csv.gz, xlsx, ndjson); the first is the default".into());
    }
    match formats.iter().enumerate().find(|(i, f)| formats[..*i].contains(f)) {
        Some((_, twice)) => Err(format!("{twice} is named twice")),
        None => Ok(()),
    }
}

fn default_display_name(name: &str) -> String {
    name.replace(['_', '-'], " ")
}
