//! Request bodies a client controls: a slow one, a stalled one, a batch
//! whose items are too many or too large. Each is refused while it streams,
//! at once, without holding a connection or reading the rest.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::helpers::*;

/// A raw connection to `app` on which `head` and the first `body` bytes were sent.
async fn sent(app: &TestApp, head: &str, body: &[u8]) -> TcpStream {
    let mut socket = TcpStream::connect(app.address.trim_start_matches("http://")).await.unwrap();
    socket.write_all(head.as_bytes()).await.unwrap();
    socket.write_all(body).await.unwrap();
    socket
}

/// Everything the server sends on `socket` until it closes it, or panics
/// when that takes longer than `within`.
async fn answer_then_close(socket: &mut TcpStream, within: Duration) -> String {
    let mut answer = Vec::new();
    tokio::time::timeout(within, socket.read_to_end(&mut answer)).await.expect("answered and closed in time").unwrap();
    String::from_utf8_lossy(&answer).into_owned()
}

#[actix_web::test]
async fn an_anonymous_trickling_body_is_answered_at_once_and_its_connection_closed() {
    let app = spawn_app().await;
    let head = "POST /jobs/noop HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nIdempotency-Key: k\r\n\
                Content-Length: 65536\r\n\r\n";
    let mut socket = sent(&app, head, b"{\"a\": \"bbb").await;
    // The other 65,526 bytes never come.
    let answer = answer_then_close(&mut socket, Duration::from_secs(5)).await;
    assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");
    assert!(answer.to_ascii_lowercase().contains("connection: close"), "{answer}");
}

#[actix_web::test]
async fn a_body_slower_than_the_deadline_is_a_408() {
    let app = TestApp::builder().configure(|s| s.http.body_timeout = Duration::from_millis(500)).spawn().await;
    let head = format!(
        "POST /jobs/noop HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\n\
         Idempotency-Key: k\r\nContent-Length: 1000\r\n\r\n",
        token("acme", "alice")
    );
    let mut socket = sent(&app, &head, b"{\"a\": \"bbb").await;
    let answer = answer_then_close(&mut socket, Duration::from_secs(10)).await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("request_timeout"), "{answer}");
    let jobs: i64 = app.db.scalar("SELECT count(*) FROM jobs", &[]).await;
    assert_eq!(jobs, 0, "nothing was recorded");
}

/// `POST /batches/noop` whose body is `first` and then nothing, ever: the
/// answer must come from what was sent.
async fn batch_that_stalls_after(app: &TestApp, first: Vec<u8>) -> reqwest::Response {
    let (send, receive) = tokio::sync::mpsc::channel::<Result<Vec<u8>, std::io::Error>>(1);
    send.send(Ok(first)).await.unwrap();
    let stream = futures_util::stream::unfold((receive, send), |(mut receive, send)| async move {
        receive.recv().await.map(|chunk| (chunk, (receive, send)))
    });
    let request = app
        .http
        .post(format!("{}/batches/noop", app.address))
        .bearer_auth(token("acme", "alice"))
        .header("Idempotency-Key", "stalled")
        .header("Content-Type", "application/json")
        .body(reqwest::Body::wrap_stream(stream))
        .send();
    tokio::time::timeout(Duration::from_secs(10), request).await.expect("answered before the body ended").unwrap()
}

#[actix_web::test]
async fn a_batch_item_over_the_params_cap_is_refused_as_it_streams() {
    let app = spawn_app().await;
    let mut first = br#"{"items": [{"n": 1}, {"big": ""#.to_vec();
    first.extend(std::iter::repeat_n(b'x', 70 * 1024));
    let body =
        assert_problem(batch_that_stalls_after(&app, first).await, StatusCode::UNPROCESSABLE_ENTITY, "invalid_params")
            .await;
    assert_eq!(body["field"], "/items/1", "{body}");
    let batches: i64 = app.db.scalar("SELECT count(*) FROM batches", &[]).await;
    assert_eq!(batches, 0);
}

#[actix_web::test]
async fn a_batch_past_its_item_count_is_refused_as_it_streams() {
    let app =
        TestApp::builder().configure(|s| s.batches.max_items = std::num::NonZeroUsize::new(3).unwrap()).spawn().await;
    let first = br#"{"items": [{"n": 1}, {"n": 2}, {"n": 3}, {"n": 4}"#.to_vec();
    assert_problem(batch_that_stalls_after(&app, first).await, StatusCode::UNPROCESSABLE_ENTITY, "invalid_batch").await;
}

#[actix_web::test]
async fn a_whole_batch_of_items_within_the_caps_is_taken_and_one_just_over_is_not() {
    let app = spawn_app().await;
    let alice = token("acme", "alice");
    // An item's JSON text of exactly 64 KiB, and one byte more.
    let item = |len: usize| json!({ "pad": "x".repeat(len - r#"{"pad":""}"#.len()) });
    let taken = app.submit_batch(&alice, "noop", "fits", json!([item(64 * 1024), {}])).await;
    assert_eq!(taken.status(), StatusCode::ACCEPTED);
    let refused = app.submit_batch(&alice, "noop", "over", json!([{}, item(64 * 1024 + 1)])).await;
    let body = assert_problem(refused, StatusCode::UNPROCESSABLE_ENTITY, "invalid_params").await;
    assert_eq!(body["field"], "/items/1", "{body}");
}
