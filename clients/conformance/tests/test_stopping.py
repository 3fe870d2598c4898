"""A job that is no longer its worker's stops, and a job whose worker died or
froze is run again, once: the guarantees every worker package must keep,
checked from outside its process (signals, errand's own view)."""

from __future__ import annotations

import signal

import harness

#: Attempt 1 works until it is told to stop; a later attempt completes.
STOPS_THEN_COMPLETES = {"by_attempt": [{"steps": [{"do": "wait_for_stop"}]}, {"steps": []}]}


def notifications_of(errand: harness.Errand, job_id: str) -> list[dict[str, object]]:
    feed = errand.user.get("/notifications").json()["notifications"]
    return [n for n in feed if n["job_id"] == job_id]


def test_cancel_reaches_the_handler_and_the_job_ends_cancelled(errand, adapter):
    worker = adapter("a")
    job_id = errand.submit({"steps": [{"do": "wait_for_stop"}]})
    worker.wait_for("started", job=job_id)

    response = errand.user.post(f"/jobs/{job_id}/cancel")
    assert response.status_code in (200, 202), response.text

    assert worker.wait_for("stopped", job=job_id, timeout=20)["why"] == "cancelled"
    job = errand.wait_for_end(job_id, timeout=20)
    assert (job["status"], job["attempts"]) == ("cancelled", 1), job
    assert len(worker.seen("started", job=job_id)) == 1


def test_a_worker_killed_mid_job_is_rescued_once(errand, adapter):
    doomed = adapter("doomed")
    job_id = errand.submit(STOPS_THEN_COMPLETES)
    doomed.wait_for("started", job=job_id, attempt=1)
    doomed.signal(signal.SIGKILL)  # no goodbye: its heartbeats just stop
    assert doomed.wait_exit() == -signal.SIGKILL

    survivor = adapter("survivor")
    job = errand.wait_for_end(job_id, timeout=30)
    assert (job["status"], job["attempts"], job["result"]) == ("completed", 2, {"by": "survivor", "attempt": 2}), job
    assert [e["attempt"] for e in survivor.seen("started", job=job_id)] == [2]
    assert len(notifications_of(errand, job_id)) == 1, "exactly one notification"


def test_a_lost_lease_stops_the_handler_and_another_worker_runs_the_job_once(errand, adapter):
    frozen = adapter("frozen")
    job_id = errand.submit(STOPS_THEN_COMPLETES)
    frozen.wait_for("started", job=job_id, attempt=1)
    # A process paused past its lease (a long GC pause, a VM frozen): no heartbeat leaves it,
    # so the lease runs out and errand's rescuer puts the job back.
    frozen.signal(signal.SIGSTOP)
    try:
        errand.wait_for_job(
            job_id,
            lambda job: not (job["state"] == "running" and job["attempts"] == 1),
            timeout=20,
            what="errand to rescue the expired lease",
        )
        other = adapter("other")
        job = errand.wait_for_end(job_id, timeout=20)
    finally:
        frozen.signal(signal.SIGCONT)

    # Woken, the first worker hears that the lease is gone (its heartbeat's or a call's 409),
    # and its handler stops; nothing it does after counts.
    assert frozen.wait_for("stopped", job=job_id, attempt=1, timeout=20)["why"] == "lease_lost"
    assert (job["status"], job["attempts"], job["result"]) == ("completed", 2, {"by": "other", "attempt": 2}), job
    assert [e["attempt"] for e in other.seen("started", job=job_id)] == [2]
    assert frozen.seen("returned", job=job_id) == []
    # The woken worker could not end it again: still attempt 2's completion, one notification.
    assert errand.job(job_id) == job | {"result_url": errand.job(job_id)["result_url"]}
    assert len(notifications_of(errand, job_id)) == 1


def test_sigterm_stops_claiming_and_lets_the_running_job_finish(errand, adapter):
    worker = adapter("a")
    first = errand.submit({"steps": [{"do": "sleep", "ms": 1500}]})
    worker.wait_for("started", job=first)

    worker.signal(signal.SIGTERM)
    second = errand.submit({"steps": []})  # after the signal: must not be claimed

    worker.wait_for("exited", timeout=20)
    assert worker.wait_exit() == 0, worker.describe()
    job = errand.wait_for_end(first)
    assert (job["status"], job["result"]) == ("completed", {"by": "a", "attempt": 1}), job
    assert errand.job(second)["state"] == "queued"
    assert worker.seen("started", job=second) == []
