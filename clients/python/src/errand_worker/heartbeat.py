"""The Heartbeater: one thread that renews the lease of every running job.

Each job is renewed every third of its lease, so that two renewals can fail
before the lease runs out. The heartbeat's answer is also how a worker hears
that a job must stop: `409 lease_lost` (rescued elsewhere, or ended) or
`cancel_requested`. Either marks the job interrupted, which its handler sees
at its next `progress()` or `check()`, and the job is no longer renewed.
A renewal also sends the lines the job's handler logged since the last one
(`Job.log()`), so that they reach the operators' timeline while it runs.
"""

from __future__ import annotations

import logging
import threading
import time
from datetime import datetime, timezone

from .api import WorkerApi
from .errors import ApiError, Cancelled, LeaseLost, Unreachable
from .job import Job

log = logging.getLogger("errand_worker")

#: The shortest pause between two renewals of one job, should clocks say the
#: lease already ended (a worker whose clock runs ahead of errand's).
MIN_INTERVAL = 0.2

#: After a renewal failed for a reason that may pass, the next try comes this
#: soon (or at the normal interval, if sooner).
RETRY_INTERVAL = 1.0


def renewal_interval(lease_expires_at: datetime, server_time: datetime | None) -> float:
    """Seconds until a lease ending at `lease_expires_at` should be renewed:
    a third of what is left of it.

    What is left is measured both on this machine's clock and, when errand
    sent a `Date` header, on errand's, and the shorter wins: a worker whose
    clock lags errand's would otherwise renew too late and lose its jobs. (The
    header has whole seconds, so on a well-synchronised machine the local
    clock is the shorter and the more precise.)"""
    remaining = (lease_expires_at - datetime.now(timezone.utc)).total_seconds()
    if server_time is not None:
        remaining = min(remaining, (lease_expires_at - server_time).total_seconds())
    return max(MIN_INTERVAL, remaining / 3)


class Heartbeater:
    """Renews the leases of the jobs it tracks, from one thread of its own."""

    def __init__(self, api: WorkerApi) -> None:
        self._api = api
        self._changed = threading.Condition()
        # Job id -> (when its next renewal is due, on the monotonic clock; the job).
        self._due: dict[str, tuple[float, Job]] = {}
        self._stopping = False
        # A test hook: paused, no lease is renewed, so that leases run out.
        self._paused = False
        self._thread = threading.Thread(target=self._run, name="errand-heartbeat", daemon=True)

    def start(self) -> None:
        """Start the thread."""
        self._thread.start()

    def stop(self) -> None:
        """Stop the thread and wait for it (a renewal under way ends first)."""
        with self._changed:
            self._stopping = True
            self._changed.notify()
        self._thread.join()

    def track(self, job: Job, server_time: datetime | None) -> None:
        """Renew `job`'s lease until `forget(job)`; `server_time` is errand's
        clock when it handed the job out."""
        due = time.monotonic() + renewal_interval(job.lease_expires_at, server_time)
        with self._changed:
            self._due[job.id] = (due, job)
            self._changed.notify()

    def forget(self, job: Job) -> None:
        """Stop renewing `job`'s lease (it ended, or must stop)."""
        with self._changed:
            self._due.pop(job.id, None)

    def pause(self) -> None:
        """Test hook: renew nothing until `resume()`."""
        with self._changed:
            self._paused = True

    def resume(self) -> None:
        """Test hook: undo `pause()`."""
        with self._changed:
            self._paused = False
            self._changed.notify()

    def _run(self) -> None:
        while True:
            due = self._wait_for_due()
            if due is None:
                return
            # Renewals are sent outside the lock: track() and forget() must
            # not wait behind a slow errand.
            for job in due:
                try:
                    self._renew(job)
                except Exception:  # a bug here must not end every job's renewals
                    log.exception("job %s: renewing its lease failed unexpectedly", job.id)
                    self._reschedule(job, RETRY_INTERVAL)

    def _wait_for_due(self) -> list[Job] | None:
        """Block until some renewals are due and answer their jobs, or answer
        None once stopping."""
        with self._changed:
            while not self._stopping:
                now = time.monotonic()
                if not self._paused and self._due:
                    due = [job for at, job in self._due.values() if at <= now]
                    if due:
                        return due
                    self._changed.wait(min(at for at, _ in self._due.values()) - now)
                else:
                    self._changed.wait()
            return None

    def _reschedule(self, job: Job, seconds: float) -> None:
        with self._changed:
            # A job forgotten while its renewal was under way stays forgotten.
            if job.id in self._due:
                self._due[job.id] = (time.monotonic() + seconds, job)

    def _renew(self, job: Job) -> None:
        if job.interrupted:
            self.forget(job)
            return
        interval = renewal_interval(job.lease_expires_at, None)
        try:
            # Retrying beyond a fraction of the interval would delay every
            # other job's renewal behind this one: try again on the next round.
            answer = self._api.heartbeat(
                job.id, job.lease_id, retry_for=min(interval, RETRY_INTERVAL), traceparent=job._call_traceparent
            )
        except LeaseLost:
            log.warning("job %s: lease lost (rescued after expiring, or ended): stopping it", job.id)
            job._interrupt(LeaseLost)
            self.forget(job)
            return
        except (Unreachable, ApiError) as error:
            log.warning("job %s: lease not renewed: %s", job.id, error)
            self._reschedule(job, min(interval, RETRY_INTERVAL))
            return
        job._renewed(answer.lease_expires_at)
        if answer.cancel_requested:
            log.info("job %s: cancel requested: stopping it", job.id)
            job._interrupt(Cancelled)
            self.forget(job)
            return
        self._reschedule(job, renewal_interval(answer.lease_expires_at, answer.server_time))
        # Retried no longer than the renewal, and skipped while the handler's
        # thread sends lines itself: the other jobs' renewals must not wait.
        job._send_log(min(interval, RETRY_INTERVAL), blocking=False)
