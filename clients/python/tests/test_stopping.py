"""Stopping a worker: no new claims, the running job finishes, then run()
returns; by `stop()` and by SIGTERM."""

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import harness


def test_stop_lets_the_running_job_finish_then_run_returns(errand, new_worker, run_worker):
    started, release = threading.Event(), threading.Event()
    worker = new_worker(concurrency=1)

    @worker.job("render_invoice")
    def render(job):
        started.set()
        assert release.wait(20), "the test never released the handler"
        return {"finished": True}

    running = run_worker(worker)
    first = errand.submit({"invoice": 1})
    assert started.wait(15)

    worker.stop()
    second = errand.submit({"invoice": 2})  # after the stop: must not be claimed
    assert running.thread.is_alive(), "run() returned while a job was running"

    release.set()
    running.stop(timeout=15)

    assert errand.wait_for_end(first)["result"] == {"finished": True}
    assert errand.job(second)["state"] == "queued"


def test_sigterm_stops_claiming_and_lets_the_running_job_finish(errand, tmp_path):
    script = Path(__file__).with_name("sigterm_worker.py")
    env = dict(os.environ, ERRAND_URL=errand.url, ERRAND_WORKER_TOKEN=harness.worker_token())
    worker = subprocess.Popen(
        [sys.executable, str(script)],
        env=env,
        text=True,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        assert worker.stdin is not None  # stdin=PIPE
        assert worker.stdout is not None  # stdout=PIPE
        output = harness.LineReader(worker.stdout)
        first = errand.submit({"invoice": 1})
        output.wait_for(f"handler started {first}")

        worker.send_signal(signal.SIGTERM)
        output.wait_for("SIGTERM received")
        second = errand.submit({"invoice": 2})  # after the signal: must not be claimed

        worker.stdin.write("go\n")  # the handler's go-ahead
        worker.stdin.flush()
        output.wait_for("run() returned")
        assert worker.wait(timeout=15) == 0, "\n".join(output.seen)
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()

    assert errand.wait_for_end(first)["result"] == {"released_by": "go"}
    assert errand.job(second)["state"] == "queued"
