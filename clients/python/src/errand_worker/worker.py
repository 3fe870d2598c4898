"""`Worker`: claims jobs from errand and runs their handlers on a thread pool.

Three kinds of thread share the work:

- the thread that called `run()` runs the claim loop: it long-polls errand for
  as many jobs as there are free slots, and hands each to the pool;
- the pool's `concurrency` threads run handlers, then send the outcome
  (`/complete` or `/fail`) for their job;
- the Heartbeater's thread renews every running job's lease (`heartbeat.py`).

Each attempt runs in a span of its own when OpenTelemetry is installed, and
every call about it sends a `traceparent` header (`tracing.py`).

errand is the truth about every job: the worker keeps only the jobs it runs
right now, and a job whose outcome it could not send is rescued by errand
once its lease runs out.
"""

from __future__ import annotations

import json
import logging
import signal
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from types import FrameType
from typing import Any, Callable, Optional, Union

from . import tracing
from .api import WorkerApi
from .errors import ApiError, JobFailed, LeaseLost, Unreachable
from .heartbeat import Heartbeater
from .job import Job

log = logging.getLogger("errand_worker")

#: A handler: takes the job, returns its result (a JSON object) or None.
Handler = Callable[[Job], Optional[dict[str, Any]]]

#: A signal's disposition as `signal.getsignal` answers it (None: one not set from Python).
_SignalHandler = Union[Callable[[int, Optional[FrameType]], Any], int, signal.Handlers, None]

#: What the job's owner reads when a handler raised something unexpected: its
#: text may hold internals (paths, SQL, other people's data), so it is logged
#: here and never sent.
GENERIC_ERROR = "The job failed because of an unexpected error in its worker."

#: The most jobs one claim may ask for (errand's limit).
MAX_CLAIM = 100
#: How often the main thread, waiting for a free slot, lets a pending signal's
#: handler run.
SIGNAL_CHECK_SECONDS = 0.2

#: The longest pause of the claim loop after errand could not be reached.
MAX_CLAIM_BACKOFF = 30.0


class Worker:
    """Runs the handlers registered with `job()` for jobs errand hands out.

    `url` is errand's base URL; `token` a worker token (`errand token
    --worker --types ...`), or a function answering a current one, asked on
    every request. `concurrency` jobs run at once. `poll_wait` is how long
    one claim waits for work: it bounds how long an idle worker takes to
    stop. A job's outcome is retried for `retry_for` seconds when errand
    cannot be reached; `timeout` is the time allowed for each request.
    `tracer_provider` is the OpenTelemetry `TracerProvider` the jobs' spans
    are made with (the global one when None; unused without OpenTelemetry).
    """

    def __init__(
        self,
        url: str,
        token: str | Callable[[], str],
        *,
        concurrency: int = 1,
        poll_wait: int = 10,
        retry_for: float = 60.0,
        timeout: float = 10.0,
        tracer_provider: Any = None,
    ) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        # errand takes whole seconds, and 0 would make an idle worker poll in a tight loop.
        if not (isinstance(poll_wait, int) and 1 <= poll_wait <= 60):
            raise ValueError("poll_wait must be a whole number of seconds from 1 to 60")
        self.concurrency = concurrency
        self._poll_wait = poll_wait
        self._retry_for = retry_for
        self._tracer_provider = tracer_provider
        self._handlers: dict[str, Handler] = {}
        # One connection per job thread, plus the claim loop's and the heartbeats'.
        self._api = WorkerApi(url, token, connections=concurrency + 2, timeout=timeout)
        self._heartbeater = Heartbeater(self._api)
        self._stopping = threading.Event()
        self._started = False
        # Guards `_running`, and wakes the claim loop when a slot frees or a stop comes.
        self._slots = threading.Condition()
        self._running = 0

    def job(self, job_type: str) -> Callable[[Handler], Handler]:
        """Decorator: run the decorated function for jobs of `job_type`.

        The function takes a `Job`. Returning a dict (or None) completes the
        job with it as its result; raising `Retryable` or `Permanent` fails
        the attempt with the message shown to the user; any other exception
        fails it as retryable with a generic message (the exception is
        logged)."""

        def register(handler: Handler) -> Handler:
            if job_type in self._handlers:
                raise ValueError(f"a handler for {job_type!r} is already registered")
            self._handlers[job_type] = handler
            return handler

        return register

    def stop(self) -> None:
        """Stop claiming; `run()` returns once the running jobs have ended.
        Safe from any thread, and from a signal handler."""
        self._stopping.set()
        with self._slots:
            self._slots.notify_all()

    def run(self) -> None:
        """Claim and run jobs until `stop()`, SIGTERM or SIGINT; then let the
        running jobs finish and return. A worker runs once.

        Signal handlers are installed only when called from the main thread,
        and put back on return; after the first signal the previous handlers
        are back, so a second Ctrl-C or SIGTERM acts as it would have without
        the worker. Raises `ApiError` when errand refuses to hand out jobs at
        all (a bad or expired token, a type the token may not take)."""
        if not self._handlers:
            raise ValueError("no handler registered: decorate one with @worker.job(type)")
        if self._started:
            raise RuntimeError("a Worker runs once: make a new one")
        self._started = True
        previous_handlers = self._install_signal_handlers()
        self._heartbeater.start()
        pool = ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix="errand-job")
        log.info("worker started: types %s, concurrency %d", ", ".join(sorted(self._handlers)), self.concurrency)
        try:
            self._claim_loop(pool)
        finally:
            log.info("worker stopping: waiting for %d running job(s)", self._running)
            pool.shutdown(wait=True)
            self._heartbeater.stop()
            self._api.close()
            _restore_signal_handlers(previous_handlers)
            log.info("worker stopped")

    # The claim loop.

    def _claim_loop(self, pool: ThreadPoolExecutor) -> None:
        types = sorted(self._handlers)
        failures = 0
        while True:
            free = self._wait_for_free_slots()
            if free == 0:
                return
            try:
                answer = self._api.claim(types, min(free, MAX_CLAIM), self._poll_wait)
            except ApiError:
                # A refusal another try cannot change (token, types, no such
                # route): say so loudly rather than poll forever.
                log.error("errand refused to hand out jobs; stopping")
                raise
            except Exception as error:  # network, 5xx, a garbled answer: may pass
                failures += 1
                pause = min(MAX_CLAIM_BACKOFF, 0.5 * 2 ** min(failures, 10))
                log.warning("claiming jobs failed (%s); trying again in %.1fs", error, pause)
                self._stopping.wait(pause)
                continue
            failures = 0
            # Jobs that arrive after a stop began are run all the same: they
            # are leased to this worker, and dropping them would leave them
            # waiting for their leases to run out, and cost them an attempt.
            for claimed in answer.jobs:
                self._start(pool, claimed, answer.server_time)

    def _wait_for_free_slots(self) -> int:
        """Block until a slot is free; answer how many are, or 0 once stopping."""
        with self._slots:
            while self._running >= self.concurrency and not self._stopping.is_set():
                # Timed: Python runs signal handlers on the main thread, but
                # the OS may deliver SIGTERM to a pool or heartbeat thread,
                # which leaves an untimed wait here blocked, and the handler
                # unrun, until a job ends.
                self._slots.wait(timeout=SIGNAL_CHECK_SECONDS)
            return 0 if self._stopping.is_set() else self.concurrency - self._running

    def _start(self, pool: ThreadPoolExecutor, claimed: dict[str, Any], server_time: datetime | None) -> None:
        try:
            job = Job(claimed, self._api, self._retry_for)
        except (KeyError, TypeError, ValueError) as error:
            # Without its id and lease nothing can be sent for it: errand
            # rescues it when the lease runs out.
            log.error("errand handed out a job this worker cannot read (%r): %s", error, claimed)
            return
        # Before its first call (the heartbeats' included): they all send its traceparent.
        span = tracing.start(job, self._tracer_provider)
        job._call_traceparent = span.traceparent
        with self._slots:
            self._running += 1
        self._heartbeater.track(job, server_time)
        pool.submit(self._execute, job, span)

    # One job, on a pool thread.

    def _execute(self, job: Job, span: tracing.JobSpan) -> None:
        # The span is the current one for the handler and the job's last
        # calls, and ends after them.
        with span:
            try:
                self._run_handler(job, span)
            except Exception:  # a bug in this package must not leak the slot
                log.exception("job %s: ending it failed unexpectedly", job.id)
            finally:
                # Renewed until here: sending the outcome may take retries.
                self._heartbeater.forget(job)
                # The lines the handler logged last, under the lease the attempt
                # ended with (errand takes them just after the end). After a lost
                # lease they were dropped already.
                try:
                    job._end_log(send=True)
                except Exception:  # nor may a bug here
                    log.exception("job %s: sending its last log lines failed unexpectedly", job.id)
                with self._slots:
                    self._running -= 1
                    self._slots.notify_all()

    def _run_handler(self, job: Job, span: tracing.JobSpan) -> None:
        handler = self._handlers.get(job.type)
        if handler is None:  # errand handed out a type this worker did not ask for
            log.error("job %s: no handler for type %r", job.id, job.type)
            span.fail(f"no handler for type {job.type!r}")
            self._fail(job, GENERIC_ERROR, retryable=True)
            return
        log.info("job %s (%s, attempt %d): started", job.id, job.type, job.attempt)
        try:
            result = _checked_result(handler(job))
        except Exception as error:
            span.fail(error)
            # Once errand said stop, whatever the handler did after is moot.
            if job.interrupted:
                self._end_interrupted(job)
            elif isinstance(error, JobFailed):
                self._fail(job, error.message, error.retryable)
            else:
                # JobInterrupted lands here too when no heartbeat or call of
                # this job's raised it: the handler's own doing, so a bug.
                log.exception("job %s (%s, attempt %d): handler raised", job.id, job.type, job.attempt)
                self._fail(job, GENERIC_ERROR, retryable=True)
            return
        if job.interrupted:
            self._end_interrupted(job)
        else:
            self._complete(job, result)

    def _end_interrupted(self, job: Job) -> None:
        """After the handler of an interrupted job returned or raised."""
        if job.cancel_requested:
            # Any end but a completion ends a job whose cancel was asked for
            # `cancelled`: saying so now spares the user the wait for the
            # lease to run out. (The lease is no longer renewed, so this may
            # come too late: errand then ends the job itself.)
            log.info("job %s: stopped after its cancel", job.id)
            self._fail(job, "Cancelled.", retryable=False)
        else:
            log.info("job %s: stopped after its lease was lost; nothing sent", job.id)
            job._end_log(send=False)

    def _complete(self, job: Job, result: dict[str, Any] | None) -> None:
        try:
            self._api.complete(job.id, job.lease_id, result, self._retry_for, traceparent=job._call_traceparent)
        except LeaseLost:
            log.warning("job %s: lease lost before its completion was recorded", job.id)
        except ApiError as error:
            # errand refused the result itself (e.g. a `storage_key` field):
            # left alone, the job would wait for its lease to run out on
            # every attempt; failing it says what happened at once.
            log.error("job %s: errand refused its result: %s", job.id, error)
            self._fail(job, GENERIC_ERROR, retryable=True)
        except Unreachable as error:
            log.error(
                "job %s: completion not recorded (%s); errand runs it again once its lease expires", job.id, error
            )
        else:
            log.info("job %s: completed", job.id)

    def _fail(self, job: Job, message: str, retryable: bool) -> None:
        try:
            verdict = self._api.fail(
                job.id, job.lease_id, message, retryable, self._retry_for, traceparent=job._call_traceparent
            )
        except LeaseLost:
            log.warning("job %s: lease lost before its end was recorded", job.id)
        except (ApiError, Unreachable) as error:
            log.error("job %s: failure not recorded (%s); errand runs it again once its lease expires", job.id, error)
        else:
            log.info("job %s: failed (%s): %s", job.id, verdict, message)

    # Signals.

    def _install_signal_handlers(self) -> dict[signal.Signals, _SignalHandler] | None:
        """SIGTERM and SIGINT stop the worker; answers the handlers they replace.
        Python only lets the main thread install handlers."""
        if threading.current_thread() is not threading.main_thread():
            return None
        previous = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}

        def on_signal(signum: int, _frame: FrameType | None) -> None:
            log.info("%s received: stopping once the running jobs end", signal.Signals(signum).name)
            _restore_signal_handlers(previous)
            self.stop()

        for sig in previous:
            signal.signal(sig, on_signal)
        return previous


def _checked_result(result: Any) -> dict[str, Any] | None:
    """The handler's return value, if it can be a job's result: a dict that
    JSON can carry, or None. Checked while the handler's failures are still
    the handler's, so that a bad one fails the attempt with its traceback."""
    if result is not None and not isinstance(result, dict):
        raise TypeError(f"the handler returned {type(result).__name__}; a job's result is a dict or None")
    json.dumps(result)  # raises TypeError or ValueError on what JSON cannot carry
    return result


def _restore_signal_handlers(previous: dict[signal.Signals, _SignalHandler] | None) -> None:
    for sig, handler in (previous or {}).items():
        # None: a handler not set from Python; the default is the closest.
        signal.signal(sig, signal.SIG_DFL if handler is None else handler)
