//! What a team checks before and during an upgrade, with the binary itself:
//! its version and commit, its configuration without a database, and where
//! a database's schema stands against the build (or the SQL to bring it there).

use std::process::Command;

use crate::helpers::*;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn the_version_names_the_release_and_its_commit() {
    let shown = text(&run_errand(&["--version"], &[]).stdout);
    let commit = shown
        .trim()
        .strip_prefix(concat!("errand ", env!("CARGO_PKG_VERSION"), " ("))
        .and_then(|s| s.strip_suffix(')'));
    let commit = commit.unwrap_or_else(|| panic!("{shown}"));
    assert!(commit == "unknown" || (commit.len() == 12 && commit.bytes().all(|b| b.is_ascii_hexdigit())), "{shown}");
}

#[test]
fn config_check_names_every_problem_without_a_database() {
    let valid = run_errand(&["config", "check"], &[]);
    assert_eq!(valid.status.code(), Some(0), "{}", text(&valid.stderr));
    assert!(text(&valid.stdout).contains("valid"), "{}", text(&valid.stdout));
    let problems = [
        ("ERRAND_I18N__DEFAULT_LOCALE", "tlh", "i18n.default_locale"),
        ("ERRAND_WORKERS__USER_LIMIT", "6", "workers.user_limit"),
        ("ERRAND_JOB_TYPES__NOOP__HANDLER", "nope", "job_types.noop.handler"),
    ];
    let refused = run_errand(&["config", "check"], &problems.map(|(key, value, _)| (key, value)));
    assert_eq!(refused.status.code(), Some(2));
    let said = text(&refused.stderr);
    for (_, _, key) in problems {
        assert!(said.contains(&format!("`{key}`")), "{key} named: {said}");
    }
}

#[test]
fn print_sql_gives_the_migrations_after_a_version() {
    let all = text(&run_errand(&["migrate", "--print-sql"], &[]).stdout);
    assert!(all.starts_with("-- V1__baseline.sql\n"), "{}", &all[..all.len().min(200)]);
    assert!(all.contains("CREATE TABLE jobs ("));
    let after_the_first = run_errand(&["migrate", "--print-sql", "--from", "1"], &[]);
    assert_eq!(after_the_first.status.code(), Some(0));
    assert!(!text(&after_the_first.stdout).contains("CREATE TABLE jobs ("), "V1 is left out");
}

#[actix_web::test]
async fn migrate_check_tells_behind_current_and_ahead_apart() {
    let db = TestDb::create_empty().await;
    let check = || run_errand(&["migrate", "--check"], &[("DATABASE_URL", &db.url)]);
    let behind = check();
    assert_eq!(behind.status.code(), Some(1), "{}", text(&behind.stderr));
    assert!(text(&behind.stdout).contains("V1"), "what is pending is named");
    let migrated = run_errand(&["migrate"], &[("DATABASE_URL", &db.url)]);
    assert_eq!(migrated.status.code(), Some(0), "{}", text(&migrated.stderr));
    assert_eq!(check().status.code(), Some(0));
    let newer = "INSERT INTO refinery_schema_history (version, name, applied_on, checksum)
                 SELECT 9999, 'newer', applied_on, checksum FROM refinery_schema_history WHERE version = 1";
    db.client().await.execute(newer, &[]).await.unwrap();
    let ahead = check();
    assert_eq!(ahead.status.code(), Some(2));
    assert!(text(&ahead.stdout).contains("V9999"), "{}", text(&ahead.stdout));
    // An older binary still starts on a newer release's schema (a rolling upgrade).
    let older = run_errand(&["migrate"], &[("DATABASE_URL", &db.url)]);
    assert_eq!(older.status.code(), Some(0), "{}", text(&older.stderr));
}

#[actix_web::test]
async fn without_migrating_at_start_serve_refuses_a_database_that_lacks_migrations_and_runs_on_one_that_has_them() {
    let db = TestDb::create_empty().await;
    let mut serve = Command::new(env!("CARGO_BIN_EXE_errand"));
    serve.args(["--config", concat!(env!("CARGO_MANIFEST_DIR"), "/config.toml"), "serve"]);
    serve.env("DATABASE_URL", &db.url).env("ERRAND_DATABASE__MIGRATE_AT_START", "false");
    serve.env("ERRAND_HTTP__BIND", "127.0.0.1:0").stdout(std::process::Stdio::null());
    let mut child = serve.stderr(std::process::Stdio::piped()).spawn().expect("run errand serve");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            panic!("errand served a database without its migrations");
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    let mut said = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut said).unwrap();
    assert!(!status.success());
    assert!(said.contains("database.migrate_at_start") && said.contains("V1"), "{said}");
    let tables: i64 = db.scalar("SELECT count(*) FROM pg_tables WHERE tablename = 'jobs'", &[]).await;
    assert_eq!(tables, 0, "nothing was migrated");

    // Migrated by the team's own run, it serves (and applies nothing).
    let migrated = TestDb::create().await;
    let app = TestApp::builder().on(migrated).configure(|s| s.database.migrate_at_start = false).spawn().await;
    let job = app.create(&token("t1", "alice"), "noop", serde_json::json!({})).await;
    app.wait_until_finished(&token("t1", "alice"), &job, std::time::Duration::from_secs(30)).await;
}
