//! Claims whose commit's answer never arrived (a failover, a network cut):
//! what they took is given back at once, not left leased to a process that
//! will never run it. The answer is lost by a proxy that cuts the connection
//! after the server committed (see `helpers/cutter.rs`).

use std::time::Duration;

use errand::domain::{Caller, Outcome, TenantId, UserId};
use errand::store::{BatchClaim, ClaimRequest, Completion, Ender, Store, TypeLimits};
use serde_json::json;
use uuid::Uuid;

use crate::helpers::*;

const LEASE: Duration = Duration::from_secs(30);
/// Well within the lease: a give-back is not a lease running out.
const GIVEN_BACK_WITHIN: Duration = Duration::from_secs(10);

/// Logs every change of `table`'s `state` in `state_log`, oldest first, so
/// that a test can tell a claim given back from one that never committed.
async fn log_states(db: &TestDb, table: &str) {
    let sql = format!(
        "CREATE TABLE state_log (n serial PRIMARY KEY, state text NOT NULL);
         CREATE FUNCTION log_state() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN INSERT INTO state_log (state) VALUES (NEW.state::text); RETURN NULL; END $$;
         CREATE TRIGGER log_state AFTER UPDATE OF state ON {table} FOR EACH ROW EXECUTE FUNCTION log_state();"
    );
    db.client().await.batch_execute(&sql).await.unwrap();
}

async fn logged_states(db: &TestDb) -> Vec<String> {
    let rows = db.client().await.query("SELECT state FROM state_log ORDER BY n", &[]).await.unwrap();
    rows.iter().map(|row| row.get(0)).collect()
}

/// A store reaching `db` through a cutter, and the cutter.
async fn store_behind_cutter(db: &TestDb) -> (Store, ReplyCutter) {
    let cutter = ReplyCutter::start(&db.url).await;
    (Store::connect(&cutter.url, 2).unwrap(), cutter)
}

/// Claims the one queued job and completes it, as its worker would.
async fn claim_and_complete(store: &Store) {
    let limits = TypeLimits::default();
    let claimed = store.queue().claim(&claim_request(Uuid::new_v4(), &limits)).await.unwrap().jobs.remove(0);
    let outcome = Outcome::Completed { result: None };
    let done = Completion { id: claimed.id, lease: claimed.lease, outcome, ender: Ender::Worker };
    store.queue().finish_many_if_running(&[done]).await.unwrap();
}

/// Waits until one queued job is due again, unleased, and returns its attempts so far.
async fn waits_again(db: &TestDb) -> i32 {
    let due = "SELECT count(*) FROM job_queue WHERE state = 'available' AND lease_owner IS NULL AND claim_id IS NULL";
    eventually(GIVEN_BACK_WITHIN, "the claimed job is given back", || async { db.scalar::<i64>(due, &[]).await == 1 })
        .await;
    db.scalar("SELECT attempt FROM job_queue WHERE state = 'available'", &[]).await
}

#[tokio::test]
async fn jobs_taken_by_a_claim_whose_answer_was_lost_are_given_back_at_once() {
    let (db, store) = migrated_store().await;
    log_states(&db, "job_queue").await;
    store.submissions().submit(&new_job("acme", "u", "k", "noop", json!({}))).await.unwrap();
    let (behind, cutter) = store_behind_cutter(&db).await;
    let limits = TypeLimits::default();

    cutter.arm();
    let error = behind.queue().claim(&claim_request(Uuid::new_v4(), &limits)).await.unwrap_err();
    assert!(error.is_connection_lost(), "{error}");
    assert_eq!(cutter.cuts(), 1);
    assert_eq!(waits_again(&db).await, 0, "the attempt that never started is not counted");
    assert_eq!(logged_states(&db).await, ["running", "available"], "the claim committed, then was given back");

    let claimed = store.queue().claim(&claim_request(Uuid::new_v4(), &limits)).await.unwrap().jobs;
    assert_eq!(claimed.len(), 1);
    assert_eq!(claimed[0].attempt, 1, "its first attempt");
}

#[tokio::test]
async fn a_claim_beside_submissions_whose_answer_was_lost_keeps_the_submissions_and_gives_back_the_jobs() {
    let (db, _store) = migrated_store().await;
    let cutter = ReplyCutter::start(&db.url).await;
    let behind = Store::connect(&cutter.url, 1).unwrap();
    let types = vec!["noop".to_string()];
    let claim =
        BatchClaim { owner: Uuid::new_v4(), limit: 10, tenant_limit: 10, user_limit: 10, lease: LEASE, types: &types };
    // Once on its one connection first, whose statements are then prepared:
    // preparing reads type names, in answers with rows the cutter would cut.
    let warm_up = new_job("acme", "u", "first", "noop", json!({}));
    assert_eq!(behind.submissions().submit_and_claim(&[warm_up], &claim).await.1.len(), 1);
    log_states(&db, "job_queue").await;
    let job = new_job("acme", "u", "k", "noop", json!({}));

    cutter.arm();
    let (answers, claimed) = behind.submissions().submit_and_claim(std::slice::from_ref(&job), &claim).await;
    assert_eq!(cutter.cuts(), 1);
    assert!(claimed.is_empty(), "nothing is known to be claimed: {claimed:?}");
    // The batch committed: the submission, recorded again on its own, finds it.
    assert!(matches!(answers[..], [Ok(errand::store::Submission::Replayed(_))]), "{answers:?}");
    assert_eq!(waits_again(&db).await, 0);
    assert_eq!(logged_states(&db).await, ["running", "available"]);
}

#[tokio::test]
async fn a_claim_that_loses_its_answer_gives_back_only_what_it_took() {
    let (db, store) = migrated_store().await;
    for key in ["first", "second"] {
        store.submissions().submit(&new_job("acme", "u", key, "noop", json!({}))).await.unwrap();
    }
    let limits = TypeLimits::default();
    let owner = Uuid::new_v4();
    // The same owner holds a job from an earlier claim, whose answer arrived.
    let earlier = ClaimRequest { limit: 1, ..claim_request(owner, &limits) };
    let held = store.queue().claim(&earlier).await.unwrap().jobs.remove(0);
    let (behind, cutter) = store_behind_cutter(&db).await;

    cutter.arm();
    assert!(behind.queue().claim(&claim_request(owner, &limits)).await.is_err());
    assert_eq!(waits_again(&db).await, 0);
    let running: Vec<Uuid> = db
        .client()
        .await
        .query("SELECT job_id FROM job_queue WHERE state = 'running' AND lease_owner = $1", &[&owner])
        .await
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    assert_eq!(running, [held.id.0], "the earlier claim's job is still held");
}

#[tokio::test]
async fn emails_taken_by_a_claim_whose_answer_was_lost_are_due_again_at_once() {
    let (db, store) = migrated_store().await;
    let store = store.with_email_outbox(true);
    let mut job = new_job("acme", "u", "k", "noop", json!({}));
    job.caller = Caller {
        tenant: TenantId::parse("acme").unwrap(),
        user: UserId::parse("u").unwrap(),
        email: Some("u@example.com".into()),
        zoneinfo: None,
        locale: errand::domain::Locale::default(),
        acted_by: None,
    };
    store.submissions().submit(&job).await.unwrap();
    claim_and_complete(&store).await;
    log_states(&db, "email_outbox").await;
    let (behind, cutter) = store_behind_cutter(&db).await;
    let lock = Duration::from_secs(90);

    cutter.arm();
    assert!(behind.with_email_outbox(true).outbox().claim_due(10, lock).await.is_err());
    let due = "SELECT count(*) FROM email_outbox \
               WHERE state = 'pending' AND attempts = 0 AND next_attempt_at <= now() AND claim_id IS NULL";
    eventually(GIVEN_BACK_WITHIN, "the email is due again", || async { db.scalar::<i64>(due, &[]).await == 1 }).await;
    assert_eq!(logged_states(&db).await, ["sending", "pending"]);
    let emails = store.outbox().claim_due(10, lock).await.unwrap();
    assert_eq!((emails.len(), emails[0].attempt), (1, 1), "its first send");
}

/// Stands in for the Notifier: no streams to wake here.
struct NoStreams;

impl actix::Actor for NoStreams {
    type Context = actix::Context<Self>;
}

impl actix::Handler<errand::actors::JobFinished> for NoStreams {
    type Result = ();
    fn handle(&mut self, _: errand::actors::JobFinished, _: &mut Self::Context) {}
}

#[actix_web::test]
async fn an_end_tried_again_after_its_answer_was_lost_is_told_it_was_recorded_before() {
    use actix::Actor;
    use errand::actors::{Complete, Completer, Recorded};
    use errand::domain::JobState;

    let (db, store) = migrated_store().await;
    for key in ["warm-up", "k"] {
        store.submissions().submit(&new_job("acme", "u", key, "noop", json!({}))).await.unwrap();
    }
    let limits = TypeLimits::default();
    let [warm_up, job] =
        <[_; 2]>::try_from(store.queue().claim(&claim_request(Uuid::new_v4(), &limits)).await.unwrap().jobs).unwrap();
    let cutter = ReplyCutter::start(&db.url).await;
    let behind = Store::connect(&cutter.url, 1).unwrap();
    let completer = Completer::new(behind, NoStreams.start().recipient(), Default::default()).start();
    let done = |job: &errand::store::ClaimedJob| {
        let outcome = Outcome::Completed { result: None };
        Complete {
            completion: Completion { id: job.id, lease: job.lease, outcome, ender: Ender::Worker },
            tenant: job.tenant.clone(),
            job_type: job.job_type.clone(),
        }
    };
    // Once on the completer's one connection first, whose statements are then
    // prepared (see the batch test above).
    assert_eq!(completer.send(done(&warm_up)).await.unwrap().unwrap(), Recorded::Now(JobState::Completed));

    cutter.arm();
    let lost = completer.send(done(&job)).await.unwrap();
    assert!(lost.is_err(), "{lost:?}");
    assert_eq!(cutter.cuts(), 1);
    let again = completer.send(done(&job)).await.unwrap().unwrap();
    assert_eq!(again, Recorded::Before(JobState::Completed), "the end committed under the cut");
    assert_eq!(db.notifications_for(&job.id.to_string()).await, 1, "one notification");
}

#[tokio::test]
async fn webhook_deliveries_taken_by_a_claim_whose_answer_was_lost_are_due_again_at_once() {
    let (db, store) = migrated_store().await;
    let endpoint = "INSERT INTO webhook_endpoints (tenant_id, url, events, secret, created_by) \
                    VALUES ('acme', 'https://hooks.example.com/in', '{job.completed}', 'whsec_AAAA', 'ada')";
    db.client().await.batch_execute(endpoint).await.unwrap();
    store.submissions().submit(&new_job("acme", "u", "k", "noop", json!({}))).await.unwrap();
    let cutter = ReplyCutter::start(&db.url).await;
    let behind = Store::connect(&cutter.url, 1).unwrap();
    let lock = Duration::from_secs(90);
    // Once on its one connection first, whose statement is then prepared
    // (preparing reads type names, in answers with rows the cutter would cut).
    assert!(behind.webhook_outbox().claim_due(10, lock, &Default::default(), 8).await.unwrap().is_empty());
    claim_and_complete(&store).await;
    log_states(&db, "webhook_deliveries").await;

    cutter.arm();
    assert!(behind.webhook_outbox().claim_due(10, lock, &Default::default(), 8).await.is_err());
    let due = "SELECT count(*) FROM webhook_deliveries \
               WHERE state = 'pending' AND attempts = 0 AND next_attempt_at <= now() AND claim_id IS NULL";
    eventually(GIVEN_BACK_WITHIN, "the delivery is due again", || async { db.scalar::<i64>(due, &[]).await == 1 })
        .await;
    assert_eq!(logged_states(&db).await, ["sending", "pending"]);
    let deliveries = store.webhook_outbox().claim_due(10, lock, &Default::default(), 8).await.unwrap();
    assert_eq!((deliveries.len(), deliveries[0].attempt), (1, 1), "its first attempt");
}

#[tokio::test]
async fn push_messages_taken_by_a_claim_whose_answer_was_lost_are_due_again_at_once() {
    let (db, store) = migrated_store().await;
    let store = store.with_push_outbox(true);
    let device = "INSERT INTO push_subscriptions (tenant_id, user_id, endpoint, p256dh, auth) \
                  VALUES ('acme', 'u', 'https://fcm.googleapis.com/fcm/send/x', 'key', 'auth')";
    db.client().await.batch_execute(device).await.unwrap();
    store.submissions().submit(&new_job("acme", "u", "k", "noop", json!({}))).await.unwrap();
    claim_and_complete(&store).await;
    log_states(&db, "push_outbox").await;
    let (behind, cutter) = store_behind_cutter(&db).await;
    let lock = Duration::from_secs(90);

    cutter.arm();
    assert!(behind.push_outbox().claim_due(10, lock).await.is_err());
    let due = "SELECT count(*) FROM push_outbox \
               WHERE state = 'pending' AND attempts = 0 AND next_attempt_at <= now() AND claim_id IS NULL";
    eventually(GIVEN_BACK_WITHIN, "the message is due again", || async { db.scalar::<i64>(due, &[]).await == 1 }).await;
    assert_eq!(logged_states(&db).await, ["sending", "pending"]);
    let messages = store.push_outbox().claim_due(10, lock).await.unwrap();
    assert_eq!((messages.len(), messages[0].attempt), (1, 1), "its first send");
}
