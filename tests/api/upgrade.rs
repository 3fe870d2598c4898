//! A rolling upgrade from the previous release to this build on one
//! database, as docs/deploy.md describes it: the old process serves and works
//! while the new build migrates and starts beside it, then the old one stops.
//! Nothing accepted by either is lost, run twice or notified twice. (The
//! migrations being append-only is held here too: had this build edited one
//! the release applied, its `migrate` would refuse the database.)

use std::time::Duration;

use serde_json::json;

use crate::helpers::*;

#[actix_web::test]
async fn a_rolling_upgrade_from_the_previous_release_loses_nothing_and_runs_nothing_twice() {
    let previous = PreviousRelease::from_env();
    let db = TestDb::create_empty().await;
    let mail = MailServer::start().await;
    let smtp_port = mail.smtp_port.to_string();
    let settings = [("ERRAND_EMAIL__ENABLED", "true"), ("ERRAND_EMAIL__SMTP_PORT", smtp_port.as_str())];
    let migrated = previous.run(&["migrate"], &db.url);
    assert!(migrated.status.success(), "{}", String::from_utf8_lossy(&migrated.stderr));
    let mut old = previous.start(&db.url, &settings);
    let alice = token_for("acme", "alice", "alice@example.com");
    // Work in flight on the old release: running and waiting.
    let mut ids = Vec::new();
    for _ in 0..6 {
        ids.push(old.create(&alice, "sleep", json!({"ms": 400})).await);
    }

    let migrate = run_errand(&["migrate"], &[("ERRAND_DATABASE__URL", &db.url)]);
    assert!(migrate.status.success(), "this build migrates the release's database: {migrate:?}");
    let new = ErrandProcess::start(&db, &settings);
    // Both serve: one intent sent to each is one job.
    let to_old = old.submit(&alice, "sleep", "one-intent", json!({"ms": 100})).await;
    let to_new = new.submit(&alice, "sleep", "one-intent", json!({"ms": 100})).await;
    let intent = id_of(to_old).await;
    assert_eq!(id_of(to_new).await, intent);
    ids.push(intent);
    for _ in 0..3 {
        ids.push(old.create(&alice, "sleep", json!({"ms": 300})).await);
        ids.push(new.create(&alice, "noop", json!({})).await);
    }

    // The old process stops as a rolling upgrade stops it; the new one finishes everything.
    assert!(old.terminate().success());
    for id in &ids {
        let job = new.wait_until_finished(&alice, id, Duration::from_secs(60)).await;
        assert_eq!(job["status"], "completed", "{job}");
        assert_eq!(job["attempts"], 1, "run once: {job}");
        assert_eq!(db.notifications_for(id).await, 1, "one notification for {id}");
    }
    let jobs: i64 = db.scalar("SELECT count(*) FROM jobs", &[]).await;
    assert_eq!(jobs as usize, ids.len());
    mail.assert_all_sent(&db, ids.len()).await;
}
