"""What a handler's return or exception makes of its job, as the job's owner
reads it through `GET /jobs/{id}`."""

from errand_worker import Permanent, Retryable
from errand_worker.worker import GENERIC_ERROR


def test_a_returned_dict_becomes_the_completed_jobs_result(errand, new_worker, run_worker):
    seen = []
    worker = new_worker()

    @worker.job("render_invoice")
    def render(job):
        seen.append((job.type, job.params, job.tenant, job.user, job.attempt))
        return {"pages": 3}

    run_worker(worker)
    job_id = errand.submit({"invoice": 42})

    job = errand.wait_for_end(job_id)
    assert job["status"] == "completed", job
    assert job["result"] == {"pages": 3}
    assert job["attempts"] == 1
    assert seen == [("render_invoice", {"invoice": 42}, "acme", "alice", 1)]


def test_retryable_fails_the_attempt_and_the_next_one_can_succeed(errand, new_worker, run_worker):
    attempts: list[int] = []
    worker = new_worker()

    @worker.job("render_invoice")
    def render(job):
        attempts.append(job.attempt)
        if job.attempt == 1:
            raise Retryable("the printer is busy")
        return {"rendered_on_attempt": job.attempt}

    run_worker(worker)
    job_id = errand.submit({"invoice": 1})

    job = errand.wait_for_end(job_id)
    assert job["status"] == "completed", job
    assert job["attempts"] == 2
    assert job["result"] == {"rendered_on_attempt": 2}
    assert attempts == [1, 2]


def test_permanent_fails_the_job_at_once_with_the_handlers_message(errand, new_worker, run_worker):
    attempts: list[int] = []
    worker = new_worker()

    @worker.job("render_invoice")
    def render(job):
        attempts.append(job.attempt)
        raise Permanent("invoice 7 has no lines")

    run_worker(worker)
    job_id = errand.submit({"invoice": 7})

    job = errand.wait_for_end(job_id)
    assert job["status"] == "failed", job
    assert job["error_message"] == "invoice 7 has no lines"
    assert job["attempts"] == 1
    assert attempts == [1]


def test_an_unexpected_exception_is_retried_and_its_text_never_reaches_the_user(errand, new_worker, run_worker):
    attempts: list[int] = []
    worker = new_worker()

    @worker.job("render_invoice")
    def render(job):
        attempts.append(job.attempt)
        raise RuntimeError("connection to db-internal-7 refused; password=hunter2")

    run_worker(worker)
    job_id = errand.submit({"invoice": 9})

    job = errand.wait_for_end(job_id)
    # The type allows 3 attempts (see harness.errand_env).
    assert job["status"] == "failed", job
    assert job["attempts"] == 3
    assert attempts == [1, 2, 3]
    assert job["error_message"] == GENERIC_ERROR
    assert "hunter2" not in str(job)


def test_a_result_errand_refuses_fails_the_attempt_instead_of_waiting_for_the_lease(errand, new_worker, run_worker):
    worker = new_worker()

    @worker.job("render_invoice")
    def render(job):
        # errand refuses a result naming a storage key: it would sign
        # download URLs for a file it never stored.
        return {"storage_key": "someone-elses/file.csv"}

    run_worker(worker)
    job_id = errand.submit({"invoice": 10})

    # Three attempts within the 3 s lease each would take to run out.
    job = errand.wait_for_end(job_id, timeout=8)
    assert job["status"] == "failed", job
    assert job["attempts"] == 3
    assert job["error_message"] == GENERIC_ERROR
