//! errand behind PgBouncer: in session mode it works as on a direct
//! connection; in transaction mode, which cannot give it a session (LISTEN,
//! its migration lock, prepared statements), it refuses to start, saying why.

use std::process::Command;
use std::time::Duration;

use serde_json::json;

use crate::helpers::*;

#[actix_web::test]
async fn behind_pgbouncer_in_session_mode_errand_works_end_to_end() {
    let bouncer = Bouncer::start("session");
    let db = TestDb::create().await;
    let url = bouncer.url(&db);
    // An API-only process and a worker that hears of work only by NOTIFY
    // (its backstop poll is an hour): the job runs only if LISTEN works through PgBouncer.
    let api = ErrandProcess::start(&db, &[("ERRAND_DATABASE__URL", &url), ("ERRAND_WORKERS__GLOBAL_LIMIT", "0")]);
    let _worker = ErrandProcess::start(&db, &[("ERRAND_DATABASE__URL", &url), ("ERRAND_WORKERS__POLL_INTERVAL", "1h")]);
    let alice = token("acme", "alice");
    let job = api.create(&alice, "noop", json!({})).await;
    let finished = api.wait_until_finished(&alice, &job, Duration::from_secs(30)).await;
    assert_eq!(finished["status"], "completed", "{finished}");
    assert_eq!(db.notifications_for(&job).await, 1);
    assert_eq!(api.get_without_token("/readyz").await.status(), reqwest::StatusCode::OK);
}

#[actix_web::test]
async fn behind_pgbouncer_in_transaction_mode_errand_refuses_to_start_saying_why() {
    let bouncer = Bouncer::start("transaction");
    let db = TestDb::create().await;
    let output = Command::new(env!("CARGO_BIN_EXE_errand"))
        .args(["--config", concat!(env!("CARGO_MANIFEST_DIR"), "/config.toml"), "migrate"])
        .env_remove("DATABASE_URL")
        .env("ERRAND_DATABASE__URL", bouncer.url(&db))
        .output()
        .expect("run errand");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(stderr.contains("pool_mode = session"), "{stderr}");
}
