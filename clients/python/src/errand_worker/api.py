"""The HTTP calls of errand's worker API (`/worker/v1/...`).

This module owns the wire: paths, bodies, problem+json errors, and retrying
(`send_retrying`, which `submit.py`'s user-side call goes through too).
Every call but the claim is idempotent for a given lease (errand answers a
repeated `/complete` or `/fail` with the answer the first one got), so they
are retried on network errors and 5xx with exponential backoff. A claim is
not: a claim whose answer was lost may have leased jobs nobody will run until
their leases expire, so the claim loop calls again on its own schedule
instead (see `worker.py`).

Every call about a job takes the `traceparent` to send as its header (W3C
Trace Context, see `tracing.py`), or None for none, so that errand's spans of
the job's calls join its trace.
"""

from __future__ import annotations

import email.utils
import logging
import os
import random
import re
import time
from collections.abc import Generator, Iterator
from datetime import datetime, timezone
from typing import Any, Callable, NamedTuple

import httpx

from .errors import ApiError, LeaseLost, Unreachable

log = logging.getLogger("errand_worker")

#: Bytes read from a result file per chunk while uploading it.
UPLOAD_CHUNK = 256 * 1024

#: The longest pause between two tries of a call.
MAX_BACKOFF = 5.0


class ClaimAnswer(NamedTuple):
    """What `POST /worker/v1/claim` gave: the jobs (raw JSON objects) and the
    server's clock when it answered, for lease timing."""

    jobs: list[dict[str, Any]]
    server_time: datetime | None


class HeartbeatAnswer(NamedTuple):
    """What a heartbeat gave: the lease's new end and whether someone asked
    for the job to stop."""

    lease_expires_at: datetime
    cancel_requested: bool
    server_time: datetime | None


class _BearerAuth(httpx.Auth):
    """`Authorization: Bearer <token>`, asking `token()` on every request so
    that a long-running worker can hand out a fresh token before one expires."""

    def __init__(self, token: Callable[[], str]) -> None:
        self._token = token

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["Authorization"] = f"Bearer {self._token()}"
        yield request


class WorkerApi:
    """A client of errand's worker routes, authenticated with a worker token
    (a string, or a function answering the current one).

    Safe to share between threads (httpx's `Client` pools connections behind a
    lock); the pool is sized by `connections` so that every job thread, the
    heartbeat thread and the claim loop can each hold one.
    """

    def __init__(
        self, url: str, token: str | Callable[[], str], *, connections: int = 10, timeout: float = 10.0
    ) -> None:
        self._timeout = timeout
        self._client = httpx.Client(
            base_url=url.rstrip("/"),
            auth=_BearerAuth(token if callable(token) else (lambda: token)),
            headers={"User-Agent": "errand-worker-python"},
            timeout=timeout,
            limits=httpx.Limits(max_connections=connections, max_keepalive_connections=connections),
        )

    def close(self) -> None:
        """Close the pooled connections."""
        self._client.close()

    def claim(self, types: list[str], max_jobs: int, wait: int) -> ClaimAnswer:
        """Long-poll for up to `max_jobs` jobs of `types`, waiting at most
        `wait` seconds. Tried once (see the module doc)."""
        body = {"types": types, "max": max_jobs, "wait": wait}
        # The read timeout must outlast errand's own wait, or every idle poll
        # would end as a timeout error instead of an empty list.
        timeout = httpx.Timeout(self._timeout, read=wait + self._timeout)
        response = self._send(
            lambda: self._client.build_request("POST", "/worker/v1/claim", json=body, timeout=timeout), retry_for=0
        )
        return ClaimAnswer(response.json()["jobs"], _server_time(response))

    def heartbeat(
        self, job_id: str, lease_id: str, retry_for: float, *, traceparent: str | None = None
    ) -> HeartbeatAnswer:
        """Renew the job's lease; raises `LeaseLost` when it is no longer ours."""
        response = self._post(f"/worker/v1/jobs/{job_id}/heartbeat", {"lease_id": lease_id}, retry_for, traceparent)
        body = response.json()
        return HeartbeatAnswer(
            parse_timestamp(body["lease_expires_at"]),
            bool(body.get("cancel_requested", False)),
            _server_time(response),
        )

    def progress(
        self,
        job_id: str,
        lease_id: str,
        done: int,
        total: int | None,
        message: str | None,
        retry_for: float,
        *,
        traceparent: str | None = None,
    ) -> None:
        """Report how far the job got; raises `LeaseLost` when it is no longer ours."""
        body: dict[str, Any] = {"lease_id": lease_id, "done": done}
        if total is not None:
            body["total"] = total
        if message is not None:
            body["message"] = message
        self._post(f"/worker/v1/jobs/{job_id}/progress", body, retry_for, traceparent)

    def checkpoint(
        self, job_id: str, lease_id: str, value: Any, done: int, retry_for: float, *, traceparent: str | None = None
    ) -> None:
        """Record `value` (any JSON; None forgets it) as the attempt's
        checkpoint, `done` its progress then; raises `LeaseLost` when the job
        is no longer ours. Idempotent: the same checkpoint written twice is
        one checkpoint, so it is retried like the other calls."""
        body = {"lease_id": lease_id, "checkpoint": value, "done": done}
        self._post(f"/worker/v1/jobs/{job_id}/checkpoint", body, retry_for, traceparent)

    def logs(
        self,
        job_id: str,
        lease_id: str,
        lines: list[dict[str, Any]],
        retry_for: float,
        *,
        traceparent: str | None = None,
    ) -> None:
        """Record lines the attempt logged (1 to 100, oldest first: `level`,
        `message`, and `fields` and `at` when given) for the operators'
        timeline; raises `LeaseLost` when the lease is neither the running
        attempt's nor the one it just ended with. Not idempotent: a batch
        retried after a lost answer may be recorded twice (harmless for a log)."""
        body = {"lease_id": lease_id, "lines": lines}
        self._post(f"/worker/v1/jobs/{job_id}/logs", body, retry_for, traceparent)

    def complete(
        self,
        job_id: str,
        lease_id: str,
        result: dict[str, Any] | None,
        retry_for: float,
        *,
        traceparent: str | None = None,
    ) -> None:
        """End the attempt as completed, with `result` when given."""
        body: dict[str, Any] = {"lease_id": lease_id}
        if result is not None:
            body["result"] = result
        self._post(f"/worker/v1/jobs/{job_id}/complete", body, retry_for, traceparent)

    def fail(
        self,
        job_id: str,
        lease_id: str,
        error: str,
        retryable: bool,
        retry_for: float,
        *,
        traceparent: str | None = None,
    ) -> str:
        """End the attempt as failed; answers errand's verdict, `failed` or
        `retry_scheduled`."""
        body = {"lease_id": lease_id, "error": error, "retryable": retryable}
        answer = self._post(f"/worker/v1/jobs/{job_id}/fail", body, retry_for, traceparent)
        return str(answer.json().get("status"))

    def upload_result(
        self,
        job_id: str,
        lease_id: str,
        path: str,
        content_type: str,
        file_name: str,
        retry_for: float,
        *,
        traceparent: str | None = None,
    ) -> dict[str, Any]:
        """Stream the file at `path` as the job's result file; answers its metadata."""
        size = os.path.getsize(path)

        def build() -> httpx.Request:
            # A fresh reader per try: a retried upload starts the file over.
            return self._client.build_request(
                "PUT",
                f"/worker/v1/jobs/{job_id}/result",
                params={"lease_id": lease_id, "file_name": file_name},
                headers={"Content-Type": content_type, "Content-Length": str(size)},
                content=_read_chunks(path),
                # Storing a large file may take errand a while after the last byte.
                timeout=httpx.Timeout(self._timeout, read=max(60.0, self._timeout)),
            )

        stored: dict[str, Any] = self._send(build, retry_for, traceparent).json()
        return stored

    def _post(self, path: str, body: dict[str, Any], retry_for: float, traceparent: str | None) -> httpx.Response:
        return self._send(lambda: self._client.build_request("POST", path, json=body), retry_for, traceparent)

    def _send(
        self, build: Callable[[], httpx.Request], retry_for: float, traceparent: str | None = None
    ) -> httpx.Response:
        """Send what `build` makes, retried (`send_retrying`), with the
        `traceparent` header when one is given."""
        if traceparent is None:
            return send_retrying(self._client, build, retry_for)

        def traced() -> httpx.Request:
            request = build()
            request.headers["traceparent"] = traceparent
            return request

        return send_retrying(self._client, traced, retry_for)


def send_retrying(client: httpx.Client, build: Callable[[], httpx.Request], retry_for: float) -> httpx.Response:
    """Send the request `build` makes, trying again on network errors, 429
    and 5xx until `retry_for` seconds have passed; then raise `Unreachable`.
    A 4xx is raised at once (`LeaseLost` or `ApiError`). A `Retry-After`
    is waited out before the next try. (`build` makes the request anew for
    each try, so that a request body that is read as it is sent is sent whole.)"""
    deadline = time.monotonic() + retry_for
    delay = 0.1
    while True:
        request = build()
        wait = 0.0
        try:
            response = client.send(request)
        except httpx.TransportError as error:
            failure = f"{type(error).__name__}: {error}"
        else:
            if response.status_code < 400:
                return response
            if response.status_code != 429 and response.status_code < 500:
                raise _refusal(response)
            failure = f"HTTP {response.status_code}"
            wait = retry_after(response)
        # Full jitter: clients that lost errand together do not all come back at once.
        pause = max(wait, random.uniform(delay / 2, delay))
        if time.monotonic() + pause > deadline:
            raise Unreachable(f"{request.method} {request.url.path}: {failure}")
        log.info("retrying %s %s in %.1fs after %s", request.method, request.url.path, pause, failure)
        time.sleep(pause)
        delay = min(delay * 2, MAX_BACKOFF)


def retry_after(response: httpx.Response) -> float:
    """The seconds a response's `Retry-After` asks for (delay-seconds only;
    errand sends no dates), or 0."""
    try:
        return max(0.0, float(response.headers.get("retry-after", "0")))
    except ValueError:
        return 0.0


def _refusal(response: httpx.Response) -> Exception:
    """The exception for a 4xx: `LeaseLost` for errand's `lease_lost`, else `ApiError`."""
    code = None
    detail = response.text[:500]
    if response.headers.get("content-type", "").startswith("application/problem+json"):
        try:
            problem = response.json()
        except ValueError:
            problem = {}
        code = problem.get("code")
        detail = problem.get("detail") or problem.get("title") or detail
    if response.status_code == 409 and code == "lease_lost":
        return LeaseLost(detail)
    return ApiError(response.status_code, code, detail)


def _read_chunks(path: str) -> Iterator[bytes]:
    with open(path, "rb") as file:
        while True:
            chunk = file.read(UPLOAD_CHUNK)
            if not chunk:
                return
            yield chunk


def _server_time(response: httpx.Response) -> datetime | None:
    """errand's clock from the `Date` header (whole seconds), if it sent one."""
    header = response.headers.get("date")
    if not header:
        return None
    try:
        return email.utils.parsedate_to_datetime(header)
    except (TypeError, ValueError):
        return None


_FRACTION = re.compile(r"\.(\d+)")


def parse_timestamp(text: str) -> datetime:
    """An RFC 3339 timestamp as an aware datetime. Python 3.9's
    `fromisoformat` takes no `Z` and only 3 or 6 fractional digits, while
    errand may write a `Z` and nanoseconds."""
    text = text.strip().replace("Z", "+00:00").replace("z", "+00:00")
    text = _FRACTION.sub(lambda m: "." + m.group(1)[:6].ljust(6, "0"), text, count=1)
    value = datetime.fromisoformat(text)
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
