//! Speaking the API: the `Api` trait (one client for in-process and real
//! processes), tokens, waiting on conditions, and problem responses.

use super::*;

pub const SECRET: &str = "test-secret-that-is-long-enough-0123456789";

/// Checks the answer to a cancel of a running job: 202 `cancelling`, or, if
/// its worker stopped before the answer read the job, 200 `cancelled` (the
/// answer tells the job's state when it is given).
pub async fn assert_stopping(response: Response) {
    let status = response.status();
    let state = response.json::<Value>().await.unwrap()["state"].clone();
    assert!(
        (status == StatusCode::ACCEPTED && state == "cancelling") || (status == StatusCode::OK && state == "cancelled"),
        "a running job is being stopped: {status} {state}"
    );
}

/// The `id` of the job a response shows.
pub async fn id_of(response: Response) -> String {
    response.json::<Value>().await.unwrap()["id"].as_str().unwrap().to_owned()
}

/// A client of one errand instance (in-process or a separate process).
#[allow(async_fn_in_trait)]
pub trait Api {
    fn address(&self) -> &str;
    fn http(&self) -> &reqwest::Client;

    async fn submit(&self, token: &str, job_type: &str, key: &str, params: Value) -> Response {
        self.submit_to(token, &format!("/jobs/{job_type}"), key, params).await
    }

    /// `POST` of a job's `params` to `path` (`/jobs/{type}`, with a query
    /// string perhaps) under `key`.
    async fn submit_to(&self, token: &str, path: &str, key: &str, params: Value) -> Response {
        self.http()
            .post(format!("{}{path}", self.address()))
            .bearer_auth(token)
            .header("Idempotency-Key", key)
            .json(&params)
            .send()
            .await
            .expect("POST /jobs")
    }

    /// `POST /batches/{job_type}` of `items` under `key`.
    async fn submit_batch(&self, token: &str, job_type: &str, key: &str, items: Value) -> Response {
        self.http()
            .post(format!("{}/batches/{job_type}", self.address()))
            .bearer_auth(token)
            .header("Idempotency-Key", key)
            .json(&json!({ "items": items }))
            .send()
            .await
            .expect("POST /batches")
    }

    /// The caller's feed notifications of `kind`, newest first (one page).
    async fn notifications_of(&self, token: &str, kind: &str) -> Vec<Value> {
        let feed: Value = self.get(token, "/notifications?limit=100").await.json().await.unwrap();
        feed["notifications"].as_array().unwrap().iter().filter(|n| n["kind"] == kind).cloned().collect()
    }

    /// Submits and expects a 202; returns the job's id.
    async fn create(&self, token: &str, job_type: &str, params: Value) -> String {
        let response = self.submit(token, job_type, &Uuid::new_v4().to_string(), params).await;
        assert_eq!(response.status(), StatusCode::ACCEPTED);
        id_of(response).await
    }

    async fn get(&self, token: &str, path: &str) -> Response {
        self.http().get(format!("{}{path}", self.address())).bearer_auth(token).send().await.expect("GET")
    }

    /// A POST without a body.
    async fn post(&self, token: &str, path: &str) -> Response {
        self.http().post(format!("{}{path}", self.address())).bearer_auth(token).send().await.expect("POST")
    }

    /// A POST of a JSON body.
    async fn post_json(&self, token: &str, path: &str, body: Value) -> Response {
        let url = format!("{}{path}", self.address());
        self.http().post(url).bearer_auth(token).json(&body).send().await.expect("POST")
    }

    /// A PUT of a JSON body.
    async fn put_json(&self, token: &str, path: &str, body: Value) -> Response {
        let url = format!("{}{path}", self.address());
        self.http().put(url).bearer_auth(token).json(&body).send().await.expect("PUT")
    }

    /// A DELETE.
    async fn delete(&self, token: &str, path: &str) -> Response {
        self.http().delete(format!("{}{path}", self.address())).bearer_auth(token).send().await.expect("DELETE")
    }

    /// A GET with no Authorization header.
    async fn get_without_token(&self, path: &str) -> Response {
        self.http().get(format!("{}{path}", self.address())).send().await.expect("GET")
    }

    async fn job(&self, token: &str, id: &str) -> Value {
        let response = self.get(token, &format!("/jobs/{id}")).await;
        assert_eq!(response.status(), StatusCode::OK, "GET /jobs/{id}");
        response.json().await.unwrap()
    }

    /// Waits (up to `within`) until the job's status is `completed`, `failed` or `cancelled`.
    async fn wait_until_finished(&self, token: &str, id: &str, within: Duration) -> Value {
        let deadline = Instant::now() + within;
        loop {
            let job = self.job(token, id).await;
            if ["completed", "failed", "cancelled"].contains(&job["status"].as_str().unwrap_or_default()) {
                return job;
            }
            assert!(Instant::now() < deadline, "job {id} did not finish within {within:?}: {job}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Api for TestApp {
    fn address(&self) -> &str {
        &self.address
    }
    fn http(&self) -> &reqwest::Client {
        &self.http
    }
}

/// A valid token for `user` of `tenant`.
pub fn token(tenant: &str, user: &str) -> String {
    token_with(UserClaims { sub: user.into(), tenant: tenant.into(), email: None, scope: None, exp: now_secs() + 3600 })
}

/// A valid token for `user` of `tenant`, a tenant admin (`scope: tenant_admin`).
pub fn tenant_admin_token(tenant: &str, user: &str) -> String {
    let scope = Some("tenant_admin".into());
    token_with(UserClaims { sub: user.into(), tenant: tenant.into(), email: None, scope, exp: now_secs() + 3600 })
}

/// A valid operator token (`scope: operator`) for `name`.
pub fn operator_token(name: &str) -> String {
    operator_token_with_scope(name, "operator")
}

/// A read-only operator's token (`scope: operator:read`).
pub fn operator_viewer_token(name: &str) -> String {
    operator_token_with_scope(name, "operator:read")
}

/// An operator's token with this `scope`, e.g. `operator operator:sensitive`.
pub fn operator_token_with_scope(name: &str, scope: &str) -> String {
    let claims =
        errand::domain::tokens::OperatorClaims { sub: name.into(), scope: scope.into(), exp: now_secs() + 3600 };
    TokenIssuer::new(SECRET).unwrap().issue(&claims).unwrap()
}

pub fn token_with(claims: UserClaims) -> String {
    TokenIssuer::new(SECRET).unwrap().issue(&claims).unwrap()
}

/// A token with no signature at all (`alg: none` and the like).
pub fn unsigned_token(header: Value, claims: Value) -> String {
    use base64::Engine;
    let b64 = |v: Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
    format!("{}.{}.", b64(header), b64(claims))
}

pub fn now_secs() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs()
}

/// Waits (up to `within`) for an async condition.
pub async fn eventually<F, Fut>(within: Duration, what: &str, mut condition: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + within;
    while !condition().await {
        assert!(Instant::now() < deadline, "timed out after {within:?} waiting for: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Asserts an RFC 9457 problem response with `status` and `code`; returns the body.
pub async fn assert_problem(response: Response, status: StatusCode, code: &str) -> Value {
    assert_eq!(response.status(), status);
    let content_type = response.headers()["content-type"].to_str().unwrap().to_owned();
    assert_eq!(content_type, "application/problem+json");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["status"], json!(status.as_u16()));
    assert_eq!(body["code"], code, "{body}");
    assert!(body["detail"].as_str().is_some_and(|d| !d.is_empty()), "{body}");
    assert!(body["title"].is_string() && body["type"].is_string(), "{body}");
    body
}
