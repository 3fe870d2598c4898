//! The `http` job kind: errand POSTs each attempt to the app's own endpoint
//! and the answer ends it, so a team can run jobs in the web app it already
//! has. The body holds the job, its lease, and a worker token for this job's
//! type, with which the app may report progress or upload a result file
//! through the worker API while it works. Each push is signed as Stripe
//! signs webhooks: `Errand-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of
//! "<t>.<body>" under the type's signing_secret>`; the app recomputes it and
//! refuses old timestamps (replays).
//!
//! The answer: 2xx completes the job, its JSON object body the result; 4xx
//! fails it for good (the app refused it); anything else (5xx, timeout, no
//! connection) is retried with the type's backoff.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::domain::signing::SigningKey;
use secrecy::ExposeSecret;
use serde_json::{Value, json};

use super::{HandlerFuture, JobContext, JobError, JobHandler, JobOutput};
use crate::config::{HttpUrl, LongSecret, PushSettings};
use crate::domain::tokens::{TokenIssuer, WorkerClaims};

/// What a push handler needs beyond its settings.
pub struct PushEnv {
    /// Mints the worker token a push carries.
    pub tokens: std::sync::Arc<TokenIssuer>,
    /// Where the app reaches the worker API.
    pub public_base_url: HttpUrl,
}

/// The handler of one `http` job type.
pub struct HttpPush {
    job_type: String,
    url: String,
    secret: LongSecret,
    client: reqwest::Client,
    tokens: std::sync::Arc<TokenIssuer>,
    worker_api: String,
    /// How long the token a push carries works: the type's timeout.
    token_ttl: Duration,
}

impl HttpPush {
    pub fn new(job_type: &str, settings: &PushSettings, timeout: Duration, env: &PushEnv) -> Result<Self, String> {
        // A redirect is an answer like any other that is not 2xx: retried.
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| e.to_string())?;
        Ok(Self {
            job_type: job_type.to_owned(),
            url: settings.url.as_str().to_owned(),
            secret: settings.signing_secret.clone(),
            client,
            tokens: env.tokens.clone(),
            worker_api: env.public_base_url.join_path("/worker/v1"),
            token_ttl: timeout,
        })
    }

    async fn push(&self, ctx: JobContext) -> Result<JobOutput, JobError> {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
        let claims = WorkerClaims {
            sub: format!("errand-push:{}", self.job_type),
            scope: "worker".into(),
            types: vec![self.job_type.clone()],
            exp: (now + self.token_ttl).as_secs(),
        };
        let token = self.tokens.issue(&claims).map_err(|e| JobError::Retryable(format!("could not sign: {e}")))?;
        let body = json!({
            "job": {
                "id": ctx.job_id, "type": ctx.job_type, "params": ctx.params,
                "tenant": ctx.tenant, "user": ctx.user, "attempt": ctx.attempt,
            },
            "lease_id": ctx.lease.0,
            "worker_api": { "url": self.worker_api, "token": token },
        })
        .to_string();
        let signature = signature(self.secret.expose_secret().as_bytes(), now.as_secs(), body.as_bytes());
        // The push is a client span of the attempt's, which the app continues
        // (its `traceparent`); without an exporter, the attempt's trace as it came.
        let span = tracing::info_span!(
            "push",
            otel.name = format!("push {}", self.job_type),
            otel.kind = "client",
            otel.status_code = tracing::field::Empty,
            http.request.method = "POST",
            server.address = reqwest::Url::parse(&self.url).ok().and_then(|url| url.host_str().map(str::to_owned)),
            http.response.status_code = tracing::field::Empty,
        );
        let trace = crate::telemetry::traces::parent_of(&span).or(ctx.trace);
        let mut request = self
            .client
            .post(&self.url)
            .header("content-type", "application/json")
            .header("errand-signature", signature);
        if let Some(trace) = &trace {
            request = request.header("traceparent", trace.as_str());
        }
        let sent = tracing::Instrument::instrument(request.body(body).send(), span.clone()).await;
        let response = sent.map_err(|e| {
            span.record("otel.status_code", "error");
            tracing::info!(job = %ctx.job_id, error = %e, "push: the app did not answer");
            JobError::Retryable("the app that runs this job could not be reached".into())
        })?;
        let status = response.status();
        span.record("http.response.status_code", status.as_u16());
        if !status.is_success() {
            span.record("otel.status_code", "error");
        }
        let Some(text) = capped_text(response).await else {
            return Err(JobError::Permanent(format!("the app's answer is longer than {MAX_ANSWER} bytes")));
        };
        if status.is_client_error() {
            return Err(JobError::Permanent(format!(
                "the app refused the job (HTTP {}): {}",
                status.as_u16(),
                excerpt(&text)
            )));
        }
        if !status.is_success() {
            return Err(JobError::Retryable(format!("the app failed (HTTP {})", status.as_u16())));
        }
        let result = match serde_json::from_str::<Value>(&text) {
            _ if text.trim().is_empty() => None,
            Ok(Value::Object(fields)) => match crate::domain::foreign_result_refusal(&fields) {
                Some(refusal) => return Err(JobError::Permanent(format!("the app's answer is refused: {refusal}"))),
                None => Some(Value::Object(fields)),
            },
            Ok(other) => Some(json!({ "value": other })),
            Err(_) => return Err(JobError::Permanent("the app answered 2xx with a body that is not JSON".into())),
        };
        Ok(JobOutput { result })
    }
}

impl JobHandler for HttpPush {
    fn run(&self, ctx: JobContext) -> HandlerFuture {
        let this = HttpPush {
            job_type: self.job_type.clone(),
            url: self.url.clone(),
            secret: self.secret.clone(),
            client: self.client.clone(),
            tokens: self.tokens.clone(),
            worker_api: self.worker_api.clone(),
            token_ttl: self.token_ttl,
        };
        Box::pin(async move { this.push(ctx).await })
    }
}

/// The most of an app's answer read: a job's result is held to the cap of
/// a worker's end (a body of 64 KiB).
const MAX_ANSWER: usize = 64 * 1024;

/// An answer's text, read while it is at most [`MAX_ANSWER`] bytes; `None`
/// past that (the rest is never read). A body that stops arriving reads as
/// what came, which the status and the JSON check then judge.
async fn capped_text(mut response: reqwest::Response) -> Option<String> {
    let mut body = Vec::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        if body.len() + chunk.len() > MAX_ANSWER {
            return None;
        }
        body.extend_from_slice(&chunk);
    }
    Some(String::from_utf8_lossy(&body).into_owned())
}

/// `t=<seconds>,v1=<hex HMAC-SHA256(secret, "<seconds>.<body>")>`.
pub fn signature(secret: &[u8], timestamp: u64, body: &[u8]) -> String {
    let signed = SigningKey::new(secret).sign_bytes(&[timestamp.to_string().as_bytes(), b".", body]);
    format!("t={timestamp},v1={}", hex::encode(signed))
}

/// The start of an app's error answer, for the job's error message.
fn excerpt(text: &str) -> String {
    let text = text.trim().replace('\0', "");
    match text.char_indices().nth(200) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_is_stripes_scheme_over_the_timestamp_and_body() {
        // Computed independently: printf '1700000000.{"a":1}' | openssl dgst -sha256 -hmac secret
        let expected = "t=1700000000,v1=49f24e537407743fa4a0242bb63b94b9a47ee99cbbe071ccd8a22550ae411686";
        let signed = signature(b"secret", 1_700_000_000, br#"{"a":1}"#);
        assert_eq!(signed, expected);
        assert_ne!(signature(b"other", 1_700_000_000, br#"{"a":1}"#), signed);
        assert_ne!(signature(b"secret", 1_700_000_001, br#"{"a":1}"#), signed);
    }
}
