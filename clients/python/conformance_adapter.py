"""The Python package's adapter for the worker conformance suite
(clients/conformance, whose README is the contract this follows).

It runs an `errand_worker.Worker` against `$ERRAND_URL` with `$ERRAND_TOKEN`
for the job types in `$ERRAND_TYPES`, whose one handler does what each job's
params say (`steps`, or `by_attempt`), and prints one JSON object a line on
stdout for each thing the suite observes: `ready`, `started`, `did`,
`stopped`, `returned`, `threw`, `exited`. The worker's own logging goes to
stderr. SIGTERM stops it as it stops any worker (run() returns once the
running jobs ended).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import signal
import sys
import tempfile
import threading
import time
from typing import Any

from errand_worker import Cancelled, Job, LeaseLost, Permanent, Retryable, Worker

NAME = os.environ.get("ERRAND_WORKER_NAME", "python")
#: How often a waiting step looks whether the job must stop.
CHECK_SECONDS = 0.05
#: The longest a `wait_for_stop` waits: a test that never stops the job fails, not hangs.
WAIT_FOR_STOP_SECONDS = 60.0

_stdout = threading.Lock()


def emit(event: str, **fields: Any) -> None:
    """One observation, one line (handlers run on several threads)."""
    with _stdout:
        sys.stdout.write(json.dumps({"event": event, "worker": NAME, **fields}) + "\n")
        sys.stdout.flush()


def content(seed: str, size: int) -> bytes:
    """The bytes an `upload` step sends: SHA-256 of "<seed>:<i>" for i = 0, 1, ..., cut to `size`."""
    blocks = []
    for i in range((size + 31) // 32):
        blocks.append(hashlib.sha256(f"{seed}:{i}".encode()).digest())
    return b"".join(blocks)[:size]


def steps_of(params: dict[str, Any], attempt: int) -> list[dict[str, Any]]:
    """The steps this attempt runs: `steps`, or entry `attempt - 1` of `by_attempt` (its last for later attempts)."""
    if "by_attempt" in params:
        plans = params["by_attempt"]
        plan: dict[str, Any] = plans[min(attempt, len(plans)) - 1]
        return list(plan.get("steps", []))
    return list(params.get("steps", []))


def wait(job: Job, seconds: float) -> None:
    """Wait `seconds`, raising as soon as the job must stop."""
    deadline = time.monotonic() + seconds
    while True:
        job.check()
        left = deadline - time.monotonic()
        if left <= 0:
            return
        time.sleep(min(CHECK_SECONDS, left))


def run_step(job: Job, step: dict[str, Any]) -> dict[str, Any] | None:
    """Do one step; answers the job's result for a `return` step."""
    kind = step["do"]
    if kind == "progress":
        job.progress(step["done"], step.get("total"), step.get("message"))
    elif kind == "log":
        job.log(step["level"], step["message"], **step.get("fields", {}))
    elif kind == "checkpoint":
        job.checkpoint(step["value"], step.get("done", 0))
    elif kind == "sleep":
        wait(job, step["ms"] / 1000)
    elif kind == "wait_for_stop":
        wait(job, step.get("ms", WAIT_FOR_STOP_SECONDS * 1000) / 1000)
        raise RuntimeError("wait_for_stop: the job was never stopped")
    elif kind == "upload":
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "upload.bin")
            with open(path, "wb") as file:
                file.write(content(step["seed"], step["size"]))
            job.upload(path, content_type=step.get("content_type"), file_name=step["file_name"])
    elif kind == "die":
        os.kill(os.getpid(), signal.SIGKILL)
    elif kind == "return":
        result: dict[str, Any] = step["result"]
        return result
    elif kind == "fail":
        failure = Retryable if step.get("retryable", True) else Permanent
        raise failure(step["message"])
    elif kind == "crash":
        raise RuntimeError(step["message"])
    else:
        raise ValueError(f"unknown step {kind!r}")
    return None


def handle(job: Job) -> dict[str, Any]:
    emit("started", job=job.id, attempt=job.attempt, resumed=job.resumed)
    try:
        for step in steps_of(job.params, job.attempt):
            result = run_step(job, step)
            if result is not None:
                emit("returned", job=job.id, attempt=job.attempt)
                return result
            emit("did", job=job.id, attempt=job.attempt, step=step["do"])
    except (LeaseLost, Cancelled) as stop:
        why = "lease_lost" if isinstance(stop, LeaseLost) else "cancelled"
        emit("stopped", job=job.id, attempt=job.attempt, why=why)
        raise
    except Exception as error:
        kind = "unexpected"
        if isinstance(error, Retryable):
            kind = "retryable"
        elif isinstance(error, Permanent):
            kind = "permanent"
        emit("threw", job=job.id, attempt=job.attempt, kind=kind)
        raise
    emit("returned", job=job.id, attempt=job.attempt)
    return {"by": NAME, "attempt": job.attempt}


def main() -> int:
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format=f"{NAME}: %(message)s")
    worker = Worker(
        os.environ["ERRAND_URL"],
        os.environ["ERRAND_TOKEN"],
        concurrency=int(os.environ.get("ERRAND_CONCURRENCY", "1")),
        poll_wait=int(os.environ.get("ERRAND_POLL_WAIT", "1")),
    )
    for job_type in os.environ["ERRAND_TYPES"].split(","):
        worker.job(job_type)(handle)
    emit("ready", pid=os.getpid())
    try:
        worker.run()
    except Exception as error:
        emit("error", message=str(error))
        return 1
    emit("exited")
    return 0


if __name__ == "__main__":
    sys.exit(main())
