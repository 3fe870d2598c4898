"""A checkpoint one attempt records is what the run's next attempt resumes
from, and only the attempt that holds the lease may record one."""

import threading
from typing import Any, Optional

from errand_worker import ApiError, LeaseLost, Retryable

SAVED = {"page": 40, "cursor": "abc"}


def test_the_next_attempt_resumes_from_the_checkpoint_of_a_failed_one(errand, new_worker, run_worker):
    resumed: list[tuple[int, Any]] = []
    refused: list[tuple[int, Optional[str]]] = []
    worker = new_worker()

    @worker.job("render_invoice")
    def render(job):
        resumed.append((job.attempt, job.resumed))
        if job.attempt == 1:
            job.checkpoint(SAVED, done=400)
            try:
                job.checkpoint({"cursor": "a\u0000b"}, done=999)
            except ApiError as error:
                refused.append((error.status, error.code))
            raise Retryable("the printer jammed after page 40")
        return {"pages": 80, "from_page": job.resumed["page"]}

    run_worker(worker)
    job_id = errand.submit({"invoice": 40})

    job = errand.wait_for_end(job_id)
    assert job["status"] == "completed", job
    assert job["attempts"] == 2
    assert resumed == [(1, None), (2, SAVED)]
    assert job["result"] == {"pages": 80, "from_page": 40}
    assert job["resumed_from"] == 400
    # A checkpoint holding NUL is refused, and the one before it stands.
    assert refused == [(400, "bad_request")]


def test_a_checkpoint_set_to_none_is_forgotten(errand, new_worker, run_worker):
    resumed: list[tuple[int, Any]] = []
    worker = new_worker()

    @worker.job("render_invoice")
    def render(job):
        resumed.append((job.attempt, job.resumed))
        if job.attempt == 1:
            job.checkpoint({"page": 3}, done=30)
            job.checkpoint(None)
            raise Retryable("start over")
        return {"pages": 1}

    run_worker(worker)
    job_id = errand.submit({"invoice": 41})

    job = errand.wait_for_end(job_id)
    assert job["status"] == "completed", job
    assert resumed == [(1, None), (2, None)]
    assert "resumed_from" not in job, job


def test_a_checkpoint_under_a_lost_lease_raises_lease_lost_and_is_not_recorded(errand, new_worker, run_worker):
    rescued = threading.Event()
    resumed: list[tuple[int, Any]] = []
    late_checkpoint: list[str] = []
    worker = new_worker(concurrency=2)
    # The test hook: no lease is renewed, so attempt 1's lease runs out and
    # errand's rescuer puts the job back in the queue, as if its worker died.
    worker._heartbeater.pause()
    first_checkpointed, first_ended = threading.Event(), threading.Event()

    @worker.job("render_invoice")
    def render(job):
        resumed.append((job.attempt, job.resumed))
        if job.attempt > 1:
            return {"rendered_on_attempt": job.attempt}
        try:
            job.checkpoint(SAVED, done=400)
            first_checkpointed.set()
            assert rescued.wait(30), "the test never saw the rescue"
            try:
                job.checkpoint({"page": 99}, done=990)
            except LeaseLost:
                late_checkpoint.append("lease lost")
                raise
            late_checkpoint.append("recorded")
        finally:
            first_ended.set()
        return {"rendered_on_attempt": 1}

    run_worker(worker)
    job_id = errand.submit({"invoice": 42})
    assert first_checkpointed.wait(15)

    # Rescued: no longer attempt 1 running (it waits, or attempt 2 runs or ran).
    errand.wait_for_job(
        job_id,
        lambda job: not (job["state"] == "running" and job["attempts"] == 1),
        timeout=20,
        what="errand to rescue the expired lease",
    )
    rescued.set()

    assert first_ended.wait(15)
    assert late_checkpoint == ["lease lost"]
    job = errand.wait_for_end(job_id)
    assert job["status"] == "completed", job
    assert job["result"] == {"rendered_on_attempt": 2}
    assert job["attempts"] == 2
    # Attempt 2 resumed from what attempt 1 recorded while it held the lease.
    assert resumed == [(1, None), (2, SAVED)]
    assert job["resumed_from"] == 400
