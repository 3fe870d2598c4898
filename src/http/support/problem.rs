//! The one wire shape for errors: RFC 9457 `application/problem+json`, and the
//! one table that gives every error its code and status.
//!
//! Errors callers can act on are variants; anything unexpected is `Internal`
//! (or `Unavailable`), whose cause is logged and never sent.

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpResponse, ResponseError};
use serde::Serialize;

use crate::actors::{Overloaded, SubmitError, TooManyStreams};
use crate::domain::{InvalidIdempotencyKey, QuotaExceeded};
use crate::http::support::rate_limit::{RATE_LIMIT, RATE_LIMIT_POLICY, RateLimited};
use crate::jobs::{FormatRefused, ParamsError};
use crate::store::{StoreError, TooManyTickets};

/// An error as the API reports it.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    #[error("{0}")]
    Unauthorized(&'static str),
    #[error("{0}")]
    IdempotencyKey(#[from] InvalidIdempotencyKey),
    #[error("{0}")]
    BadRequest(String),
    #[error("the request body exceeds {limit} bytes")]
    PayloadTooLarge { limit: usize },
    #[error("the request body did not arrive within {}s", .0.as_secs())]
    BodyTimeout(std::time::Duration),
    #[error("the resource was not found")]
    NotFound,
    #[error("there is no job type {0:?}")]
    UnknownJobType(String),
    #[error(transparent)]
    InvalidParams(#[from] ParamsError),
    #[error(transparent)]
    InvalidFormat(#[from] FormatRefused),
    #[error("this Idempotency-Key was already used for a different request (another job type or other params)")]
    IdempotencyKeyReused,
    #[error("job {0} is unfinished work on the same resource (this job type's admission key): wait for it to end")]
    AdmissionConflict(crate::domain::JobId),
    #[error("{0}")]
    NotReady(String),
    #[error("this job produced no file to download")]
    NoResult,
    #[error("this job's result has expired and was deleted")]
    ResultExpired,
    #[error("this job already {0}: it can no longer be cancelled")]
    AlreadyEnded(&'static str),
    #[error("only failed or cancelled jobs can be retried; this one is {0}")]
    NotRetryable(&'static str),
    #[error("only a waiting job can be held; this one is {0}")]
    NotWaiting(&'static str),
    #[error(
        "this lease is no longer yours (it expired and the job was given to another worker, or the job ended): stop, and change nothing"
    )]
    LeaseLost,
    #[error("{0}")]
    Forbidden(String),
    #[error("{0}")]
    InvalidPreference(String),
    #[error("{0}")]
    InvalidWebhook(String),
    #[error("{0}")]
    InvalidPushSubscription(String),
    #[error(transparent)]
    InvalidBranding(#[from] crate::domain::BrandingError),
    #[error("this errand does not offer Web Push (push.enabled is off)")]
    PushNotEnabled,
    #[error("this errand sends no email (email.enabled is off)")]
    EmailNotEnabled,
    #[error("{0}")]
    InvalidBatch(String),
    #[error("{field}: {reason}")]
    InvalidSchedule { field: &'static str, reason: String },
    #[error("job type {0:?} cannot be scheduled (its configuration does not say `schedulable = true`)")]
    NotSchedulable(String),
    #[error("you have {count} schedules, against a cap of {limit}: delete one first")]
    TooManySchedules { limit: u32, count: u64 },
    #[error("this route does not answer {method}; it answers {allow}")]
    MethodNotAllowed { method: String, allow: &'static str },
    #[error(
        "{} unfinished jobs already count against a cap of {} ({}); wait for some to finish, then try again with the same Idempotency-Key",
        exceeded.count, exceeded.limit, quota_scope_text(exceeded.scope)
    )]
    QuotaExceeded { exceeded: QuotaExceeded, retry_after: std::time::Duration },
    #[error("this delivery was sent again less than {}s ago; it may be once more after that", cooldown.as_secs())]
    RedeliveredTooSoon { cooldown: std::time::Duration, retry_after: std::time::Duration },
    #[error(transparent)]
    TooManyStreams(#[from] TooManyStreams),
    #[error(transparent)]
    TooManyTickets(#[from] TooManyTickets),
    #[error(transparent)]
    RateLimited(#[from] RateLimited),
    #[error(transparent)]
    Overloaded(#[from] Overloaded),
    #[error("the service is temporarily unable to handle the request; try again shortly")]
    Unavailable(String),
    #[error("an internal error occurred")]
    Internal(String),
}

/// The error table: a stable snake_case code, the HTTP status and a title, per variant.
impl AppError {
    fn describe(&self) -> (&'static str, StatusCode, &'static str) {
        use StatusCode as S;
        match self {
            Self::Unauthorized(_) => ("unauthorized", S::UNAUTHORIZED, "Unauthorized"),
            Self::IdempotencyKey(_) => ("invalid_idempotency_key", S::BAD_REQUEST, "Invalid Idempotency-Key"),
            Self::BadRequest(_) => ("bad_request", S::BAD_REQUEST, "Bad request"),
            Self::PayloadTooLarge { .. } => ("payload_too_large", S::PAYLOAD_TOO_LARGE, "Payload too large"),
            Self::BodyTimeout(_) => ("request_timeout", S::REQUEST_TIMEOUT, "Request timeout"),
            Self::NotFound => ("not_found", S::NOT_FOUND, "Not found"),
            Self::UnknownJobType(_) => ("unknown_job_type", S::NOT_FOUND, "Unknown job type"),
            Self::InvalidParams(_) => ("invalid_params", S::UNPROCESSABLE_ENTITY, "Invalid job params"),
            Self::InvalidFormat(_) => ("invalid_format", S::UNPROCESSABLE_ENTITY, "Invalid format"),
            Self::IdempotencyKeyReused => ("idempotency_key_reused", S::UNPROCESSABLE_ENTITY, "Idempotency-Key reused"),
            Self::AdmissionConflict(_) => ("admission_conflict", S::CONFLICT, "Admission conflict"),
            Self::NotReady(_) => ("result_not_ready", S::CONFLICT, "Result not ready"),
            Self::NoResult => ("no_result", S::NOT_FOUND, "No result"),
            Self::ResultExpired => ("result_expired", S::GONE, "Result expired"),
            Self::AlreadyEnded(_) => ("job_already_ended", S::CONFLICT, "Job already ended"),
            Self::NotRetryable(_) => ("job_not_retryable", S::CONFLICT, "Job not retryable"),
            Self::NotWaiting(_) => ("job_not_waiting", S::CONFLICT, "Job not waiting"),
            Self::LeaseLost => ("lease_lost", S::CONFLICT, "Lease lost"),
            Self::Forbidden(_) => ("forbidden", S::FORBIDDEN, "Forbidden"),
            Self::InvalidPreference(_) => ("invalid_preference", S::UNPROCESSABLE_ENTITY, "Invalid preference"),
            Self::InvalidWebhook(_) => ("invalid_webhook", S::UNPROCESSABLE_ENTITY, "Invalid webhook"),
            Self::InvalidPushSubscription(_) => {
                ("invalid_push_subscription", S::UNPROCESSABLE_ENTITY, "Invalid push subscription")
            }
            Self::InvalidBranding(_) => ("invalid_branding", S::UNPROCESSABLE_ENTITY, "Invalid branding"),
            Self::PushNotEnabled => ("push_not_enabled", S::NOT_FOUND, "Web Push not enabled"),
            Self::EmailNotEnabled => ("email_not_enabled", S::NOT_FOUND, "Email not enabled"),
            Self::InvalidBatch(_) => ("invalid_batch", S::UNPROCESSABLE_ENTITY, "Invalid batch"),
            Self::InvalidSchedule { .. } => ("invalid_schedule", S::UNPROCESSABLE_ENTITY, "Invalid schedule"),
            Self::NotSchedulable(_) => {
                ("job_type_not_schedulable", S::UNPROCESSABLE_ENTITY, "Job type not schedulable")
            }
            Self::TooManySchedules { .. } => ("quota_exceeded", S::TOO_MANY_REQUESTS, "Quota exceeded"),
            Self::MethodNotAllowed { .. } => ("method_not_allowed", S::METHOD_NOT_ALLOWED, "Method not allowed"),
            Self::QuotaExceeded { .. } => ("quota_exceeded", S::TOO_MANY_REQUESTS, "Quota exceeded"),
            Self::RateLimited(_) => ("rate_limited", S::TOO_MANY_REQUESTS, "Rate limited"),
            Self::RedeliveredTooSoon { .. } => ("redelivered_too_soon", S::TOO_MANY_REQUESTS, "Redelivered too soon"),
            Self::TooManyStreams(_) | Self::TooManyTickets(_) => {
                ("too_many_streams", S::TOO_MANY_REQUESTS, "Too many streams")
            }
            Self::Overloaded(_) => ("overloaded", S::SERVICE_UNAVAILABLE, "Overloaded"),
            Self::Unavailable(_) => ("unavailable", S::SERVICE_UNAVAILABLE, "Service unavailable"),
            Self::Internal(_) => ("internal", S::INTERNAL_SERVER_ERROR, "Internal error"),
        }
    }
}

/// The 401 of every route that needs a token, as the OpenAPI document shows it.
#[derive(utoipa::IntoResponses)]
#[response(status = 401, description = "No valid token (`unauthorized`)", content_type = "application/problem+json")]
#[expect(dead_code, reason = "only its type is used: by the handlers' OpenAPI annotations")]
pub struct Unauthenticated(Problem<'static>);

/// The 429 of every user route past a rate limit, as the OpenAPI document shows it.
#[derive(utoipa::IntoResponses)]
#[response(
    status = 429,
    description = "Past a rate limit (`rate_limited`): every answer of a user route carries `RateLimit-Policy` (`\"user\";q=100;w=10`: a burst over its window) and `RateLimit` (`\"user\";r=98;t=1`) of the IETF httpapi draft",
    content_type = "application/problem+json",
    headers(
        ("Retry-After" = u64, description = "Seconds until a request passes again"),
        ("RateLimit-Policy" = String, description = "The budget nearest its end: name, quota `q` per window `w` seconds"),
        ("RateLimit" = String, description = "Its standing: remaining `r`, seconds `t` until it is whole again"),
    )
)]
#[expect(dead_code, reason = "only its type is used: by the handlers' OpenAPI annotations")]
pub struct RateLimitedResponse(Problem<'static>);

/// The 503 of every route that needs the database, as the OpenAPI document shows it.
#[derive(utoipa::IntoResponses)]
#[response(status = 503, description = "Try again (`unavailable`)", content_type = "application/problem+json")]
#[expect(dead_code, reason = "only its type is used: by the handlers' OpenAPI annotations")]
pub struct Unavailable(Problem<'static>);

/// The 403 of every operator route, for tokens that are not an operator's.
#[derive(utoipa::IntoResponses)]
#[response(
    status = 403,
    description = "Not an operator token (`forbidden`)",
    content_type = "application/problem+json"
)]
#[expect(dead_code, reason = "only its type is used: by the handlers' OpenAPI annotations")]
pub struct NotAnOperator(Problem<'static>);

/// The 403 of every operator action, for tokens that are not an operator's
/// or are a read-only operator's (`operator:read`).
#[derive(utoipa::IntoResponses)]
#[response(
    status = 403,
    description = "Not an operator token, or a read-only one (`forbidden`)",
    content_type = "application/problem+json"
)]
#[expect(dead_code, reason = "only its type is used: by the handlers' OpenAPI annotations")]
pub struct NotAnActingOperator(Problem<'static>);

/// The 403 of every worker API route, for tokens that are not a worker's.
#[derive(utoipa::IntoResponses)]
#[response(status = 403, description = "Not a worker token (`forbidden`)", content_type = "application/problem+json")]
#[expect(dead_code, reason = "only its type is used: by the handlers' OpenAPI annotations")]
pub struct NotAWorker(Problem<'static>);

/// The 409 of every worker API call about a held job.
#[derive(utoipa::IntoResponses)]
#[response(
    status = 409,
    description = "The lease is no longer yours (`lease_lost`): stop, and change nothing",
    content_type = "application/problem+json"
)]
#[expect(dead_code, reason = "only its type is used: by the handlers' OpenAPI annotations")]
pub struct LeaseNoLongerYours(Problem<'static>);

/// The problem responses operations share, each set named once: an
/// operation lists its set (beside its own answers) instead of every member.
macro_rules! problem_set {
    ($(#[$doc:meta])* $name:ident = $($member:ty),+) => {
        $(#[$doc])*
        pub struct $name;

        impl utoipa::IntoResponses for $name {
            fn responses() -> std::collections::BTreeMap<String, utoipa::openapi::RefOr<utoipa::openapi::response::Response>> {
                let mut responses = std::collections::BTreeMap::new();
                $(responses.extend(<$member as utoipa::IntoResponses>::responses());)+
                responses
            }
        }
    };
}

problem_set!(
    /// A user's route: a token, the rate limits, the database.
    UserRouteProblems = Unauthenticated, RateLimitedResponse, Unavailable
);
problem_set!(
    /// A worker's call about a job it holds.
    WorkerCallProblems = Unauthenticated, NotAWorker, LeaseNoLongerYours, Unavailable
);
problem_set!(
    /// An operator's read.
    OperatorReadProblems = Unauthenticated, NotAnOperator, Unavailable
);
problem_set!(
    /// An operator's action (read-only operators may not).
    OperatorActionProblems = Unauthenticated, NotAnActingOperator, Unavailable
);

/// An RFC 9457 problem document, with errand's `code` (and `field` for params) as extensions.
#[derive(Serialize, utoipa::ToSchema)]
pub struct Problem<'a> {
    #[serde(rename = "type")]
    kind: String,
    #[schema(value_type = String)]
    title: &'a str,
    status: u16,
    detail: String,
    /// Stable and machine-readable, e.g. `invalid_params`, `key_reused`, `unavailable`.
    #[schema(value_type = String)]
    code: &'a str,
    /// For `invalid_params`: a JSON pointer to the failing field.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    field: Option<&'a str>,
    /// For `quota_exceeded`: which cap (`user_job_type`, `user` or `tenant`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    scope: Option<&'a str>,
    /// For `quota_exceeded`: the cap.
    #[serde(skip_serializing_if = "Option::is_none")]
    limit: Option<u32>,
    /// For `quota_exceeded`: the unfinished jobs that count against it now.
    #[serde(skip_serializing_if = "Option::is_none")]
    count: Option<u64>,
    /// For `admission_conflict`: the unfinished job that holds the key.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, format = Uuid)]
    job_id: Option<String>,
}

impl ResponseError for AppError {
    fn status_code(&self) -> StatusCode {
        self.describe().1
    }

    fn error_response(&self) -> HttpResponse {
        let (code, status, title) = self.describe();
        if let Self::Internal(cause) | Self::Unavailable(cause) = self {
            tracing::error!(%cause, code, "request failed");
        }
        let problem = Problem {
            kind: format!("https://errand.dev/problems/{code}"),
            title,
            status: status.as_u16(),
            detail: self.to_string(),
            code,
            field: match self {
                Self::InvalidParams(e) => Some(e.field.as_str()),
                Self::InvalidFormat(_) => Some("format"),
                Self::InvalidSchedule { field, .. } => Some(field),
                _ => None,
            },
            scope: None,
            limit: None,
            count: None,
            job_id: match self {
                Self::AdmissionConflict(job) => Some(job.to_string()),
                _ => None,
            },
        };
        let problem = match self {
            Self::QuotaExceeded { exceeded, .. } => Problem {
                scope: Some(exceeded.scope.name()),
                limit: Some(exceeded.limit),
                count: Some(exceeded.count),
                ..problem
            },
            Self::TooManySchedules { limit, count } => {
                Problem { scope: Some("user_schedules"), limit: Some(*limit), count: Some(*count), ..problem }
            }
            _ => problem,
        };
        if status == StatusCode::TOO_MANY_REQUESTS {
            // Refusals by reason, never by tenant: the label set stays small.
            crate::telemetry::metrics().requests_refused.add(code, 1);
        }
        let mut response = HttpResponse::build(status);
        response.insert_header((header::CONTENT_TYPE, HeaderValue::from_static("application/problem+json")));
        match self {
            Self::Unauthorized(_) => {
                response.insert_header((header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer")));
            }
            Self::Unavailable(_) | Self::Overloaded(_) => {
                response.insert_header((header::RETRY_AFTER, HeaderValue::from_static("1")));
            }
            Self::QuotaExceeded { retry_after, .. } | Self::RedeliveredTooSoon { retry_after, .. } => {
                response.insert_header((header::RETRY_AFTER, retry_after_seconds(*retry_after)));
            }
            Self::TooManyStreams(_) | Self::TooManyTickets(_) => {
                response.insert_header((header::RETRY_AFTER, retry_after_seconds(STREAM_RETRY_AFTER)));
            }
            Self::RateLimited(limited) => {
                response.insert_header((header::RETRY_AFTER, retry_after_seconds(limited.retry_after)));
                response.insert_header((RATE_LIMIT_POLICY.clone(), limited.standing.policy_header()));
                response.insert_header((RATE_LIMIT.clone(), limited.standing.limit_header()));
            }
            Self::MethodNotAllowed { allow, .. } => {
                response.insert_header((header::ALLOW, HeaderValue::from_static(allow)));
            }
            _ => {}
        }
        response.body(serde_json::to_string(&problem).unwrap_or_default())
    }
}

impl From<StoreError> for AppError {
    fn from(error: StoreError) -> Self {
        if error.is_temporary() { Self::Unavailable(cause_chain(&error)) } else { Self::Internal(cause_chain(&error)) }
    }
}

/// When a refused stream is worth trying again: a closed tab frees its slot
/// within a keep-alive or so.
const STREAM_RETRY_AFTER: std::time::Duration = std::time::Duration::from_secs(5);

/// How a refusal names the cap it met.
fn quota_scope_text(scope: crate::domain::QuotaScope) -> &'static str {
    match scope {
        crate::domain::QuotaScope::UserJobType => "your unfinished jobs of this type",
        crate::domain::QuotaScope::User => "your unfinished jobs",
        crate::domain::QuotaScope::Tenant => "your organisation's unfinished jobs",
    }
}

/// A `Retry-After` of whole seconds, at least 1 (RFC 9110: delay-seconds).
fn retry_after_seconds(wait: std::time::Duration) -> HeaderValue {
    HeaderValue::from(wait.as_secs_f64().ceil().max(1.0) as u64)
}

/// An error with its sources, for the log ("db error" alone says nothing).
fn cause_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

impl From<SubmitError> for AppError {
    fn from(error: SubmitError) -> Self {
        match error {
            SubmitError::UnknownType(name) => Self::UnknownJobType(name),
            SubmitError::InvalidParams(e) => Self::InvalidParams(e),
            SubmitError::InvalidFormat(e) => Self::InvalidFormat(e),
            error @ SubmitError::NotBatchable(_) => Self::InvalidBatch(error.to_string()),
            SubmitError::Store(e) => e.into(),
            SubmitError::Overloaded(e) => Self::Overloaded(e),
            SubmitError::Intake(e) => e.into(),
        }
    }
}

impl From<actix::MailboxError> for AppError {
    fn from(error: actix::MailboxError) -> Self {
        Self::Unavailable(format!("actor mailbox: {error}"))
    }
}
