# awa under a sustained, paced load: the peer of errand's sustained-load
# benchmark (issue 42), run as bench/graphile/sustained.mjs runs
# graphile-worker.
#
# Usage: python sustained.py <database-url> <rate> <seconds> <out.csv> [workers]
# (bench/awa/run.sh's errand_bench_awa_sustained runs it with the pinned awa-pg)
#
# On a fresh, empty database: runs awa's migrations, starts one worker
# runtime with [workers] workers on the queue (default 10, as drain.py), whose
# start makes a fresh install's queue storage the active engine (checked),
# then a paced producer in a second process (a producer sharing this event
# loop would delay the handlers it measures and be delayed by them; errand's
# producer, errand-loadgen, is a process apart too). The producer is open
# loop: <rate> jobs a second for <seconds>, each sent on its tick whether or
# not earlier inserts have been answered; when it wakes late it sends at most
# 10 ms of ticks and lets its schedule slip by the rest (behind_ms), never
# bursting to catch up. Each job, of the kind `noop`, is inserted through
# AsyncClient.insert (awa's ordinary one-job insert, as its Python docs show
# it; drain.py's COPY is for backlogs) over a pool of 4 connections, with
# the arguments {submitted: <epoch seconds>}. The handler keeps (submitted,
# started, finished) in memory only: a write of its own would slow the peer
# measured. Once the producer is done and awa's tables count every job sent
# as completed (drain.py's TERMINAL_COUNTS, polled every 100 ms, 5 minutes at
# most), writes <out.csv> (submitted,started,finished: epoch seconds, one row
# per job) and prints:
#   awa sustained rate=<R> seconds=<S> sent=<N> done=<M> p50_ms=<P> p99_ms=<Q> behind_ms=<B> max_in_flight=<F>
# (started - submitted; max_in_flight: the producer's inserts awaiting an
# answer at once, which grows when the inserts, not the workers, fall behind).
#
# Where a job lives (awa-pg 0.6.9's queue storage, schema `awa`: the SQL in
# its _awa.abi3.so, and pg_stat_user_tables after a run): its insert
# (awa.insert_job_compat) adds a row to awa.ready_entries (the job and its
# arguments) and one to awa.ready_segments; claims add a row per claim batch
# to awa.ready_claim_attempt_batches and one per job to awa.lease_claims;
# completions add, per completion batch, a compact receipt to
# awa.receipt_completion_batches (completed_count jobs a row) and a row to
# awa.lease_claim_closure_batches. Failed and cancelled jobs go to
# awa.done_entries instead; awa.leases and awa.attempt_state (heartbeats of
# long attempts) stayed empty in these runs. None of those rows is updated or
# deleted: each of those tables is partitioned into a ring of child tables
# (awa.ready_entries_0 .. _15 and so on) that the maintenance leader rotates
# (the queue ring every second, 16 slots) and TRUNCATEs once none of a
# child's jobs is unfinished, folding its counts into
# awa.queue_terminal_rollups. So finished jobs are kept only until their
# child's turn comes round again: seconds to tens of seconds (7,000 to
# 15,000 rows of awa.ready_entries at 500 jobs/s), not the 24 hours of
# completed_retention_hours, which governs the legacy "canonical" tables
# (awa.jobs_hot, awa.scheduled_jobs), unused once queue storage is active
# (failed rows are carried forward for failed_retention_hours, 72 h). What
# is updated, whatever the load, is a few rows of ring state:
# awa.queue_ring_state, awa.lease_ring_state, awa.claim_ring_state,
# awa.queue_claimer_state and awa.queue_claimer_leases, and
# awa.queue_terminal_rollups at each prune (their dead tuples are what an
# open transaction lets pile up). The tables to watch
# (errand_bench_awa_tables prints them); the partitioned ones have no size
# or statistics of their own (pg_total_relation_size is 0, and
# pg_stat_user_tables has no row for them): sum their leaves,
# pg_partition_tree(<table>) where isleaf.
#
# Every insert of a queue waits for the one before it to commit: awa's
# reserve_enqueue_seq takes a transaction-scoped advisory lock per queue lane
# (so that a later job cannot become claimable before an earlier one), and a
# queue has one lane unless awa.queue_meta.enqueue_shards says otherwise. So
# one-job inserts top out near 1 / (the commit's WAL flush); max_in_flight
# shows when the rate asked for is above that.
from __future__ import annotations

import array
import asyncio
import dataclasses
import json
import math
import sys
import time

import awa
from drain import TERMINAL_COUNTS, WORKERS, close_quietly, fetch_one, without_tls

PRODUCER_CONNECTIONS = 4
BATCH_S = 0.01
POLL_S = 0.1
DRAIN_TIMEOUT_S = 5 * 60
QUEUE = "noop"


# The job's arguments. awa names the kind after the class (`noop`).
@dataclasses.dataclass
class Noop:
    submitted: float


async def produce(url: str, rate: float, seconds: float) -> None:
    """The producer (the second process): prints {sent, behind_ms, max_in_flight} as JSON."""
    client = awa.AsyncClient(url, max_connections=PRODUCER_CONNECTIONS)
    try:
        total = round(rate * seconds)
        batch_max = max(1, math.ceil(rate * BATCH_S))
        pending: set[asyncio.Task[object]] = set()
        errors: list[BaseException] = []

        def settle(task: asyncio.Task[object]) -> None:
            pending.discard(task)
            error = None if task.cancelled() else task.exception()
            if error is not None:
                errors.append(error)

        # The ticks' inserts wait here, not in the client's pool: its checkout
        # times out (and fails the run) once inserts fall seconds behind, which
        # one-at-a-time inserts do at a rate past their ceiling. Waiting here,
        # a job's latency still runs from its tick.
        slots = asyncio.Semaphore(PRODUCER_CONNECTIONS)

        async def insert(job: Noop) -> object:
            async with slots:
                return await client.insert(job, queue=QUEUE)

        sent = 0
        behind = 0.0
        max_in_flight = 0
        start = time.monotonic()
        while sent < total:
            due = min(total, int((time.monotonic() - start) * rate) + 1)
            n = min(due - sent, batch_max)
            if due - sent > n:
                # Late by more than a batch: the rest of the ticks move later.
                slip = (due - sent - n) / rate
                start += slip
                behind += slip
            for _ in range(n):
                task = asyncio.create_task(insert(Noop(submitted=time.time())))
                pending.add(task)
                task.add_done_callback(settle)
            sent += n
            max_in_flight = max(max_in_flight, len(pending))
            if errors:
                raise errors[0]
            await asyncio.sleep(max(0.0, start + sent / rate - time.monotonic()))
        await asyncio.gather(*pending, return_exceptions=True)
        if errors:
            raise errors[0]
        print(json.dumps({"sent": sent, "behind_ms": round(behind * 1000), "max_in_flight": max_in_flight}))
    finally:
        await client.close()


async def run_producer(url: str, rate: float, seconds: float) -> dict[str, int]:
    """Runs the producer as a second process and returns its JSON line."""
    child = await asyncio.create_subprocess_exec(
        sys.executable, __file__, "--produce", url, str(rate), str(seconds), stdout=asyncio.subprocess.PIPE
    )
    out, _ = await child.communicate()
    if child.returncode != 0:
        raise RuntimeError(f"the producer exited with {child.returncode}")
    result: dict[str, int] = json.loads(out)
    return result


def write_csv(
    path: str, submitted: array.array[float], started: array.array[float], finished: array.array[float]
) -> None:
    with open(path, "w") as out:
        out.write("submitted,started,finished\n")
        out.writelines(f"{s:.6f},{b:.6f},{f:.6f}\n" for s, b, f in zip(submitted, started, finished))


async def sustain(url: str, rate: float, seconds: float, out: str, workers: int) -> None:
    await awa.migrate(url)
    # The script's own queries (the checks, the polls): a small pool of their
    # own, as drain.py keeps.
    utils = awa.AsyncClient(url, max_connections=2)
    worker = None
    try:
        status = await fetch_one(utils, "select (select count(*) from awa.jobs) as jobs")
        if status["jobs"] != 0:
            raise RuntimeError("awa's tables are not empty: use a fresh database")

        # In memory only, as arrays of doubles: a long run's rows as tuples
        # of floats would take six times the room.
        submitted = array.array("d")
        started = array.array("d")
        finished = array.array("d")
        worker = awa.AsyncClient(url)

        @worker.task(Noop, queue=QUEUE)
        async def noop(job: awa.Job[Noop]) -> None:
            at = time.time()
            submitted.append(job.args.submitted)
            started.append(at)
            finished.append(time.time())

        await worker.start([(QUEUE, workers)])
        status = await fetch_one(
            utils, "select awa.active_storage_engine() as engine, awa.active_queue_storage_schema() as schema"
        )
        if status["engine"] != "queue_storage" or status["schema"] != "awa":
            raise RuntimeError(f"awa did not switch to queue storage: {status}")

        producer = await run_producer(url, rate, seconds)
        drain_start = time.monotonic()
        while True:
            counts = await fetch_one(utils, TERMINAL_COUNTS)
            if counts["failed"] > 0:
                raise RuntimeError(f"{counts['failed']} jobs failed")
            if counts["completed"] >= producer["sent"]:
                break
            if time.monotonic() - drain_start > DRAIN_TIMEOUT_S:
                raise RuntimeError("the jobs did not drain within 5 minutes of the last insert")
            await asyncio.sleep(POLL_S)
        write_csv(out, submitted, started, finished)
        waits = sorted((b - s) * 1000 for s, b in zip(submitted, started))

        def percentile(p: float) -> str:
            return f"{waits[min(len(waits) - 1, int(p * len(waits)))]:.2f}" if waits else "none"

        print(
            f"awa sustained rate={rate:g} seconds={seconds:g} sent={producer['sent']} done={len(submitted)}"
            f" p50_ms={percentile(0.5)} p99_ms={percentile(0.99)}"
            f" behind_ms={producer['behind_ms']} max_in_flight={producer['max_in_flight']}",
            flush=True,
        )
        if len(submitted) != producer["sent"]:
            raise RuntimeError(f"{producer['sent']} jobs sent but {len(submitted)} handled")
    finally:
        await close_quietly(worker, utils)


def main() -> None:
    producing = sys.argv[1:2] == ["--produce"]
    args = sys.argv[2:] if producing else sys.argv[1:]
    try:
        url, rate, seconds = args[0], float(args[1]), float(args[2])
        out = "" if producing else args[3]
        workers = int(args[4]) if len(args) > 4 and not producing else WORKERS
        if rate <= 0 or seconds <= 0 or workers < 1 or len(args) > (3 if producing else 5):
            raise ValueError
    except (IndexError, ValueError):
        print("usage: python sustained.py <database-url> <rate> <seconds> <out.csv> [workers]", file=sys.stderr)
        sys.exit(2)
    try:
        if producing:
            asyncio.run(produce(without_tls(url), rate, seconds))
        else:
            asyncio.run(sustain(without_tls(url), rate, seconds, out, workers))
    except Exception as error:
        print(f"awa sustained {'producer' if producing else 'run'} failed: {error}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
