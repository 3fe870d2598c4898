"""`Job`: one claimed attempt, as a handler sees it.

A job carries what errand sent with the claim and the lease that makes this
worker its runner. Its methods are the handler's only channel back to errand
while it runs; each of them first checks whether the job was interrupted
(lease lost, cancel requested), so that a handler which reports progress,
records checkpoints or calls `check()` now and then stops soon after errand
says so.
"""

from __future__ import annotations

import logging
import mimetypes
import os
import threading
from datetime import datetime
from typing import Any

from .api import WorkerApi, parse_timestamp
from .errors import Cancelled, JobInterrupted, LeaseLost, Unreachable

log = logging.getLogger("errand_worker")

#: How long a progress report is retried: progress is advisory, and a handler
#: should not stall on it (heartbeats tell whether errand is gone for good).
PROGRESS_RETRY_FOR = 5.0


class Job:
    """One attempt of a job, leased to this worker.

    Attributes a handler reads: `id`, `type`, `params` (the JSON object the
    user submitted), `tenant`, `user`, `attempt` (1 on the first run), and
    `resumed`: the checkpoint an earlier attempt of this run recorded with
    `checkpoint()` (any JSON value, as it was written), or None when this
    attempt starts from the beginning. A resumed attempt goes on from exactly
    there: it must neither redo nor skip what the checkpoint says was done.
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
        self._api = api
        self._retry_for = retry_for
        # Written by the heartbeat thread, read by the handler's thread.
        self._lock = threading.Lock()
        self._lease_expires_at = parse_timestamp(claimed["lease_expires_at"])
        self._interruption: type[JobInterrupted] | None = None
        self._uploaded: dict[str, Any] | None = None

    def __repr__(self) -> str:
        return f"Job(id={self.id!r}, type={self.type!r}, attempt={self.attempt})"

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
            self._api.progress(self.id, self.lease_id, done, total, message, min(PROGRESS_RETRY_FOR, self._retry_for))
        except LeaseLost:
            self._interrupt(LeaseLost)
            raise
        except Unreachable as error:
            log.warning("job %s: progress not reported: %s", self.id, error)

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
            self._api.checkpoint(self.id, self.lease_id, value, done, self._retry_for)
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
            stored = self._api.upload_result(self.id, self.lease_id, path, kind, name, self._retry_for)
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
