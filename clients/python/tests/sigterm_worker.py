"""A worker process for test_stopping.py's SIGTERM test (not a test itself):
its one handler announces each job on stdout and finishes it when a line
arrives on stdin."""

import io
import logging
import os
import sys
from typing import cast

from errand_worker import Worker

logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(message)s")
# Lines must reach the test as they are written. (A script's stdout is a
# TextIOWrapper; typeshed calls it a TextIO, which has no reconfigure.)
cast(io.TextIOWrapper, sys.stdout).reconfigure(line_buffering=True)

worker = Worker(os.environ["ERRAND_URL"], os.environ["ERRAND_WORKER_TOKEN"], concurrency=1, poll_wait=1)


@worker.job("render_invoice")
def render(job):
    print(f"handler started {job.id}")
    return {"released_by": sys.stdin.readline().strip()}


worker.run()
print("run() returned")
