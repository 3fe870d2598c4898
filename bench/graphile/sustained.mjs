// graphile-worker under a sustained, paced load: the peer of errand's
// sustained-load benchmark (issue 42). bench/graphile/run.sh runs it
// (errand_bench_graphile_sustained) with the pinned graphile-worker and Node.
//
// Usage: node sustained.mjs <database-url> <rate> <seconds> <out.csv>
//
// On a fresh, empty database: runs graphile-worker's migrations, starts one
// worker as drain.mjs does (concurrency 10, local queue of 100), then a paced
// producer in a second process (a producer sharing this event loop would
// delay the handlers it measures and be delayed by them; errand's producer,
// errand-loadgen, is a process apart too). The producer is open loop: <rate>
// jobs a second for <seconds>, each sent on its tick whether or not earlier
// inserts have been answered; when it wakes late it sends at most 10 ms of
// ticks and lets its schedule slip by the rest (behind_ms), never bursting to
// catch up. Each job is the task `noop`, added through WorkerUtils.addJob
// (graphile-worker's ordinary insertion API: `select graphile_worker.add_job(...)`,
// one job per call) over a pool of 4 connections, with the payload
// {submitted: <epoch seconds>}. The handler keeps (submitted, started,
// finished) in memory only: a write of its own would slow the peer measured.
// Once the producer is done and graphile_worker._private_jobs is empty
// (polled every 100 ms, 5 minutes at most), writes <out.csv>
// (submitted,started,finished: epoch seconds, one row per job) and prints:
//   graphile-worker sustained rate=<R> seconds=<S> sent=<N> done=<M> p50_ms=<P> p99_ms=<Q> behind_ms=<B> max_in_flight=<F>
// (started - submitted; max_in_flight: the producer's inserts awaiting an
// answer at once, which grows when the inserts, not the worker, fall behind).
//
// Where a job lives (graphile-worker 0.18.0, its sql/ migrations and
// dist/sql/*.js): add_job inserts one row into graphile_worker._private_jobs
// (and upserts its task's name into graphile_worker._private_tasks, which
// gains no row after the first job of a task); the worker claims it there
// (get_jobs: an update setting locked_at, locked_by, attempts) and, once it
// succeeded, deletes that row (completeJobs.js). No table keeps finished
// jobs: a success leaves only a dead tuple in _private_jobs for vacuum; a job
// that failed stays in _private_jobs (rescheduled, or kept with
// attempts = max_attempts once it has failed for good, until a `cleanup`
// with DELETE_PERMAFAILED_JOBS). graphile_worker._private_job_queues is
// touched only by jobs with a queue_name, which these have not. The tables
// to watch (errand_bench_graphile_tables prints them):
//   graphile_worker._private_jobs graphile_worker._private_tasks
//
// Every add_job of the cluster waits for the one before it to commit: add_job
// runs pg_notify('jobs:insert'), and PostgreSQL holds the lock that orders
// notifications (an AccessExclusiveLock on object 0 of pg_database) from a
// notifying transaction's pre-commit through its commit's WAL flush. So
// one-job inserts top out near 1 / (the commit's WAL flush), whatever the
// pool; max_in_flight shows when the rate asked for is above that.
import { spawn } from "node:child_process";
import { openSync, writeSync, closeSync } from "node:fs";
import { fileURLToPath } from "node:url";
import * as graphileWorker from "graphile-worker";
import { SCHEMA, anyLeft, quiet, sleep, startRunner, waitDrained } from "./runner.mjs";

// CommonJS up to 0.17 (its exports are under `default`), ES module from 0.18.
const { makeWorkerUtils } = graphileWorker.default ?? graphileWorker;

const PRODUCER_CONNECTIONS = 4;
const BATCH_S = 0.01;
const POLL_MS = 100;
const DRAIN_TIMEOUT_MS = 5 * 60 * 1000;

// Epoch seconds with sub-millisecond digits (Date.now() has whole ms only):
// the wall clock at the process's start plus the monotonic clock since, in
// both processes alike.
const epoch = () => (performance.timeOrigin + performance.now()) / 1000;

// The producer (the second process): prints {sent, behind_ms, max_in_flight} as JSON.
async function produce(url, rate, seconds) {
  const utils = await makeWorkerUtils({ connectionString: url, schema: SCHEMA, logger: quiet, maxPoolSize: PRODUCER_CONNECTIONS });
  try {
    const total = Math.round(rate * seconds);
    const batchMax = Math.max(1, Math.ceil(rate * BATCH_S));
    const pending = new Set();
    let failed = null;
    let sent = 0;
    let behind = 0;
    let maxInFlight = 0;
    let start = performance.now();
    while (sent < total) {
      const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * rate) + 1);
      const n = Math.min(due - sent, batchMax);
      if (due - sent > n) {
        // Late by more than a batch: the rest of the ticks move later.
        const slip = ((due - sent - n) / rate) * 1000;
        start += slip;
        behind += slip;
      }
      for (let i = 0; i < n; i++) {
        const insert = utils.addJob("noop", { submitted: epoch() }).catch((error) => { failed ??= error; });
        pending.add(insert);
        insert.finally(() => pending.delete(insert));
      }
      sent += n;
      maxInFlight = Math.max(maxInFlight, pending.size);
      if (failed) throw failed;
      const wait = start + (sent / rate) * 1000 - performance.now();
      if (wait > 0) await sleep(wait);
    }
    await Promise.all(pending);
    if (failed) throw failed;
    console.log(JSON.stringify({ sent, behind_ms: Math.round(behind), max_in_flight: maxInFlight }));
  } finally {
    await utils.release();
  }
}

// Runs the producer as a second process and resolves to its JSON line.
function spawnProducer(url, rate, seconds) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), "--produce", url, String(rate), String(seconds)], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (chunk) => { out += chunk; });
    child.on("error", reject);
    child.on("exit", (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`the producer exited with ${code}`))));
  });
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];

function writeCsv(path, submitted, started, finished) {
  const fd = openSync(path, "w");
  try {
    writeSync(fd, "submitted,started,finished\n");
    // In chunks: a run of a million jobs is too big for one string.
    for (let from = 0; from < submitted.length; from += 10_000) {
      let chunk = "";
      for (let i = from; i < Math.min(from + 10_000, submitted.length); i++) {
        chunk += `${submitted[i].toFixed(6)},${started[i].toFixed(6)},${finished[i].toFixed(6)}\n`;
      }
      writeSync(fd, chunk);
    }
  } finally {
    closeSync(fd);
  }
}

async function main(url, rate, seconds, out) {
  let utils, runner;
  try {
    utils = await makeWorkerUtils({ connectionString: url, schema: SCHEMA, logger: quiet });
    await utils.migrate();
    if (await anyLeft(utils)) throw new Error(`${SCHEMA}._private_jobs is not empty: use a fresh database`);

    const submitted = [];
    const started = [];
    const finished = [];
    const noop = async (payload) => {
      const at = epoch();
      submitted.push(payload.submitted);
      started.push(at);
      finished.push(epoch());
    };
    const running = await startRunner(url, noop);
    runner = running.runner;
    const producer = await spawnProducer(url, rate, seconds);
    // The drain's timeout runs from the last insert.
    await waitDrained(utils, running, POLL_MS, DRAIN_TIMEOUT_MS, "5 minutes of the last insert");
    writeCsv(out, submitted, started, finished);
    const waits = submitted.map((s, i) => (started[i] - s) * 1000).sort((a, b) => a - b);
    console.log(
      `graphile-worker sustained rate=${rate} seconds=${seconds} sent=${producer.sent} done=${submitted.length}` +
        ` p50_ms=${percentile(waits, 0.5)?.toFixed(2)} p99_ms=${percentile(waits, 0.99)?.toFixed(2)}` +
        ` behind_ms=${producer.behind_ms} max_in_flight=${producer.max_in_flight}`,
    );
    if (submitted.length !== producer.sent) throw new Error(`${producer.sent} jobs sent but ${submitted.length} handled`);
  } catch (error) {
    console.error(`graphile-worker sustained run failed: ${error?.message ?? error}`);
    process.exitCode = 1;
  } finally {
    if (runner) await runner.stop().catch(() => {});
    if (utils) await utils.release();
  }
}

const args = process.argv.slice(2);
const producing = args[0] === "--produce";
const [url, rateArg, secondsArg, out] = producing ? args.slice(1) : args;
const rate = Number(rateArg);
const seconds = Number(secondsArg);
if (!url || !(rate > 0) || !(seconds > 0) || (!producing && !out)) {
  console.error("usage: node sustained.mjs <database-url> <rate> <seconds> <out.csv>");
  process.exit(2);
}
if (producing) {
  await produce(url, rate, seconds).catch((error) => {
    console.error(`graphile-worker sustained producer failed: ${error?.message ?? error}`);
    process.exitCode = 1;
  });
} else {
  await main(url, rate, seconds, out);
}
