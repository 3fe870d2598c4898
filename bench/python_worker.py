"""A Python worker for `scripts/bench`'s pull-API drain: one process of
errand_worker taking no-op jobs of the external type `noop_external`.

usage: python_worker.py <errand url> <worker token> <concurrency>
"""

import sys

from errand_worker import Worker

url, token, concurrency = sys.argv[1], sys.argv[2], int(sys.argv[3])
worker = Worker(url, token, concurrency=concurrency, poll_wait=1)


@worker.job("noop_external")
def noop(job):
    return None


worker.run()
