"""errand_worker: run errand's external job types in Python.

errand (a Rust service) records user-initiated heavy jobs in PostgreSQL; job
types configured with `handler = "external"` are run by workers like this one,
which pull them over HTTP (`/worker/v1`)::

    from errand_worker import Worker, Retryable, Permanent

    worker = Worker("http://127.0.0.1:8080", token, concurrency=4)

    @worker.job("render_invoice")
    def render(job):
        job.progress(1, 3)
        return {"pages": 3}

    worker.run()

Modules: `worker` (the claim loop and the pool), `job` (what a handler gets),
`heartbeat` (lease renewal), `api` (the HTTP calls), `tracing` (a job's span
and `traceparent`, with OpenTelemetry when installed), `errors`, `submit`
(`submit_job`: creating a job for a user from a backend, retried through 429
and 503 with one idempotency key), `push` (checking the signature of errand's
pushes to `handler = "http"` apps) and `webhooks` (`verify_webhook`: checking
a webhook delivery, signed as Standard Webhooks specifies).
"""

from .errors import (
    ApiError,
    Cancelled,
    JobFailed,
    JobInterrupted,
    LeaseLost,
    Permanent,
    Retryable,
    Unreachable,
    WebhookVerificationError,
)
from .job import Job
from .submit import submit_job
from .webhooks import verify_webhook
from .worker import Worker

__all__ = [
    "ApiError",
    "Cancelled",
    "Job",
    "JobFailed",
    "JobInterrupted",
    "LeaseLost",
    "Permanent",
    "Retryable",
    "Unreachable",
    "WebhookVerificationError",
    "Worker",
    "submit_job",
    "verify_webhook",
]

__version__ = "0.1.0"
