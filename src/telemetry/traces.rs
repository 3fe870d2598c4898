//! Traces: errand's `tracing` spans, exported with OTLP over HTTP (protobuf)
//! when the environment names a collector (the standard variables,
//! `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`;
//! off unless one is set, or when `OTEL_SDK_DISABLED=true`).
//!
//! A trace crosses the queue through the job's [`TraceParent`], recorded with
//! it: the request that recorded a job is the parent of its first attempt;
//! a later attempt (a retry after backoff, a rescue), a run an operator
//! retried and a schedule's occurrence (whose trace is the schedule's
//! creation) start a trace of their own with a *link* to it, so hours of
//! backoff never stretch one trace ([`JobTrace`]). Without an exporter a
//! caller's `traceparent` is still recorded with the job and passed on (to
//! external workers, pushes and webhook receivers) as it came.
//!
//! A trace starts only where work for someone starts: a request, an
//! attempt, a delivery, an email, a claim that took jobs (spans of another
//! kind than internal). The actors' own bookkeeping (polls, batches of
//! submissions, upkeep) starts none, or every poll would be a trace
//! ([`WorkRoots`]).

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::SystemTime;

use opentelemetry::trace::{
    Link, SamplingDecision, SamplingResult, Span as _, SpanContext, SpanId, SpanKind, TraceContextExt, TraceFlags,
    TraceId, TraceState, Tracer as _, TracerProvider,
};
use opentelemetry::{Context, KeyValue};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{Config, SdkTracer, SdkTracerProvider, ShouldSample};
use tracing::{Level, Span, Subscriber};
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::registry::LookupSpan;

use crate::domain::{JobTrace, TraceParent};

/// Whether spans are exported: set once, when the exporter is made.
static EXPORTING: AtomicBool = AtomicBool::new(false);

/// The tracer of spans errand makes itself, not through `tracing` (a claim's,
/// which is known to be one only once it took jobs).
static TRACER: OnceLock<SdkTracer> = OnceLock::new();

/// The OTLP exporter of this process. Dropping it sends what is still buffered.
pub struct Exporter {
    provider: SdkTracerProvider,
}

/// The environment asks for an exporter errand cannot make.
#[derive(Debug, thiserror::Error)]
#[error("{variable}: {message}")]
pub struct ExporterError {
    variable: &'static str,
    message: String,
}

const ENDPOINTS: [&str; 2] = ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"];
const PROTOCOLS: [&str; 2] = ["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"];

impl Exporter {
    /// The exporter the standard `OTEL_*` variables describe, or none when
    /// they name no endpoint. Only `http/protobuf` is spoken: a variable
    /// asking for gRPC or JSON is refused at start-up, by name.
    pub fn from_env() -> Result<Option<Self>, ExporterError> {
        let set = |name: &str| std::env::var(name).ok().filter(|value| !value.trim().is_empty());
        let disabled = set("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true"))
            || set("OTEL_TRACES_EXPORTER").is_some_and(|v| v.eq_ignore_ascii_case("none"));
        let Some(variable) = ENDPOINTS.into_iter().find(|name| set(name).is_some()) else { return Ok(None) };
        if disabled {
            return Ok(None);
        }
        if let Some((protocol, value)) = PROTOCOLS.into_iter().find_map(|name| set(name).map(|v| (name, v)))
            && value != "http/protobuf"
        {
            let message = format!("errand exports traces over http/protobuf only, not {value:?}");
            return Err(ExporterError { variable: protocol, message });
        }
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .build()
            .map_err(|error| ExporterError { variable, message: error.to_string() })?;
        let mut resource = Resource::builder();
        if set("OTEL_SERVICE_NAME").is_none() {
            resource = resource.with_service_name("errand");
        }
        let resource = resource.with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION"))).build();
        // The sampler `OTEL_TRACES_SAMPLER` names (the SDK's default: parent-based, always on).
        let sampler = WorkRoots(Config::default().sampler);
        let provider = SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(resource)
            .with_sampler(sampler)
            .build();
        let _ = TRACER.set(provider.tracer("errand"));
        EXPORTING.store(true, Ordering::Relaxed);
        Ok(Some(Self { provider }))
    }

    /// The layer that turns errand's spans (at `info` and above) into
    /// OpenTelemetry spans, whatever `RUST_LOG` lets the logs show.
    pub(super) fn layer<S>(&self) -> impl Layer<S> + use<S>
    where
        S: Subscriber + for<'span> LookupSpan<'span>,
    {
        tracing_opentelemetry::layer()
            .with_tracer(self.provider.tracer("errand"))
            .with_location(false)
            .with_threads(false)
            .with_tracked_inactivity(false)
            .with_filter(Targets::new().with_target("errand", Level::INFO))
    }
}

impl Drop for Exporter {
    fn drop(&mut self) {
        if let Err(error) = self.provider.shutdown() {
            eprintln!("errand: spans still buffered could not be exported: {error}");
        }
    }
}

/// The configured sampler, but a span with no parent of kind internal (an
/// actor's own work, not anyone's request) is dropped, and its children with it.
#[derive(Debug, Clone)]
struct WorkRoots(Box<dyn ShouldSample>);

impl ShouldSample for WorkRoots {
    fn should_sample(
        &self,
        parent: Option<&Context>,
        trace_id: TraceId,
        name: &str,
        kind: &SpanKind,
        attributes: &[KeyValue],
        links: &[Link],
    ) -> SamplingResult {
        let has_parent = parent.is_some_and(|context| context.span().span_context().is_valid());
        if !has_parent && *kind == SpanKind::Internal {
            return SamplingResult {
                decision: SamplingDecision::Drop,
                attributes: Vec::new(),
                trace_state: TraceState::default(),
            };
        }
        self.0.should_sample(parent, trace_id, name, kind, attributes, links)
    }
}

/// Whether this process exports spans.
pub fn exporting() -> bool {
    EXPORTING.load(Ordering::Relaxed)
}

/// Makes `span` (not yet entered) a child of `parent`, a span of another
/// process or of the request that recorded a job; `state` is the caller's
/// `tracestate`, carried along unread.
pub fn continue_trace(span: &Span, parent: &TraceParent, state: Option<&str>) {
    if exporting() {
        // Only fails for a span already entered or left out by the filter: then it has no parent to take.
        let _ = span.set_parent(Context::new().with_remote_span_context(span_context(parent, state)));
    }
}

/// Links `span` to `earlier` (the trace that enqueued the work it does)
/// without making it part of that trace.
pub fn link(span: &Span, earlier: &TraceParent) {
    if exporting() {
        span.add_link(span_context(earlier, None));
    }
}

/// Puts `span`, work done for a job whose attempt `attempt` ran last (or
/// runs now), in the job's `trace`: as a child where the job's first
/// attempt continues it, else linked from a trace of its own
/// ([`JobTrace::continued_by`]).
pub fn join_job_trace(span: &Span, trace: Option<&JobTrace>, attempt: i64) {
    match trace {
        Some(trace) if trace.continued_by(attempt) => continue_trace(span, &trace.parent, None),
        Some(trace) => link(span, &trace.parent),
        None => {}
    }
}

/// The `traceparent` naming `span`, for work it starts elsewhere: a job it
/// records, a request it sends. `None` when nothing is exported.
pub fn parent_of(span: &Span) -> Option<TraceParent> {
    if !exporting() {
        return None;
    }
    let context = span.context();
    let span_context = context.span().span_context().clone();
    if !span_context.is_valid() {
        return None;
    }
    let (trace, id) = (span_context.trace_id().to_string(), span_context.span_id().to_string());
    TraceParent::new(&trace, &id, span_context.is_sampled())
}

/// The trace (32 hex digits) an attempt belongs to, for an exemplar: its
/// span's (`attempt_span`, where errand runs it) when spans are exported and
/// it is recorded; else the job's trace where this attempt continues it (an
/// external worker's first attempt, or a caller's trace errand passes on
/// without exporting). `None` for a trace nobody records.
pub fn attempt_trace_id(attempt_span: Option<&Span>, trace: Option<&JobTrace>, attempt: i64) -> Option<String> {
    let exported = attempt_span.filter(|_| exporting()).and_then(|span| {
        let context = span.context();
        let span_context = context.span().span_context().clone();
        (span_context.is_valid() && span_context.is_sampled()).then(|| span_context.trace_id().to_string())
    });
    exported.or_else(|| {
        let parent = trace.and_then(|trace| trace.parent_for(attempt)).filter(|parent| parent.sampled());
        parent.map(|parent| parent.trace_id().to_owned())
    })
}

/// A claim by `by` (`dispatcher`, `worker`, `submission`) that began at `started` and
/// took `jobs` (each its type and trace), as a span of its own where spans
/// are exported: OpenTelemetry's messaging `receive`, a trace of its own
/// (one claim serves many clicks) linked to each job's recording. A claim
/// that took nothing is no span.
pub(super) fn record_claim<'a>(
    by: &'static str,
    started: SystemTime,
    jobs: impl ExactSizeIterator<Item = (&'a str, Option<&'a JobTrace>)>,
) {
    let Some(tracer) = TRACER.get().filter(|_| exporting() && jobs.len() > 0) else { return };
    let count = i64::try_from(jobs.len()).unwrap_or(i64::MAX);
    let (mut types, mut links) = (Vec::new(), Vec::new());
    for (job_type, trace) in jobs {
        if !types.contains(&job_type) {
            types.push(job_type);
        }
        if let Some(trace) = trace {
            links.push(Link::with_context(span_context(&trace.parent, None)));
        }
    }
    // Named after its destination where it has one: the job type, when all it took are of one.
    let name = match types.as_slice() {
        [only] => format!("claim {only}"),
        _ => "claim jobs".to_owned(),
    };
    let mut attributes = vec![
        KeyValue::new("messaging.system", "errand"),
        KeyValue::new("messaging.operation.type", "receive"),
        KeyValue::new("messaging.operation.name", "claim"),
        KeyValue::new("messaging.batch.message_count", count),
        KeyValue::new("errand.claimed_by", by),
    ];
    if let [only] = types.as_slice() {
        attributes.push(KeyValue::new("messaging.destination.name", only.to_string()));
    }
    let builder = tracer
        .span_builder(name)
        .with_kind(SpanKind::Client)
        .with_start_time(started)
        .with_attributes(attributes)
        .with_links(links);
    tracer.build_with_context(builder, &Context::new()).end();
}

fn span_context(parent: &TraceParent, state: Option<&str>) -> SpanContext {
    let flags = if parent.sampled() { TraceFlags::SAMPLED } else { TraceFlags::default() };
    let state = state.and_then(|state| state.parse::<TraceState>().ok()).unwrap_or_default();
    SpanContext::new(
        TraceId::from_hex(parent.trace_id()).unwrap_or(TraceId::INVALID),
        SpanId::from_hex(parent.span_id()).unwrap_or(SpanId::INVALID),
        flags,
        true,
        state,
    )
}
