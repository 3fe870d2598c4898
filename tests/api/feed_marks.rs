//! Seen, read and archived: the bell's badge counts what was not seen (the
//! feed opened), read marks what was opened, and archived notifications
//! leave the feed and its counts for a list of their own.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

const WITHIN: Duration = Duration::from_secs(20);

async fn feed(app: &TestApp, caller: &str, query: &str) -> Value {
    let response = app.get(caller, &format!("/notifications{query}")).await;
    assert_eq!(response.status(), StatusCode::OK);
    response.json().await.unwrap()
}

fn ids(page: &Value) -> Vec<&str> {
    page["notifications"].as_array().unwrap().iter().map(|n| n["id"].as_str().unwrap()).collect()
}

fn counts(page: &Value) -> (i64, i64) {
    (page["unread_count"].as_i64().unwrap(), page["unseen_count"].as_i64().unwrap())
}

/// Ends `n` jobs of the caller's and waits for their notifications.
async fn notified(app: &TestApp, caller: &str, n: usize) {
    for _ in 0..n {
        let id = app.create(caller, "noop", json!({})).await;
        app.wait_until_finished(caller, &id, WITHIN).await;
    }
}

#[actix_web::test]
async fn opening_the_feed_sees_everything_reading_one_reads_it_and_archived_ones_are_listed_apart() {
    let app = spawn_app().await;
    let (alice, bob) = (token("acme", "alice"), token("acme", "bob"));
    notified(&app, &alice, 3).await;
    let page = feed(&app, &alice, "").await;
    assert_eq!(counts(&page), (3, 3));
    let [newest, middle, oldest] = ids(&page)[..] else { panic!("three: {page}") };
    let (newest, middle, oldest) = (newest.to_owned(), middle.to_owned(), oldest.to_owned());

    let seen: Value = app.post(&alice, "/notifications/seen").await.json().await.unwrap();
    assert_eq!(seen["marked_seen"], 3);
    assert_eq!(counts(&feed(&app, &alice, "").await), (3, 0), "seen, not read");
    assert_eq!(ids(&feed(&app, &alice, "?status=unseen").await).len(), 0);
    assert_eq!(ids(&feed(&app, &alice, "?status=unread").await).len(), 3);
    notified(&app, &alice, 1).await;
    let page = feed(&app, &alice, "?status=unseen").await;
    assert_eq!((ids(&page).len(), counts(&page)), (1, (4, 1)), "a new one is unseen");

    assert_eq!(app.post(&alice, &format!("/notifications/{oldest}/read")).await.status(), StatusCode::NO_CONTENT);
    let archive = |id: &str| format!("/notifications/{id}/archive");
    assert_eq!(app.post(&alice, &archive(&oldest)).await.status(), StatusCode::NO_CONTENT);
    assert_eq!(app.post(&alice, &archive(&oldest)).await.status(), StatusCode::NO_CONTENT, "again: the same");
    assert_problem(app.post(&bob, &archive(&middle)).await, StatusCode::NOT_FOUND, "not_found").await;
    assert_problem(app.post(&token("other", "alice"), &archive(&middle)).await, StatusCode::NOT_FOUND, "not_found")
        .await;
    let page = feed(&app, &alice, "").await;
    assert!(!ids(&page).contains(&oldest.as_str()), "out of the feed: {page}");
    assert_eq!(counts(&page), (3, 1));
    let archived = feed(&app, &alice, "?status=archived").await;
    assert_eq!(ids(&archived), [oldest.as_str()]);
    assert!(
        archived["notifications"][0]["archived_at"].is_string() && archived["notifications"][0]["read_at"].is_string()
    );

    // Reading marks seen too; archive-read takes every read one, and only those.
    assert_eq!(app.post(&alice, &format!("/notifications/{middle}/read")).await.status(), StatusCode::NO_CONTENT);
    let done: Value = app.post(&alice, "/notifications/archive-read").await.json().await.unwrap();
    assert_eq!(done["archived"], 1);
    let page = feed(&app, &alice, "").await;
    assert_eq!(ids(&page).len(), 2, "{page}");
    assert!(ids(&page).contains(&newest.as_str()));
    assert_eq!(ids(&feed(&app, &alice, "?status=archived").await).len(), 2);
    assert_eq!(feed(&app, &bob, "?status=archived").await["notifications"], json!([]), "scoped to the caller");

    let bad = app.get(&alice, "/notifications?status=deleted").await;
    assert_problem(bad, StatusCode::BAD_REQUEST, "bad_request").await;
    let both = app.get(&alice, "/notifications?status=archived&unread_only=true").await;
    assert_problem(both, StatusCode::BAD_REQUEST, "bad_request").await;
}

#[actix_web::test]
async fn a_stream_carries_both_counts_and_hears_another_tab_open_the_feed() {
    let app = spawn_app().await;
    let alice = token("acme", "alice");
    notified(&app, &alice, 2).await;
    let mut stream = SseStream::open(&format!("{}/notifications/stream", app.address), Some(&alice), None).await;
    let (_, counts) = stream.next_event_of("unread_count", WITHIN).await.expect("the counts when it opens");
    assert_eq!(counts, json!({"unread_count": 2, "unseen_count": 2}));
    app.post(&alice, "/notifications/seen").await;
    let (_, counts) = stream.next_event_of("unread_count", WITHIN).await.expect("the counts once seen");
    assert_eq!(counts, json!({"unread_count": 2, "unseen_count": 0}));
    app.post(&alice, "/notifications/read-all").await;
    let (_, counts) = stream.next_event_of("unread_count", WITHIN).await.expect("the counts once read");
    assert_eq!(counts, json!({"unread_count": 0, "unseen_count": 0}));
}
