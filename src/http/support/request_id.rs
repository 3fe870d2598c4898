//! Every request has an id: the caller's `X-Request-Id` when it sends a
//! sensible one, else a fresh UUID. It is echoed in the response and set on
//! the request's tracing span, which the caller's tenant and user join once
//! the token is checked (see [`record_caller`]), so a request's log lines can
//! be followed end to end.
//!
//! The same span is the request's server span in a trace: a child of the
//! caller's W3C `traceparent` when it sends one (see `telemetry::traces`),
//! and the parent of what the request records ([`trace_of`]).

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::middleware::Next;
use actix_web::{HttpMessage, HttpRequest};
use tracing::Instrument;

use crate::domain::{Caller, TraceParent};
use crate::telemetry::traces;

/// The header carrying the id, both ways.
pub const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// The middleware: wraps every request in a span holding its id.
pub async fn request_id(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let id = req
        .headers()
        .get(&REQUEST_ID)
        .and_then(|value| value.to_str().ok())
        .filter(|id| is_sensible(id))
        .map_or_else(|| uuid::Uuid::now_v7().to_string(), str::to_owned);
    let span = tracing::info_span!(
        "request",
        request_id = %id,
        method = %req.method(),
        path = %req.path(),
        tenant = tracing::field::Empty,
        user = tracing::field::Empty,
        acted_by = tracing::field::Empty,
        otel.name = tracing::field::Empty,
        otel.kind = "server",
        http.response.status_code = tracing::field::Empty,
    );
    if traces::exporting() {
        // (Matching the route again costs a walk of the route table: only for an exported span.)
        let route = req.match_pattern();
        span.record("otel.name", format!("{} {}", req.method(), route.as_deref().unwrap_or("unmatched")));
    }
    let header = |name: &str| req.headers().get(name).and_then(|value| value.to_str().ok());
    let incoming = header("traceparent").and_then(TraceParent::parse);
    if let Some(parent) = &incoming {
        traces::continue_trace(&span, parent, header("tracestate"));
        req.extensions_mut().insert(IncomingTrace(parent.clone()));
    }
    let mut response = next.call(req).instrument(span.clone()).await?;
    span.record("http.response.status_code", response.status().as_u16());
    if let Ok(value) = HeaderValue::from_str(&id) {
        response.headers_mut().insert(REQUEST_ID, value);
    }
    Ok(response)
}

/// The caller's `traceparent`, as it came.
#[derive(Clone)]
struct IncomingTrace(TraceParent);

/// The trace of what `req` records in `span` (a child of its request's
/// span): that span's when spans are exported, else the caller's
/// `traceparent` as it came (passed on unread), else none.
pub fn trace_of(req: &HttpRequest, span: &tracing::Span) -> Option<TraceParent> {
    traces::parent_of(span).or_else(|| req.extensions().get::<IncomingTrace>().map(|incoming| incoming.0.clone()))
}

/// Adds the authenticated caller to the current request's span.
pub fn record_caller(caller: &Caller) {
    let span = tracing::Span::current();
    span.record("tenant", caller.tenant.as_str());
    span.record("user", caller.user.as_str());
    if let Some(service) = &caller.acted_by {
        span.record("acted_by", service.as_str());
    }
}

/// Up to 128 visible ASCII characters: anything else (or nothing) gets a fresh id,
/// so a hostile header cannot forge log lines.
fn is_sensible(id: &str) -> bool {
    !id.is_empty() && id.len() <= 128 && id.bytes().all(|b| b.is_ascii_graphic())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_short_visible_ascii_ids_are_taken_from_callers() {
        assert!(is_sensible("req-42_abc.DEF"));
        assert!(!is_sensible(""));
        assert!(!is_sensible("two words"));
        assert!(!is_sensible("line\nbreak"));
        assert!(!is_sensible(&"x".repeat(129)));
    }
}
