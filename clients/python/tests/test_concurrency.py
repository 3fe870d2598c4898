"""`concurrency` jobs run at once."""

import threading


def test_four_jobs_run_at_once_with_concurrency_four(errand, new_worker, run_worker):
    # Only passable when all four handlers are inside it together.
    together = threading.Barrier(4, timeout=20)
    worker = new_worker(concurrency=4)

    @worker.job("render_invoice")
    def render(job):
        together.wait()
        return {"invoice": job.params["invoice"]}

    run_worker(worker)
    job_ids = [errand.submit({"invoice": n}) for n in range(4)]

    for n, job_id in enumerate(job_ids):
        job = errand.wait_for_end(job_id, timeout=30)
        assert job["status"] == "completed", job
        assert job["attempts"] == 1, "an attempt failed: the barrier broke, so the jobs did not run together"
        assert job["result"] == {"invoice": n}
    assert not together.broken
