/** The worker as a whole: stopping, running jobs at once, and refusing to poll forever when errand refuses it. */

import assert from "node:assert/strict";
import { test } from "node:test";
import { ErrandError, Worker } from "../src/index.js";
import { Errand, workerToken } from "./harness.js";
import { deferred, waitUntil, withTimeout } from "./support.js";
import { newWorker, runWorker } from "./workers.js";

const quiet = { info() {}, warn() {}, error() {} };

test("stop lets the running job finish, claims nothing more, then run resolves", async (t) => {
  const errand = await Errand.forTest(t);
  const started = deferred();
  const release = deferred();
  const worker = newWorker(errand, {
    // A token asked for on every request: a long-running worker may renew it.
    token: async () => workerToken(),
    types: {
      render_invoice: async () => {
        started.resolve();
        await release.promise;
        return { finished: true };
      },
    },
  });
  let resolved = false;
  const running = runWorker(t, worker).then(() => {
    resolved = true;
  });
  const first = await errand.submit({ invoice: 1 });
  await withTimeout(started.promise, 15_000, "the handler to start");

  worker.stop();
  const second = await errand.submit({ invoice: 2 }); // after the stop: must not be claimed
  // Longer than a claim's wait: run() must still be waiting for the job.
  await new Promise((done) => setTimeout(done, 1_500));
  assert.equal(resolved, false, "run() resolved while a job was running");

  release.resolve();
  await withTimeout(running, 15_000, "run() to resolve");
  assert.deepEqual((await errand.waitForEnd(first)).result, { finished: true });
  assert.equal((await errand.job(second)).state, "queued");
});

test("four jobs run at once with concurrency four", async (t) => {
  const errand = await Errand.forTest(t);
  // Only passable when all four handlers are inside it together.
  let inside = 0;
  const together = deferred();
  const worker = newWorker(errand, {
    concurrency: 4,
    types: {
      render_invoice: async (job) => {
        inside += 1;
        if (inside === 4) together.resolve();
        await withTimeout(together.promise, 20_000, "four handlers at once");
        return { invoice: job.params.invoice };
      },
    },
  });
  runWorker(t, worker);
  const ids = await Promise.all([0, 1, 2, 3].map((n) => errand.submit({ invoice: n })));

  for (const [n, id] of ids.entries()) {
    const job = await errand.waitForEnd(id, 30_000);
    assert.deepEqual([job.status, job.attempts, job.result], ["completed", 1, { invoice: n }], JSON.stringify(job));
  }
});

test("run rejects when the token may not take the worker's types", async (t) => {
  const errand = await Errand.forTest(t);
  // The token allows render_invoice only.
  const worker = newWorker(errand, { logger: quiet, types: { export_sales_report: () => assert.fail("handed out") } });
  const refusal = await withTimeout(worker.run(), 15_000, "run() to reject").catch((error: unknown) => error);
  assert.ok(refusal instanceof ErrandError && [400, 403].includes(refusal.status), String(refusal));
});

test("run rejects a token errand did not sign", async (t) => {
  const errand = await Errand.forTest(t);
  const worker = new Worker({
    baseUrl: errand.url,
    token: "not-a-token",
    pollWaitSeconds: 1,
    logger: quiet,
    types: { render_invoice: () => assert.fail("handed out") },
  });
  const refusal = await withTimeout(worker.run(), 15_000, "run() to reject").catch((error: unknown) => error);
  assert.ok(refusal instanceof ErrandError && refusal.status === 401, String(refusal));
  await assert.rejects(worker.run(), /runs once/);
});

test("a worker whose errand went away keeps trying, and runs jobs once it is back", async (t) => {
  const first = await Errand.start();
  const url = new URL(first.url);
  const logged: string[] = [];
  const worker = new Worker({
    baseUrl: first.url,
    token: workerToken(),
    pollWaitSeconds: 1,
    logger: { info() {}, warn: (message) => logged.push(message), error: (message) => logged.push(message) },
    types: { render_invoice: () => ({ survived: true }) },
  });
  runWorker(t, worker);
  await first.stop();
  await waitUntil(() => logged.some((line) => line.includes("claiming jobs failed")), 15_000, "a failed claim");

  const errand = await Errand.forTest(t, { port: Number(url.port) });
  const id = await errand.submit({ invoice: 4 });
  assert.deepEqual((await errand.waitForEnd(id, 40_000)).result, { survived: true });
});
