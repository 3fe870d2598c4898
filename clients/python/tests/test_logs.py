"""Lines a handler logs with `job.log()` reach the operators' timeline of the
job (`GET /admin/jobs/{id}`, `history.attempts[].logs`), in order, sent in
batches: with the lease's renewals while the handler runs, by the call that
brings the waiting lines to 100, and once more after the job ended."""

from __future__ import annotations

import threading
from datetime import datetime, timezone
from typing import Any

import pytest

import harness
from errand_worker import LeaseLost
from errand_worker.api import parse_timestamp


def attempt_logs(errand: harness.Errand, job_id: str, count: int) -> dict[str, Any]:
    """The first attempt's history once its log holds `count` lines."""

    def check() -> dict[str, Any] | None:
        attempts: list[dict[str, Any]] = errand.admin_job(job_id)["history"]["attempts"]
        return attempts[0] if attempts and len(attempts[0]["logs"]) >= count else None

    return harness.wait_until(check, what=f"{count} log lines of job {job_id}")


def test_logged_lines_show_in_the_operators_timeline_in_order(errand, new_worker, run_worker):
    logged, release = threading.Event(), threading.Event()
    refused = []
    worker = new_worker()
    before = datetime.now(timezone.utc)

    @worker.job("render_invoice")
    def render(job):
        job.log("info", "rendering", invoice=job.params["invoice"], pages=3)
        job.log("debug", "fonts loaded")
        try:
            job.log("verbose", "not a level")
        except ValueError as error:
            refused.append(str(error))
        logged.set()
        assert release.wait(20), "the test never released the handler"
        job.log("warn", "page 2 was slow", page=2, ms=1500.5, sizes=[1, 2], paper={"size": "A4"}, at=before)
        # errand refuses NUL: it is sent as U+FFFD.
        job.log("error", "page 3: a stray \u0000 byte", page=3)
        return {"pages": 3}

    run_worker(worker)
    job_id = errand.submit({"invoice": 7})
    assert logged.wait(15)
    assert refused == ["log level 'verbose': one of debug, info, warn, error"]

    # While the handler waits, its lines go out with the lease's renewals
    # (every second under the tests' 3 s lease).
    try:
        running = attempt_logs(errand, job_id, 2)
        assert errand.job(job_id)["state"] == "running"
        assert [line["message"] for line in running["logs"]] == ["rendering", "fonts loaded"]
    finally:
        release.set()
    job = errand.wait_for_end(job_id)
    assert job["status"] == "completed", job
    # The last lines are sent after the completion, under the lease it ended with.
    attempt = attempt_logs(errand, job_id, 4)
    after = datetime.now(timezone.utc)

    assert (attempt["run"], attempt["attempt"], attempt["log_truncated"]) == (1, 1, False)
    lines = attempt["logs"]
    assert [(line["level"], line["message"], line.get("fields")) for line in lines] == [
        ("info", "rendering", {"invoice": 7, "pages": 3}),
        ("debug", "fonts loaded", None),
        (
            "warn",
            "page 2 was slow",
            {"page": 2, "ms": 1500.5, "sizes": [1, 2], "paper": {"size": "A4"}, "at": str(before)},
        ),
        ("error", "page 3: a stray \ufffd byte", {"page": 3}),
    ]
    # Each line's time is when it was logged: in order, within the test.
    times = [parse_timestamp(line["at"]) for line in lines]
    assert times == sorted(times)
    assert before <= times[0]
    assert times[-1] <= after


@pytest.mark.parametrize(("count", "kept"), [(250, 250), (1050, 1000)])
def test_many_lines_are_sent_in_batches_of_up_to_100_and_all_arrive(
    errand, new_worker, run_worker, monkeypatch, count, kept
):
    batches: list[int] = []
    worker = new_worker()
    send = worker._api.logs

    def counted(job_id, lease_id, lines, retry_for, **options):
        batches.append(len(lines))
        send(job_id, lease_id, lines, retry_for, **options)

    monkeypatch.setattr(worker._api, "logs", counted)

    @worker.job("render_invoice")
    def render(job):
        for row in range(count):
            job.log("debug", f"row {row}", row=row)
        return None

    run_worker(worker)
    job_id = errand.submit({"invoice": 8})
    assert errand.wait_for_end(job_id)["status"] == "completed"

    truncated = count > kept
    attempt = attempt_logs(errand, job_id, kept + truncated)
    lines = attempt["logs"]
    assert len(lines) == kept + truncated
    assert [(line["message"], line["fields"]) for line in lines[:kept]] == [
        (f"row {row}", {"row": row}) for row in range(kept)
    ]
    assert attempt["log_truncated"] is truncated
    if truncated:
        assert lines[-1]["level"] == "warn"
        assert lines[-1]["message"].startswith("truncated"), lines[-1]
    # Never one request per line: at most 100 a call, and past the cap only
    # the one line that makes errand record the cut is sent.
    assert max(batches) <= 100
    assert sum(batches) == min(count, kept + 1)
    assert len(batches) >= 3


def test_a_lease_lost_while_sending_lines_drops_them_and_interrupts_the_job_without_raising(
    errand, new_worker, run_worker
):
    rescued = threading.Event()
    seen = []
    worker = new_worker(concurrency=2)
    # The test hook: no lease is renewed (nor lines sent with renewals), so
    # attempt 1's lease runs out and errand's rescuer puts the job back.
    worker._heartbeater.pause()
    first_started, first_ended = threading.Event(), threading.Event()

    @worker.job("render_invoice")
    def render(job):
        if job.attempt > 1:
            job.log("info", "attempt 2")
            return {"rendered_on_attempt": job.attempt}
        first_started.set()
        try:
            assert rescued.wait(30), "the test never saw the rescue"
            for row in range(100):  # the 100th sends them, under the lost lease: 409
                job.log("debug", f"row {row}")
            seen.append(job.interrupted)
            job.log("info", "dropped, never sent")
            job.check()
            seen.append("went on")
        except LeaseLost:
            seen.append("lease lost")
            raise
        finally:
            first_ended.set()
        return {"rendered_on_attempt": 1}

    run_worker(worker)
    job_id = errand.submit({"invoice": 9})
    assert first_started.wait(15)
    errand.wait_for_job(
        job_id,
        lambda job: not (job["state"] == "running" and job["attempts"] == 1),
        timeout=20,
        what="errand to rescue the expired lease",
    )
    rescued.set()

    assert first_ended.wait(15)
    assert seen == [True, "lease lost"]
    job = errand.wait_for_end(job_id)
    assert job["status"] == "completed", job
    assert job["result"] == {"rendered_on_attempt": 2}

    def both_attempts():
        attempts = {attempt["attempt"]: attempt for attempt in errand.admin_job(job_id)["history"]["attempts"]}
        return attempts if len(attempts) == 2 and attempts[2]["logs"] else None

    # Attempt 2's line comes after its completion.
    attempts = harness.wait_until(both_attempts, what="attempt 2's log line")
    assert attempts[1]["logs"] == []
    assert [line["message"] for line in attempts[2]["logs"]] == ["attempt 2"]
