"""kill -9 of a worker mid-job: its lease runs out, errand gives the job to
another worker, and the job ends once, with one notification."""

import os
import subprocess
import sys
from pathlib import Path

import harness


def test_a_job_whose_worker_was_killed_is_completed_by_another_once(errand, new_worker, run_worker):
    script = Path(__file__).with_name("sigterm_worker.py")  # a handler that waits on stdin
    env = dict(os.environ, ERRAND_URL=errand.url, ERRAND_WORKER_TOKEN=harness.worker_token())
    doomed = subprocess.Popen(
        [sys.executable, str(script)],
        env=env,
        text=True,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        assert doomed.stdout is not None  # stdout=PIPE
        output = harness.LineReader(doomed.stdout)
        job_id = errand.submit({"invoice": 9})
        output.wait_for(f"handler started {job_id}")
        doomed.kill()  # SIGKILL: no goodbye, its heartbeats just stop
        doomed.wait(timeout=10)
    finally:
        if doomed.poll() is None:
            doomed.kill()
            doomed.wait()

    survivor = new_worker(concurrency=1)

    @survivor.job("render_invoice")
    def render(job):
        return {"by": "the survivor", "attempt": job.attempt}

    run_worker(survivor)
    ended = errand.wait_for_end(job_id, timeout=30)
    assert ended["status"] == "completed"
    assert ended["result"] == {"by": "the survivor", "attempt": 2}
    feed = errand.user.get("/notifications").json()
    assert [n["job_id"] for n in feed["notifications"]] == [job_id], "exactly one notification"
