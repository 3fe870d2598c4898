"""A real errand for the tests: a fresh database, an `errand serve` process,
tokens from `errand token`, and the user's side of the API (submit a job,
read it back).

Nothing here imitates errand: every test talks to the binary named by
`$ERRAND_BIN`, on a database of its own on `$DATABASE_URL`'s server.
"""

from __future__ import annotations

import contextlib
import os
import queue
import socket
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, Callable, TypeVar
from urllib.parse import urlsplit, urlunsplit

import httpx

#: The repository root: clients/python/tests/ is three levels below it.
REPO_ROOT = Path(__file__).resolve().parents[3]
CONFIG = REPO_ROOT / "config.toml"

#: Signs every token of the run (errand wants 32 bytes or more).
JWT_SECRET = "python-worker-tests-secret-0123456789abc"

JOB_TYPE = "render_invoice"
TENANT, USER = "acme", "alice"
#: acme's tenant admin, who registers its webhook endpoints.
ADMIN = "ada"

#: What a test of webhooks adds to errand's environment: endpoints on this
#: machine (plain http, a loopback address) allowed, and due deliveries
#: looked for every 100 ms rather than every second.
WEBHOOKS_ENV = {
    "ERRAND_WEBHOOKS__ALLOW_HOSTS": "127.0.0.1",
    "ERRAND_WEBHOOKS__POLL_INTERVAL": "100ms",
}

T = TypeVar("T")


def wait_until(condition: Callable[[], T | None], timeout: float = 15.0, what: str = "the condition") -> T:
    """Poll `condition` until it answers something truthy, and answer that;
    fail the test after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.05)


def errand_bin() -> str:
    binary = os.environ.get("ERRAND_BIN")
    if not binary:
        raise RuntimeError("set ERRAND_BIN to the errand binary, e.g. ~/.cache/errand-target/debug/errand")
    return binary


def database_url(name: str) -> str:
    """`$DATABASE_URL` with its database replaced by `name`."""
    parts = urlsplit(os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres"))
    return urlunsplit(parts._replace(path="/" + name))


def psql(sql: str) -> None:
    """Run `sql` on `$DATABASE_URL`'s server, through its `postgres` database."""
    subprocess.run(
        ["psql", database_url("postgres"), "-v", "ON_ERROR_STOP=1", "-q", "-c", sql],
        check=True,
        capture_output=True,
        text=True,
    )


def errand_env(db_url: str, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment errand runs with: one external job type, a 3 s lease."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("ERRAND_")}
    # DATABASE_URL would override ERRAND_DATABASE__URL (errand reads it last).
    env.pop("DATABASE_URL", None)
    env.update(
        {
            "ERRAND_DATABASE__URL": db_url,
            "ERRAND_AUTH__JWT_SECRET": JWT_SECRET,
            "ERRAND_WORKERS__LEASE": "3s",
            # The tests poll and submit far past a person's pace.
            "ERRAND_RATE_LIMITS__PER_USER": "unlimited",
            "ERRAND_RATE_LIMITS__CREATES_PER_USER": "unlimited",
            "ERRAND_RATE_LIMITS__PER_TENANT": "unlimited",
            "ERRAND_JOB_TYPES__RENDER_INVOICE__HANDLER": "external",
            "ERRAND_JOB_TYPES__RENDER_INVOICE__MAX_ATTEMPTS": "3",
            "ERRAND_JOB_TYPES__RENDER_INVOICE__BACKOFF_BASE": "50ms",
            "RUST_LOG": "warn",
        }
    )
    env.update(extra or {})
    return env


def mint_token(*args: str) -> str:
    """`errand token ARGS`: a signed token for this run's secret."""
    done = subprocess.run(
        [errand_bin(), "token", "--config", str(CONFIG), *args],
        env=errand_env(database_url("postgres")),
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


@contextlib.contextmanager
def template_database() -> Iterator[str]:
    """A database migrated once, dropped on the way out; each test's database
    is a copy of it, which is much faster than migrating every time."""
    name = f"errand_pyw_tpl_{uuid.uuid4().hex[:12]}"
    psql(f'CREATE DATABASE "{name}"')
    try:
        subprocess.run(
            [errand_bin(), "migrate", "--config", str(CONFIG)],
            env=errand_env(database_url(name)),
            check=True,
            capture_output=True,
            text=True,
        )
        yield name
    finally:
        psql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class LineReader:
    """Reads a process's output on a thread of its own, so that a test can
    wait for a line with a timeout."""

    def __init__(self, stream: IO[str], echo: list[str] | None = None) -> None:
        self._lines: queue.Queue[str | None] = queue.Queue()
        # Every line read, for a failing test's message.
        self.seen: list[str] = echo if echo is not None else []
        threading.Thread(target=self._pump, args=(stream,), daemon=True).start()

    def _pump(self, stream: IO[str]) -> None:
        for line in stream:
            self.seen.append(line.rstrip("\n"))
            self._lines.put(line.rstrip("\n"))
        self._lines.put(None)

    def wait_for(self, fragment: str, timeout: float = 15.0) -> str:
        """The next line holding `fragment`; fails after `timeout` seconds
        or once the output ended."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self._lines.get(timeout=max(deadline - time.monotonic(), 0))
            except queue.Empty:
                line = None
            else:
                if line is None:
                    self._lines.put(None)  # the end stays visible to later waits
            if line is None:
                tail = "\n".join(self.seen[-30:])
                raise AssertionError(f"no line with {fragment!r} within {timeout}s; output:\n{tail}")
            if fragment in line:
                return line


class Errand:
    """One `errand serve` process on a database of its own."""

    def __init__(self, template_db: str, work_dir: Path, env: dict[str, str] | None = None) -> None:
        self.db_name = f"errand_pyw_{uuid.uuid4().hex[:12]}"
        psql(f'CREATE DATABASE "{self.db_name}" TEMPLATE "{template_db}"')
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        self._log_path = work_dir / "errand.log"
        # Open for as long as errand runs (its stderr), closed by stop(): no `with` spans that.
        self._log = open(self._log_path, "w")  # noqa: SIM115
        env = errand_env(
            database_url(self.db_name),
            {
                "ERRAND_HTTP__BIND": f"127.0.0.1:{port}",
                "ERRAND_HTTP__PUBLIC_BASE_URL": self.url,
                "ERRAND_STORAGE__LOCAL_DIR": str(work_dir / "results"),
                **(env or {}),
            },
        )
        try:
            self.process = subprocess.Popen(
                [errand_bin(), "serve", "--config", str(CONFIG)],
                env=env,
                cwd=work_dir,
                stdout=subprocess.PIPE,
                stderr=self._log,
                text=True,
            )
        except OSError:  # no binary (missing, or being rebuilt): leave no database behind
            self._log.close()
            psql(f'DROP DATABASE IF EXISTS "{self.db_name}" WITH (FORCE)')
            raise
        assert self.process.stdout is not None  # stdout=PIPE
        try:
            LineReader(self.process.stdout).wait_for("errand listening on", timeout=60)
        except AssertionError:
            self.stop()
            raise AssertionError(f"errand did not start:\n{self.log()}") from None
        self.user = httpx.Client(base_url=self.url, timeout=10, headers={"Authorization": f"Bearer {user_token()}"})

    @classmethod
    @contextlib.contextmanager
    def running(cls, template_db: str, work_dir: Path, env: dict[str, str] | None = None) -> Iterator[Errand]:
        """An errand for the length of a `with`; its log is printed if it wrote one."""
        server = cls(template_db, work_dir, env)
        try:
            yield server
        finally:
            log = server.log()
            server.stop()
            if log.strip():
                print(f"--- errand's log ---\n{log}")

    def log(self) -> str:
        """What errand wrote on stderr so far."""
        self._log.flush()
        return self._log_path.read_text()[-5000:]

    def stop(self) -> None:
        """Stop errand (SIGTERM, this process's own child) and drop its database."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()
        psql(f'DROP DATABASE IF EXISTS "{self.db_name}" WITH (FORCE)')

    # The user's side of the API.

    def submit(self, params: dict[str, Any], job_type: str = JOB_TYPE, headers: dict[str, str] | None = None) -> str:
        """`POST /jobs/{type}` as alice of acme, with `headers` besides its
        own (a `traceparent`, say); answers the new job's id."""
        headers = {"Idempotency-Key": str(uuid.uuid4()), **(headers or {})}
        response = self.user.post(f"/jobs/{job_type}", json=params, headers=headers)
        assert response.status_code == 202, response.text
        job_id: str = response.json()["id"]
        return job_id

    def register_webhook(self, url: str, events: list[str]) -> dict[str, Any]:
        """`POST /webhooks` as acme's tenant admin; answers the new endpoint,
        its `secret` included (errand shows it this once)."""
        response = httpx.post(
            f"{self.url}/webhooks",
            json={"url": url, "events": events},
            timeout=10,
            headers={"Authorization": f"Bearer {admin_token()}"},
        )
        assert response.status_code == 201, response.text
        endpoint: dict[str, Any] = response.json()
        return endpoint

    def job(self, job_id: str) -> dict[str, Any]:
        """`GET /jobs/{id}` as its owner."""
        response = self.user.get(f"/jobs/{job_id}")
        assert response.status_code == 200, response.text
        job: dict[str, Any] = response.json()
        return job

    def admin_job(self, job_id: str) -> dict[str, Any]:
        """`GET /admin/jobs/{id}` as an operator: the job with its `history`
        (each attempt's `logs` among it)."""
        response = httpx.get(
            f"{self.url}/admin/jobs/{job_id}", timeout=10, headers={"Authorization": f"Bearer {operator_token()}"}
        )
        assert response.status_code == 200, response.text
        job: dict[str, Any] = response.json()
        return job

    def wait_for_job(
        self, job_id: str, condition: Callable[[dict[str, Any]], bool], timeout: float = 15.0, what: str = "the job"
    ) -> dict[str, Any]:
        """Poll the job until `condition(job)`; answer it."""
        last: dict[str, Any] = {}

        def check() -> dict[str, Any] | None:
            last.update(self.job(job_id))
            return dict(last) if condition(last) else None

        try:
            return wait_until(check, timeout, what)
        except AssertionError as error:
            raise AssertionError(f"{error}; the job last read: {last}") from None

    def wait_for_end(self, job_id: str, timeout: float = 15.0) -> dict[str, Any]:
        """Poll the job until it ended (completed, failed or cancelled)."""
        return self.wait_for_job(
            job_id, lambda job: job["status"] in ("completed", "failed", "cancelled"), timeout, f"job {job_id} to end"
        )


_tokens: dict[str, str] = {}


def worker_token() -> str:
    """A worker token for the external type (minted once per run)."""
    if "worker" not in _tokens:
        _tokens["worker"] = mint_token("--worker", "--types", JOB_TYPE, "--user", "py-worker-tests")
    return _tokens["worker"]


def user_token() -> str:
    """alice of acme's token (minted once per run)."""
    if "user" not in _tokens:
        _tokens["user"] = mint_token("--tenant", TENANT, "--user", USER)
    return _tokens["user"]


def admin_token() -> str:
    """acme's tenant admin's token, `scope: tenant_admin` (minted once per run)."""
    if "admin" not in _tokens:
        _tokens["admin"] = mint_token("--tenant", TENANT, "--user", ADMIN, "--tenant-admin")
    return _tokens["admin"]


def operator_token() -> str:
    """An operator's token, `scope: operator`, for the `/admin` routes (minted once per run)."""
    if "operator" not in _tokens:
        _tokens["operator"] = mint_token("--operator", "--user", "olga")
    return _tokens["operator"]
