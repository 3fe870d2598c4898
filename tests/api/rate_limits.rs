//! Rate limits on the user routes: budgets per user, per user's creates and
//! per tenant, told in the `RateLimit` headers, refused with 429 past them,
//! and divided among the processes on one database.

use std::time::Duration;

use reqwest::{Response, StatusCode};
use serde_json::json;

use crate::helpers::*;
use errand::config::CountCap;

/// The `r` (remaining) and `t` (reset) of a `RateLimit` header, with its policy name.
fn standing(response: &Response) -> (String, u64, u64) {
    let value = response.headers()["ratelimit"].to_str().unwrap().to_owned();
    let (name, params) = value.split_once(';').unwrap();
    let param = |key: &str| -> u64 {
        params.split(';').find_map(|p| p.strip_prefix(&format!("{key}="))).unwrap().parse().unwrap()
    };
    (name.trim_matches('"').to_owned(), param("r"), param("t"))
}

fn policy(response: &Response) -> String {
    response.headers()["ratelimit-policy"].to_str().unwrap().to_owned()
}

#[actix_web::test]
async fn creates_past_the_budget_are_refused_with_the_headers_and_pass_again_later() {
    let app = TestApp::builder()
        .configure(|s| {
            s.rate_limits.per_user = CountCap(Some(600));
            s.rate_limits.creates_per_user = CountCap(Some(60));
            // A whole minute's budget at once: this test spends it all.
            s.rate_limits.burst = Duration::from_secs(60);
        })
        .spawn()
        .await;
    let alice = token("acme", "alice");
    let mut remaining = Vec::new();
    for i in 0..60 {
        let response = app.submit(&alice, "noop", &format!("k{i}"), json!({})).await;
        assert_eq!(response.status(), StatusCode::ACCEPTED);
        assert_eq!(policy(&response), "\"user_creates\";q=60;w=60");
        let (name, r, _) = standing(&response);
        assert_eq!(name, "user_creates");
        remaining.push(r);
    }
    assert!(remaining.windows(2).all(|w| w[1] <= w[0]), "remaining never grows within a burst: {remaining:?}");
    assert!(remaining[59] <= 1, "{remaining:?}");

    let (refused, key) = eventually_refused(&app, &alice).await;
    let wait: u64 = refused.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=2).contains(&wait), "one create a second comes back: {wait}");
    assert_eq!(standing(&refused).1, 0);
    let problem = assert_problem(refused, StatusCode::TOO_MANY_REQUESTS, "rate_limited").await;
    assert!(problem["detail"].as_str().unwrap().contains("new jobs"), "{problem}");
    assert_eq!(app.db.scalar::<i64>("SELECT count(*) FROM jobs WHERE idempotency_key = $1", &[&key]).await, 0);

    // Reads draw on the user's budget, not on the creates'.
    let read = app.get(&alice, "/jobs").await;
    assert_eq!(read.status(), StatusCode::OK);
    assert_eq!(standing(&read).0, "user");
    // Another user's budget is their own.
    app.create(&token("acme", "bob"), "noop", json!({})).await;
    // After the wait, creates pass again.
    eventually(Duration::from_secs(5), "a create passes again", || async {
        app.submit(&alice, "noop", &key, json!({})).await.status() == StatusCode::ACCEPTED
    })
    .await;
}

/// Submits new jobs until one is refused (the budget may have regained a
/// request or two while the burst was sent): the refusal and its key.
async fn eventually_refused(app: &TestApp, token: &str) -> (Response, String) {
    for i in 0..5 {
        let key = format!("late-{i}");
        let response = app.submit(token, "noop", &key, json!({})).await;
        if response.status() == StatusCode::TOO_MANY_REQUESTS {
            return (response, key);
        }
        assert_eq!(response.status(), StatusCode::ACCEPTED);
    }
    panic!("never refused");
}

#[actix_web::test]
async fn a_tenants_users_share_its_budget_and_other_tenants_do_not() {
    let app = TestApp::builder()
        .configure(|s| {
            s.rate_limits.per_tenant = CountCap(Some(4));
            s.rate_limits.burst = Duration::from_secs(60);
        })
        .spawn()
        .await;
    let (alice, bob) = (token("acme", "alice"), token("acme", "bob"));
    for caller in [&alice, &bob, &alice, &bob] {
        assert_eq!(app.get(caller, "/notifications").await.status(), StatusCode::OK);
    }
    let refused = app.get(&bob, "/notifications").await;
    assert_eq!(policy(&refused), "\"tenant\";q=4;w=60");
    assert_problem(refused, StatusCode::TOO_MANY_REQUESTS, "rate_limited").await;
    assert_eq!(app.get(&token("initech", "carol"), "/notifications").await.status(), StatusCode::OK);
    // Unauthenticated and operator requests are not counted against a tenant.
    assert_eq!(app.get(&operator_token("olga"), "/admin/queues").await.status(), StatusCode::OK);
}

#[actix_web::test]
async fn processes_on_one_database_divide_the_budget() {
    let db = TestDb::create().await;
    let env = [("ERRAND_RATE_LIMITS__PER_USER", "20"), ("ERRAND_RATE_LIMITS__BURST", "60s")];
    let (a, b) = (ErrandProcess::start(&db, &env), ErrandProcess::start(&db, &env));
    let alice = token("acme", "alice");
    // Each process counts the other within a few seconds: its policy then shows half the budget.
    for process in [&a, &b] {
        eventually(Duration::from_secs(15), "the budget is divided in two", || async {
            policy(&process.get(&alice, "/notifications").await) == "\"user\";q=10;w=60"
        })
        .await;
    }
    // The probe that saw the division spent one request of each half. Sent
    // at once: a refused caller's next refusals wait out its Retry-After.
    let requests = (0..40).map(|i| {
        let process = if i % 2 == 0 { &a } else { &b };
        process.get(&alice, "/notifications")
    });
    let answers = futures_util::future::join_all(requests).await;
    let passed = answers.iter().filter(|response| response.status() == StatusCode::OK).count();
    // 9 + 9 left, and at most one more each regained (one per 6 s) while this ran.
    assert!((18..=20).contains(&passed), "{passed} of 40 passed; the budget is 20 a minute");
}

/// Sends `request` on `stream` and reads one response: its head, lowercased, and its body.
async fn exchange(stream: &mut tokio::net::TcpStream, request: &str) -> (String, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut read = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf)).await.unwrap().unwrap();
        assert!(n > 0, "the connection closed after {:?}", String::from_utf8_lossy(&read));
        read.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&read).into_owned();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let head = head.to_lowercase();
            let length: usize = head
                .lines()
                .find_map(|line| line.strip_prefix("content-length:"))
                .map_or(0, |n| n.trim().parse().unwrap());
            if body.len() >= length {
                return (head, body.to_owned());
            }
        }
    }
}

#[actix_web::test]
async fn a_refused_request_leaves_its_connection_open_for_the_next() {
    let app = TestApp::builder()
        .configure(|s| {
            s.rate_limits.creates_per_user = CountCap(Some(1));
            s.rate_limits.burst = Duration::from_secs(60);
        })
        .spawn()
        .await;
    let alice = token("acme", "alice");
    let host = app.address.trim_start_matches("http://").to_owned();
    let mut stream = tokio::net::TcpStream::connect(&host).await.unwrap();
    let create = |key: &str| {
        let body = r#"{"padding": "a body the refusal does not read"}"#;
        format!(
            "POST /jobs/noop HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {alice}\r\nIdempotency-Key: {key}\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
    };
    let (head, _) = exchange(&mut stream, &create("first")).await;
    assert!(head.starts_with("http/1.1 202"), "{head}");
    // Refused by the rate limit before its body is read; then by its token.
    for refused in [create("second"), create("third").replace(&alice, "not-a-token")] {
        let (head, body) = exchange(&mut stream, &refused).await;
        assert!(head.starts_with("http/1.1 429") || head.starts_with("http/1.1 401"), "{head}");
        assert!(body.contains("\"code\""), "{body}");
        assert!(!head.contains("connection: close"), "{head}");
    }
    let (head, _) = exchange(&mut stream, &format!("GET /healthz HTTP/1.1\r\nHost: {host}\r\n\r\n")).await;
    assert!(head.starts_with("http/1.1 200"), "{head}");
    assert_eq!(app.db.scalar::<i64>("SELECT count(*) FROM jobs", &[]).await, 1);
}

#[actix_web::test]
async fn a_client_back_before_its_retry_after_is_answered_only_then_and_others_meanwhile() {
    let app = TestApp::builder()
        .configure(|s| {
            // One create a second, one at a time.
            s.rate_limits.creates_per_user = CountCap(Some(60));
            s.rate_limits.burst = Duration::from_secs(1);
        })
        .spawn()
        .await;
    let alice = token("acme", "alice");
    let sent = std::time::Instant::now();
    assert_eq!(app.submit(&alice, "noop", "k0", json!({})).await.status(), StatusCode::ACCEPTED);
    let (refused, _) = eventually_refused(&app, &alice).await;
    assert!(refused.headers().contains_key("retry-after"));
    // Back at once, ignoring Retry-After: the answer waits for the time it was told.
    let again = {
        let request = app.http.post(format!("{}/jobs/noop", app.address)).bearer_auth(&alice);
        let request = request.header("Idempotency-Key", "too-soon").json(&json!({}));
        tokio::spawn(async move { (request.send().await.unwrap(), std::time::Instant::now()) })
    };
    // Meanwhile another user of the same tenant is answered.
    let bob = app.submit(&token("acme", "bob"), "noop", "b0", json!({})).await;
    assert_eq!(bob.status(), StatusCode::ACCEPTED);
    assert!(!again.is_finished(), "bob's create was answered while alice's refusal waits");
    let (response, answered) = again.await.unwrap();
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    // k0 took the one create of its second; the next passes a second after it.
    assert!(answered - sent >= Duration::from_millis(900), "held {:?}", answered - sent);
}
