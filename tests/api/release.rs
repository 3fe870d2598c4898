//! What a team checks before and during an upgrade, with the binary itself:
//! its version and commit, its configuration without a database, and where
//! a database's schema stands against the build (or the SQL to bring it there).

use std::process::{Command, Output};

use crate::helpers::*;

fn errand(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_errand"));
    command.args(["--config", concat!(env!("CARGO_MANIFEST_DIR"), "/config.toml")]).args(args);
    command.env_remove("DATABASE_URL");
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().expect("run errand")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn the_version_names_the_release_and_its_commit() {
    let shown = text(&errand(&["--version"], &[]).stdout);
    let commit = shown
        .trim()
        .strip_prefix(concat!("errand ", env!("CARGO_PKG_VERSION"), " ("))
        .and_then(|s| s.strip_suffix(')'));
    let commit = commit.unwrap_or_else(|| panic!("{shown}"));
    assert!(commit == "unknown" || (commit.len() == 12 && commit.bytes().all(|b| b.is_ascii_hexdigit())), "{shown}");
}

#[test]
fn config_check_names_every_problem_without_a_database() {
    let valid = errand(&["config", "check"], &[]);
    assert_eq!(valid.status.code(), Some(0), "{}", text(&valid.stderr));
    assert!(text(&valid.stdout).contains("valid"), "{}", text(&valid.stdout));
    let problems = [
        ("ERRAND_I18N__DEFAULT_LOCALE", "tlh", "i18n.default_locale"),
        ("ERRAND_WORKERS__USER_LIMIT", "6", "workers.user_limit"),
        ("ERRAND_JOB_TYPES__NOOP__HANDLER", "nope", "job_types.noop.handler"),
    ];
    let refused = errand(&["config", "check"], &problems.map(|(key, value, _)| (key, value)));
    assert_eq!(refused.status.code(), Some(2));
    let said = text(&refused.stderr);
    for (_, _, key) in problems {
        assert!(said.contains(&format!("`{key}`")), "{key} named: {said}");
    }
}

#[test]
fn print_sql_gives_the_migrations_after_a_version() {
    let all = text(&errand(&["migrate", "--print-sql"], &[]).stdout);
    assert!(all.starts_with("-- V1__baseline.sql\n"), "{}", &all[..all.len().min(200)]);
    assert!(all.contains("CREATE TABLE jobs ("));
    let after_the_first = errand(&["migrate", "--print-sql", "--from", "1"], &[]);
    assert_eq!(after_the_first.status.code(), Some(0));
    assert!(!text(&after_the_first.stdout).contains("CREATE TABLE jobs ("), "V1 is left out");
}

#[actix_web::test]
async fn migrate_check_tells_behind_current_and_ahead_apart() {
    let db = TestDb::create_empty().await;
    let check = || errand(&["migrate", "--check"], &[("DATABASE_URL", &db.url)]);
    let behind = check();
    assert_eq!(behind.status.code(), Some(1), "{}", text(&behind.stderr));
    assert!(text(&behind.stdout).contains("V1"), "what is pending is named");
    let migrated = errand(&["migrate"], &[("DATABASE_URL", &db.url)]);
    assert_eq!(migrated.status.code(), Some(0), "{}", text(&migrated.stderr));
    assert_eq!(check().status.code(), Some(0));
    let newer = "INSERT INTO refinery_schema_history (version, name, applied_on, checksum)
                 SELECT 9999, 'newer', applied_on, checksum FROM refinery_schema_history WHERE version = 1";
    db.client().await.execute(newer, &[]).await.unwrap();
    let ahead = check();
    assert_eq!(ahead.status.code(), Some(2));
    assert!(text(&ahead.stdout).contains("V9999"), "{}", text(&ahead.stdout));
    // An older binary still starts on a newer release's schema (a rolling upgrade).
    let older = errand(&["migrate"], &[("DATABASE_URL", &db.url)]);
    assert_eq!(older.status.code(), Some(0), "{}", text(&older.stderr));
}
