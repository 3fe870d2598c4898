//! The queue's guarantees, driven directly through the store: fenced writes,
//! fair claims within tenant and type limits, bounded tenant walks, batched
//! lease renewal, rescue, release.

use std::time::Duration;

use errand::domain::{JobId, JobState, LeaseId, Outcome, TenantId, UserId};
use errand::store::{
    BatchClaim, ClaimRequest, ClaimedJob, Completion, EndedAttempt, Ender, Store, Submission, TypeLimits,
};
use serde_json::json;
use uuid::Uuid;

use crate::helpers::*;

async fn submit_typed(store: &Store, tenant: &str, job_type: &str, n: usize) {
    for _ in 0..n {
        let job = new_job(tenant, "u", &Uuid::new_v4().to_string(), job_type, json!({}));
        let submission = store.submissions().submit(&job).await.unwrap();
        assert!(matches!(submission, Submission::Created(_)));
    }
}

async fn submit(store: &Store, tenant: &str, n: usize) {
    submit_typed(store, tenant, "noop", n).await;
}

/// One job of `user`'s in `tenant`.
async fn submit_as(store: &Store, tenant: &str, user: &str) -> JobId {
    let job = new_job(tenant, user, &Uuid::new_v4().to_string(), "noop", json!({}));
    match store.submissions().submit(&job).await.unwrap() {
        Submission::Created(job) => job.id,
        other => panic!("not created: {other:?}"),
    }
}

fn users_of(jobs: &[ClaimedJob]) -> Vec<String> {
    let mut users: Vec<String> = jobs.iter().map(|job| job.user.to_string()).collect();
    users.sort();
    users
}

/// Ends one attempt as its worker would.
async fn finish_if_running(
    store: &Store,
    id: JobId,
    lease: LeaseId,
    outcome: &Outcome,
) -> Result<Option<EndedAttempt>, errand::store::StoreError> {
    let completion = Completion { id, lease, outcome: outcome.clone(), ender: Ender::Worker };
    Ok(store.queue().finish_many_if_running(&[completion]).await?.into_iter().next())
}

const LEASE: Duration = Duration::from_secs(30);

/// Each of `jobs` completed by its worker.
fn completed(jobs: &[ClaimedJob]) -> Vec<Completion> {
    jobs.iter()
        .map(|job| Completion {
            id: job.id,
            lease: job.lease,
            outcome: Outcome::Completed { result: None },
            ender: Ender::Worker,
        })
        .collect()
}

/// A claim by a fresh owner, looking at every tenant from the first; one
/// user may take all of a tenant's slots.
async fn claim(store: &Store, limit: usize, tenant_limit: u32, lease: Duration) -> Vec<ClaimedJob> {
    claim_within(store, limit, (tenant_limit, tenant_limit), lease).await
}

/// [`claim`] with one user's limit of their tenant's slots.
async fn claim_within(
    store: &Store,
    limit: usize,
    (tenant_limit, user_limit): (u32, u32),
    lease: Duration,
) -> Vec<ClaimedJob> {
    let limits = TypeLimits::default();
    let request = ClaimRequest {
        owner: Uuid::new_v4(),
        limit,
        tenant_limit,
        user_limit,
        lease,
        after_tenant: "",
        tenants: 100,
        type_limits: &limits,
        only_types: None,
    };
    store.queue().claim(&request).await.unwrap().jobs
}

/// A claim by a fresh owner within `limits` (the helpers' `claim_request`).
async fn claim_limited(store: &Store, limits: &TypeLimits) -> Vec<ClaimedJob> {
    store.queue().claim(&claim_request(Uuid::new_v4(), limits)).await.unwrap().jobs
}

async fn renewed(store: &Store, job: &ClaimedJob, lease: Duration) -> bool {
    store.queue().renew_leases(&[(job.id, job.lease)], lease).await.unwrap() == [(job.id, false)]
}

#[tokio::test]
async fn a_late_worker_cannot_overwrite_a_rescued_and_reclaimed_job() {
    let (db, store) = migrated_store().await;
    submit(&store, "acme", 1).await;
    let first = claim(&store, 1, 4, LEASE).await.remove(0);
    db.expire_lease(&first.id.to_string()).await;
    assert_eq!(
        store.queue().rescue_expired(10, Duration::ZERO).await.unwrap().requeued,
        1,
        "the expired lease is rescued"
    );
    let second = claim(&store, 1, 4, LEASE).await.remove(0);
    assert_eq!((second.id, second.attempt), (first.id, 2));

    let done = Outcome::Completed { result: None };
    assert!(finish_if_running(&store, first.id, first.lease, &done).await.unwrap().is_none());
    assert!(!renewed(&store, &first, LEASE).await);
    let state: JobState = db.scalar("SELECT state FROM job_queue", &[]).await;
    assert_eq!(state, JobState::Running, "the late write changed nothing");

    let finished = finish_if_running(&store, second.id, second.lease, &done).await.unwrap().unwrap();
    assert_eq!(finished.state, JobState::Completed);
    assert_eq!(db.notifications_for(&second.id.to_string()).await, 1, "the end wrote its notification");
    let failed = Outcome::Failed { error: "late".into() };
    assert!(finish_if_running(&store, second.id, second.lease, &failed).await.unwrap().is_none());
    assert_eq!(db.notifications_for(&first.id.to_string()).await, 1);
    let queued: i64 = db.scalar("SELECT count(*) FROM job_queue", &[]).await;
    assert_eq!(queued, 0, "a finished job leaves the queue");
}

#[tokio::test]
async fn a_claim_takes_each_tenants_next_job_before_anyones_second_within_limits() {
    let (_db, store) = migrated_store().await;
    submit(&store, "acme", 5).await;
    submit(&store, "globex", 1).await;
    let claimed = claim(&store, 2, 2, LEASE).await;
    let mut tenants: Vec<_> = claimed.iter().map(|j| j.tenant.to_string()).collect();
    tenants.sort();
    assert_eq!(tenants, ["acme", "globex"]);
    assert_eq!(claim(&store, 10, 2, LEASE).await.len(), 1, "acme may have only two running");
    assert!(claim(&store, 10, 2, LEASE).await.is_empty());
}

#[tokio::test]
async fn one_users_backlog_leaves_a_slot_and_a_colleagues_click_takes_it_at_the_next_claim() {
    let (_db, store) = migrated_store().await;
    for _ in 0..60 {
        submit_as(&store, "acme", "alice").await;
    }
    // Alone, alice's backlog takes acme's four slots but one, however often it is claimed.
    assert_eq!(users_of(&claim_within(&store, 10, (4, 3), LEASE).await), ["alice"; 3]);
    assert!(claim_within(&store, 10, (4, 3), LEASE).await.is_empty());
    // The claim beside submissions keeps the same rule.
    let types = ["noop".to_string()];
    let beside =
        BatchClaim { owner: Uuid::new_v4(), limit: 10, tenant_limit: 4, user_limit: 3, lease: LEASE, types: &types };
    let more = new_job("acme", "alice", "one-more", "noop", json!({}));
    let (_, claimed) = store.submissions().submit_and_claim(&[more], &beside).await;
    assert!(claimed.is_empty(), "alice runs three already: {claimed:?}");
    // Bob's click, newer than all of alice's 58 waiting jobs, is the next claim's.
    let click = submit_as(&store, "acme", "bob").await;
    let next = claim_within(&store, 10, (4, 3), LEASE).await;
    assert_eq!(next.iter().map(|job| job.id).collect::<Vec<_>>(), [click]);
}

#[tokio::test]
async fn within_a_priority_users_take_turns_in_their_tenants_line() {
    let (_db, store) = migrated_store().await;
    for _ in 0..5 {
        submit_as(&store, "acme", "alice").await;
    }
    submit_as(&store, "acme", "bob").await;
    submit_as(&store, "acme", "bob").await;
    // Turns: alice 0..4, bob 0..1; claimed two at a time, the line alternates
    // while both wait (ties by age: alice's older job first).
    let rounds: Vec<Vec<String>> = {
        let mut rounds = Vec::new();
        for _ in 0..3 {
            rounds.push(users_of(&claim_within(&store, 2, (10, 10), LEASE).await));
        }
        rounds
    };
    assert_eq!(rounds, [vec!["alice", "bob"], vec!["alice", "bob"], vec!["alice", "alice"]]);
    // A job queued later starts where the line stands, not behind the backlog.
    let (_db, store) = migrated_store().await;
    for _ in 0..8 {
        submit_as(&store, "acme", "alice").await;
    }
    claim_within(&store, 4, (10, 10), LEASE).await;
    let click = submit_as(&store, "acme", "carol").await;
    let next = claim_within(&store, 2, (10, 10), LEASE).await;
    assert!(next.iter().any(|job| job.id == click), "{next:?}");
    // Once jobs end, the line's head moves on: a newcomer's burst starts
    // there, beside the rest of a backlog already partly served, not ahead of all of it.
    let (_db, store) = migrated_store().await;
    for _ in 0..10 {
        submit_as(&store, "acme", "alice").await;
    }
    let served = claim_within(&store, 5, (10, 10), LEASE).await;
    store.queue().finish_many_if_running(&completed(&served)).await.unwrap();
    for _ in 0..3 {
        submit_as(&store, "acme", "carol").await;
    }
    assert_eq!(users_of(&claim_within(&store, 2, (10, 10), LEASE).await), ["alice", "carol"]);
}

#[tokio::test]
async fn a_claim_reads_each_line_from_its_head_then_the_lower_priorities() {
    let (_db, store) = migrated_store().await;
    // acme's line: two jobs of priority 0, then one of priority 5 queued
    // later; the walk of the tenants finds the latter as acme's head.
    let low = [submit_as(&store, "acme", "alice").await, submit_as(&store, "acme", "alice").await];
    let mut urgent = new_job("acme", "alice", "urgent", "noop", json!({}));
    urgent.priority = 5;
    let Submission::Created(urgent) = store.submissions().submit(&urgent).await.unwrap() else { panic!("not created") };
    let other = submit_as(&store, "globex", "gina").await;
    let sorted = |mut ids: Vec<JobId>| {
        ids.sort_by_key(|id| id.0);
        ids
    };
    let ids = |jobs: &[ClaimedJob]| sorted(jobs.iter().map(|job| job.id).collect());
    // Room for two of acme's: its head, then the oldest of the priority below.
    assert_eq!(ids(&claim(&store, 10, 2, LEASE).await), sorted(vec![urgent.id, low[0], other]));
    assert_eq!(ids(&claim(&store, 10, 3, LEASE).await), [low[1]]);
}

#[tokio::test]
async fn claims_walk_the_tenants_a_window_at_a_time_and_come_round_again() {
    let (_db, store) = migrated_store().await;
    for tenant in ["t1", "t2", "t3", "t4", "t5"] {
        submit(&store, tenant, 2).await;
    }
    let limits = TypeLimits::default();
    let mut after = String::new();
    let mut seen = Vec::new();
    for _ in 0..3 {
        let request = ClaimRequest {
            owner: Uuid::new_v4(),
            limit: 10,
            tenant_limit: 1,
            user_limit: 1,
            lease: LEASE,
            after_tenant: &after,
            tenants: 2,
            type_limits: &limits,
            only_types: None,
        };
        let claim = store.queue().claim(&request).await.unwrap();
        let mut tenants: Vec<String> = claim.jobs.iter().map(|j| j.tenant.to_string()).collect();
        tenants.sort();
        seen.push(tenants);
        after = claim.next_after_tenant;
    }
    assert_eq!(seen, [vec!["t1", "t2"], vec!["t3", "t4"], vec!["t5"]], "two tenants per claim, in order");
    assert_eq!(after, "", "the walk reached the end and starts again from the first tenant");
}

#[tokio::test]
async fn a_type_limit_holds_across_owners_while_other_types_run() {
    let (_db, store) = migrated_store().await;
    submit_typed(&store, "acme", "export", 3).await;
    submit_typed(&store, "globex", "export", 3).await;
    submit(&store, "acme", 2).await;
    let limits = TypeLimits::new([("export".to_owned(), 2)]);
    let first = claim_limited(&store, &limits).await;
    let second = claim_limited(&store, &limits).await;
    let exports = first.iter().chain(&second).filter(|j| j.job_type == "export").count();
    let noops = first.iter().chain(&second).filter(|j| j.job_type == "noop").count();
    assert_eq!((exports, noops), (2, 2), "two exports at most, and the noops are not held back");

    let export = first.iter().find(|j| j.job_type == "export").unwrap();
    let done = Outcome::Completed { result: None };
    finish_if_running(&store, export.id, export.lease, &done).await.unwrap().unwrap();
    let third = claim_limited(&store, &limits).await;
    assert_eq!(third.iter().filter(|j| j.job_type == "export").count(), 1, "a freed slot is taken again");
}

/// A limited type's one slot, freed, goes to a tenant that waited for it,
/// not to the older backlog of the tenant whose job just ended.
#[tokio::test]
async fn a_limited_types_slot_goes_to_its_waiting_tenants_in_turn() {
    let (_db, store) = migrated_store().await;
    submit_typed(&store, "acme", "export", 3).await;
    submit_typed(&store, "globex", "export", 1).await;
    submit_typed(&store, "acme", "export", 1).await;
    let limits = TypeLimits::new([("export".to_owned(), 1)]);
    let mut served = Vec::new();
    for _ in 0..5 {
        let jobs = claim_limited(&store, &limits).await;
        assert_eq!(jobs.len(), 1, "one export at a time: {jobs:?}");
        served.push(jobs[0].tenant.to_string());
        store.queue().finish_many_if_running(&completed(&jobs)).await.unwrap();
    }
    assert_eq!(served, ["acme", "globex", "acme", "acme", "acme"]);
}

/// Among tenants waiting for a limited type, the one running fewest of it
/// comes first, however many jobs of other types it runs.
#[tokio::test]
async fn a_limited_types_room_goes_first_to_the_tenant_running_fewest_of_it() {
    let (_db, store) = migrated_store().await;
    submit_typed(&store, "acme", "export", 1).await;
    submit(&store, "globex", 3).await;
    let limits = TypeLimits::new([("export".to_owned(), 2)]);
    let first = claim_limited(&store, &limits).await;
    assert_eq!(first.len(), 4, "acme's export and globex's three others: {first:?}");
    submit_typed(&store, "acme", "export", 1).await;
    submit_typed(&store, "globex", "export", 1).await;
    let next = claim_limited(&store, &limits).await;
    let tenants: Vec<String> = next.iter().map(|job| job.tenant.to_string()).collect();
    assert_eq!(tenants, ["globex"], "the one free slot goes to the tenant running none of the type");
}

#[tokio::test]
async fn one_statement_renews_every_lease_still_held_and_names_the_lost_ones() {
    let (_db, store) = migrated_store().await;
    submit(&store, "acme", 3).await;
    let lease = Duration::from_millis(300);
    let jobs = claim(&store, 3, 4, lease).await;
    let stale = (jobs[2].id, LeaseId(Uuid::new_v4()));
    let mut held: Vec<_> = jobs[..2].iter().map(|j| (j.id, j.lease)).collect();
    held.push(stale);
    for _ in 0..5 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let mut renewed = store.queue().renew_leases(&held, lease).await.unwrap();
        renewed.sort();
        let mut expected = vec![(jobs[0].id, false), (jobs[1].id, false)];
        expected.sort();
        assert_eq!(renewed, expected, "the stale lease is not renewed");
    }
    let rescued = store.queue().rescue_expired(10, Duration::ZERO).await.unwrap();
    assert_eq!(rescued.requeued, 1, "only the job nobody renewed is rescued");
}

#[tokio::test]
async fn an_expired_lease_on_the_last_attempt_fails_the_job_with_one_notification() {
    let (db, store) = migrated_store().await;
    submit(&store, "acme", 1).await;
    db.client().await.batch_execute("UPDATE jobs SET max_attempts = 1").await.unwrap();
    let job = claim(&store, 1, 4, Duration::from_millis(20)).await.remove(0);
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    let failed = loop {
        let rescued = store.queue().rescue_expired(10, Duration::ZERO).await.unwrap();
        if !rescued.failed.is_empty() {
            break rescued.failed;
        }
        assert!(std::time::Instant::now() < deadline, "the expired job was never failed");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(failed[0].job, job.id);
    assert_eq!(db.notifications_for(&job.id.to_string()).await, 1, "the rescue wrote its notification");
    let (state, error): (JobState, String) = {
        let row = db.client().await.query_one("SELECT state, error_message FROM jobs", &[]).await.unwrap();
        (row.get(0), row.get(1))
    };
    assert_eq!(state, JobState::Failed);
    assert!(error.contains("stopped responding"));
    assert_eq!(db.notifications_for(&job.id.to_string()).await, 1);
}

#[tokio::test]
async fn releasing_hands_jobs_back_without_using_an_attempt() {
    let (db, store) = migrated_store().await;
    submit(&store, "acme", 2).await;
    let owner = Uuid::new_v4();
    let limits = TypeLimits::default();
    let request = ClaimRequest {
        owner,
        limit: 2,
        tenant_limit: 4,
        user_limit: 4,
        lease: LEASE,
        after_tenant: "",
        tenants: 10,
        type_limits: &limits,
        only_types: None,
    };
    assert_eq!(store.queue().claim(&request).await.unwrap().jobs.len(), 2);
    assert_eq!(store.queue().release_all(owner).await.unwrap(), 2);
    let available: i64 =
        db.scalar("SELECT count(*) FROM job_queue WHERE state = 'available' AND attempt = 0", &[]).await;
    assert_eq!(available, 2);
    let again = claim(&store, 2, 4, LEASE).await;
    assert!(again.iter().all(|j| j.attempt == 1));
}

#[tokio::test]
async fn jobs_claimed_ahead_are_handed_back_by_lease_and_only_while_still_held() {
    let (db, store) = migrated_store().await;
    submit(&store, "acme", 3).await;
    let jobs = claim(&store, 3, 4, LEASE).await;
    let owner: Uuid = db.scalar("SELECT DISTINCT lease_owner FROM job_queue", &[]).await;
    let (unstarted, started) = (&jobs[..2], &jobs[2]);
    let leases: Vec<_> = unstarted.iter().map(|job| job.lease).collect();

    let someone_else = Uuid::new_v4();
    assert_eq!(store.queue().release_unstarted(someone_else, &leases).await.unwrap(), 0, "not theirs");
    assert_eq!(store.queue().release_unstarted(owner, &leases).await.unwrap(), 2);
    assert_eq!(store.queue().release_unstarted(owner, &leases).await.unwrap(), 0, "already handed back");

    let back: i64 = db.scalar("SELECT count(*) FROM job_queue WHERE state = 'available' AND attempt = 0", &[]).await;
    assert_eq!(back, 2);
    assert!(renewed(&store, started, LEASE).await, "the started job keeps its lease");
}

#[tokio::test]
async fn a_batch_of_ends_is_fenced_per_job_and_notifies_only_terminal_ones() {
    let (db, store) = migrated_store().await;
    submit(&store, "acme", 4).await;
    let mut jobs = claim(&store, 4, 4, LEASE).await;
    jobs.sort_by_key(|j| j.id);
    let stale = LeaseId(Uuid::new_v4());
    let end = |i: usize, lease: LeaseId, outcome: Outcome| Completion {
        id: jobs[i].id,
        lease,
        outcome,
        ender: Ender::Worker,
    };
    let batch = [
        end(0, jobs[0].lease, Outcome::Completed { result: Some(json!({"rows": 3})) }),
        end(1, jobs[1].lease, Outcome::Failed { error: "no data".into() }),
        end(2, jobs[2].lease, Outcome::Retry { error: "busy".into(), delay: Duration::from_secs(60) }),
        end(3, stale, Outcome::Completed { result: None }),
    ];
    let ended = store.queue().finish_many_if_running(&batch).await.unwrap();
    let state_of = |i: usize| ended.iter().find(|e| e.job == jobs[i].id).map(|e| e.state);
    assert_eq!(state_of(0), Some(JobState::Completed));
    assert_eq!(state_of(1), Some(JobState::Failed));
    assert_eq!(state_of(2), Some(JobState::Retryable));
    assert_eq!(state_of(3), None, "a stale lease writes nothing");
    for (i, notified) in [(0, 1), (1, 1), (2, 0), (3, 0)] {
        let id = jobs[i].id.to_string();
        assert_eq!(db.notifications_for(&id).await, notified, "job {i}: only terminal ends are notified");
    }
    let result: serde_json::Value = db.scalar("SELECT result FROM jobs WHERE id = $1", &[&jobs[0].id.0]).await;
    assert_eq!(result, json!({"rows": 3}));
    let running: JobState = db.scalar("SELECT state FROM job_queue WHERE job_id = $1", &[&jobs[3].id.0]).await;
    assert_eq!(running, JobState::Running);
}

#[tokio::test]
async fn a_rescue_leaves_a_lease_renewed_after_it_expired() {
    let (db, store) = migrated_store().await;
    submit(&store, "acme", 1).await;
    let job = claim(&store, 1, 4, LEASE).await.remove(0);
    db.expire_lease(&job.id.to_string()).await;
    // The worker was slow, not dead: its heartbeat lands before the rescuer's write.
    assert!(renewed(&store, &job, LEASE).await);
    let rescue = Completion {
        id: job.id,
        lease: job.lease,
        outcome: Outcome::Requeue { error: "gone".into() },
        ender: Ender::Rescuer,
    };
    assert!(store.queue().finish_many_if_running(&[rescue]).await.unwrap().is_empty());
    assert_eq!(store.queue().rescue_expired(10, Duration::ZERO).await.unwrap().requeued, 0);
}

#[tokio::test]
async fn a_batch_of_ends_announces_its_owners_in_one_notify() {
    let (db, store) = migrated_store().await;
    for tenant in ["acme", "globex", "initech"] {
        submit(&store, tenant, 2).await;
    }
    let jobs = claim(&store, 6, 4, LEASE).await;
    let (client, mut connection) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls).await.unwrap();
    let (tx, mut announcements) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut messages = futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(Ok(message)) = futures_util::StreamExt::next(&mut messages).await {
            if let tokio_postgres::AsyncMessage::Notification(n) = message {
                let _ = tx.send(n.payload().to_owned());
            }
        }
    });
    client.batch_execute("LISTEN errand_notifications").await.unwrap();
    assert_eq!(store.queue().finish_many_if_running(&completed(&jobs)).await.unwrap().len(), 6);
    let payload = tokio::time::timeout(Duration::from_secs(5), announcements.recv()).await.unwrap().unwrap();
    let mut tags: Vec<&str> = payload.split(',').collect();
    tags.sort();
    let owner = |t: &str| errand::domain::OwnerTag::of(&TenantId::parse(t).unwrap(), &UserId::parse("u").unwrap());
    let mut expected: Vec<String> = ["acme", "globex", "initech"].map(|t| owner(t).as_str().to_owned()).to_vec();
    expected.sort();
    assert_eq!(tags, expected, "one tag per owner, not per job: {payload}");
    client.batch_execute("SELECT 1").await.unwrap();
    assert!(announcements.try_recv().is_err(), "one NOTIFY for the whole batch");
}

#[tokio::test]
async fn history_pruning_deletes_old_finished_jobs_and_keeps_the_rest() {
    let (db, store) = migrated_store().await;
    submit(&store, "acme", 4).await;
    let mut jobs = claim(&store, 3, 4, LEASE).await;
    jobs.sort_by_key(|j| j.id);
    let done = |j: &ClaimedJob| Completion {
        id: j.id,
        lease: j.lease,
        outcome: Outcome::Completed { result: None },
        ender: Ender::Worker,
    };
    store.queue().finish_many_if_running(&[done(&jobs[0]), done(&jobs[1])]).await.unwrap();
    // jobs[1]'s result file is still downloadable; jobs[2] runs; the fourth waits.
    db.client()
        .await
        .execute("UPDATE jobs SET result_expires_at = now() + interval '1 day' WHERE id = $1", &[&jobs[1].id.0])
        .await
        .unwrap();
    let key: String = db.scalar("SELECT idempotency_key FROM jobs WHERE id = $1", &[&jobs[0].id.0]).await;
    let pruned = store
        .queue()
        .prune_history(&prune_before(&store, chrono::Utc::now() + chrono::Duration::hours(1)).await, 100)
        .await
        .unwrap();
    assert_eq!(pruned, 1, "only the finished job without a live result");
    let left: Vec<uuid::Uuid> =
        db.client().await.query("SELECT id FROM jobs", &[]).await.unwrap().iter().map(|r| r.get(0)).collect();
    assert_eq!(left.len(), 3);
    assert!(!left.contains(&jobs[0].id.0));
    assert_eq!(db.notifications_for(&jobs[0].id.to_string()).await, 0, "its notification went with it");
    let kept = store
        .queue()
        .prune_history(&prune_before(&store, chrono::Utc::now() - chrono::Duration::hours(1)).await, 100)
        .await
        .unwrap();
    assert_eq!(kept, 0, "nothing is younger than the cutoff");
    let again = store.submissions().submit(&new_job("acme", "u", &key, "noop", json!({}))).await.unwrap();
    assert!(matches!(again, Submission::Created(_)), "a pruned job's key is free again");
}

/// Records `jobs` and claims beside them, as a quiet process's Intake does.
async fn submit_and_claim(
    store: &Store,
    jobs: &[errand::store::NewJob],
    limit: usize,
    tenant_limit: u32,
    types: &[&str],
) -> (Vec<Submission>, Vec<ClaimedJob>) {
    let types: Vec<String> = types.iter().map(|t| t.to_string()).collect();
    let claim = BatchClaim {
        owner: Uuid::new_v4(),
        limit,
        tenant_limit,
        user_limit: tenant_limit,
        lease: LEASE,
        types: &types,
    };
    let (answers, claimed) = store.submissions().submit_and_claim(jobs, &claim).await;
    (answers.into_iter().map(Result::unwrap).collect(), claimed)
}

#[tokio::test]
async fn a_claim_beside_submissions_takes_their_tenants_oldest_jobs_within_the_tenant_limit() {
    let (db, store) = migrated_store().await;
    submit(&store, "acme", 3).await;
    submit(&store, "globex", 1).await;
    let oldest = "SELECT job_id FROM job_queue WHERE tenant_id = 'acme' ORDER BY run_at, job_id LIMIT 2";
    let oldest: Vec<Uuid> = db.client().await.query(oldest, &[]).await.unwrap().iter().map(|row| row.get(0)).collect();
    let new = new_job("acme", "u", "new", "noop", json!({}));
    let (answers, claimed) = submit_and_claim(&store, &[new], 10, 2, &["noop"]).await;
    assert!(matches!(answers[..], [Submission::Created(_)]));
    // Oldest first, up to acme's room of two; globex is not the batch's tenant.
    let ids: Vec<Uuid> = claimed.iter().map(|job| job.id.0).collect();
    assert_eq!(ids, oldest);
    let again = new_job("acme", "u", "another", "noop", json!({}));
    let (_, claimed) = submit_and_claim(&store, &[again], 10, 2, &["noop"]).await;
    assert!(claimed.is_empty(), "acme already runs two: {claimed:?}");
    assert_eq!(claim(&store, 10, 2, LEASE).await.len(), 1, "only globex's job is left to claim");
}

#[tokio::test]
async fn a_claim_beside_submissions_keeps_to_its_slots_and_its_types() {
    let (_db, store) = migrated_store().await;
    submit_typed(&store, "acme", "export", 1).await;
    let jobs: Vec<_> = (0..3).map(|i| new_job("acme", "u", &format!("k{i}"), "noop", json!({}))).collect();
    let (answers, claimed) = submit_and_claim(&store, &jobs, 2, 10, &["noop"]).await;
    assert_eq!(answers.len(), 3);
    assert_eq!(claimed.len(), 2, "two slots lent");
    assert!(claimed.iter().all(|job| job.job_type == "noop"), "{claimed:?}");
    // The claimed jobs are the new ones, and a replay of their keys finds them.
    let created: Vec<JobId> = answers
        .iter()
        .map(|a| match a {
            Submission::Created(job) => job.id,
            other => panic!("{other:?}"),
        })
        .collect();
    assert!(claimed.iter().all(|job| created.contains(&job.id)));
    let (replayed, claimed) = submit_and_claim(&store, &jobs, 5, 10, &["noop"]).await;
    assert!(replayed.iter().all(|a| matches!(a, Submission::Replayed(_))), "{replayed:?}");
    assert_eq!(claimed.len(), 1, "the third noop job, not the export");
}

#[tokio::test]
async fn a_lease_within_its_grace_is_left_to_its_process_which_can_still_renew_it() {
    let (db, store) = migrated_store().await;
    submit(&store, "acme", 1).await;
    let job = claim(&store, 1, 4, LEASE).await.remove(0);
    // Expired a second ago, as after an outage of its process's database.
    let expire = "UPDATE job_queue SET lease_expires_at = now() - interval '1 second'";
    db.client().await.batch_execute(expire).await.unwrap();
    let grace = Duration::from_secs(60);
    assert_eq!(store.queue().rescue_expired(10, grace).await.unwrap().requeued, 0, "within the grace");
    // Back, its process renews the lease it still holds.
    assert!(renewed(&store, &job, LEASE).await);
    db.client().await.batch_execute(expire).await.unwrap();
    assert_eq!(store.queue().rescue_expired(10, Duration::from_millis(500)).await.unwrap().requeued, 1, "past it");
}

/// The history's cutoffs of a pass that prunes what finished before `cutoff`.
async fn prune_before(
    store: &errand::store::Store,
    cutoff: chrono::DateTime<chrono::Utc>,
) -> errand::store::HistoryCutoffs {
    store.queue().history_cutoffs(chrono::Utc::now(), cutoff, Vec::new()).await.unwrap()
}
