// graphile-worker draining a backlog of no-op jobs: the peer scripts/bench
// compares errand's drain with.
//
// Usage: node drain.mjs <database-url> <jobs>
//
// On a fresh, empty database: runs graphile-worker's migrations, inserts <jobs>
// jobs of the task `noop` (through graphile_worker.add_jobs, in batches, before
// any worker runs), then starts one worker (concurrency 10, local queue of 100)
// and times it twice:
//   seconds: from the runner's start (the call of `run`) until the jobs table
//     is empty (graphile-worker deletes a job once it succeeded), polled every
//     20 ms: the last job's end as the database records it;
//   busy_seconds: from the first handler's start to the last handler's finish
//     (the no-op task stamps both; the last completion's write is left out);
// and counts the machine's CPU time over `seconds` (every process's, from
// /proc/stat: the worker's and PostgreSQL's alike), per job.
// Prints one line:
//   graphile-worker jobs=<N> seconds=<S> jobs_per_s=<R> busy_seconds=<B> busy_jobs_per_s=<Q> cpu_us_per_job=<U>
import { readFileSync } from "node:fs";
import * as graphileWorker from "graphile-worker";
import { SCHEMA, anyLeft, quiet, startRunner, waitDrained } from "./runner.mjs";

// CommonJS up to 0.17 (its exports are under `default`), ES module from 0.18.
const { makeWorkerUtils } = graphileWorker.default ?? graphileWorker;

const INSERT_BATCH = 50_000;
const POLL_MS = 20;
const TIMEOUT_MS = 10 * 60 * 1000;

const [url, jobsArg] = process.argv.slice(2);
const jobs = Number(jobsArg);
if (!url || !Number.isSafeInteger(jobs) || jobs < 1) {
  console.error("usage: node drain.mjs <database-url> <jobs>");
  process.exit(2);
}

// The machine's CPU time so far, in seconds: user, nice, system, irq and
// softirq of /proc/stat's first line (idle, iowait and steal are not work
// done here). As bench/drain.sh's errand_cpu_seconds counts it.
const cpuSeconds = () => {
  const [user, nice, system, , , irq, softirq] = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1).map(Number);
  return (user + nice + system + irq + softirq) / 100;
};

let utils, runner;
try {
  utils = await makeWorkerUtils({ connectionString: url, schema: SCHEMA, logger: quiet });
  await utils.migrate();
  const pending = async () =>
    utils.withPgClient(async (client) => {
      const { rows } = await client.query(`select count(*)::int as n from ${SCHEMA}._private_jobs`);
      return rows[0].n;
    });
  if ((await pending()) !== 0) throw new Error(`${SCHEMA}._private_jobs is not empty: use a fresh database`);

  // The job_spec fields: identifier, payload, queue_name, run_at, max_attempts,
  // job_key, priority, flags; all but the first take add_jobs' defaults.
  for (let added = 0; added < jobs; added += INSERT_BATCH) {
    const count = Math.min(INSERT_BATCH, jobs - added);
    await utils.withPgClient((client) =>
      client.query(
        `select count(*) from ${SCHEMA}.add_jobs(array(
           select row('noop', null, null, null, null, null, null, null)::${SCHEMA}.job_spec
           from generate_series(1, $1::int)))`,
        [count],
      ),
    );
  }
  // Statistics as autovacuum would soon leave them, so it cannot change the
  // plan of the worker's queries in the middle of the timed run.
  await utils.withPgClient((client) => client.query(`analyze ${SCHEMA}._private_jobs`));
  const backlog = await pending();
  if (backlog !== jobs) throw new Error(`inserted ${backlog} jobs, expected ${jobs}`);

  // The handlers' span: the first one's start, the last one's finish.
  let firstStart = null;
  let lastFinish = null;
  const noop = async () => {
    firstStart ??= process.hrtime.bigint();
    lastFinish = process.hrtime.bigint();
  };
  const start = process.hrtime.bigint();
  const cpuAtStart = cpuSeconds();
  const started = await startRunner(url, noop);
  runner = started.runner;
  await waitDrained(utils, started, POLL_MS, TIMEOUT_MS, "10 minutes");
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const cpuPerJob = ((cpuSeconds() - cpuAtStart) / jobs) * 1e6;
  const busy = Number(lastFinish - firstStart) / 1e9;
  console.log(
    `graphile-worker jobs=${jobs} seconds=${seconds.toFixed(3)} jobs_per_s=${Math.round(jobs / seconds)}` +
      ` busy_seconds=${busy.toFixed(3)} busy_jobs_per_s=${Math.round(jobs / busy)}` +
      ` cpu_us_per_job=${Math.round(cpuPerJob)}`,
  );
} catch (error) {
  console.error(`graphile-worker drain failed: ${error?.message ?? error}`);
  process.exitCode = 1;
} finally {
  if (runner) await runner.stop().catch(() => {});
  if (utils) await utils.release();
}
