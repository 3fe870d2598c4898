"""A job that is no longer this worker's stops: its lease was lost, or its
owner cancelled it."""

import threading
import time

from errand_worker import Cancelled, LeaseLost


def test_a_lost_lease_stops_the_handler_and_the_rescued_job_runs_again(errand, new_worker, run_worker):
    rescued = threading.Event()
    outcome_of_first_attempt = []
    worker = new_worker(concurrency=2)
    # The test hook: no lease is renewed, so attempt 1's lease runs out and
    # errand's rescuer puts the job back in the queue.
    worker._heartbeater.pause()
    first_started, first_ended = threading.Event(), threading.Event()

    @worker.job("render_invoice")
    def render(job):
        if job.attempt > 1:
            return {"rendered_on_attempt": job.attempt}
        first_started.set()
        assert rescued.wait(30), "the test never saw the rescue"
        try:
            job.progress(1, 2)
        except LeaseLost:
            outcome_of_first_attempt.append("lease lost")
            raise
        else:
            outcome_of_first_attempt.append("went on")
        finally:
            first_ended.set()
        return {"rendered_on_attempt": 1}

    run_worker(worker)
    job_id = errand.submit({"invoice": 5})
    assert first_started.wait(15)

    # Rescued: no longer attempt 1 running (it waits, or attempt 2 runs or ran).
    errand.wait_for_job(
        job_id,
        lambda job: not (job["state"] == "running" and job["attempts"] == 1),
        timeout=20,
        what="errand to rescue the expired lease",
    )
    rescued.set()

    assert first_ended.wait(15)
    assert outcome_of_first_attempt == ["lease lost"]
    job = errand.wait_for_end(job_id)
    assert job["status"] == "completed", job
    assert job["result"] == {"rendered_on_attempt": 2}
    assert job["attempts"] == 2


def test_a_cancel_stops_the_handler_and_the_job_ends_cancelled(errand, new_worker, run_worker):
    started = threading.Event()
    stopped_by = []
    worker = new_worker()

    @worker.job("render_invoice")
    def render(job):
        started.set()
        idle = threading.Event()  # never set: wait() is the handler's work step
        try:
            for _ in range(600):
                job.check()
                idle.wait(0.05)
        except Cancelled:
            stopped_by.append("cancel")
            raise
        return {"never": "cancelled"}

    run_worker(worker)
    job_id = errand.submit({"invoice": 6})
    assert started.wait(15)

    response = errand.user.post(f"/jobs/{job_id}/cancel")
    assert response.status_code in (200, 202), response.text

    job = errand.wait_for_end(job_id, timeout=20)
    assert job["status"] == "cancelled", job
    assert stopped_by == ["cancel"], "the handler was not told through job.check()"


def test_heartbeats_keep_a_job_longer_than_its_lease(errand, new_worker, run_worker):
    release = threading.Event()
    worker = new_worker()

    @worker.job("render_invoice")
    def render(job):
        assert release.wait(30), "the test never released the handler"
        return {"done": True}

    run_worker(worker)
    job_id = errand.submit({"invoice": 8})
    errand.wait_for_job(job_id, lambda job: job["state"] == "running", what="the job to start")

    # Two and a half 3 s leases: without renewals errand would have rescued
    # the job (its rescuer looks every half lease) and counted attempt 2.
    deadline = time.monotonic() + 7.5
    while time.monotonic() < deadline:
        job = errand.job(job_id)
        assert (job["state"], job["attempts"]) == ("running", 1), job
        time.sleep(0.2)  # pacing the observation; nothing waits on it

    release.set()
    job = errand.wait_for_end(job_id)
    assert (job["status"], job["attempts"]) == ("completed", 1), job
