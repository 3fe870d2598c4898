"""Fixtures of the conformance suite: a migrated template database for the
run and a fresh errand per test (tests/harness.py of the Python package,
shared), and adapters that every test's teardown ends."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Callable

import pytest

import harness
from adapters import Adapter, command


def pytest_report_header() -> str:
    return f"worker package: {os.environ.get('ERRAND_CONFORMANCE_PACKAGE', '?')}; adapter: {' '.join(command())}"


@pytest.fixture(scope="session")
def template_db() -> Iterator[str]:
    with harness.template_database() as name:
        yield name


@pytest.fixture
def errand(template_db: str, tmp_path: Path) -> Iterator[harness.Errand]:
    with harness.Errand.running(template_db, tmp_path) as server:
        yield server


@pytest.fixture
def adapter(errand: harness.Errand, tmp_path: Path) -> Iterator[Callable[..., Adapter]]:
    """Starts adapters pointed at the test's errand: `adapter("a")`; ended before errand stops."""
    started: list[Adapter] = []

    def start(name: str, concurrency: int = 1) -> Adapter:
        process = Adapter(errand, name, tmp_path, concurrency)
        started.append(process)
        return process

    yield start
    for process in started:
        process.close()
