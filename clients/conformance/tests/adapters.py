"""`Adapter`: one process of the package under test's conformance adapter (a
worker whose handler does what each job's params say), and what it reported.

The command is `$ERRAND_CONFORMANCE_ADAPTER` (a JSON array: the program and
its arguments), set by run.sh for the package chosen; the contract between
the two is clients/conformance/README.md.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import IO, Any

import harness


def command() -> list[str]:
    """The adapter's command line, from `$ERRAND_CONFORMANCE_ADAPTER`."""
    given = os.environ.get("ERRAND_CONFORMANCE_ADAPTER")
    if not given:
        raise RuntimeError("set ERRAND_CONFORMANCE_ADAPTER (run clients/conformance/run.sh <python|typescript>)")
    argv: list[str] = json.loads(given)
    return argv


class Adapter:
    """An adapter process pointed at `errand`, named `name` (it puts the name in its events and results)."""

    def __init__(self, errand: harness.Errand, name: str, work_dir: Path, concurrency: int = 1) -> None:
        self.name = name
        env = dict(
            os.environ,
            ERRAND_URL=errand.url,
            ERRAND_TOKEN=harness.worker_token(),
            ERRAND_TYPES=harness.JOB_TYPE,
            ERRAND_WORKER_NAME=name,
            ERRAND_CONCURRENCY=str(concurrency),
            ERRAND_POLL_WAIT="1",
        )
        self._stderr_path = work_dir / f"adapter-{name}.log"
        # Open for as long as the adapter runs, closed by close(): no `with` spans that.
        self._stderr = open(self._stderr_path, "w")  # noqa: SIM115
        self.process = subprocess.Popen(
            command(),
            env=env,
            cwd=harness.REPO_ROOT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
        )
        self.events: list[dict[str, Any]] = []
        self._changed = threading.Condition()
        self._ended = False
        assert self.process.stdout is not None  # stdout=PIPE
        threading.Thread(target=self._read, args=(self.process.stdout,), daemon=True).start()
        self.wait_for("ready", timeout=60)

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            try:
                event = json.loads(line)
            except ValueError:
                event = {"event": "not_json", "line": line.rstrip("\n")}
            with self._changed:
                self.events.append(event)
                self._changed.notify_all()
        with self._changed:
            self._ended = True
            self._changed.notify_all()

    def seen(self, event: str, **match: Any) -> list[dict[str, Any]]:
        """The events of kind `event` so far whose fields hold `match`."""
        with self._changed:
            return [e for e in self.events if e.get("event") == event and all(e.get(k) == v for k, v in match.items())]

    def wait_for(self, event: str, timeout: float = 15.0, **match: Any) -> dict[str, Any]:
        """The first event of kind `event` holding `match`, seen already or within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                found = self.seen(event, **match)
                if found:
                    return found[0]
                left = deadline - time.monotonic()
                if left <= 0 or self._ended:
                    raise AssertionError(
                        f"adapter {self.name}: no {event} {match} within {timeout}s\n{self.describe()}"
                    )
                self._changed.wait(left)

    def describe(self) -> str:
        """Its events and the end of its stderr, for a failing test's message."""
        self._stderr.flush()
        events = "\n".join(json.dumps(e) for e in self.events)
        return f"events:\n{events}\nstderr:\n{self._stderr_path.read_text()[-3000:]}"

    def signal(self, signum: signal.Signals) -> None:
        """Send `signum` to the adapter (this test's own child)."""
        self.process.send_signal(signum)

    def wait_exit(self, timeout: float = 15.0) -> int:
        """Its exit status (negative: the signal that ended it), once it exited."""
        return self.process.wait(timeout=timeout)

    def close(self) -> None:
        """End it if it still runs (SIGCONT first, should it be stopped), and close its log."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)
            self.process.kill()
        self.process.wait(timeout=15)
        self._stderr.close()
