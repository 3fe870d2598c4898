//! Progress: handlers report it through their context; errand stores it at
//! most about once a second per job (fenced on the lease), shows it in
//! `GET /jobs/{id}` and pushes it to the owner's streams.

use std::time::{Duration, Instant};

use errand::jobs::{HandlerFuture, JobContext, JobHandler, JobOutput};
use futures_util::StreamExt;
use serde_json::{Value, json};

use crate::helpers::*;

const WITHIN: Duration = Duration::from_secs(20);

#[actix_web::test]
async fn a_running_jobs_progress_moves_in_its_view_and_on_its_owners_streams() {
    let app = spawn_app().await;
    let (alice, bob) = (token("acme", "alice"), token("acme", "bob"));
    let url = format!("{}/notifications/stream", app.address);
    let mut stream = SseStream::open(&url, Some(&alice), None).await;
    let mut bobs = SseStream::open(&url, Some(&bob), None).await;
    let id = app.create(&alice, "sleep", json!({"ms": 3500})).await;

    let mut seen = Vec::new();
    while seen.len() < 2 {
        let (event_id, event) = stream.next_event_of("job_progress", WITHIN).await.expect("a job_progress event");
        assert_eq!(event_id, None, "progress is never replayed: no event id");
        assert_eq!(event["job_id"], id.as_str());
        assert_eq!(event["progress"]["total"], 3500);
        seen.push(event["progress"]["done"].as_u64().unwrap());
    }
    assert!(seen[1] > seen[0], "it moves: {seen:?}");
    let job = app.job(&alice, &id).await;
    let progress = &job["progress"];
    assert_eq!((progress["total"].as_u64(), progress["message"].as_str()), (Some(3500), Some("milliseconds slept")));
    assert!(progress["done"].as_u64().unwrap() >= seen[1], "{job}");
    assert!(progress["updated_at"].is_string(), "{job}");
    let listed: Value = app.get(&alice, "/jobs").await.json().await.unwrap();
    assert_eq!(listed["jobs"][0]["progress"]["total"], 3500, "lists show it too");
    assert_eq!(bobs.next_event_of("job_progress", Duration::from_millis(300)).await, None, "only the owner's streams");
}

/// Reports progress as fast as it can for `REPORTING`.
struct Chatty;

const REPORTING: Duration = Duration::from_millis(2500);

impl JobHandler for Chatty {
    fn run(&self, ctx: JobContext) -> HandlerFuture {
        Box::pin(async move {
            let started = Instant::now();
            let mut done = 0;
            while started.elapsed() < REPORTING {
                for _ in 0..1000 {
                    done += 1;
                    ctx.progress(done, None, Some("busy"));
                }
                tokio::task::yield_now().await;
            }
            Ok(JobOutput::default())
        })
    }
}

#[actix_web::test]
async fn progress_reported_in_a_tight_loop_is_written_about_once_a_second() {
    let app = TestApp::builder().job_type("chatty", Chatty).spawn().await;
    // Every progress write announces itself once on errand_progress: count them.
    let (listener, mut connection) = tokio_postgres::connect(&app.db.url, tokio_postgres::NoTls).await.unwrap();
    let (tx, mut announcements) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut messages = futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(Ok(message)) = messages.next().await {
            let _ = tx.send(message);
        }
    });
    listener.batch_execute("LISTEN errand_progress").await.unwrap();
    let alice = token("acme", "alice");
    let id = app.create(&alice, "chatty", json!({})).await;
    let job = app.wait_until_finished(&alice, &id, WITHIN).await;
    assert_eq!(job["status"], "completed");
    let mut writes = 0;
    while announcements.try_recv().is_ok() {
        writes += 1;
    }
    // Millions of reports over 2.5 s: at most one write per second (and one
    // more for a partial second at each end).
    assert!((1..=4).contains(&writes), "{writes} progress writes");
}
