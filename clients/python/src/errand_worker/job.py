"""`Job`: one claimed attempt, as a handler sees it.

A job carries what errand sent with the claim and the lease that makes this
worker its runner. Its methods are the handler's only channel back to errand
while it runs; each of them first checks whether the job was interrupted
(lease lost, cancel requested), so that a handler which reports progress,
records checkpoints or calls `check()` now and then stops soon after errand
says so. `log()` is the exception: it only buffers a line for the operators'
timeline, never raises for errand's sake, and its lines are sent in batches
(when 100 wait, with the lease's renewals, and once more after the job ended).
"""

from __future__ import annotations

import json
import logging
import math
import mimetypes
import os
import threading
from datetime import datetime, timezone
from typing import Any

from .api import WorkerApi, parse_timestamp
from .errors import ApiError, Cancelled, JobInterrupted, LeaseLost, Unreachable

log = logging.getLogger("errand_worker")

#: How long a progress report or a batch of log lines is retried: both are
#: advisory, and a handler should not stall on them (heartbeats tell whether
#: errand is gone for good).
PROGRESS_RETRY_FOR = 5.0

#: The levels of `Job.log()`, as errand names them.
LOG_LEVELS = ("debug", "info", "warn", "error")
#: The most lines one `/logs` call sends (errand's limit), and the number of
#: waiting lines at which `log()` sends them.
LOG_BATCH = 100
#: The most bytes (as JSON) of the lines one call sends: errand takes bodies
#: up to 64 KiB, and the rest of the body is a few dozen.
LOG_BATCH_BYTES = 60 * 1024
#: The longest message errand keeps (characters); longer ones are cut here,
#: before they are sent.
LOG_MESSAGE_CHARS = 4096
#: A line bigger than this (as JSON) is sent without its fields, so that every
#: line fits a call.
LOG_LINE_BYTES = 32 * 1024
#: The most lines an attempt keeps (errand's cap). One more is sent, for
#: errand to record that the log was cut; the rest are dropped here.
LOG_KEPT_LINES = 1000


class Job:
    """One attempt of a job, leased to this worker.

    Attributes a handler reads: `id`, `type`, `params` (the JSON object the
    user submitted), `tenant`, `user`, `attempt` (1 on the first run), and
    `resumed`: the checkpoint an earlier attempt of this run recorded with
    `checkpoint()` (any JSON value, as it was written), or None when this
    attempt starts from the beginning. A resumed attempt goes on from exactly
    there: it must neither redo nor skip what the checkpoint says was done.

    The job's trace (W3C Trace Context), in two read-only attributes, both
    None when the job was recorded without one: `traceparent`, on the first
    attempt only, the `traceparent` of the request that recorded the job,
    which the attempt's span continues; `trace_link`, on a later attempt
    instead, that same value, which the attempt's span (a trace of its own)
    is linked to. The worker makes that span when OpenTelemetry is installed,
    and sends a `traceparent` header with every call about the job (see
    `tracing.py`).
    """

    def __init__(self, claimed: dict[str, Any], api: WorkerApi, retry_for: float) -> None:
        self.id: str = str(claimed["id"])
        self.type: str = claimed["type"]
        self.params: dict[str, Any] = claimed.get("params") or {}
        self.tenant: str = claimed.get("tenant", "")
        self.user: str = claimed.get("user", "")
        self.attempt: int = int(claimed.get("attempt", 1))
        self.resumed: Any = claimed.get("checkpoint")
        self.lease_id: str = str(claimed["lease_id"])
        self._traceparent: str | None = _optional_str(claimed.get("traceparent"))
        self._trace_link: str | None = _optional_str(claimed.get("trace_link"))
        # The `traceparent` header of every call about the job: the received
        # one, until the worker makes the attempt's span and names it instead.
        self._call_traceparent = self._traceparent
        self._api = api
        self._retry_for = retry_for
        # Written by the heartbeat thread, read by the handler's thread.
        self._lock = threading.Lock()
        self._lease_expires_at = parse_timestamp(claimed["lease_expires_at"])
        self._interruption: type[JobInterrupted] | None = None
        self._uploaded: dict[str, Any] | None = None
        # The lines logged and not yet sent, oldest first, each with its size
        # as JSON; guarded by `_lock`, like the counts below.
        self._log_lines: list[tuple[dict[str, Any], int]] = []
        self._logged = 0
        # False once lines are dropped rather than kept: past the attempt's
        # cap, after a lost lease, and once the job ended.
        self._log_open = True
        # One sender at a time (the handler's thread, the heartbeats', the
        # end's), so that batches arrive in the order they were logged.
        self._log_sending = threading.Lock()

    def __repr__(self) -> str:
        return f"Job(id={self.id!r}, type={self.type!r}, attempt={self.attempt})"

    @property
    def traceparent(self) -> str | None:
        """A first attempt's trace: the W3C `traceparent` of the request that
        recorded the job, or None."""
        return self._traceparent

    @property
    def trace_link(self) -> str | None:
        """A later attempt's: the same request's `traceparent`, which the
        attempt's span is linked to, or None."""
        return self._trace_link

    @property
    def lease_expires_at(self) -> datetime:
        """When the lease ends unless renewed (renewed in the background)."""
        with self._lock:
            return self._lease_expires_at

    @property
    def interrupted(self) -> bool:
        """Whether the worker must stop this job (lease lost or cancelled)."""
        with self._lock:
            return self._interruption is not None

    @property
    def cancel_requested(self) -> bool:
        """Whether the job's owner or an operator asked for it to stop."""
        with self._lock:
            return self._interruption is Cancelled

    def check(self) -> None:
        """Raise `LeaseLost` or `Cancelled` if the job must stop; else return.

        Costs no request: heartbeats bring the news in the background. Call it
        between steps of long work that reports no progress."""
        with self._lock:
            interruption = self._interruption
        if interruption is LeaseLost:
            raise LeaseLost(f"job {self.id}: the lease of attempt {self.attempt} is no longer this worker's")
        if interruption is Cancelled:
            raise Cancelled(f"job {self.id} was cancelled")

    def progress(self, done: int, total: int | None = None, message: str | None = None) -> None:
        """Tell errand how far the job got (whole steps: pages, rows, bytes);
        the owner sees it in `GET /jobs/{id}` and on their live stream.

        One request per call: call it per step or about once a second, not per
        row. `message` is up to 1000 bytes. Raises `LeaseLost` or `Cancelled`
        when the job must stop. A report errand could not be reached for is
        logged and dropped."""
        self.check()
        try:
            self._api.progress(
                self.id,
                self.lease_id,
                done,
                total,
                message,
                min(PROGRESS_RETRY_FOR, self._retry_for),
                traceparent=self._call_traceparent,
            )
        except LeaseLost:
            self._interrupt(LeaseLost)
            raise
        except Unreachable as error:
            log.warning("job %s: progress not reported: %s", self.id, error)

    def log(self, level: str, message: str, /, **fields: Any) -> None:
        """Add a line to the attempt's log, which operators read on the job's
        timeline (`GET /admin/jobs/{id}`, the console's job page); the job's
        owner does not see it.

        `level` is `"debug"`, `"info"`, `"warn"` or `"error"` (anything else
        raises `ValueError`); `message` is up to 4096 characters (longer ones
        are cut); `fields` are structured details, kept as a JSON object:
        `job.log("info", "page drawn", page=3, ms=41)`. A value JSON cannot
        carry is written as its `str()`, a NUL character as U+FFFD (errand
        refuses NUL), and the fields of a line over 32 KiB are left out. The
        line's time is the time of this call.

        Lines are buffered and sent in batches: by the call that brings the
        waiting lines to 100 (one request per 100 lines), with the lease's
        renewals, and once more after the job ended, so most calls cost no
        request. An attempt keeps 1,000 lines (and 256 KiB): later ones are
        dropped, and errand records that the log was cut. Never raises for
        errand's sake: lines errand could not be reached for are sent with a
        later batch (dropped and logged at the job's end), and a lost lease
        drops them and marks the job interrupted, as `progress()` does, for
        the handler's next `check()` to raise."""
        if level not in LOG_LEVELS:
            raise ValueError(f"log level {level!r}: one of {', '.join(LOG_LEVELS)}")
        line: dict[str, Any] = {
            "level": level,
            "message": _json_safe(message[:LOG_MESSAGE_CHARS]),
            "at": datetime.now(timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z"),
        }
        if fields:
            line["fields"] = _json_safe(fields)
        # As errand's JSON would be at most (httpx writes it more tightly).
        size = len(json.dumps(line))
        if size > LOG_LINE_BYTES and "fields" in line:
            log.warning("job %s: a log line's fields were left out: %d bytes, over %d", self.id, size, LOG_LINE_BYTES)
            del line["fields"]
            size = len(json.dumps(line))
        with self._lock:
            if not self._log_open:
                return
            if self._interruption is LeaseLost:  # nothing more is sent for this attempt
                self._log_open = False
                self._log_lines.clear()
                return
            self._log_lines.append((line, size))
            self._logged += 1
            if self._logged > LOG_KEPT_LINES:
                self._log_open = False
            full = len(self._log_lines) % LOG_BATCH == 0
        if full:
            # Not waited for when another thread is sending: the renewals or the end send them then.
            self._send_log(min(PROGRESS_RETRY_FOR, self._retry_for), blocking=False)

    def checkpoint(self, value: Any, done: int = 0) -> None:
        """Record how far the job has come, so that should this attempt end
        before the job does (a crash of the worker, a lost lease, a retryable
        failure), the run's next attempt, on whichever worker claims it, gets
        `value` as its `job.resumed` and goes on from there instead of from
        the start.

        `value` is any JSON value (up to about 64 KiB, without NUL
        characters); None forgets the checkpoint, so that the next attempt
        starts over. `done` is the job's progress at that point, in the units
        of `progress()`: the owner's `GET /jobs/{id}` shows it as
        `resumed_from` once an attempt resumed from this checkpoint.

        Write a checkpoint only once what it says is durable (the rows
        committed, the part uploaded): a resumed attempt must neither redo nor
        skip what the checkpoint says was done. Each call is one request and a
        database write: checkpoint after a unit of work that took a while, not
        more often than every few seconds.

        Recorded only under this attempt's lease: raises `LeaseLost` when the
        job is no longer this worker's (stop then: what the handler does next
        is not sent), `Cancelled` when it was cancelled. Unlike a progress
        report it is not dropped when errand cannot be reached: it is retried
        for the worker's `retry_for`, then raises `Unreachable` (the next
        attempt would resume from the checkpoint before). A checkpoint errand
        refuses (NUL characters, over 64 KiB) raises `ApiError`."""
        self.check()
        try:
            self._api.checkpoint(
                self.id, self.lease_id, value, done, self._retry_for, traceparent=self._call_traceparent
            )
        except LeaseLost:
            self._interrupt(LeaseLost)
            raise

    def upload(
        self, path: str | os.PathLike[str], content_type: str | None = None, file_name: str | None = None
    ) -> dict[str, Any]:
        """Stream the file at `path` to errand as the job's result file.

        It becomes the job's `result` once the handler returns (the owner then
        downloads it through `result_url`). `content_type` is guessed from the
        name when absent; `file_name`, what a download is saved as, defaults to
        the file's own name. Answers the file's metadata as errand stored it.
        Raises `LeaseLost` or `Cancelled` when the job must stop."""
        path = os.fspath(path)
        name = file_name or os.path.basename(path)
        kind = content_type or mimetypes.guess_type(name)[0] or "application/octet-stream"
        self.check()
        try:
            stored = self._api.upload_result(
                self.id, self.lease_id, path, kind, name, self._retry_for, traceparent=self._call_traceparent
            )
        except LeaseLost:
            self._interrupt(LeaseLost)
            raise
        self._uploaded = stored
        return stored

    # The worker's side of the job (not for handlers).

    def _interrupt(self, reason: type[JobInterrupted]) -> bool:
        """Mark the job interrupted; the first reason stands. Answers whether
        this call was the one that marked it."""
        with self._lock:
            if self._interruption is not None:
                return False
            self._interruption = reason
            return True

    def _renewed(self, lease_expires_at: datetime) -> None:
        with self._lock:
            self._lease_expires_at = lease_expires_at

    def _send_log(self, retry_for: float, *, blocking: bool = True, last: bool = False) -> None:
        """Send the lines waiting, oldest first, in batches of up to 100 lines
        and 60 KiB. Without `blocking`, returns at once if another thread is
        sending. Lines errand could not be reached for wait for the next
        call, unless this is the `last` (they are dropped then); lines errand
        refuses are dropped; a lost lease drops every line, and later ones."""
        if not self._log_sending.acquire(blocking=blocking):
            return
        try:
            while True:
                with self._lock:
                    batch = _log_batch(self._log_lines)
                if not batch:
                    return
                try:
                    # A batch whose answer was lost, and which is sent again, may be recorded twice.
                    self._api.logs(self.id, self.lease_id, batch, retry_for, traceparent=self._call_traceparent)
                except LeaseLost:
                    log.warning("job %s: lease lost: %d log line(s) dropped", self.id, self._drop_log())
                    self._interrupt(LeaseLost)
                    return
                except Unreachable as error:
                    if last:
                        log.warning("job %s: %d log line(s) not sent: %s", self.id, self._drop_log(), error)
                    else:
                        log.info("job %s: log lines not sent yet: %s", self.id, error)
                    return
                except ApiError as error:
                    # Another try would be refused too.
                    log.warning("job %s: errand refused %d log line(s): %s", self.id, len(batch), error)
                with self._lock:
                    del self._log_lines[: len(batch)]
        finally:
            self._log_sending.release()

    def _end_log(self, send: bool) -> None:
        """The attempt ended: take no more lines, and send those waiting
        (under the lease it ended with, which errand still takes them under),
        or with `send` false (the lease was lost) drop them."""
        with self._lock:
            self._log_open = False
        if send:
            self._send_log(min(PROGRESS_RETRY_FOR, self._retry_for), last=True)
        else:
            self._drop_log()

    def _drop_log(self) -> int:
        """Drop the lines waiting, and any logged later; answers how many were waiting."""
        with self._lock:
            self._log_open = False
            dropped = len(self._log_lines)
            self._log_lines.clear()
            return dropped


def _optional_str(value: Any) -> str | None:
    return None if value is None else str(value)


def _log_batch(lines: list[tuple[dict[str, Any], int]]) -> list[dict[str, Any]]:
    """The first lines of `lines` that one `/logs` call takes: up to
    `LOG_BATCH` of them and `LOG_BATCH_BYTES`, at least one."""
    batch: list[dict[str, Any]] = []
    size = 0
    for line, line_size in lines[:LOG_BATCH]:
        if batch and size + line_size > LOG_BATCH_BYTES:
            break
        batch.append(line)
        size += line_size + 1
    return batch


def _json_safe(value: Any) -> Any:
    """`value` as a log line carries it: strings without NUL, finite numbers,
    lists and objects of them; anything else as its `str()`."""
    if isinstance(value, str):
        return value.replace("\0", "\ufffd")
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, dict):
        return {_json_safe(str(key)): _json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(item) for item in value]
    return _json_safe(str(value))
