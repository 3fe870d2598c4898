//! The settings of one job type: which kind of handler runs it, how it
//! retries, what params it takes, and the sections of the kinds that have
//! settings of their own (`[export]` for `sql_export`, `[http]` for `http`).
//! `jobs::JobTypes` turns them into running job types.

use std::collections::BTreeMap;
use std::num::NonZeroU32;
use std::time::Duration;

use serde::Deserialize;
use serde_inline_default::serde_inline_default;

use super::HttpUrl;
use super::values::{LongSecret, PostgresUrl, duration_or_never, duration_text, optional_duration_text};
use crate::domain::{AdmissionTemplate, ExportFormat, OnConflict, RetryPolicy};

/// One job type: which handler runs it, how it retries, what params it takes.
#[serde_inline_default]
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobTypeSettings {
    pub handler: HandlerKind,
    #[serde_inline_default(NonZeroU32::new(5).expect("not zero"))]
    pub max_attempts: NonZeroU32,
    #[serde_inline_default(Duration::from_secs(1))]
    #[serde(with = "duration_text")]
    pub backoff_base: Duration,
    #[serde_inline_default(Duration::from_secs(300))]
    #[serde(with = "duration_text")]
    pub backoff_max: Duration,
    /// An attempt running longer is cancelled and counts as failed.
    #[serde_inline_default(Duration::from_secs(300))]
    #[serde(with = "duration_text")]
    pub timeout: Duration,
    /// JSON Schema the params must satisfy; any JSON object when absent.
    #[serde(default)]
    pub params_schema: Option<serde_json::Value>,
    /// How people are told about it: "Your {display_name} is ready". Defaults
    /// to the type's name with spaces for underscores.
    #[serde(default)]
    pub display_name: Option<String>,
    /// The same in other languages, by shipped locale: `{ fr = "export des
    /// ventes" }`; `display_name` where a language has none.
    #[serde(default)]
    pub display_names: BTreeMap<String, String>,
    /// The notification category its ends belong to, which people choose
    /// to hear of or not (see `[notifications.preferences]`); its own name
    /// when absent.
    #[serde(default)]
    pub category: Option<String>,
    /// For `handler = "sql_export"`: the query and formats.
    #[serde(default)]
    pub export: Option<ExportSettings>,
    /// For `handler = "http"`: the app's endpoint that errand pushes jobs to.
    #[serde(default)]
    pub http: Option<PushSettings>,
    /// Most jobs of this type running at once across all processes (none
    /// when absent): keeps heavy types from taking every worker and the
    /// database from light ones.
    #[serde(default)]
    pub concurrency: Option<NonZeroU32>,
    /// The breaker: after this many of its attempts failed in a row (across
    /// tenants and processes; a completion starts the count again) the type
    /// pauses itself, as an operator's pause (`/admin/pauses`, by
    /// `errand:breaker`, the last error its reason), so that its waiting jobs
    /// keep their attempts while what they need is down. Off when absent.
    #[serde(default)]
    pub breaker_after: Option<NonZeroU32>,
    /// Most unfinished jobs of this type one user may have (beside the
    /// `[quotas]` caps, which count every type); none when absent.
    #[serde(default)]
    pub max_unfinished_per_user: Option<u32>,
    /// What operators without the `operator:sensitive` scope do not see of
    /// this type's jobs, e.g. `["params"]` for a type whose params hold
    /// personal data: `params`, `result` (its file too). Nothing when absent.
    #[serde(default)]
    pub redact: Vec<RedactedField>,
    /// Its params and results are kept sealed (AES-256-GCM under the
    /// tenant's data key, see `[encryption]`), in its jobs, schedules and
    /// batches alike (a result's file record stays in clear): unreadable in
    /// the database and its backups without errand's keys, and gone for
    /// good with the tenant's key. Operators cannot search its params.
    #[serde(default)]
    pub encrypt: bool,
    /// How soon its jobs run beside their tenant's others of the same class
    /// (interactive, scheduled, bulk): -4 to 4, higher sooner.
    #[serde(default)]
    pub priority: i8,
    /// What makes two of its jobs one piece of work, whoever asked and with
    /// whatever idempotency key: a template over `{tenant}`, `{user}`,
    /// `{type}` and `{params.field}`, e.g. `"{user}:{params.report_id}"`
    /// (see `domain::admission`). None when absent.
    #[serde(default)]
    pub admission_key: Option<AdmissionTemplate>,
    /// What a request with the admission key of an unfinished job does:
    /// `"join"` (the default), `"reject"`, `"supersede"`, or
    /// `{ debounce = "5s", max_delay = "1m" }`.
    #[serde(default)]
    pub on_conflict: Option<OnConflictSetting>,
    /// Users may make schedules of this type (`POST /schedules/{type}`).
    #[serde(default)]
    pub schedulable: bool,
    /// The shortest time a schedule of this type may leave between two runs.
    #[serde_inline_default(Duration::from_secs(3600))]
    #[serde(with = "duration_text")]
    pub min_schedule_interval: Duration,
    /// How long this type's finished jobs are kept, when it is to be shorter
    /// or longer than `history.retention` (the pruner reads it).
    #[serde(default, with = "optional_duration_text")]
    pub retention: Option<Duration>,
    /// How long this type's result files are kept: the shorter of this and
    /// `storage.retention` wins.
    #[serde(default, with = "optional_duration_text")]
    pub result_retention: Option<Duration>,
}

impl<'de> Deserialize<'de> for AdmissionTemplate {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Self::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// `on_conflict` as written: a policy's name, or a debounce's table.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum OnConflictSetting {
    Named(ConflictName),
    Debounce(DebounceSetting),
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConflictName {
    Join,
    Reject,
    Supersede,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DebounceSetting {
    #[serde(with = "duration_text")]
    pub debounce: Duration,
    #[serde(with = "duration_text")]
    pub max_delay: Duration,
}

impl OnConflictSetting {
    pub fn policy(&self) -> OnConflict {
        match self {
            Self::Named(ConflictName::Join) => OnConflict::Join,
            Self::Named(ConflictName::Reject) => OnConflict::Reject,
            Self::Named(ConflictName::Supersede) => OnConflict::Supersede,
            Self::Debounce(d) => OnConflict::Debounce { debounce: d.debounce, max_delay: d.max_delay },
        }
    }
}

/// A part of a job that may be kept from operators (see `redact`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RedactedField {
    Params,
    Result,
}

impl JobTypeSettings {
    /// Settings of a type run by `handler`, every other setting at its default.
    pub fn new(handler: HandlerKind) -> Self {
        let handler = serde_json::to_value(handler.name()).expect("a string");
        serde_json::from_value(serde_json::json!({ "handler": handler })).expect("every other field has a default")
    }

    /// Its admission key and what a conflict does (`join` unless said).
    pub fn admission(&self) -> Option<(AdmissionTemplate, OnConflict)> {
        let policy = self.on_conflict.as_ref().map_or(OnConflict::Join, OnConflictSetting::policy);
        self.admission_key.clone().map(|template| (template, policy))
    }

    /// How long its result files are kept, given the storage's retention:
    /// the shorter of the two.
    pub fn result_retention_within(&self, storage: Duration) -> Duration {
        self.result_retention.map_or(storage, |own| own.min(storage))
    }

    /// The retry policy these settings describe.
    pub fn retry_policy(&self) -> RetryPolicy {
        RetryPolicy { max_attempts: self.max_attempts.get(), base: self.backoff_base, max: self.backoff_max }
    }
}

/// What runs a job type's jobs.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(from = "String")]
pub enum HandlerKind {
    /// Workers outside errand, through the worker API (`external`).
    External,
    /// The app's own endpoint, pushed to (`http`, with an `[http]` section).
    Http,
    /// A query whose rows become a file (`sql_export`, with an `[export]` section).
    SqlExport,
    /// A handler in errand's registry: a built-in (`noop`, `sleep`) or one an
    /// embedding crate registered.
    Registered(String),
}

impl From<String> for HandlerKind {
    fn from(name: String) -> Self {
        match name.as_str() {
            "external" => Self::External,
            "http" => Self::Http,
            "sql_export" => Self::SqlExport,
            _ => Self::Registered(name),
        }
    }
}

impl HandlerKind {
    /// The name written in `handler = "…"`.
    pub fn name(&self) -> &str {
        match self {
            Self::External => "external",
            Self::Http => "http",
            Self::SqlExport => "sql_export",
            Self::Registered(name) => name,
        }
    }
}

/// A `sql_export` job type: a query whose rows become a file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExportSettings {
    /// The SELECT to export. `:tenant`, `:user` and `:<param>` stand for values
    /// bound from the job (never spliced into the text), e.g. `:from::date`.
    pub query: String,
    /// The formats its jobs may be asked for (`?format=`), the first the
    /// default: `csv`, `csv.gz`, `xlsx`, `ndjson`.
    #[serde(default = "csv_only")]
    pub formats: Vec<ExportFormat>,
    /// The query's columns (by the names it gives them) that its `ORDER BY`
    /// sorts by, ascending, unique together and never NULL, e.g. `["Date",
    /// "Sale ID"]`: a text export then resumes after the last row it wrote
    /// (its checkpoint) instead of starting over. None: it starts over.
    #[serde(default)]
    pub resume_key: Vec<String>,
    /// The source's own setting its row-level security reads the tenant
    /// from (`app.current_tenant`): set to the job's tenant for the export's
    /// transaction. With it, the query need not say `:tenant` itself.
    #[serde(default)]
    pub tenant_setting: Option<String>,
    /// Where to read from (e.g. a read replica); errand's own database when unset.
    #[serde(default)]
    pub source_database_url: Option<PostgresUrl>,
    /// CSV: a text cell a spreadsheet would read as a formula (one beginning
    /// with `=`, `+`, `-`, `@`, a tab or a carriage return, e.g. a customer
    /// named `=HYPERLINK(…)`) is written with a leading `'` (OWASP's rule);
    /// numbers, dates and other typed cells are untouched. On unless false.
    /// (An XLSX cell is never a formula: text is written as text.)
    #[serde(default = "defuse_formulas_by_default")]
    pub defuse_formulas: bool,
    /// An export with a `resume_key` reads in transactions of about this
    /// long: past it, the read is cut at its next checkpoint (a workbook's:
    /// after its page) and goes on from there in a new transaction. So
    /// however long the export, it holds its database's vacuum back (the
    /// xmin horizon) for this long and one part (or page) more, each read as
    /// of its own snapshot (as a resumed attempt's is). `"never"`: one
    /// transaction, one snapshot.
    #[serde(default = "a_minute", with = "duration_or_never")]
    pub max_transaction: Option<Duration>,
}

fn a_minute() -> Option<Duration> {
    Some(Duration::from_secs(60))
}

fn csv_only() -> Vec<ExportFormat> {
    vec![ExportFormat::Csv]
}

fn defuse_formulas_by_default() -> bool {
    true
}

/// A `handler = "http"` job type: errand POSTs each attempt to the app's
/// own endpoint, signed (see `jobs/push.rs`), within the type's `timeout`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PushSettings {
    pub url: HttpUrl,
    /// Signs each push (HMAC-SHA256); the app checks it.
    pub signing_secret: LongSecret,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handler_names_map_to_kinds_and_back() {
        for name in ["external", "http", "sql_export", "noop"] {
            assert_eq!(HandlerKind::from(name.to_owned()).name(), name);
        }
        assert_eq!(HandlerKind::from("noop".to_owned()), HandlerKind::Registered("noop".into()));
        let settings = JobTypeSettings::new(HandlerKind::External);
        assert_eq!((settings.handler, settings.max_attempts.get()), (HandlerKind::External, 5));
    }
}
