//! The sections of the configuration, each setting declared once with its
//! default beside it. A section that may be left out entirely takes its
//! defaults from those same declarations ([`defaults`]).

use std::net::SocketAddr;
use std::num::{NonZeroU32, NonZeroUsize};
use std::path::PathBuf;
use std::time::Duration;

use secrecy::SecretString;
use serde::Deserialize;
use serde_inline_default::serde_inline_default;

use super::HttpUrl;
use super::values::{CountCap, LongSecret, PostgresUrl, defaults, duration_or_never, duration_text};
use crate::domain::RetryPolicy;

/// Implements `Default` from the fields' own defaults.
macro_rules! default_from_fields {
    ($($section:ty),*) => {$(
        impl Default for $section {
            fn default() -> Self {
                defaults()
            }
        }
    )*};
}

default_from_fields!(
    HttpSettings,
    WorkerSettings,
    LogSettings,
    HistorySettings,
    NotificationSettings,
    PreferenceSettings,
    StorageSettings,
    WebhookSettings,
    BatchSettings,
    ScheduleSettings,
    EmailSettings,
    QuotaSettings,
    RateLimitSettings,
    OverloadSettings
);

#[serde_inline_default]
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpSettings {
    /// Listen address, e.g. `127.0.0.1:8080`; port 0 picks a free port.
    #[serde_inline_default(SocketAddr::from(([127, 0, 0, 1], 8080)))]
    pub bind: SocketAddr,
    /// HTTP worker threads; defaults to the number of cores.
    #[serde(default)]
    pub workers: Option<NonZeroUsize>,
    /// Where people reach errand: the base of links in emails and of signed download URLs.
    #[serde_inline_default(HttpUrl::parse("http://127.0.0.1:8080").expect("a valid URL"))]
    pub public_base_url: HttpUrl,
    /// A request's body must arrive within this (408 otherwise); an upload
    /// of a result file may have no gap between bytes longer than this.
    #[serde_inline_default(Duration::from_secs(30))]
    #[serde(with = "duration_text")]
    pub body_timeout: Duration,
    /// A client that takes none of what errand sends for this long (a
    /// reader who stopped reading a report or a stream) is disconnected: the
    /// connection's TCP_USER_TIMEOUT, so the kernel, not a task, keeps it.
    #[serde_inline_default(Duration::from_secs(30))]
    #[serde(with = "duration_text")]
    pub send_timeout: Duration,
}

#[serde_inline_default]
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DatabaseSettings {
    /// A libpq-style URL, e.g. `postgres://postgres@127.0.0.1:5432/errand`.
    pub url: PostgresUrl,
    /// Where migrations run, as the tables' owner: errand then runs as
    /// `url`'s role, which must own no table (a member of `errand_runtime`).
    /// Absent: `url` migrates too.
    #[serde(default)]
    pub migration_url: Option<PostgresUrl>,
    /// `serve` applies the migrations the database lacks as it starts. Off
    /// for a team that applies `errand migrate --print-sql` with its own
    /// tool: `serve` then only checks, and refuses to start on a database
    /// that lacks some (one a newer release migrated is fine).
    #[serde_inline_default(true)]
    pub migrate_at_start: bool,
    /// At least 2: a claim and an end may need one each at once.
    #[serde_inline_default(16)]
    pub pool_size: usize,
    /// How often errand looks at `job_queue`'s dead rows, and vacuums it
    /// once they pass 1,000, rather than wait for autovacuum's visit (every
    /// `autovacuum_naptime`, a minute by default); `"never"` leaves it to
    /// autovacuum. Needs the tables' owner's rights: with a
    /// `migration_url`, autovacuum alone keeps it.
    #[serde_inline_default(Some(Duration::from_secs(2)))]
    #[serde(with = "duration_or_never")]
    pub vacuum_queue_every: Option<Duration>,
}

#[serde_inline_default]
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthSettings {
    /// errand's own secret: signs stream tickets, and verifies API tokens
    /// (HS256) unless `jwks_url` is set.
    pub jwt_secret: LongSecret,
    /// An identity provider's JWKS: API tokens are then verified with its
    /// keys (RS/PS/ES/EdDSA), never with the shared secret.
    #[serde(default)]
    pub jwks_url: Option<HttpUrl>,
    /// A key id not seen yet fetches the JWKS again, at most this often; a
    /// failed fetch is not tried again sooner either.
    #[serde_inline_default(Duration::from_secs(30))]
    #[serde(with = "duration_text")]
    pub jwks_min_refresh: Duration,
    /// Known keys are fetched again this often, so a key the provider
    /// removed stops being trusted.
    #[serde_inline_default(Duration::from_secs(600))]
    #[serde(with = "duration_text")]
    pub jwks_refresh: Duration,
    /// When set, API tokens must carry this `iss`.
    #[serde(default)]
    pub issuer: Option<String>,
    /// When set, API tokens must carry this `aud`; when not, tokens with any
    /// `aud` are refused.
    #[serde(default)]
    pub audience: Option<String>,
    /// The claims naming the caller's tenant, user and email address.
    #[serde_inline_default("tenant".into())]
    pub tenant_claim: String,
    #[serde_inline_default("sub".into())]
    pub user_claim: String,
    #[serde_inline_default("email".into())]
    pub email_claim: String,
    /// The claim naming the person's language (OpenID Connect's `locale`,
    /// e.g. `fr-CA`); their browser's `Accept-Language` where the token has
    /// none, then `[i18n] default_locale`.
    #[serde_inline_default("locale".into())]
    pub locale_claim: String,
    /// Where operators' tokens come from, when not from the same issuer and
    /// audience as users'.
    #[serde(default)]
    pub operators: TokenSourceSettings,
    /// Where backend services' tokens come from (the services that act for
    /// a tenant's users with `Errand-On-Behalf-Of`), when not from the same
    /// issuer and audience as users'.
    #[serde(default)]
    pub services: TokenSourceSettings,
}

/// `[auth.operators]`, `[auth.services]`: an identity provider's operators
/// (or backend services) apart from its end users. With either set, such a
/// token must carry it, so no end user's token (whatever scope its client
/// asked for) reaches `/admin` or acts for another user.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenSourceSettings {
    /// The `iss` these tokens must carry (instead of `auth.issuer`).
    #[serde(default)]
    pub issuer: Option<String>,
    /// The `aud` these tokens must carry (instead of `auth.audience`).
    #[serde(default)]
    pub audience: Option<String>,
}

/// How this process takes and runs work.
#[serde_inline_default]
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkerSettings {
    /// Jobs this process runs at once, across all tenants. 0 makes an API-only
    /// process: it records jobs and announces them, and other processes run them.
    #[serde_inline_default(100)]
    pub global_limit: usize,
    /// Jobs one tenant may have running at once, across all processes: of
    /// the default 5, one person runs 4 (`user_limit`) and the fifth is kept
    /// for a colleague's click.
    #[serde_inline_default(NonZeroU32::new(5).expect("not zero"))]
    pub tenant_limit: NonZeroU32,
    /// Jobs one user may have running at once, of their tenant's
    /// `tenant_limit`, across all processes. Unset: all of a tenant's slots
    /// but one (at least one), so that while one person's backlog runs, a
    /// colleague's click starts at once (see `errand_tenant_next` in the
    /// baseline). Set it to `tenant_limit` where a tenant is one user.
    #[serde(default)]
    pub user_limit: Option<NonZeroU32>,
    /// How long a claim lasts without a heartbeat; renewed every third of it.
    #[serde_inline_default(Duration::from_secs(30))]
    #[serde(with = "duration_text")]
    pub lease: Duration,
    /// Backstop poll for work that no notification announced (other processes, due retries).
    #[serde_inline_default(Duration::from_secs(1))]
    #[serde(with = "duration_text")]
    pub poll_interval: Duration,
    /// How long a SIGTERM waits for running jobs before releasing them.
    #[serde_inline_default(Duration::from_secs(10))]
    #[serde(with = "duration_text")]
    pub shutdown_grace: Duration,
    /// A tenant's supervisor stops after this long with nothing to do.
    #[serde_inline_default(Duration::from_secs(60))]
    #[serde(with = "duration_text")]
    pub supervisor_idle: Duration,
}

impl WorkerSettings {
    /// `user_limit`, or its default: `tenant_limit` but one, at least one.
    pub fn user_limit(&self) -> u32 {
        self.user_limit.map_or(self.tenant_limit.get().saturating_sub(1).max(1), NonZeroU32::get)
    }
}

/// Caps on unfinished work (waiting or running jobs), so that one user or
/// tenant cannot fill the queue for everyone. A new job over a cap gets 429
/// `quota_exceeded`; replays of existing keys are answered as ever. An
/// operator can override the caps per tenant (`PUT /admin/tenants/{tenant}/quotas`),
/// and a job type can cap each user's jobs of that type (`max_unfinished_per_user`).
#[serde_inline_default]
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QuotaSettings {
    /// Off: no cap is kept, not even a job type's or a tenant's override.
    #[serde_inline_default(true)]
    pub enabled: bool,
    /// Unfinished jobs one user may have, of every type; `"unlimited"` for no cap.
    #[serde_inline_default(CountCap(Some(1000)))]
    pub max_unfinished_per_user: CountCap,
    /// Unfinished jobs one tenant may have, of all its users; `"unlimited"` for no cap.
    #[serde_inline_default(CountCap(Some(10_000)))]
    pub max_unfinished_per_tenant: CountCap,
    /// The `Retry-After` of a refusal: how long until it is worth trying again.
    #[serde_inline_default(Duration::from_secs(30))]
    #[serde(with = "duration_text")]
    pub retry_after: Duration,
}

/// Budgets of requests a minute on the user routes (reads, the feed, stream
/// tickets, creates), each a steady rate of which at most `burst`'s worth
/// may be spent at once. Past one, 429 `rate_limited` with `Retry-After`;
/// every answer carries the `RateLimit` and `RateLimit-Policy` headers. Each process
/// allows its share: the budget over the number of errand processes on the
/// database. `"unlimited"` turns a budget off.
#[serde_inline_default]
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RateLimitSettings {
    /// Requests a minute of one user.
    #[serde_inline_default(CountCap(Some(600)))]
    pub per_user: CountCap,
    /// Of those, new jobs (`POST /jobs/{type}`) a minute.
    #[serde_inline_default(CountCap(Some(120)))]
    pub creates_per_user: CountCap,
    /// Requests a minute of all of one tenant's users together.
    #[serde_inline_default(CountCap(Some(6000)))]
    pub per_tenant: CountCap,
    /// How many seconds' worth of a budget may be spent at once (1s to 1m).
    #[serde_inline_default(Duration::from_secs(10))]
    #[serde(with = "duration_text")]
    pub burst: Duration,
}

/// When a process sheds new submissions (503 `overloaded` with
/// `Retry-After`) at once, rather than letting them wait until they time out.
/// Reads are never shed.
#[serde_inline_default]
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OverloadSettings {
    /// Submissions waiting to be written, past which new ones are shed.
    #[serde_inline_default(NonZeroUsize::new(2048).expect("not zero"))]
    pub max_pending_submissions: NonZeroUsize,
    /// How long every database connection must stay busy, with callers
    /// waiting for one, before new submissions are shed.
    #[serde_inline_default(Duration::from_secs(1))]
    #[serde(with = "duration_text")]
    pub pool_saturated_for: Duration,
}

/// How errand writes its log (to stderr; the level comes from `RUST_LOG`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogSettings {
    #[serde(default)]
    pub format: LogFormat,
}

/// The keys that seal secrets kept at rest (`domain::sealing`).
#[derive(Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EncryptionSettings {
    /// Key-encryption keys, `"<version>:<base64 of 32 bytes>"`: the first
    /// wraps new tenants' data keys, every one unwraps (put a new key first,
    /// then run `errand keys rotate`). None: a key derived from
    /// `auth.jwt_secret` (version `v0`), which also unwraps whatever it
    /// wrapped after keys are configured.
    #[serde(default)]
    pub keys: Vec<String>,
}

impl std::fmt::Debug for EncryptionSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EncryptionSettings").field("keys", &format!("{} redacted", self.keys.len())).finish()
    }
}

/// Where people read errand's traces (exported with OTLP as the standard
/// `OTEL_*` variables say: `telemetry::traces`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TelemetrySettings {
    /// A trace's page in the tracing backend, `{trace_id}` standing for its
    /// id (e.g. `https://tempo.example.com/trace/{trace_id}`): the console
    /// links a job to the trace of the request that recorded it.
    pub trace_url: Option<String>,
}

impl TelemetrySettings {
    /// The page of the trace `trace_id`, if a page is configured.
    pub fn trace_page(&self, trace_id: &str) -> Option<String> {
        self.trace_url.as_ref().map(|url| url.replace("{trace_id}", trace_id))
    }
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
#[serde_inline_default]
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HistorySettings {
    /// Finished jobs (with their notifications, emails and idempotency keys)
    /// are deleted this long after they were created and finished, but never
    /// while their result file is still downloadable.
    #[serde_inline_default(Duration::from_secs(90 * 24 * 3600))]
    #[serde(with = "duration_text")]
    pub retention: Duration,
    /// Operators' actions (`operator_actions`, whose filters may hold
    /// personal data) are deleted this long after they were taken.
    #[serde_inline_default(Duration::from_secs(365 * 24 * 3600))]
    #[serde(with = "duration_text")]
    pub audit_retention: Duration,
}

/// `[i18n]`: the languages errand speaks to people in.
#[serde_inline_default]
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct I18nSettings {
    /// The language of people who ask for none errand ships (a tag of
    /// `templates/locales/`: `en`, `fr`).
    #[serde_inline_default("en".into())]
    pub default_locale: String,
}

impl Default for I18nSettings {
    fn default() -> Self {
        Self { default_locale: "en".into() }
    }
}

impl I18nSettings {
    /// The default locale (English where it names none shipped, which
    /// `Settings::validate` refuses at start).
    pub fn default_locale(&self) -> crate::domain::Locale {
        crate::domain::Locale::parse(&self.default_locale).unwrap_or(crate::domain::Locale::ENGLISH)
    }
}

/// The live notification stream.
#[serde_inline_default]
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NotificationSettings {
    /// How often an idle stream sends a keep-alive comment.
    #[serde_inline_default(Duration::from_secs(15))]
    #[serde(with = "duration_text")]
    pub keep_alive: Duration,
    /// How long a stream ticket (for `GET /notifications/stream?ticket=`) is valid.
    #[serde_inline_default(Duration::from_secs(60))]
    #[serde(with = "duration_text")]
    pub stream_ticket_ttl: Duration,
    /// Live streams one user may hold open on one process; the next gets 429
    /// `too_many_streams` (each browser tab holds one).
    #[serde_inline_default(NonZeroUsize::new(10).expect("not zero"))]
    pub max_streams_per_user: NonZeroUsize,
    /// Stream tickets one user may hold unused at once (each opens a stream
    /// within `stream_ticket_ttl`); the next gets 429 `too_many_streams`.
    #[serde_inline_default(NonZeroUsize::new(20).expect("not zero"))]
    pub max_unused_tickets_per_user: NonZeroUsize,
    /// Live streams one process holds open for one tenant's users, of all
    /// of them: a tenant with many users (or many made-up ones) leaves room
    /// for the others.
    #[serde_inline_default(NonZeroUsize::new(1_000).expect("not zero"))]
    pub max_streams_per_tenant: NonZeroUsize,
    /// Live streams one process holds open, of all users.
    #[serde_inline_default(NonZeroUsize::new(10_000).expect("not zero"))]
    pub max_streams: NonZeroUsize,
    /// What each channel does until a user chooses, and what no one can turn off.
    #[serde(default)]
    pub preferences: PreferenceSettings,
}

/// Bulk actions: `POST /batches/{type}`.
#[serde_inline_default]
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BatchSettings {
    /// Items (children) one batch may have. A batch is recorded in one
    /// statement and its request body read whole (JSON), so this bounds both.
    #[serde_inline_default(NonZeroUsize::new(10_000).expect("not zero"))]
    pub max_items: NonZeroUsize,
}

/// `schedules.owner_inactive_after` unless set.
pub const OWNER_INACTIVE_AFTER: Duration = Duration::from_secs(90 * 24 * 3600);

/// Users' own recurring jobs: `POST /schedules/{type}` (of a type whose
/// section says `schedulable = true`).
#[serde_inline_default]
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScheduleSettings {
    /// Schedules one user may have.
    #[serde_inline_default(NonZeroU32::new(100).expect("not zero"))]
    pub max_per_user: NonZeroU32,
    /// How often each process looks for due schedules.
    #[serde_inline_default(Duration::from_secs(1))]
    #[serde(with = "duration_text")]
    pub poll_interval: Duration,
    /// How late an occurrence may fire and still count as on time; older
    /// ones count as missed (errand was down, or the schedule paused), and
    /// the schedule's `missed` policy decides.
    #[serde_inline_default(Duration::from_secs(300))]
    #[serde(with = "duration_text")]
    pub misfire_grace: Duration,
    /// A schedule whose owner has not signed in for this long pauses itself
    /// when it next falls due, and its owner finds why in their feed (a
    /// person who left the company is not mailed reports for ever);
    /// `"never"`: schedules run whoever signs in.
    #[serde_inline_default(Some(OWNER_INACTIVE_AFTER))]
    #[serde(with = "duration_or_never")]
    pub owner_inactive_after: Option<Duration>,
}

/// Tenants' webhook endpoints.
#[serde_inline_default]
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebhookSettings {
    /// Hosts exempt from the rules on endpoints (HTTPS only, public
    /// addresses only): for development and tests, e.g. `["127.0.0.1"]`.
    #[serde(default)]
    pub allow_hosts: Vec<String>,
    /// Endpoints one tenant may register.
    #[serde_inline_default(NonZeroUsize::new(20).expect("not zero"))]
    pub max_endpoints_per_tenant: NonZeroUsize,
    /// How long one delivery attempt may take.
    #[serde_inline_default(Duration::from_secs(10))]
    #[serde(with = "duration_text")]
    pub timeout: Duration,
    /// Attempts of one delivery, the first included (with the backoff below:
    /// 6 to 7 hours of an endpoint's outage).
    #[serde_inline_default(NonZeroU32::new(16).expect("not zero"))]
    pub max_attempts: NonZeroU32,
    #[serde_inline_default(Duration::from_secs(10))]
    #[serde(with = "duration_text")]
    pub backoff_base: Duration,
    #[serde_inline_default(Duration::from_secs(3600))]
    #[serde(with = "duration_text")]
    pub backoff_max: Duration,
    /// An endpoint whose last this many deliveries failed (each out of
    /// attempts) is disabled: it gets nothing more until registered again.
    #[serde_inline_default(NonZeroU32::new(5).expect("not zero"))]
    pub disable_after: NonZeroU32,
    /// How often the deliveries due are looked for.
    #[serde_inline_default(Duration::from_secs(1))]
    #[serde(with = "duration_text")]
    pub poll_interval: Duration,
    /// A delivery an admin has sent again may be sent again once more only
    /// after this (429 `redelivered_too_soon` before).
    #[serde_inline_default(Duration::from_secs(60))]
    #[serde(with = "duration_text")]
    pub redeliver_cooldown: Duration,
}

impl WebhookSettings {
    /// The retry policy of deliveries.
    pub fn retry_policy(&self) -> RetryPolicy {
        RetryPolicy { max_attempts: self.max_attempts.get(), base: self.backoff_base, max: self.backoff_max }
    }
}

/// Notification preferences: each user chooses, per category of job (a job
/// type's `category`) and per channel, whether a job's end reaches them.
#[serde_inline_default]
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PreferenceSettings {
    /// Whether ends reach people in the app (the feed, live streams) until they choose.
    #[serde_inline_default(true)]
    pub in_app: bool,
    /// Whether ends reach people by email until they choose.
    #[serde_inline_default(true)]
    pub email: bool,
    /// Whether ends reach people's subscribed devices by Web Push until they
    /// choose (when `[push]` is enabled).
    #[serde_inline_default(true)]
    pub push: bool,
    /// Categories no one can turn off (e.g. security alerts).
    #[serde(default)]
    pub required: Vec<String>,
}

/// Where job results are stored and for how long.
#[serde_inline_default]
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StorageSettings {
    #[serde_inline_default(StorageBackend::Local)]
    pub backend: StorageBackend,
    /// The directory of the `local` backend.
    #[serde_inline_default(".errand/results".into())]
    pub local_dir: PathBuf,
    /// The local backend keeps its files sealed under their tenants' data
    /// keys (`storage::sealed_file`); off where the disk is encrypted
    /// otherwise and the CPU is wanted elsewhere. Files are read either way.
    #[serde_inline_default(true)]
    pub seal_files: bool,
    /// The bucket of the `s3` backend.
    #[serde(default)]
    pub s3: Option<S3Settings>,
    /// Signs download URLs of the `local` backend; derived from `auth.jwt_secret` when unset.
    #[serde(default)]
    pub signing_key: Option<LongSecret>,
    /// How long a download URL works; a fresh one is made on every read.
    #[serde_inline_default(Duration::from_secs(15 * 60))]
    #[serde(with = "duration_text")]
    pub url_expiry: Duration,
    /// How long results are kept; then errand deletes them and says they expired.
    #[serde_inline_default(Duration::from_secs(7 * 24 * 3600))]
    #[serde(with = "duration_text")]
    pub retention: Duration,
    /// How often expired results are looked for.
    #[serde_inline_default(Duration::from_secs(60))]
    #[serde(with = "duration_text")]
    pub prune_interval: Duration,
    /// The largest result file an external worker may store (streamed
    /// through errand or put to a presigned URL); larger is 413.
    #[serde_inline_default(1024 * 1024 * 1024)]
    pub max_upload_bytes: u64,
    /// An export is uploaded in parts of about this many bytes, and records a
    /// checkpoint after each (a resumed export starts after the last one).
    /// Each running export holds one part in memory. S3 takes parts of 5 MiB
    /// at least.
    #[serde_inline_default(8 * 1024 * 1024)]
    pub part_size: u64,
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
#[serde_inline_default]
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct S3Settings {
    /// e.g. `https://s3.eu-west-1.amazonaws.com` or `http://127.0.0.1:9000`
    /// (an http(s) URL: checked by `Settings::validate`, and kept as written
    /// for the S3 client).
    pub endpoint: String,
    /// The endpoint people download from, when it differs (presigned URLs name their host).
    #[serde(default)]
    pub public_endpoint: Option<String>,
    #[serde_inline_default("us-east-1".into())]
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

/// Completion emails over SMTP.
#[serde_inline_default]
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmailSettings {
    /// Off: no outbox rows are written and nothing is sent.
    #[serde(default)]
    pub enabled: bool,
    #[serde_inline_default("127.0.0.1".into())]
    pub smtp_host: String,
    #[serde_inline_default(25)]
    pub smtp_port: u16,
    #[serde_inline_default(SmtpSecurity::None)]
    pub security: SmtpSecurity,
    #[serde(default)]
    pub username: Option<String>,
    #[serde(default)]
    pub password: Option<SecretString>,
    /// `Name <address>` or a bare address.
    #[serde_inline_default("errand <errand@localhost>".parse().expect("a valid mailbox"))]
    pub from: lettre::message::Mailbox,
    /// Delivery attempts before an email is given up on.
    #[serde_inline_default(NonZeroU32::new(12).expect("not zero"))]
    pub max_attempts: NonZeroU32,
    #[serde_inline_default(Duration::from_secs(5))]
    #[serde(with = "duration_text")]
    pub backoff_base: Duration,
    #[serde_inline_default(Duration::from_secs(600))]
    #[serde(with = "duration_text")]
    pub backoff_max: Duration,
    /// Backstop poll of the outbox (a local job end wakes the sender at once).
    #[serde_inline_default(Duration::from_secs(1))]
    #[serde(with = "duration_text")]
    pub poll_interval: Duration,
    /// Signs the links in emails; derived from `auth.jwt_secret` when unset,
    /// never the secret itself. Changing it breaks the links of emails already sent.
    #[serde(default)]
    pub link_secret: Option<LongSecret>,
    /// Where people change their notification preferences (your app's page
    /// with `<errand-preferences>`): the unsubscribe page links there.
    /// errand's own page (`http.public_base_url`) when unset.
    #[serde(default)]
    pub preferences_url: Option<HttpUrl>,
}

impl EmailSettings {
    /// The retry policy of deliveries.
    pub fn retry_policy(&self) -> RetryPolicy {
        RetryPolicy { max_attempts: self.max_attempts.get(), base: self.backoff_base, max: self.backoff_max }
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
