//! Typed settings: `config.toml`, then `DATABASE_URL`, then `ERRAND_SECTION__KEY`
//! environment variables (e.g. `ERRAND_AUTH__JWT_SECRET`), validated once at
//! start-up so that a bad value stops errand with a message naming its key.

mod http_url;

pub use http_url::HttpUrl;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Deserializer};

use crate::domain::RetryPolicy;

/// Everything errand reads from configuration.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    #[serde(default)]
    pub http: HttpSettings,
    pub database: DatabaseSettings,
    pub auth: AuthSettings,
    #[serde(default)]
    pub workers: WorkerSettings,
    #[serde(default)]
    pub notifications: NotificationSettings,
    #[serde(default)]
    pub email: EmailSettings,
    #[serde(default)]
    pub storage: StorageSettings,
    #[serde(default)]
    pub history: HistorySettings,
    #[serde(default)]
    pub log: LogSettings,
    /// Job types by name: what `POST /jobs/{type}` accepts.
    pub job_types: BTreeMap<String, JobTypeSettings>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpSettings {
    /// Listen address, e.g. `127.0.0.1:8080`; port 0 picks a free port.
    #[serde(default = "default_bind")]
    pub bind: SocketAddr,
    /// HTTP worker threads; defaults to the number of cores.
    #[serde(default)]
    pub workers: Option<usize>,
    /// Where people reach errand: the base of links in emails and of signed download URLs.
    #[serde(default = "default_public_base_url")]
    pub public_base_url: HttpUrl,
}

impl Default for HttpSettings {
    fn default() -> Self {
        Self { bind: default_bind(), workers: None, public_base_url: default_public_base_url() }
    }
}

fn default_bind() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 8080))
}

fn default_public_base_url() -> HttpUrl {
    HttpUrl::parse("http://127.0.0.1:8080").expect("a valid URL")
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DatabaseSettings {
    /// A libpq-style URL, e.g. `postgres://postgres@127.0.0.1:5432/errand`
    /// (a secret: it may carry a password).
    pub url: SecretString,
    #[serde(default = "default_pool_size")]
    pub pool_size: usize,
}

fn default_pool_size() -> usize {
    16
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthSettings {
    /// errand's own secret (at least 32 bytes): signs stream tickets, and
    /// verifies API tokens (HS256) unless `jwks_url` is set.
    pub jwt_secret: SecretString,
    /// An identity provider's JWKS: API tokens are then verified with its
    /// keys (RS/PS/ES/EdDSA), never with the shared secret.
    #[serde(default)]
    pub jwks_url: Option<HttpUrl>,
    /// A key id not seen yet fetches the JWKS again, at most this often.
    #[serde(default = "default_jwks_min_refresh", with = "duration_text")]
    pub jwks_min_refresh: Duration,
    /// When set, API tokens must carry this `iss`.
    #[serde(default)]
    pub issuer: Option<String>,
    /// When set, API tokens must carry this `aud`; when not, tokens with any
    /// `aud` are refused.
    #[serde(default)]
    pub audience: Option<String>,
    /// The claims naming the caller's tenant, user and email address.
    #[serde(default = "default_tenant_claim")]
    pub tenant_claim: String,
    #[serde(default = "default_user_claim")]
    pub user_claim: String,
    #[serde(default = "default_email_claim")]
    pub email_claim: String,
}

fn default_jwks_min_refresh() -> Duration {
    Duration::from_secs(30)
}
fn default_tenant_claim() -> String {
    "tenant".into()
}
fn default_user_claim() -> String {
    "sub".into()
}
fn default_email_claim() -> String {
    "email".into()
}

/// How this process takes and runs work.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WorkerSettings {
    /// Jobs this process runs at once, across all tenants. 0 makes an API-only
    /// process: it records jobs and announces them, and other processes run them.
    pub global_limit: usize,
    /// Jobs one tenant may have running at once, across all processes.
    pub tenant_limit: u32,
    /// How long a claim lasts without a heartbeat; renewed every third of it.
    #[serde(with = "duration_text")]
    pub lease: Duration,
    /// Backstop poll for work that no notification announced (other processes, due retries).
    #[serde(with = "duration_text")]
    pub poll_interval: Duration,
    /// How long a SIGTERM waits for running jobs before releasing them.
    #[serde(with = "duration_text")]
    pub shutdown_grace: Duration,
    /// A tenant's supervisor stops after this long with nothing to do.
    #[serde(with = "duration_text")]
    pub supervisor_idle: Duration,
}

impl Default for WorkerSettings {
    fn default() -> Self {
        Self {
            global_limit: 100,
            tenant_limit: 4,
            lease: Duration::from_secs(30),
            poll_interval: Duration::from_secs(1),
            shutdown_grace: Duration::from_secs(10),
            supervisor_idle: Duration::from_secs(60),
        }
    }
}

/// How errand writes its log (to stderr; the level comes from `RUST_LOG`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LogSettings {
    pub format: LogFormat,
}

/// `text` for people, `json` (one object per line) for log pipelines.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    #[default]
    Text,
    Json,
}

/// How long finished jobs are kept.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HistorySettings {
    /// Finished jobs (with their notifications, emails and idempotency keys)
    /// are deleted this long after they were created and finished, but never
    /// while their result file is still downloadable.
    #[serde(with = "duration_text")]
    pub retention: Duration,
}

impl Default for HistorySettings {
    fn default() -> Self {
        Self { retention: Duration::from_secs(90 * 24 * 3600) }
    }
}

/// The live notification stream.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NotificationSettings {
    /// How often an idle stream sends a keep-alive comment.
    #[serde(with = "duration_text")]
    pub keep_alive: Duration,
    /// How long a stream ticket (for `GET /notifications/stream?ticket=`) is valid.
    #[serde(with = "duration_text")]
    pub stream_ticket_ttl: Duration,
}

impl Default for NotificationSettings {
    fn default() -> Self {
        Self { keep_alive: Duration::from_secs(15), stream_ticket_ttl: Duration::from_secs(60) }
    }
}

/// Where job results are stored and for how long.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StorageSettings {
    pub backend: StorageBackend,
    /// The directory of the `local` backend.
    pub local_dir: std::path::PathBuf,
    /// The bucket of the `s3` backend.
    pub s3: Option<S3Settings>,
    /// Signs download URLs of the `local` backend; derived from `auth.jwt_secret` when unset.
    pub signing_key: Option<SecretString>,
    /// How long a download URL works; a fresh one is made on every read.
    #[serde(with = "duration_text")]
    pub url_expiry: Duration,
    /// How long results are kept; then errand deletes them and says they expired.
    #[serde(with = "duration_text")]
    pub retention: Duration,
    /// How often expired results are looked for.
    #[serde(with = "duration_text")]
    pub prune_interval: Duration,
}

impl Default for StorageSettings {
    fn default() -> Self {
        Self {
            backend: StorageBackend::Local,
            local_dir: ".errand/results".into(),
            s3: None,
            signing_key: None,
            url_expiry: Duration::from_secs(15 * 60),
            retention: Duration::from_secs(7 * 24 * 3600),
            prune_interval: Duration::from_secs(60),
        }
    }
}

/// Which storage backend holds results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StorageBackend {
    /// A directory; errand serves the signed download URLs itself.
    Local,
    /// An S3-compatible bucket; downloads are presigned GETs.
    S3,
}

/// An S3-compatible bucket.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct S3Settings {
    /// e.g. `https://s3.eu-west-1.amazonaws.com` or `http://127.0.0.1:9000`.
    pub endpoint: String,
    /// The endpoint people download from, when it differs (presigned URLs name their host).
    #[serde(default)]
    pub public_endpoint: Option<String>,
    #[serde(default = "default_region")]
    pub region: String,
    pub bucket: String,
    /// `endpoint/bucket/key` rather than `bucket.endpoint/key` (most S3-compatible servers).
    #[serde(default)]
    pub path_style: bool,
    /// Else `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY`.
    #[serde(default)]
    pub access_key: Option<SecretString>,
    #[serde(default)]
    pub secret_key: Option<SecretString>,
}

fn default_region() -> String {
    "us-east-1".into()
}

/// A `sql_export` job type: a query whose rows become a file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExportSettings {
    /// The SELECT to export. `:tenant`, `:user` and `:<param>` stand for values
    /// bound from the job (never spliced into the text), e.g. `:from::date`.
    pub query: String,
    #[serde(default)]
    pub format: ExportFormat,
    /// Where to read from (e.g. a read replica); errand's own database when unset.
    #[serde(default)]
    pub source_database_url: Option<SecretString>,
}

/// A `handler = "http"` job type: errand POSTs each attempt to the app's
/// own endpoint, signed (see `jobs/push.rs`), within the type's `timeout`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PushSettings {
    pub url: HttpUrl,
    /// Signs each push (HMAC-SHA256, at least 32 bytes); the app checks it.
    pub signing_secret: SecretString,
}

/// The file format of an export.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExportFormat {
    /// RFC 4180 CSV with a header row, UTF-8.
    #[default]
    Csv,
    /// One JSON object per line.
    Ndjson,
}

/// Completion emails over SMTP.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EmailSettings {
    /// Off: no outbox rows are written and nothing is sent.
    pub enabled: bool,
    pub smtp_host: String,
    pub smtp_port: u16,
    pub security: SmtpSecurity,
    pub username: Option<String>,
    pub password: Option<SecretString>,
    /// `Name <address>` or a bare address.
    pub from: lettre::message::Mailbox,
    /// Delivery attempts before an email is given up on.
    pub max_attempts: u32,
    #[serde(with = "duration_text")]
    pub backoff_base: Duration,
    #[serde(with = "duration_text")]
    pub backoff_max: Duration,
    /// Backstop poll of the outbox (a local job end wakes the sender at once).
    #[serde(with = "duration_text")]
    pub poll_interval: Duration,
    /// Signs the links in emails (at least 32 bytes); derived from
    /// `auth.jwt_secret` when unset, never the secret itself. Changing it
    /// breaks the links of emails already sent.
    pub link_secret: Option<SecretString>,
}

impl Default for EmailSettings {
    fn default() -> Self {
        Self {
            enabled: false,
            smtp_host: "127.0.0.1".into(),
            smtp_port: 25,
            security: SmtpSecurity::None,
            username: None,
            password: None,
            from: lettre::message::Mailbox::new(
                Some("errand".into()),
                lettre::Address::new("errand", "localhost").expect("a valid address"),
            ),
            max_attempts: 12,
            backoff_base: Duration::from_secs(5),
            backoff_max: Duration::from_secs(600),
            poll_interval: Duration::from_secs(1),
            link_secret: None,
        }
    }
}

impl EmailSettings {
    /// The retry policy of deliveries.
    pub fn retry_policy(&self) -> RetryPolicy {
        RetryPolicy { max_attempts: self.max_attempts, base: self.backoff_base, max: self.backoff_max }
    }
}

/// How the SMTP connection is protected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SmtpSecurity {
    /// Plain SMTP (a local relay or a test server).
    None,
    /// STARTTLS, required.
    Starttls,
    /// TLS from the first byte (SMTPS, usually port 465).
    Tls,
}

/// One job type: which handler runs it, how it retries, what params it takes.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobTypeSettings {
    /// A built-in handler (`noop`, `sleep`) or one registered by an embedding crate.
    pub handler: String,
    #[serde(default = "default_max_attempts")]
    pub max_attempts: u32,
    #[serde(default = "default_backoff_base", with = "duration_text")]
    pub backoff_base: Duration,
    #[serde(default = "default_backoff_max", with = "duration_text")]
    pub backoff_max: Duration,
    /// An attempt running longer is cancelled and counts as failed.
    #[serde(default = "default_timeout", with = "duration_text")]
    pub timeout: Duration,
    /// JSON Schema the params must satisfy; any JSON object when absent.
    #[serde(default)]
    pub params_schema: Option<serde_json::Value>,
    /// How people are told about it: "Your {display_name} is ready". Defaults
    /// to the type's name with spaces for underscores.
    #[serde(default)]
    pub display_name: Option<String>,
    /// For `handler = "sql_export"`: the query and format.
    #[serde(default)]
    pub export: Option<ExportSettings>,
    /// For `handler = "http"`: the app's endpoint that errand pushes jobs to.
    #[serde(default)]
    pub http: Option<PushSettings>,
    /// Most jobs of this type running at once across all processes (none
    /// when absent): keeps heavy types from taking every worker and the
    /// database from light ones.
    #[serde(default)]
    pub concurrency: Option<u32>,
}

fn default_max_attempts() -> u32 {
    5
}
fn default_backoff_base() -> Duration {
    Duration::from_secs(1)
}
fn default_backoff_max() -> Duration {
    Duration::from_secs(300)
}
fn default_timeout() -> Duration {
    Duration::from_secs(300)
}

impl JobTypeSettings {
    /// The retry policy these settings describe.
    pub fn retry_policy(&self) -> RetryPolicy {
        RetryPolicy { max_attempts: self.max_attempts, base: self.backoff_base, max: self.backoff_max }
    }
}

/// The `auth.jwt_secret` of the shipped `config.toml`: fine on a laptop,
/// refused on any address other people can reach.
const SHIPPED_DEV_SECRET: &str = "dev-only-secret-change-me-0123456789abcdef";

/// A configuration problem, always naming the key at fault.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read configuration: {0}")]
    Load(#[from] config::ConfigError),
    #[error("invalid configuration value for `{key}`: {reason}")]
    Invalid { key: String, reason: String },
}

pub(crate) fn invalid(key: impl Into<String>, reason: impl Into<String>) -> ConfigError {
    ConfigError::Invalid { key: key.into(), reason: reason.into() }
}

impl Settings {
    /// Reads `path`, then `DATABASE_URL`, then `ERRAND_*` variables, and validates the result.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let mut builder = config::Config::builder().add_source(config::File::from(path).required(true));
        if let Ok(url) = std::env::var("DATABASE_URL") {
            builder = builder.set_override("database.url", url)?;
        }
        let raw = builder
            .add_source(
                config::Environment::with_prefix("ERRAND")
                    .prefix_separator("_")
                    .separator("__")
                    .try_parsing(true)
                    .source(Some(setting_variables())),
            )
            .build()?;
        let settings: Settings = raw.try_deserialize()?;
        settings.validate()?;
        Ok(settings)
    }

    /// Checks what serde cannot: ranges, names, schemas. (Handler names are
    /// checked against the handler registry when the job types are built.)
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.http.public_base_url.has_query_or_fragment() {
            return Err(invalid("http.public_base_url", "must not have a query or fragment: links are made below it"));
        }
        if self.http.workers == Some(0) {
            return Err(invalid("http.workers", "must be at least 1"));
        }
        let database_url = self.database.url.expose_secret();
        if database_url.trim().is_empty() {
            return Err(invalid("database.url", "must not be empty"));
        }
        database_url.parse::<tokio_postgres::Config>().map_err(|e| invalid("database.url", e.to_string()))?;
        if self.database.pool_size < 2 {
            return Err(invalid("database.pool_size", "must be at least 2"));
        }
        if self.auth.jwt_secret.expose_secret().len() < 32 {
            return Err(invalid("auth.jwt_secret", "must be at least 32 bytes"));
        }
        let a = &self.auth;
        for (key, claim) in [
            ("auth.tenant_claim", &a.tenant_claim),
            ("auth.user_claim", &a.user_claim),
            ("auth.email_claim", &a.email_claim),
        ] {
            if claim.trim().is_empty() {
                return Err(invalid(key, "must name a claim"));
            }
        }
        if a.audience.as_deref() == Some("errand-stream") {
            return Err(invalid("auth.audience", "errand-stream is the audience of errand's own stream tickets"));
        }
        let bind = self.http.bind;
        let shipped_secret = self.auth.jwt_secret.expose_secret() == SHIPPED_DEV_SECRET;
        if shipped_secret && !bind.ip().is_loopback() {
            return Err(invalid(
                "auth.jwt_secret",
                format!(
                    "is the development secret shipped in config.toml, which anyone can read, and http.bind \
                     ({bind}) is not a loopback address: set ERRAND_AUTH__JWT_SECRET to a secret of your own"
                ),
            ));
        }
        let w = &self.workers;
        if w.tenant_limit == 0 {
            return Err(invalid("workers.tenant_limit", "must be at least 1"));
        }
        if w.lease < Duration::from_millis(300) {
            return Err(invalid("workers.lease", "must be at least 300ms"));
        }
        if w.poll_interval.is_zero() {
            return Err(invalid("workers.poll_interval", "must be more than zero"));
        }
        let n = &self.notifications;
        if n.keep_alive < Duration::from_millis(100) {
            return Err(invalid("notifications.keep_alive", "must be at least 100ms"));
        }
        if n.stream_ticket_ttl.is_zero() || n.stream_ticket_ttl > Duration::from_secs(3600) {
            return Err(invalid("notifications.stream_ticket_ttl", "must be between 1s and 1h"));
        }
        let e = &self.email;
        if e.enabled {
            if e.smtp_host.trim().is_empty() {
                return Err(invalid("email.smtp_host", "must not be empty"));
            }

            if e.max_attempts == 0 {
                return Err(invalid("email.max_attempts", "must be at least 1"));
            }
            if e.username.is_some() != e.password.is_some() {
                return Err(invalid("email.password", "username and password go together"));
            }
        }
        let st = &self.storage;
        if st.url_expiry < Duration::from_secs(1) || st.url_expiry > Duration::from_secs(7 * 24 * 3600) {
            return Err(invalid("storage.url_expiry", "must be between 1s and 7 days"));
        }
        if st.retention.is_zero() {
            return Err(invalid("storage.retention", "must be more than zero"));
        }
        if st.prune_interval < Duration::from_millis(100) {
            return Err(invalid("storage.prune_interval", "must be at least 100ms"));
        }
        match (st.backend, &st.s3) {
            (StorageBackend::S3, None) => {
                return Err(invalid("storage.s3", "backend = \"s3\" needs an [storage.s3] section"));
            }
            (StorageBackend::S3, Some(s3)) => {
                HttpUrl::parse(&s3.endpoint).map_err(|reason| invalid("storage.s3.endpoint", reason))?;
                if s3.bucket.len() < 3 {
                    return Err(invalid("storage.s3.bucket", "bucket names have 3 to 63 characters"));
                }
                if s3.access_key.is_some() != s3.secret_key.is_some() {
                    return Err(invalid("storage.s3.secret_key", "access_key and secret_key go together"));
                }
            }
            (StorageBackend::Local, _) => {}
        }
        if st.signing_key.as_ref().is_some_and(|k| k.expose_secret().len() < 32) {
            return Err(invalid("storage.signing_key", "must be at least 32 bytes"));
        }
        if self.email.link_secret.as_ref().is_some_and(|k| k.expose_secret().len() < 32) {
            return Err(invalid("email.link_secret", "must be at least 32 bytes"));
        }
        if self.history.retention < Duration::from_secs(1) {
            return Err(invalid("history.retention", "must be at least 1s"));
        }
        if self.job_types.is_empty() {
            return Err(invalid("job_types", "configure at least one job type"));
        }
        for (name, job_type) in &self.job_types {
            let key = |field: &str| format!("job_types.{name}.{field}");
            if crate::domain::JobTypeName::parse(name).is_none() {
                return Err(invalid(format!("job_types.{name}"), "names are 1-64 of a-z, 0-9, _ and -"));
            }
            if job_type.max_attempts == 0 {
                return Err(invalid(key("max_attempts"), "must be at least 1"));
            }
            if job_type.backoff_base > job_type.backoff_max {
                return Err(invalid(key("backoff_base"), "must not exceed backoff_max"));
            }
            if job_type.timeout.is_zero() {
                return Err(invalid(key("timeout"), "must be more than zero"));
            }
            if job_type.concurrency == Some(0) {
                return Err(invalid(key("concurrency"), "must be at least 1 (leave it out for no limit)"));
            }
            match (&job_type.http, job_type.handler == "http") {
                (Some(_), false) => return Err(invalid(key("handler"), "an [http] section needs handler = \"http\"")),
                (None, true) => {
                    return Err(invalid(
                        key("http"),
                        "handler = \"http\" needs an [http] section with url and signing_secret",
                    ));
                }
                (Some(push), true) if push.signing_secret.expose_secret().len() < 32 => {
                    return Err(invalid(key("http.signing_secret"), "must be at least 32 bytes"));
                }
                _ => {}
            }
            match (&job_type.export, job_type.handler == "sql_export") {
                (Some(_), false) => {
                    return Err(invalid(key("handler"), "an [export] section needs handler = \"sql_export\""));
                }
                (None, true) => {
                    return Err(invalid(key("export"), "handler = \"sql_export\" needs an [export] section"));
                }
                (Some(export), true) => {
                    if let Some(url) = &export.source_database_url {
                        url.expose_secret()
                            .parse::<tokio_postgres::Config>()
                            .map_err(|e| invalid(key("export.source_database_url"), e.to_string()))?;
                    }
                }
                (None, false) => {}
            }
            if let Some(schema) = &job_type.params_schema {
                jsonschema::validator_for(schema).map_err(|e| invalid(key("params_schema"), e.to_string()))?;
            }
        }
        Ok(())
    }
}

/// The `ERRAND_SECTION__KEY` variables of the environment. Other `ERRAND_*`
/// variables (`ERRAND_CONFIG`, the scripts' own) are not settings.
fn setting_variables() -> config::Map<String, String> {
    std::env::vars().filter(|(name, _)| name.starts_with("ERRAND_") && name.contains("__")).collect()
}

/// Durations written as text, e.g. `"30s"`, `"1m 30s"`, `"250ms"`.
mod duration_text {
    use super::*;

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let text = String::deserialize(d)?;
        humantime::parse_duration(&text)
            .map_err(|e| serde::de::Error::custom(format!("{e} in {text:?} (e.g. \"30s\")")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(toml: &str) -> Settings {
        let source = config::File::from_str(toml, config::FileFormat::Toml);
        let settings: Settings =
            config::Config::builder().add_source(source).build().unwrap().try_deserialize().unwrap();
        settings.validate().unwrap();
        settings
    }

    /// config.toml shows each default as a commented `# key = value` line; the
    /// default itself lives in the code. Uncommenting every such line must
    /// change nothing, or the file tells people something errand does not do.
    #[test]
    fn the_defaults_config_toml_shows_are_the_defaults() {
        let shipped = include_str!("../../config.toml");
        let uncommented: String = shipped
            .lines()
            .map(|line| match line.strip_prefix("# ") {
                Some(rest) if rest.split_once(" = ").is_some_and(|(key, _)| is_key(key)) => rest,
                _ => line,
            })
            .collect::<Vec<_>>()
            .join("\n");
        assert_ne!(uncommented, shipped, "config.toml shows some defaults");
        assert_eq!(format!("{:?}", parse(&uncommented)), format!("{:?}", parse(shipped)));
    }

    fn is_key(text: &str) -> bool {
        !text.is_empty() && text.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
    }
}
