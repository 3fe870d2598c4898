//! Bad configuration stops errand at start-up with a message naming the key.

use std::process::Command;

pub(super) fn errand_with(env: &[(&str, &str)]) -> (i32, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_errand"));
    command.args(["--config", concat!(env!("CARGO_MANIFEST_DIR"), "/config.toml"), "migrate"]);
    command.env_remove("DATABASE_URL");
    for (key, value) in env {
        command.env(key, value);
    }
    let output = command.output().expect("run errand");
    (output.status.code().unwrap_or(-1), String::from_utf8_lossy(&output.stderr).into_owned())
}

#[test]
fn bad_values_are_refused_naming_their_key() {
    let cases = [
        ("ERRAND_WORKERS__TENANT_LIMIT", "0", "workers.tenant_limit"),
        ("ERRAND_WORKERS__TENANT_LIMIT", "many", "tenant_limit"),
        ("ERRAND_WORKERS__USER_LIMIT", "6", "workers.user_limit"),
        ("ERRAND_WORKERS__USER_LIMIT", "0", "user_limit"),
        ("ERRAND_HTTP__BIND", "not-an-address", "http.bind"),
        ("ERRAND_EMAIL__FROM", "not a mailbox", "email.from"),
        ("ERRAND_HTTP__PUBLIC_BASE_URL", "errand.example.com", "http.public_base_url"),
        ("ERRAND_HTTP__PUBLIC_BASE_URL", "https://errand.example.com/?a=1", "http.public_base_url"),
        ("ERRAND_AUTH__JWKS_URL", "ftp://idp.example.com/jwks.json", "auth.jwks_url"),
        ("ERRAND_AUTH__JWT_SECRET", "short", "auth.jwt_secret"),
        ("ERRAND_WORKERS__LEASE", "soon", "lease"),
        ("ERRAND_DATABASE__VACUUM_QUEUE_EVERY", "0s", "database.vacuum_queue_every"),
        ("ERRAND_DATABASE__VACUUM_QUEUE_EVERY", "often", "vacuum_queue_every"),
        (
            "ERRAND_JOB_TYPES__EXPORT_SALES_REPORT__EXPORT__MAX_TRANSACTION",
            "0s",
            "job_types.export_sales_report.export.max_transaction",
        ),
        ("ERRAND_DATABASE__URL", "", "database.url"),
        ("ERRAND_DATABASE__URL", "postgres://u@db/e?sslmode=always", "database.url"),
        ("ERRAND_DATABASE__URL", "postgres://u@db/e?sslmode=verify-full", "sslrootcert"),
        (
            "ERRAND_DATABASE__URL",
            "postgres://u@db/e?sslmode=verify-ca&sslrootcert=/nonexistent.pem",
            "/nonexistent.pem",
        ),
        ("ERRAND_JOB_TYPES__SLEEP__MAX_ATTEMPTS", "0", "job_types.sleep.max_attempts"),
        ("ERRAND_JOB_TYPES__SLEEP__PRIORITY", "5", "job_types.sleep.priority"),
        ("ERRAND_JOB_TYPES__SLEEP__ADMISSION_KEY", "{report}", "job_types.sleep.admission_key"),
        ("ERRAND_JOB_TYPES__SLEEP__ON_CONFLICT", "join", "job_types.sleep.on_conflict"),
        ("ERRAND_AUTH__JWKS_URL", "http://idp.example.com/jwks.json", "auth.jwks_url"),
        ("ERRAND_TELEMETRY__TRACE_URL", "https://tempo.example.com/trace/", "telemetry.trace_url"),
        ("ERRAND_TELEMETRY__TRACE_URL", "tempo/{trace_id}", "telemetry.trace_url"),
        ("ERRAND_ENCRYPTION__KEYS", "v1:c2hvcnQ=", "encryption.keys"),
        ("ERRAND_SCHEDULES__OWNER_INACTIVE_AFTER", "1h", "schedules.owner_inactive_after"),
        ("ERRAND_I18N__DEFAULT_LOCALE", "tlh", "i18n.default_locale"),
        ("ERRAND_JOB_TYPES__SLEEP__DISPLAY_NAMES__DE", "Schlaf", "job_types.sleep.display_names.de"),
    ];
    for (key, value, named) in cases {
        let (code, stderr) = errand_with(&[(key, value)]);
        assert_eq!(code, 2, "{key}={value}: {stderr}");
        assert!(stderr.contains(named), "{key}={value} should name {named}: {stderr}");
    }
}

#[test]
fn a_database_that_refuses_errand_is_quoted_with_its_sqlstate() {
    let url = reqwest::Url::parse(&crate::helpers::admin_url()).unwrap();
    let mut refused = url.clone();
    refused.set_username("no_such_role").unwrap();
    let (code, stderr) = errand_with(&[("ERRAND_DATABASE__URL", refused.as_str())]);
    assert_ne!(code, 0, "{stderr}");
    assert!(stderr.contains("role \"no_such_role\" does not exist (SQLSTATE 28000)"), "{stderr}");
}

#[test]
fn a_missing_config_file_is_named() {
    let output = Command::new(env!("CARGO_BIN_EXE_errand"))
        .args(["--config", "/nonexistent/errand.toml", "migrate"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("/nonexistent/errand.toml"));
}

#[test]
fn errand_token_prints_a_token_for_the_configured_secret() {
    let output = Command::new(env!("CARGO_BIN_EXE_errand"))
        .args(["--config", concat!(env!("CARGO_MANIFEST_DIR"), "/config.toml")])
        .args(["token", "--tenant", "acme", "--user", "alice", "--email", "a@example.com", "--ttl", "5m"])
        .env("ERRAND_AUTH__JWT_SECRET", crate::helpers::SECRET)
        .output()
        .unwrap();
    assert!(output.status.success());
    let token = String::from_utf8(output.stdout).unwrap();
    let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::HS256);
    validation.set_required_spec_claims(&["exp"]);
    let key = jsonwebtoken::DecodingKey::from_secret(crate::helpers::SECRET.as_bytes()).unwrap();
    let claims =
        jsonwebtoken::decode::<errand::domain::tokens::UserClaims>(token.trim(), &key, &validation).unwrap().claims;
    assert_eq!((claims.tenant.as_str(), claims.sub.as_str()), ("acme", "alice"));
    assert_eq!(claims.email.as_deref(), Some("a@example.com"));
    let ttl = claims.exp - crate::helpers::now_secs();
    assert!((250..=300).contains(&ttl), "ttl {ttl}");
}

#[test]
fn errand_token_link_puts_the_token_in_a_fragment_of_the_public_url() {
    let output = Command::new(env!("CARGO_BIN_EXE_errand"))
        .args(["--config", concat!(env!("CARGO_MANIFEST_DIR"), "/config.toml")])
        .args(["token", "--tenant", "demo-1", "--user", "alice", "--link"])
        .env("ERRAND_AUTH__JWT_SECRET", crate::helpers::SECRET)
        .env("ERRAND_HTTP__PUBLIC_BASE_URL", "https://errand.example.com/app")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let link = String::from_utf8(output.stdout).unwrap();
    let (page, token) = link.trim().split_once("#token=").expect("the token after #token=");
    assert_eq!(page, "https://errand.example.com/app/", "the demo page, below the public base URL");
    let key = jsonwebtoken::DecodingKey::from_secret(crate::helpers::SECRET.as_bytes()).unwrap();
    let validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::HS256);
    let claims = jsonwebtoken::decode::<errand::domain::tokens::UserClaims>(token, &key, &validation).unwrap().claims;
    assert_eq!((claims.tenant.as_str(), claims.sub.as_str()), ("demo-1", "alice"));
}

#[test]
fn the_shipped_secret_is_refused_on_an_address_others_can_reach() {
    let (code, stderr) = errand_with(&[("ERRAND_HTTP__BIND", "0.0.0.0:8080")]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("auth.jwt_secret") && stderr.contains("ERRAND_AUTH__JWT_SECRET"), "{stderr}");
    let own_secret =
        [("ERRAND_HTTP__BIND", "0.0.0.0:8080"), ("ERRAND_AUTH__JWT_SECRET", "a-secret-of-our-own-0123456789abcdef")];
    let (_, stderr) = errand_with(&own_secret);
    assert!(!stderr.contains("auth.jwt_secret"), "{stderr}");
}

#[test]
fn the_shipped_secret_is_refused_behind_a_proxy_that_others_reach() {
    let (code, stderr) = errand_with(&[("ERRAND_HTTP__PUBLIC_BASE_URL", "https://errand.example.com")]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("auth.jwt_secret") && stderr.contains("http.public_base_url"), "{stderr}");
    let (_, stderr) = errand_with(&[("ERRAND_HTTP__PUBLIC_BASE_URL", "http://localhost:8080")]);
    assert!(!stderr.contains("auth.jwt_secret"), "a loopback public URL keeps the dev secret usable: {stderr}");
}

#[test]
fn an_smtp_password_is_never_sent_in_the_clear_to_another_machine() {
    let relay = |host: &str, security: &str| {
        errand_with(&[
            ("ERRAND_EMAIL__ENABLED", "true"),
            ("ERRAND_EMAIL__SMTP_HOST", host),
            ("ERRAND_EMAIL__SECURITY", security),
            ("ERRAND_EMAIL__USERNAME", "errand"),
            ("ERRAND_EMAIL__PASSWORD", "hunter2"),
        ])
    };
    let (code, stderr) = relay("smtp.example.com", "none");
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("email.security"), "{stderr}");
    for (host, security) in [("smtp.example.com", "starttls"), ("127.0.0.1", "none"), ("localhost", "none")] {
        let (_, stderr) = relay(host, security);
        assert!(!stderr.contains("email.security"), "{host} {security}: {stderr}");
    }
}

#[test]
fn a_token_can_be_made_anywhere_with_the_secret_and_says_what_it_needs_without() {
    let elsewhere = std::env::temp_dir();
    let run = |secret: Option<&str>| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_errand"));
        command.current_dir(&elsewhere).args(["token", "--tenant", "acme", "--user", "alice"]);
        command.env_remove("ERRAND_CONFIG").env_remove("ERRAND_AUTH__JWT_SECRET");
        if let Some(secret) = secret {
            command.env("ERRAND_AUTH__JWT_SECRET", secret);
        }
        command.output().expect("run errand token")
    };
    let made = run(Some("a-secret-of-our-own-0123456789abcdef"));
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    assert_eq!(String::from_utf8_lossy(&made.stdout).trim().split('.').count(), 3);
    let refused = run(None);
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("ERRAND_AUTH__JWT_SECRET") && stderr.contains("--config"), "{stderr}");
}

#[tokio::test]
async fn json_logs_are_one_object_per_line() {
    let db = crate::helpers::TestDb::create_empty().await;
    let (code, stderr) =
        errand_with(&[("ERRAND_DATABASE__URL", &db.url), ("ERRAND_LOG__FORMAT", "json"), ("RUST_LOG", "info")]);
    assert_eq!(code, 0, "{stderr}");
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert!(!lines.is_empty(), "migrating logs what it applies");
    for line in lines {
        let entry: serde_json::Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert!(entry["level"].is_string() && entry["fields"].is_object(), "{line}");
    }
}

#[test]
fn printing_the_settings_shows_no_secret() {
    let path = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/config.toml"));
    let settings = errand::config::Settings::load(path).expect("the shipped config loads");
    let printed = format!("{settings:?}");
    assert!(printed.contains("jwt_secret"), "the field is listed: {printed}");
    assert!(!printed.contains("dev-only-secret"), "but not its value: {printed}");
    assert!(!printed.contains("postgres://"), "nor the database URL: {printed}");
}

#[tokio::test]
async fn serve_prints_the_address_it_actually_bound() {
    let db = crate::helpers::TestDb::create().await;
    let secret = ("ERRAND_AUTH__JWT_SECRET", "a-secret-of-our-own-0123456789abcdef");
    let errand = crate::helpers::ErrandProcess::start(&db, &[("ERRAND_HTTP__BIND", "0.0.0.0:0"), secret]);
    let address = &errand.listening;
    assert!(address.starts_with("0.0.0.0:") && !address.ends_with(":0"), "{address}");
}

#[test]
fn a_trace_exporter_errand_cannot_make_is_refused_naming_its_variable() {
    let (code, stderr) = errand_with(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4317"),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("OTEL_EXPORTER_OTLP_PROTOCOL"), "{stderr}");
}
