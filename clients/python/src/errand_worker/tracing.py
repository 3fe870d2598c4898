"""Traces: the span a job runs in, and the `traceparent` its calls send.

errand hands a job's first attempt the W3C `traceparent` of the request that
recorded it (`Job.traceparent`), and a later attempt the same value as a
trace to link to (`Job.trace_link`): a retry starts a trace of its own.

When the OpenTelemetry API (`opentelemetry-api`, the `otel` extra) is
installed, `start()` opens a `process {type}` span of kind CONSUMER for the
attempt: a child of the received `traceparent`, or for a later attempt a root
span linked to `trace_link`. The handler runs with it as the current span,
and every call about the job sends that span's context as its `traceparent`
header, so that errand's spans of those calls are its children. The spans go
wherever the application's tracer provider sends them (none configured: the
API's no-op one, and nothing is recorded).

Without OpenTelemetry, `start()` opens nothing, and the calls send the
received `traceparent` as it came (a later attempt's, none).

Tracing never stops a job: a failure to make the span is logged, and the job
runs without it.
"""

from __future__ import annotations

import logging
from contextvars import Token
from types import TracebackType
from typing import TYPE_CHECKING, Any

try:
    from opentelemetry import context as otel_context
    from opentelemetry import trace
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
except ImportError:  # the optional dependency is absent: no spans
    HAVE_OTEL = False
else:
    HAVE_OTEL = True

if TYPE_CHECKING:
    from .job import Job

log = logging.getLogger("errand_worker")

#: The instrumentation scope the spans are made under.
SCOPE = "errand_worker"


class JobSpan:
    """The span one attempt runs in (or none), and the `traceparent` its
    calls send. A context manager: within it the span is the current one on
    this thread; leaving it ends the span."""

    def __init__(self, traceparent: str | None, span: trace.Span | None = None) -> None:
        #: The `traceparent` header of the calls about the job, or None for none.
        self.traceparent = traceparent
        self._span = span
        self._token: Token[otel_context.Context] | None = None

    def __enter__(self) -> JobSpan:
        if self._span is not None:
            self._token = otel_context.attach(trace.set_span_in_context(self._span))
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if self._span is None:
            return
        if isinstance(error, Exception):  # the worker's own bug: handler failures are caught before
            self.fail(error)
        if self._token is not None:
            otel_context.detach(self._token)
            self._token = None
        self._span.end()

    def fail(self, error: BaseException | str) -> None:
        """Mark the span failed (status ERROR) with `error`'s message; an
        exception is also recorded as the span's event."""
        if self._span is None:
            return
        if isinstance(error, BaseException):
            self._span.record_exception(error)
            message = str(error) or type(error).__name__
        else:
            message = error
        self._span.set_status(trace.Status(trace.StatusCode.ERROR, message))


def start(job: Job, tracer_provider: Any = None) -> JobSpan:
    """Open the span `job`'s attempt runs in, with `tracer_provider` (the
    global one when None), not yet current; without OpenTelemetry, a
    `JobSpan` of no span whose `traceparent` is the job's as received."""
    if not HAVE_OTEL:
        return JobSpan(job.traceparent)
    try:
        return _start(job, tracer_provider)
    except Exception:  # tracing must not cost the job
        log.exception("job %s: its span could not be started; it runs without one", job.id)
        return JobSpan(job.traceparent)


def _start(job: Job, tracer_provider: Any) -> JobSpan:
    propagator = TraceContextTextMapPropagator()
    # An empty context, not the current one: the job's span continues the
    # received trace, or none.
    parent = otel_context.Context()
    links: list[trace.Link] = []
    if job.traceparent is not None:
        parent = propagator.extract({"traceparent": job.traceparent}, context=parent)
    elif job.trace_link is not None:
        linked = trace.get_current_span(propagator.extract({"traceparent": job.trace_link})).get_span_context()
        if linked.is_valid:
            links.append(trace.Link(linked))
    tracer = trace.get_tracer(SCOPE, tracer_provider=tracer_provider)
    span = tracer.start_span(
        f"process {job.type}",
        context=parent,
        kind=trace.SpanKind.CONSUMER,
        attributes={
            "messaging.system": "errand",
            "messaging.operation.type": "process",
            "messaging.destination.name": job.type,
            "messaging.message.id": job.id,
            "errand.attempt": job.attempt,
            "errand.tenant": job.tenant,
        },
        links=links,
    )
    carrier: dict[str, str] = {}
    propagator.inject(carrier, context=trace.set_span_in_context(span))
    # A no-op tracer (no SDK configured) answers the parent itself, which
    # injects as the received header, or for a root an invalid span, which
    # injects nothing: then the received one is passed on as it came.
    return JobSpan(carrier.get("traceparent", job.traceparent), span)
