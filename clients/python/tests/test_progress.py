"""Progress a handler reports shows in the owner's view of the job."""

import threading


def test_progress_shows_in_the_job_while_the_handler_runs(errand, new_worker, run_worker):
    release = threading.Event()
    worker = new_worker()

    @worker.job("render_invoice")
    def render(job):
        job.progress(1, 3, "page 1 of 3")
        assert release.wait(20), "the test never released the handler"
        return {"pages": 3}

    run_worker(worker)
    job_id = errand.submit({"invoice": 3})

    # errand writes progress at most once a second: poll for it.
    job = errand.wait_for_job(job_id, lambda job: job["progress"] is not None, what="progress to show")
    assert job["status"] == "processing"
    assert job["progress"]["done"] == 1
    assert job["progress"]["total"] == 3
    assert job["progress"]["message"] == "page 1 of 3"

    release.set()
    assert errand.wait_for_end(job_id)["status"] == "completed"
