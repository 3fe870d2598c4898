"""Fixtures: a migrated template database for the run, a fresh errand per
test, and workers run on threads that every test's teardown stops."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any, Callable

import pytest

import harness
from errand_worker import Worker


@pytest.fixture(scope="session")
def template_db() -> Iterator[str]:
    """A database migrated once per run, which each test's database copies."""
    with harness.template_database() as name:
        yield name


@pytest.fixture
def errand(template_db: str, tmp_path) -> Iterator[harness.Errand]:
    """A running errand on a fresh database; its log is printed when a test fails."""
    with harness.Errand.running(template_db, tmp_path) as server:
        yield server


class RunningWorker:
    """A `Worker.run()` on a thread of its own."""

    def __init__(self, worker: Worker) -> None:
        self.worker = worker
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="worker-run", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            self.worker.run()
        except BaseException as error:  # handed to the test through stop()
            self.error = error

    def stop(self, timeout: float = 30.0) -> None:
        """Stop the worker; fail unless run() returned within `timeout`, cleanly."""
        self.worker.stop()
        self.thread.join(timeout)
        assert not self.thread.is_alive(), f"run() did not return within {timeout}s of stop()"
        if self.error is not None:
            raise self.error


@pytest.fixture
def new_worker(errand: harness.Errand) -> Callable[..., Worker]:
    """Makes Workers pointed at the test's errand (a short claim wait, so
    that they stop fast); the test registers handlers and starts them with
    `run_worker`."""

    def make(concurrency: int = 1, **options: Any) -> Worker:
        options.setdefault("poll_wait", 1)
        return Worker(errand.url, harness.worker_token(), concurrency=concurrency, **options)

    return make


@pytest.fixture
def run_worker(errand: harness.Errand) -> Iterator[Callable[[Worker], RunningWorker]]:
    """Starts `worker.run()` on a thread; teardown stops every one started
    (before errand stops: this fixture depends on it)."""
    started: list[RunningWorker] = []

    def start(worker: Worker) -> RunningWorker:
        running = RunningWorker(worker)
        started.append(running)
        return running

    yield start
    for running in started:
        if running.thread.is_alive() or running.error is not None:
            running.stop()
