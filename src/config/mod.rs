//! Typed settings: `config.toml`, then `DATABASE_URL`, then `ERRAND_SECTION__KEY`
//! environment variables (e.g. `ERRAND_AUTH__JWT_SECRET`), checked once at
//! start-up so that a bad value stops errand with a message naming its key.
//!
//! What a single value must be is its type (`values.rs`: secrets of 32
//! bytes, PostgreSQL URLs (read as libpq reads them, TLS included:
//! `postgres.rs`, which the store connects by) and HTTP URLs; `NonZero*` counts; enums); what is left
//! to [`Settings::validate`] are ranges and rules across fields, per section.

mod http_url;
mod job_types;
pub mod postgres;
mod push;
mod sections;
mod values;

pub use http_url::{HttpUrl, is_loopback_host};
pub use job_types::{
    ConflictName, DebounceSetting, ExportSettings, HandlerKind, JobTypeSettings, OnConflictSetting, PushSettings,
    RedactedField,
};
pub use push::{PushServices, WebPushSettings};
pub use sections::{
    AuthSettings, BatchSettings, DatabaseSettings, EmailSettings, EncryptionSettings, HistorySettings, HttpSettings,
    I18nSettings, LogFormat, LogSettings, NotificationSettings, OWNER_INACTIVE_AFTER, OverloadSettings,
    PreferenceSettings, QuotaSettings, RateLimitSettings, S3Settings, ScheduleSettings, SmtpSecurity, StorageBackend,
    StorageSettings, TelemetrySettings, TokenSourceSettings, WebhookSettings, WorkerSettings,
};
pub use values::{CountCap, LongSecret, PostgresUrl};

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use secrecy::ExposeSecret;
use serde::Deserialize;

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
    #[serde(default)]
    pub quotas: QuotaSettings,
    #[serde(default)]
    pub rate_limits: RateLimitSettings,
    #[serde(default)]
    pub overload: OverloadSettings,
    #[serde(default)]
    pub webhooks: WebhookSettings,
    /// Web Push to people's devices.
    #[serde(default)]
    pub push: WebPushSettings,
    #[serde(default)]
    pub batches: BatchSettings,
    #[serde(default)]
    pub schedules: ScheduleSettings,
    #[serde(default)]
    pub telemetry: TelemetrySettings,
    #[serde(default)]
    pub encryption: EncryptionSettings,
    #[serde(default)]
    pub i18n: I18nSettings,
    /// Job types by name: what `POST /jobs/{type}` accepts.
    pub job_types: BTreeMap<String, JobTypeSettings>,
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

/// Fails with `reason` for `key` unless `ok`.
fn check(ok: bool, key: impl Into<String>, reason: impl Into<String>) -> Result<(), ConfigError> {
    if ok { Ok(()) } else { Err(invalid(key, reason)) }
}

impl Settings {
    /// Reads `path`, then `DATABASE_URL`, then `ERRAND_*` variables, and validates the result.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let settings = Self::read(path)?;
        settings.validate()?;
        Ok(settings)
    }

    /// [`Self::load`] without the checks of [`Self::validate`]: the file and
    /// the environment as they parse.
    pub fn read(path: &Path) -> Result<Self, ConfigError> {
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
                    // Lists, comma-separated: ERRAND_NOTIFICATIONS__PREFERENCES__REQUIRED=alerts,security
                    .list_separator(",")
                    .with_list_parse_key("notifications.preferences.required")
                    .with_list_parse_key("webhooks.allow_hosts")
                    .with_list_parse_key("push.allow_hosts")
                    .with_list_parse_key("push.private_hosts")
                    .with_list_parse_key("encryption.keys")
                    .source(Some(setting_variables())),
            )
            .build()?;
        Ok(raw.try_deserialize()?)
    }

    /// Checks what the types cannot: ranges, and rules across fields: the
    /// first of [`Self::problems`]. (Handler names are checked against the
    /// handler registry when the job types are built.)
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.problems().into_iter().next().map_or(Ok(()), Err)
    }

    /// Every problem of these settings, each naming its key (one a section,
    /// as each check stops at its first): what `errand config check` prints.
    pub fn problems(&self) -> Vec<ConfigError> {
        let mut checked = vec![
            self.validate_server(),
            self.validate_loops(),
            self.validate_email_and_storage(),
            self.push.validate(),
            self.validate_trace_url(),
            self.keyring().map(drop).map_err(|why| invalid("encryption.keys", why)),
            self.validate_languages(),
            check(!self.job_types.is_empty(), "job_types", "configure at least one job type"),
        ];
        checked.extend(self.job_types.iter().map(|(name, job_type)| validate_job_type(name, job_type)));
        let rules = self.notification_rules();
        let categories = rules.categories();
        checked.extend(self.notifications.preferences.required.iter().map(|required| {
            check(
                categories.contains(required.as_str()),
                "notifications.preferences.required",
                format!("no job type has the category {required:?}"),
            )
        }));
        checked.into_iter().filter_map(Result::err).collect()
    }

    fn validate_trace_url(&self) -> Result<(), ConfigError> {
        let Some(page) = self.telemetry.trace_page("0af7651916cd43dd8448eb211c80319c") else { return Ok(()) };
        let is_web = url::Url::parse(&page).is_ok_and(|url| matches!(url.scheme(), "http" | "https"));
        let has_id = self.telemetry.trace_url.as_ref().is_some_and(|url| url.contains("{trace_id}"));
        check(is_web && has_id, "telemetry.trace_url", "must be an http(s) URL with {trace_id} in it")
    }

    /// The default locale and each type's translated names are of shipped catalogues.
    fn validate_languages(&self) -> Result<(), ConfigError> {
        let shipped = || crate::domain::Locale::all().map(|l| l.as_str()).collect::<Vec<_>>().join(", ");
        check(
            crate::domain::Locale::parse(&self.i18n.default_locale).is_some(),
            "i18n.default_locale",
            format!("no catalogue for {:?}; errand ships {}", self.i18n.default_locale, shipped()),
        )?;
        for (name, job_type) in &self.job_types {
            for tag in job_type.display_names.keys() {
                check(
                    crate::domain::Locale::parse(tag).is_some(),
                    format!("job_types.{name}.display_names.{tag}"),
                    format!("no catalogue for {tag:?}; errand ships {}", shipped()),
                )?;
            }
        }
        Ok(())
    }

    /// The notification preferences' rules: each job type's category (its
    /// own name unless set), the defaults, the required categories.
    pub fn notification_rules(&self) -> crate::domain::NotificationRules {
        let categories = self
            .job_types
            .iter()
            .map(|(name, job_type)| (name.clone(), job_type.category.clone().unwrap_or_else(|| name.clone())))
            .collect();
        let p = &self.notifications.preferences;
        let rules =
            crate::domain::NotificationRules::new(categories, p.required.iter().cloned().collect(), p.in_app, p.email);
        if self.push.enabled { rules.with_push(p.push) } else { rules }
    }

    /// Each job type with a breaker, and its `breaker_after`.
    pub fn breakers(&self) -> Vec<(String, u32)> {
        let types = self.job_types.iter();
        types.filter_map(|(name, t)| t.breaker_after.map(|after| (name.clone(), after.get()))).collect()
    }

    /// The job types whose params and results are kept sealed (`encrypt = true`).
    pub fn sealed_types(&self) -> std::collections::HashSet<String> {
        self.job_types.iter().filter(|(_, t)| t.encrypt).map(|(name, _)| name.clone()).collect()
    }

    fn validate_server(&self) -> Result<(), ConfigError> {
        let (http, auth) = (&self.http, &self.auth);
        check(
            !http.public_base_url.has_query_or_fragment(),
            "http.public_base_url",
            "must not have a query or fragment: links are made below it",
        )?;
        check(self.database.pool_size >= 2, "database.pool_size", "must be at least 2")?;
        check(http.body_timeout >= Duration::from_millis(100), "http.body_timeout", "must be at least 100ms")?;
        check(http.send_timeout >= Duration::from_secs(1), "http.send_timeout", "must be at least 1s")?;
        for (key, claim) in [
            ("auth.tenant_claim", &auth.tenant_claim),
            ("auth.user_claim", &auth.user_claim),
            ("auth.email_claim", &auth.email_claim),
        ] {
            check(!claim.trim().is_empty(), key, "must name a claim")?;
        }
        for (key, audience) in [
            ("auth.audience", &auth.audience),
            ("auth.operators.audience", &auth.operators.audience),
            ("auth.services.audience", &auth.services.audience),
        ] {
            check(
                audience.as_deref() != Some("errand-stream"),
                key,
                "errand-stream is the audience of errand's own stream tickets",
            )?;
        }
        check(!auth.jwks_refresh.is_zero(), "auth.jwks_refresh", "must be more than zero")?;
        if let Some(jwks) = &auth.jwks_url {
            // Keys fetched in the clear could be swapped on the way: a token
            // forger's keys. Plain http is for a provider on this machine.
            check(
                !jwks.is_plain_http_off_loopback(),
                "auth.jwks_url",
                "must be https:// unless the identity provider is on this machine (loopback)",
            )?;
        }
        // The shipped secret is fine only where nobody else can reach errand:
        // neither its bind nor the address people use (a reverse proxy in
        // front of a loopback bind) may be another machine's.
        let (bind, public) = (http.bind, &http.public_base_url);
        let shipped_secret = auth.jwt_secret.expose_secret() == SHIPPED_DEV_SECRET;
        check(
            !shipped_secret || (bind.ip().is_loopback() && public.is_loopback()),
            "auth.jwt_secret",
            format!(
                "is the development secret shipped in config.toml, which anyone can read, and errand is \
                 reachable from other machines (http.bind {bind}, http.public_base_url {public}): set \
                 ERRAND_AUTH__JWT_SECRET to a secret of your own"
            ),
        )
    }

    fn validate_loops(&self) -> Result<(), ConfigError> {
        let (w, n) = (&self.workers, &self.notifications);
        check(w.lease >= Duration::from_millis(300), "workers.lease", "must be at least 300ms")?;
        check(!w.poll_interval.is_zero(), "workers.poll_interval", "must be more than zero")?;
        check(
            self.database.vacuum_queue_every.is_none_or(|every| !every.is_zero()),
            "database.vacuum_queue_every",
            "must be more than zero (\"never\" leaves the queue to autovacuum)",
        )?;
        check(
            w.user_limit.is_none_or(|user| user <= w.tenant_limit),
            "workers.user_limit",
            format!("must be at most workers.tenant_limit ({})", w.tenant_limit),
        )?;
        check(n.keep_alive >= Duration::from_millis(100), "notifications.keep_alive", "must be at least 100ms")?;
        check(
            !n.stream_ticket_ttl.is_zero() && n.stream_ticket_ttl <= Duration::from_secs(3600),
            "notifications.stream_ticket_ttl",
            "must be between 1s and 1h",
        )?;
        check(self.history.retention >= Duration::from_secs(1), "history.retention", "must be at least 1s")?;
        check(
            self.schedules.owner_inactive_after.is_none_or(|away| away >= Duration::from_secs(24 * 3600)),
            "schedules.owner_inactive_after",
            "must be at least 1d (or \"never\")",
        )?;
        check(
            (Duration::from_secs(1)..=Duration::from_secs(24 * 3600)).contains(&self.quotas.retry_after),
            "quotas.retry_after",
            "must be between 1s and 24h",
        )?;
        let r = &self.rate_limits;
        for (key, budget) in [
            ("rate_limits.per_user", r.per_user),
            ("rate_limits.creates_per_user", r.creates_per_user),
            ("rate_limits.per_tenant", r.per_tenant),
        ] {
            check(budget.0 != Some(0), key, "must be at least 1 (or \"unlimited\")")?;
        }
        check(
            (Duration::from_secs(1)..=Duration::from_secs(60)).contains(&r.burst),
            "rate_limits.burst",
            "must be between 1s and 1m",
        )
    }

    /// The keys that seal secrets at rest: `encryption.keys`, then the one
    /// derived from `auth.jwt_secret`.
    pub fn keyring(&self) -> Result<crate::domain::sealing::Keyring, String> {
        crate::domain::sealing::Keyring::new(&self.encryption.keys, self.auth.jwt_secret.expose_secret().as_bytes())
    }

    /// The quotas every submission keeps to.
    pub fn quotas(&self) -> crate::domain::Quotas {
        let q = &self.quotas;
        if !q.enabled {
            return crate::domain::Quotas { retry_after: q.retry_after, ..crate::domain::Quotas::off() };
        }
        crate::domain::Quotas {
            defaults: crate::domain::TenantCaps {
                per_user: q.max_unfinished_per_user.0,
                per_tenant: q.max_unfinished_per_tenant.0,
            },
            per_user_of_type: self
                .job_types
                .iter()
                .filter_map(|(name, t)| Some((name.clone(), t.max_unfinished_per_user?)))
                .collect(),
            retry_after: q.retry_after,
        }
    }

    fn validate_email_and_storage(&self) -> Result<(), ConfigError> {
        let e = &self.email;
        if e.enabled {
            check(!e.smtp_host.trim().is_empty(), "email.smtp_host", "must not be empty")?;
            check(e.username.is_some() == e.password.is_some(), "email.password", "username and password go together")?;
            // A password sent in the clear to another machine can be read on the way.
            check(
                e.password.is_none() || e.security != SmtpSecurity::None || is_loopback_host(&e.smtp_host),
                "email.security",
                format!(
                    "is \"none\" while email.password is set and email.smtp_host ({}) is not this machine: \
                     use \"starttls\" or \"tls\"",
                    e.smtp_host
                ),
            )?;
        }
        let st = &self.storage;
        check(
            (Duration::from_secs(1)..=Duration::from_secs(7 * 24 * 3600)).contains(&st.url_expiry),
            "storage.url_expiry",
            "must be between 1s and 7 days",
        )?;
        check(!st.retention.is_zero(), "storage.retention", "must be more than zero")?;
        check(st.max_upload_bytes > 0, "storage.max_upload_bytes", "must be more than zero")?;
        check(st.prune_interval >= Duration::from_millis(100), "storage.prune_interval", "must be at least 100ms")?;
        check(
            (64 * 1024..=1024 * 1024 * 1024).contains(&st.part_size),
            "storage.part_size",
            "must be between 64 KiB and 1 GiB",
        )?;
        check(
            st.backend != StorageBackend::S3 || st.part_size >= 5 * 1024 * 1024,
            "storage.part_size",
            "S3 takes parts of 5 MiB (5242880 bytes) at least",
        )?;
        match (st.backend, &st.s3) {
            (StorageBackend::S3, None) => Err(invalid("storage.s3", "backend = \"s3\" needs an [storage.s3] section")),
            (StorageBackend::S3, Some(s3)) => {
                HttpUrl::parse(&s3.endpoint).map_err(|reason| invalid("storage.s3.endpoint", reason))?;
                check(s3.bucket.len() >= 3, "storage.s3.bucket", "bucket names have 3 to 63 characters")?;
                check(
                    s3.access_key.is_some() == s3.secret_key.is_some(),
                    "storage.s3.secret_key",
                    "access_key and secret_key go together",
                )
            }
            (StorageBackend::Local, _) => Ok(()),
        }
    }
}

fn validate_job_type(name: &str, job_type: &JobTypeSettings) -> Result<(), ConfigError> {
    let key = |field: &str| format!("job_types.{name}.{field}");
    check(
        crate::domain::JobTypeName::parse(name).is_some(),
        format!("job_types.{name}"),
        "names are 1-64 of a-z, 0-9, _ and -",
    )?;
    check(
        job_type.category.as_deref().is_none_or(|category| crate::domain::JobTypeName::parse(category).is_some()),
        key("category"),
        "categories are 1-64 of a-z, 0-9, _ and -",
    )?;
    check(job_type.backoff_base <= job_type.backoff_max, key("backoff_base"), "must not exceed backoff_max")?;
    check(job_type.retention.is_none_or(|r| !r.is_zero()), key("retention"), "must be more than zero")?;
    check(job_type.result_retention.is_none_or(|r| !r.is_zero()), key("result_retention"), "must be more than zero")?;
    check(!job_type.timeout.is_zero(), key("timeout"), "must be more than zero")?;
    check(crate::domain::PRIORITY_RANGE.contains(&job_type.priority), key("priority"), "must be -4 to 4")?;
    check(
        job_type.on_conflict.is_none() || job_type.admission_key.is_some(),
        key("on_conflict"),
        "needs an admission_key",
    )?;
    if let Some(crate::domain::OnConflict::Debounce { debounce, max_delay }) =
        job_type.on_conflict.as_ref().map(OnConflictSetting::policy)
    {
        check(!debounce.is_zero(), key("on_conflict.debounce"), "must be more than zero")?;
        check(max_delay >= debounce, key("on_conflict.max_delay"), "must be at least the debounce")?;
    }
    // Each kind with settings of its own has its section, and only it.
    let kind = &job_type.handler;
    for (section, present, owner) in [
        ("http", job_type.http.is_some(), HandlerKind::Http),
        ("export", job_type.export.is_some(), HandlerKind::SqlExport),
    ] {
        if present && *kind != owner {
            return Err(invalid(key("handler"), format!("an [{section}] section needs handler = {:?}", owner.name())));
        }
        check(
            present || *kind != owner,
            key(section),
            format!("handler = {:?} needs an [{section}] section", owner.name()),
        )?;
    }
    if let Some(export) = &job_type.export {
        check(
            export.max_transaction.is_none_or(|most| !most.is_zero()),
            key("export.max_transaction"),
            "must be more than zero (or \"never\")",
        )?;
    }
    if let Some(schema) = &job_type.params_schema {
        jsonschema::validator_for(schema).map_err(|e| invalid(key("params_schema"), e.to_string()))?;
    }
    Ok(())
}

/// The `ERRAND_SECTION__KEY` variables of the environment. Other `ERRAND_*`
/// variables (`ERRAND_CONFIG`, the scripts' own) are not settings.
fn setting_variables() -> config::Map<String, String> {
    std::env::vars().filter(|(name, _)| name.starts_with("ERRAND_") && name.contains("__")).collect()
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

    #[test]
    fn quotas_are_on_by_default_with_the_job_types_caps_and_can_be_turned_off() {
        let shipped = include_str!("../../config.toml");
        let quotas = parse(shipped).quotas();
        assert!(quotas.enforced());
        assert_eq!((quotas.defaults.per_user, quotas.defaults.per_tenant), (Some(1000), Some(10_000)));
        assert_eq!(quotas.per_user_of_type.get("export_sales_report"), Some(&5));
        let off = parse(&shipped.replace("[quotas]", "[quotas]\nenabled = false")).quotas();
        assert!(!off.enforced(), "off means no cap at all, a job type's included");
    }

    #[test]
    fn an_admission_key_takes_a_policy_and_a_debounce_its_bounds() {
        let shipped = include_str!("../../config.toml");
        let keyed = |rest: &str| {
            let toml = shipped.replace(
                "[job_types.sleep]",
                &format!("[job_types.sleep]\nadmission_key = \"{{user}}:{{params.ms}}\"\n{rest}"),
            );
            let source = config::File::from_str(&toml, config::FileFormat::Toml);
            let settings: Settings = config::Config::builder().add_source(source).build()?.try_deserialize()?;
            settings.validate().map(|()| settings.job_types["sleep"].admission().map(|(_, policy)| policy))
        };
        assert_eq!(keyed("").unwrap(), Some(crate::domain::OnConflict::Join));
        assert_eq!(keyed("on_conflict = \"reject\"").unwrap(), Some(crate::domain::OnConflict::Reject));
        let debounce = keyed("on_conflict = { debounce = \"5s\", max_delay = \"1m\" }").unwrap();
        let expected = crate::domain::OnConflict::Debounce {
            debounce: Duration::from_secs(5),
            max_delay: Duration::from_secs(60),
        };
        assert_eq!(debounce, Some(expected));
        let short = keyed("on_conflict = { debounce = \"5s\", max_delay = \"1s\" }").unwrap_err();
        assert!(short.to_string().contains("job_types.sleep.on_conflict.max_delay"), "{short}");
        let unknown = keyed("on_conflict = \"merge\"").unwrap_err();
        assert!(unknown.to_string().contains("on_conflict"), "{unknown}");
    }

    fn is_key(text: &str) -> bool {
        !text.is_empty() && text.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
    }
}
