"""Traces: a job submitted with a W3C `traceparent` reaches the worker with
it (`job.traceparent` on its first attempt, `job.trace_link` on a later
one), every call the worker makes about the job sends a `traceparent`
header, and with OpenTelemetry installed the handler runs in a
`process {type}` span that continues the submitted trace (or, for a retry,
links to it) and whose context those calls send instead."""

from __future__ import annotations

import secrets
import subprocess
import sys
import threading
import uuid
from typing import Any

import pytest

import harness
from errand_worker import Retryable, Worker, tracing

#: The calls a worker makes about one job (the last part of their paths).
JOB_CALLS = {"heartbeat", "progress", "checkpoint", "logs", "result", "complete"}


def new_traceparent() -> tuple[str, str, str]:
    """A fresh sampled `traceparent`, with its trace id and span id."""
    trace_id, span_id = uuid.uuid4().hex, secrets.token_hex(8)
    return f"00-{trace_id}-{span_id}-01", trace_id, span_id


class Wire:
    """The requests a worker sends, as an httpx event hook on its client sees
    them: method, path and `traceparent` header."""

    def __init__(self, worker: Worker) -> None:
        self._lock = threading.Lock()
        self._sent: list[tuple[str, str, str | None]] = []
        client = worker._api._client
        hooks = client.event_hooks
        hooks["request"] = [*hooks.get("request", []), self._record]
        client.event_hooks = hooks

    def _record(self, request: Any) -> None:
        with self._lock:
            self._sent.append((request.method, request.url.path, request.headers.get("traceparent")))

    def sent(self) -> list[tuple[str, str, str | None]]:
        with self._lock:
            return list(self._sent)

    def about(self, job_id: str) -> list[tuple[str, str | None]]:
        """The calls about job `job_id`, oldest first: the call's name and its `traceparent`."""
        prefix = f"/worker/v1/jobs/{job_id}/"
        return [(path[len(prefix) :], header) for _, path, header in self.sent() if path.startswith(prefix)]

    def saw(self, call: str, job_id: str) -> bool:
        return any(name == call for name, _ in self.about(job_id))


@pytest.fixture
def without_opentelemetry(monkeypatch):
    """The worker as it runs where `opentelemetry` cannot be imported."""
    monkeypatch.setattr(tracing, "HAVE_OTEL", False)


def test_a_first_attempt_has_the_submitted_traceparent_and_a_retry_a_link_to_it(
    errand, new_worker, run_worker, without_opentelemetry
):
    traceparent, _, _ = new_traceparent()
    seen = []
    worker = new_worker()
    wire = Wire(worker)

    @worker.job("render_invoice")
    def render(job):
        seen.append((job.attempt, job.traceparent, job.trace_link))
        if job.attempt == 1:
            raise Retryable("The renderer is busy.")
        return {"pages": 1}

    run_worker(worker)
    traced = errand.submit({"invoice": 1}, headers={"traceparent": traceparent})
    assert errand.wait_for_end(traced)["status"] == "completed"
    untraced = errand.submit({"invoice": 2})
    assert errand.wait_for_end(untraced)["status"] == "completed"

    assert seen == [(1, traceparent, None), (2, None, traceparent), (1, None, None), (2, None, None)]
    # Without OpenTelemetry the first attempt's calls pass the received
    # traceparent on as it came, and a retry's send none.
    calls = dict(wire.about(traced))
    assert (calls["fail"], calls["complete"]) == (traceparent, None)
    assert {header for _, header in wire.about(untraced)} == {None}


@pytest.mark.parametrize("opentelemetry", ["absent", "api without an sdk"])
def test_every_call_about_a_job_sends_its_traceparent(
    errand, new_worker, run_worker, monkeypatch, tmp_path, opentelemetry
):
    if opentelemetry == "absent":
        monkeypatch.setattr(tracing, "HAVE_OTEL", False)
    else:
        # Installed, with no tracer provider set: the API's no-op spans
        # carry the received context, which is what the calls send.
        pytest.importorskip("opentelemetry")
        assert tracing.HAVE_OTEL
    traceparent, _, _ = new_traceparent()
    pdf = tmp_path / "invoice.pdf"
    pdf.write_bytes(b"%PDF-1.7\n")
    worker = new_worker()
    wire = Wire(worker)

    @worker.job("render_invoice")
    def render(job):
        job.log("info", "rendering")
        job.progress(1, 2)
        job.checkpoint({"page": 1}, done=1)
        job.upload(pdf)
        # Until a renewal went out (every second under the tests' 3 s lease).
        harness.wait_until(lambda: wire.saw("heartbeat", job.id), what="a heartbeat")
        return None

    run_worker(worker)
    traced = errand.submit({"invoice": 3}, headers={"traceparent": traceparent})
    assert errand.wait_for_end(traced)["status"] == "completed"
    untraced = errand.submit({"invoice": 4})
    assert errand.wait_for_end(untraced)["status"] == "completed"
    harness.wait_until(lambda: wire.saw("logs", untraced), what="the last log lines")

    traced_calls = wire.about(traced)
    assert {name for name, _ in traced_calls} == JOB_CALLS
    assert traced_calls == [(name, traceparent) for name, _ in traced_calls]
    untraced_calls = wire.about(untraced)
    assert {name for name, _ in untraced_calls} == JOB_CALLS
    assert untraced_calls == [(name, None) for name, _ in untraced_calls]
    # A claim is about no job: it sends none.
    assert {header for _, path, header in wire.sent() if path == "/worker/v1/claim"} == {None}


def test_the_job_runs_in_a_span_continuing_the_submitted_trace_and_a_retry_links_to_it(errand, new_worker, run_worker):
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    # A provider of the test's own: the global one stays unset for the other tests.
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    traceparent, trace_id, span_id = new_traceparent()
    current = {}
    worker = new_worker(tracer_provider=provider)
    wire = Wire(worker)

    @worker.job("render_invoice")
    def render(job):
        current[job.attempt] = trace.get_current_span().get_span_context()
        job.log("info", f"attempt {job.attempt}")
        if job.attempt == 1:
            raise Retryable("The renderer is busy.")
        return {"pages": 1}

    try:
        run_worker(worker)
        job_id = errand.submit({"invoice": 5}, headers={"traceparent": traceparent})
        assert errand.wait_for_end(job_id)["status"] == "completed"
        spans = harness.wait_until(
            lambda: exporter.get_finished_spans() if len(exporter.get_finished_spans()) >= 2 else None,
            what="both attempts' spans",
        )
    finally:
        provider.shutdown()

    assert len(spans) == 2
    first, retry = sorted(spans, key=lambda span: span.attributes["errand.attempt"])
    for span, attempt in ((first, 1), (retry, 2)):
        assert span.name == "process render_invoice"
        assert span.kind == trace.SpanKind.CONSUMER
        assert dict(span.attributes) == {
            "messaging.system": "errand",
            "messaging.operation.type": "process",
            "messaging.destination.name": "render_invoice",
            "messaging.message.id": job_id,
            "errand.attempt": attempt,
            "errand.tenant": harness.TENANT,
        }
        # The handler ran with it as the current span.
        assert current[attempt] == span.context

    # The first attempt is a child of the submitter's span, in its trace,
    # and failed with the handler's message.
    assert f"{first.context.trace_id:032x}" == trace_id
    assert first.parent is not None
    assert (f"{first.parent.trace_id:032x}", f"{first.parent.span_id:016x}") == (trace_id, span_id)
    assert first.parent.is_remote
    assert list(first.links) == []
    assert first.status.status_code == trace.StatusCode.ERROR
    assert first.status.description == "The renderer is busy."
    # The retry is a trace of its own, linked to the submitter's span.
    assert retry.parent is None
    assert f"{retry.context.trace_id:032x}" != trace_id
    assert [(f"{link.context.trace_id:032x}", f"{link.context.span_id:016x}") for link in retry.links] == [
        (trace_id, span_id)
    ]
    assert retry.status.status_code == trace.StatusCode.UNSET

    # Each attempt's calls send its own span's context, so that errand's
    # spans of them are children of the worker's.
    def header(span: Any) -> str:
        ids = span.context
        return f"00-{ids.trace_id:032x}-{ids.span_id:016x}-{ids.trace_flags:02x}"

    calls = wire.about(job_id)
    by_header: dict[str | None, set[str]] = {}
    for name, sent in calls:
        by_header.setdefault(sent, set()).add(name)
    assert set(by_header) == {header(first), header(retry)}, calls
    assert by_header[header(first)] - {"heartbeat"} == {"logs", "fail"}
    assert by_header[header(retry)] - {"heartbeat"} == {"logs", "complete"}


def test_without_opentelemetry_the_package_imports_and_passes_the_traceparent_on():
    # As where only httpx is installed: `import opentelemetry` fails.
    script = """
import sys
sys.modules["opentelemetry"] = None
from types import SimpleNamespace
from errand_worker import Worker, tracing
assert not tracing.HAVE_OTEL
job = SimpleNamespace(id="j", type="t", attempt=1, tenant="a", traceparent="00-ab-cd-01", trace_link=None)
with tracing.start(job) as span:
    span.fail("nothing to record")
print(span.traceparent)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "00-ab-cd-01"
