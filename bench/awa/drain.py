# awa draining a backlog of no-op jobs: the second peer scripts/bench
# compares errand's drain with, beside graphile-worker (bench/graphile), and
# timed as bench/graphile/drain.mjs times that one.
#
# Usage: python drain.py <database-url> <jobs> [workers]
# (bench/awa/run.sh runs it with the pinned awa-pg, bench/awa/requirements.txt)
#
# On a fresh, empty database: runs awa's migrations (awa.migrate), starts and
# stops a worker runtime once with nothing to do, which on a fresh install
# makes awa's queue storage (the 0.6 engine) the active one, as the first
# worker of a real deployment does (a backlog inserted before any worker
# would keep awa on its legacy "canonical" tables instead); inserts <jobs>
# jobs of the kind `noop` through AsyncClient.enqueue_many_copy (COPY into
# queue storage, in batches of 10,000, as awa's own Python benchmark seeds
# them), then starts one worker runtime with [workers] workers on the queue
# (default 10: what awa-pg's `start()` gives a queue when not told, and
# graphile-worker's concurrency in drain.mjs; awa's other settings at their
# defaults) and times it twice:
#   seconds: from the runtime's start (the call of `start`) until awa's
#     tables hold <jobs> completed jobs, polled every 20 ms: the last job's
#     end as the database records it;
#   busy_seconds: from the first handler's start to the last handler's finish
#     (the no-op handler stamps both; the last completion's write is left out);
# and counts the machine's CPU time over `seconds` (every process's, from
# /proc/stat: awa's, this script's and PostgreSQL's alike), per job.
# Prints one line:
#   awa jobs=<N> seconds=<S> jobs_per_s=<R> busy_seconds=<B> busy_jobs_per_s=<Q> cpu_us_per_job=<U>
#
# Completed jobs are counted in awa's queue-storage tables (schema `awa`, as
# awa-pg 0.6.9 lays them out): successful receipts are compact rows of
# awa.receipt_completion_batches (completed_count jobs each), other terminal
# rows are in awa.done_entries, and rotation's prune folds both into
# awa.queue_terminal_rollups. The public view awa.jobs (and queue_stats) say
# the same but read every job on each call: seconds a call in a drain of
# 20,000 here, which slowed the drain itself, so they are not polled.
import asyncio
import contextlib
import dataclasses
import sys
import time

import awa

WORKERS = 10
INSERT_BATCH = 10_000
POLL_S = 0.02
TIMEOUT_S = 10 * 60
# A drain whose count of completed jobs stands still this long has stopped.
STALL_S = 60
QUEUE = "noop"

TERMINAL_COUNTS = """
select
  ((select coalesce(sum(completed_count), 0) from awa.receipt_completion_batches)
  - (select count(*) from awa.receipt_completion_tombstones)
  + (select count(*) from awa.done_entries where state = 'completed')
  + (select coalesce(sum(pruned_completed_count), 0) from awa.queue_terminal_rollups))::bigint as completed,
  ((select count(*) from awa.done_entries where state <> 'completed')
  + (select coalesce(sum(pruned_failed_count), 0) from awa.queue_terminal_rollups))::bigint as failed
"""


# The job's arguments: none. awa names the kind after the class (`noop`).
@dataclasses.dataclass
class Noop:
    pass


def cpu_seconds():
    """The machine's CPU time so far, in seconds: user, nice, system, irq and
    softirq of /proc/stat's first line (idle, iowait and steal are not work
    done here). As bench/drain.sh's errand_cpu_seconds counts it."""
    with open("/proc/stat") as stat:
        fields = stat.readline().split()
    user, nice, system, _idle, _iowait, irq, softirq = (int(f) for f in fields[1:8])
    return (user + nice + system + irq + softirq) / 100


def without_tls(url):
    """The URL with sslmode=disable unless it names one: a local server,
    reached as graphile-worker's node-postgres and errand's bench reach it."""
    if "sslmode=" in url:
        return url
    return url + ("&" if "?" in url else "?") + "sslmode=disable"


async def fetch_one(client, query):
    tx = await client.transaction()
    try:
        return await tx.fetch_one(query)
    finally:
        await tx.rollback()


async def execute(client, query):
    tx = await client.transaction()
    try:
        await tx.execute(query)
        await tx.commit()
    except BaseException:
        await tx.rollback()
        raise


async def drain(url, jobs, workers):
    await awa.migrate(url)
    # The script's own queries (the checks, the inserts, the polls): a small
    # pool of their own, as graphile's drain.mjs keeps its utils apart from
    # the runner's.
    utils = awa.AsyncClient(url, max_connections=2)
    worker = None
    try:
        status = await fetch_one(
            utils,
            "select (select count(*) from awa.jobs) as jobs, awa.active_storage_engine() as engine",
        )
        if status["jobs"] != 0 or status["engine"] != "canonical":
            raise RuntimeError("awa's tables are not empty: use a fresh database")

        # A fresh install's first runtime moves it to queue storage
        # (awa.storage_auto_finalize_if_fresh, run by `start`). A runtime
        # needs more than a couple of connections (with 2, its start and
        # stop wait minutes for them): the default pool, as the worker's.
        primer = awa.AsyncClient(url)
        try:
            @primer.task(Noop, queue=QUEUE)
            async def never(job):
                raise RuntimeError("the primer ran a job")

            await primer.start([(QUEUE, 1)])
            await primer.shutdown()
        finally:
            await primer.close()
        status = await fetch_one(
            utils,
            "select awa.active_storage_engine() as engine, awa.active_queue_storage_schema() as schema",
        )
        if status["engine"] != "queue_storage" or status["schema"] != "awa":
            raise RuntimeError(f"awa did not switch to queue storage: {status}")

        for added in range(0, jobs, INSERT_BATCH):
            count = min(INSERT_BATCH, jobs - added)
            await utils.enqueue_many_copy([Noop() for _ in range(count)], queue=QUEUE)
        # Statistics as autovacuum would soon leave them, so it cannot change
        # the plan of the worker's queries in the middle of the timed run.
        await execute(utils, "analyze awa.ready_entries")
        backlog = (await fetch_one(utils, "select count(*) as n from awa.ready_entries"))["n"]
        if backlog != jobs:
            raise RuntimeError(f"inserted {backlog} jobs, expected {jobs}")

        # The handlers' span: the first one's start, the last one's finish.
        handled = 0
        first_start = None
        last_finish = None
        worker = awa.AsyncClient(url)

        @worker.task(Noop, queue=QUEUE)
        async def noop(job):
            nonlocal handled, first_start, last_finish
            now = time.perf_counter()
            if first_start is None:
                first_start = now
            handled += 1
            last_finish = time.perf_counter()

        start = time.perf_counter()
        cpu_at_start = cpu_seconds()
        await worker.start([(QUEUE, workers)])
        completed = 0
        progress_at = start
        while True:
            counts = await fetch_one(utils, TERMINAL_COUNTS)
            if counts["failed"] > 0:
                raise RuntimeError(f"{counts['failed']} jobs failed")
            if counts["completed"] >= jobs:
                break
            now = time.perf_counter()
            if counts["completed"] != completed:
                completed, progress_at = counts["completed"], now
            elif now - progress_at > STALL_S:
                raise RuntimeError(f"the drain stopped at {completed} of {jobs} jobs")
            if now - start > TIMEOUT_S:
                raise RuntimeError("the jobs did not drain within 10 minutes")
            await asyncio.sleep(POLL_S)
        seconds = time.perf_counter() - start
        cpu_per_job = (cpu_seconds() - cpu_at_start) / jobs * 1e6
        if counts["completed"] != jobs or handled != jobs:
            raise RuntimeError(f"{counts['completed']} jobs completed and {handled} handled, expected {jobs}")
        busy = last_finish - first_start
        print(
            f"awa jobs={jobs} seconds={seconds:.3f} jobs_per_s={round(jobs / seconds)}"
            f" busy_seconds={busy:.3f} busy_jobs_per_s={round(jobs / busy)}"
            f" cpu_us_per_job={round(cpu_per_job)}",
            flush=True,
        )
    finally:
        await close_quietly(worker, utils)


async def close_quietly(worker, utils):
    """Stops the worker's runtime (if started) and closes both clients, as
    drain.mjs stops its runner: errors here would hide the run's own."""
    if worker is not None:
        with contextlib.suppress(Exception):
            await worker.shutdown(timeout_ms=5000)
        with contextlib.suppress(Exception):
            await worker.close()
    with contextlib.suppress(Exception):
        await utils.close()


def main():
    try:
        url, jobs = sys.argv[1], int(sys.argv[2])
        workers = int(sys.argv[3]) if len(sys.argv) > 3 else WORKERS
        if jobs < 1 or workers < 1 or len(sys.argv) > 4:
            raise ValueError
    except (IndexError, ValueError):
        print("usage: python drain.py <database-url> <jobs> [workers]", file=sys.stderr)
        sys.exit(2)
    try:
        asyncio.run(drain(without_tls(url), jobs, workers))
    except Exception as error:
        print(f"awa drain failed: {error}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
