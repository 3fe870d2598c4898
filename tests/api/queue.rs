//! The queue's guarantees, driven directly through the store: fenced writes,
//! fair claims, rescue, release.

use std::time::Duration;

use errand::domain::{Caller, IdempotencyKey, JobState, TenantId, UserId};
use errand::store::{Outcome, Store, Submission};
use serde_json::json;
use uuid::Uuid;

use crate::helpers::*;

async fn store() -> (TestDb, Store) {
    let db = TestDb::create().await;
    let store = Store::connect(&db.url, 4).unwrap();
    errand::db::migrate(&store).await.unwrap();
    (db, store)
}

fn caller(tenant: &str) -> Caller {
    Caller { tenant: TenantId::parse(tenant).unwrap(), user: UserId::parse("u").unwrap(), email: None }
}

async fn submit(store: &Store, tenant: &str, n: usize) {
    let caller = caller(tenant);
    for _ in 0..n {
        let key = IdempotencyKey::parse(&Uuid::new_v4().to_string()).unwrap();
        let submission = store.for_caller(&caller).submit(&key, "noop", &json!({}), 3).await.unwrap();
        assert!(matches!(submission, Submission::Created(_)));
    }
}

const LEASE: Duration = Duration::from_secs(30);

#[tokio::test]
async fn a_late_worker_cannot_overwrite_a_rescued_and_reclaimed_job() {
    let (db, store) = store().await;
    submit(&store, "acme", 1).await;
    let first = store.queue().claim(Uuid::new_v4(), 1, 4, Duration::from_millis(50)).await.unwrap().remove(0);
    eventually(Duration::from_secs(5), "the short lease expires and is rescued", || async {
        store.queue().rescue_expired(10).await.unwrap().requeued == 1
    })
    .await;
    let second = store.queue().claim(Uuid::new_v4(), 1, 4, LEASE).await.unwrap().remove(0);
    assert_eq!((second.id, second.attempt), (first.id, 2));

    let done = Outcome::Completed { result: None };
    assert!(store.queue().finish_if_running(first.id, first.lease, &done).await.unwrap().is_none());
    assert!(!store.queue().heartbeat(first.id, first.lease, LEASE).await.unwrap());
    let state: String = db.scalar("SELECT state::text FROM jobs", &[]).await;
    assert_eq!(state, "running", "the late write changed nothing");

    let finished = store.queue().finish_if_running(second.id, second.lease, &done).await.unwrap().unwrap();
    assert_eq!(finished.state, JobState::Completed);
    assert!(finished.notification.is_some());
    let failed = Outcome::Failed { error: "late".into() };
    assert!(store.queue().finish_if_running(second.id, second.lease, &failed).await.unwrap().is_none());
    assert_eq!(db.notifications_for(&first.id.to_string()).await, 1);
}

#[tokio::test]
async fn a_claim_takes_each_tenants_next_job_before_anyones_second_within_limits() {
    let (_db, store) = store().await;
    submit(&store, "acme", 5).await;
    submit(&store, "globex", 1).await;
    let claimed = store.queue().claim(Uuid::new_v4(), 2, 2, LEASE).await.unwrap();
    let mut tenants: Vec<_> = claimed.iter().map(|j| j.tenant.to_string()).collect();
    tenants.sort();
    assert_eq!(tenants, ["acme", "globex"]);
    let more = store.queue().claim(Uuid::new_v4(), 10, 2, LEASE).await.unwrap();
    assert_eq!(more.len(), 1, "acme may have only two running");
    assert!(store.queue().claim(Uuid::new_v4(), 10, 2, LEASE).await.unwrap().is_empty());
}

#[tokio::test]
async fn a_heartbeat_keeps_a_long_job_from_being_rescued() {
    let (_db, store) = store().await;
    submit(&store, "acme", 1).await;
    let lease = Duration::from_millis(300);
    let job = store.queue().claim(Uuid::new_v4(), 1, 4, lease).await.unwrap().remove(0);
    for _ in 0..6 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(store.queue().heartbeat(job.id, job.lease, lease).await.unwrap());
        assert_eq!(store.queue().rescue_expired(10).await.unwrap().requeued, 0);
    }
}

#[tokio::test]
async fn an_expired_lease_on_the_last_attempt_fails_the_job_with_one_notification() {
    let (db, store) = store().await;
    submit(&store, "acme", 1).await;
    db.client().await.batch_execute("UPDATE jobs SET max_attempts = 1").await.unwrap();
    let job = store.queue().claim(Uuid::new_v4(), 1, 4, Duration::from_millis(20)).await.unwrap().remove(0);
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    let failed = loop {
        let rescued = store.queue().rescue_expired(10).await.unwrap();
        if !rescued.failed.is_empty() {
            break rescued.failed;
        }
        assert!(std::time::Instant::now() < deadline, "the expired job was never failed");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(failed[0].job, job.id);
    assert!(failed[0].notification.is_some());
    let (state, error): (String, String) = {
        let row = db.client().await.query_one("SELECT state::text, error_message FROM jobs", &[]).await.unwrap();
        (row.get(0), row.get(1))
    };
    assert_eq!(state, "failed");
    assert!(error.contains("stopped responding"));
    assert_eq!(db.notifications_for(&job.id.to_string()).await, 1);
}

#[tokio::test]
async fn releasing_hands_jobs_back_without_using_an_attempt() {
    let (db, store) = store().await;
    submit(&store, "acme", 2).await;
    let owner = Uuid::new_v4();
    let claimed = store.queue().claim(owner, 2, 4, LEASE).await.unwrap();
    assert_eq!(claimed.len(), 2);
    assert_eq!(store.queue().release_all(owner).await.unwrap(), 2);
    let available: i64 = db.scalar("SELECT count(*) FROM jobs WHERE state = 'available' AND attempt = 0", &[]).await;
    assert_eq!(available, 2);
    let again = store.queue().claim(Uuid::new_v4(), 2, 4, LEASE).await.unwrap();
    assert!(again.iter().all(|j| j.attempt == 1));
}

#[tokio::test]
async fn a_batch_of_ends_is_fenced_per_job_and_notifies_only_terminal_ones() {
    let (db, store) = store().await;
    submit(&store, "acme", 4).await;
    let mut jobs = store.queue().claim(Uuid::new_v4(), 4, 4, LEASE).await.unwrap();
    jobs.sort_by_key(|j| j.id);
    let stale = errand::domain::LeaseId(Uuid::new_v4());
    let batch = [
        errand::store::Completion {
            id: jobs[0].id,
            lease: jobs[0].lease,
            outcome: Outcome::Completed { result: Some(json!({"rows": 3})) },
        },
        errand::store::Completion {
            id: jobs[1].id,
            lease: jobs[1].lease,
            outcome: Outcome::Failed { error: "no data".into() },
        },
        errand::store::Completion {
            id: jobs[2].id,
            lease: jobs[2].lease,
            outcome: Outcome::Retry { error: "busy".into(), delay: Duration::from_secs(60) },
        },
        errand::store::Completion { id: jobs[3].id, lease: stale, outcome: Outcome::Completed { result: None } },
    ];
    let ended = store.queue().finish_many_if_running(&batch).await.unwrap();
    let state_of = |i: usize| ended.iter().find(|e| e.job == jobs[i].id).map(|e| (e.state, e.notification.is_some()));
    assert_eq!(state_of(0), Some((JobState::Completed, true)));
    assert_eq!(state_of(1), Some((JobState::Failed, true)));
    assert_eq!(state_of(2), Some((JobState::Retryable, false)));
    assert_eq!(state_of(3), None, "a stale lease writes nothing");
    let notifications: i64 = db.scalar("SELECT count(*) FROM notifications", &[]).await;
    assert_eq!(notifications, 2);
    let result: serde_json::Value = db.scalar("SELECT result FROM jobs WHERE id = $1", &[&jobs[0].id.0]).await;
    assert_eq!(result, json!({"rows": 3}));
    let running: String = db.scalar("SELECT state::text FROM jobs WHERE id = $1", &[&jobs[3].id.0]).await;
    assert_eq!(running, "running");
}
