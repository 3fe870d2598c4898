/** Workers for the tests: pointed at the test's errand, stopped (and checked to stop) when the test ends. */

import type { TestContext } from "node:test";
import { Worker, type WorkerOptions } from "../src/index.js";
import { type Errand, workerToken } from "./harness.js";
import { onTeardown, withTimeout } from "./support.js";

/** A `Worker` pointed at `errand` with the tests' worker token and a 1 s claim wait (so that it stops fast). */
export function newWorker(errand: Errand, options: NewWorkerOptions): Worker {
  return new Worker({ baseUrl: errand.url, token: workerToken(), pollWaitSeconds: 1, ...options } as WorkerOptions);
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
export type NewWorkerOptions = DistributiveOmit<WorkerOptions, "baseUrl" | "token"> & {
  token?: WorkerOptions["token"];
};

/** `worker.run()` for the rest of the test; the test's end stops it and checks that `run()` resolved. */
export function runWorker(t: TestContext, worker: Worker): Promise<void> {
  const running = worker.run();
  // Not a rejection the process dies of: the test awaits it, or its end does.
  running.catch(() => {});
  onTeardown(t, async () => {
    worker.stop();
    await withTimeout(running, 30_000, "run() to resolve after stop()");
  });
  return running;
}
