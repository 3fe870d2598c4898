// What drain.mjs and sustained.mjs share: graphile-worker's runner as both
// bench it (one `noop` task, concurrency 10, a local queue of 100, as in
// the drain the BENCHMARKS figures were taken with) and the wait until its
// job table is empty.
import * as graphileWorker from "graphile-worker";

const { Logger, run } = graphileWorker.default ?? graphileWorker;

export const SCHEMA = "graphile_worker";
export const CONCURRENCY = 10;
export const LOCAL_QUEUE_SIZE = 100;
export const quiet = new Logger(() => () => {});
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Whether any job is left (cheaper than a count while polling: it stops at
// the first row).
export const anyLeft = (utils) =>
  utils.withPgClient(async (client) => {
    const { rows } = await client.query(`select exists (select 1 from ${SCHEMA}._private_jobs) as any`);
    return rows[0].any;
  });

// Starts the runner with `noop` as its one task; `failed()` counts the jobs
// that failed, `stopped()` says whether the runner ended on its own.
export async function startRunner(url, noop) {
  const runner = await run({
    connectionString: url,
    schema: SCHEMA,
    logger: quiet,
    noHandleSignals: true,
    parsedCronItems: [],
    taskList: { noop },
    // 0.18's names (its legacy `concurrency` option maps to concurrentJobs).
    preset: { worker: { concurrentJobs: CONCURRENCY, localQueue: { size: LOCAL_QUEUE_SIZE } } },
  });
  let failed = 0;
  let stopped = false;
  runner.events.on("job:failed", () => failed++);
  runner.promise.finally(() => { stopped = true; }).catch(() => {});
  return { runner, failed: () => failed, stopped: () => stopped };
}

// Polls every `pollMs` until no job is left; throws if a job failed, the
// runner stopped, or `timeoutMs` passed (`what`: the timeout's words).
export async function waitDrained(utils, started, pollMs, timeoutMs, what) {
  const from = performance.now();
  while (await anyLeft(utils)) {
    if (started.failed() > 0) throw new Error(`${started.failed()} jobs failed`);
    if (started.stopped()) throw new Error("the worker stopped before the jobs were done");
    if (performance.now() - from > timeoutMs) throw new Error(`the jobs did not drain within ${what}`);
    await sleep(pollMs);
  }
}
