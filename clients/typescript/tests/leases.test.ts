/** A job that is no longer this worker's stops: its lease was lost, or its owner cancelled it. */

import assert from "node:assert/strict";
import { test } from "node:test";
import { Cancelled, LeaseLost } from "../src/index.js";
import { Errand } from "./harness.js";
import { deferred, withTimeout } from "./support.js";
import { newWorker, runWorker } from "./workers.js";

const quiet = { info() {}, warn() {}, error() {} };

test("a lost lease stops the handler and the rescued job runs again", async (t) => {
  const errand = await Errand.forTest(t);
  const rescued = deferred();
  const firstStarted = deferred();
  const firstEnded = deferred<string[]>();
  const worker = newWorker(errand, {
    concurrency: 2,
    logger: quiet,
    types: {
      render_invoice: async (job) => {
        if (job.attempt > 1) return { rendered_on_attempt: job.attempt };
        firstStarted.resolve();
        const seen: string[] = [];
        try {
          await rescued.promise;
          await job.progress(1, 2);
          seen.push("went on");
        } catch (error) {
          seen.push(error instanceof LeaseLost ? "lease lost" : String(error));
          seen.push(job.signal.reason instanceof LeaseLost ? "signal aborted" : "signal not aborted");
          throw error;
        } finally {
          firstEnded.resolve(seen);
        }
        return { rendered_on_attempt: 1 };
      },
    },
  });
  // The test hook: no lease is renewed, so attempt 1's lease runs out and errand's rescuer puts the job back.
  worker.heartbeater.pause();
  runWorker(t, worker);
  const id = await errand.submit({ invoice: 5 });
  await withTimeout(firstStarted.promise, 15_000, "attempt 1 to start");

  // Rescued: no longer attempt 1 running (it waits, or attempt 2 runs or ran).
  await errand.waitForRescue(id);
  rescued.resolve();

  assert.deepEqual(await withTimeout(firstEnded.promise, 15_000, "attempt 1 to end"), ["lease lost", "signal aborted"]);
  const job = await errand.waitForEnd(id);
  assert.equal(job.status, "completed", JSON.stringify(job));
  assert.deepEqual(job.result, { rendered_on_attempt: 2 });
  assert.equal(job.attempts, 2);
});

test("a cancel aborts the handler's signal and the job ends cancelled", async (t) => {
  const errand = await Errand.forTest(t);
  const started = deferred();
  const stoppedBy: string[] = [];
  const worker = newWorker(errand, {
    logger: quiet,
    types: {
      render_invoice: async (job) => {
        started.resolve();
        // The handler's work: anything abortable awaits the job's signal.
        await new Promise((_, reject) => {
          const timer = setTimeout(() => reject(new Error("never cancelled")), 30_000);
          job.signal.addEventListener("abort", () => {
            clearTimeout(timer);
            stoppedBy.push(job.signal.reason instanceof Cancelled ? "cancel" : String(job.signal.reason));
            try {
              job.check();
            } catch (error) {
              stoppedBy.push(error instanceof Cancelled ? "check threw Cancelled" : String(error));
            }
            reject(job.signal.reason);
          });
        });
        return { never: "cancelled" };
      },
    },
  });
  runWorker(t, worker);
  const id = await errand.submit({ invoice: 6 });
  await withTimeout(started.promise, 15_000, "the handler to start");

  const response = await errand.request(`/jobs/${id}/cancel`, { method: "POST" });
  assert.ok([200, 202].includes(response.status), String(response.status));

  const job = await errand.waitForEnd(id, 20_000);
  assert.equal(job.status, "cancelled", JSON.stringify(job));
  assert.deepEqual(stoppedBy, ["cancel", "check threw Cancelled"]);
});

test("heartbeats keep a job longer than its lease", async (t) => {
  const errand = await Errand.forTest(t);
  const release = deferred();
  const worker = newWorker(errand, {
    types: {
      render_invoice: async () => {
        await release.promise;
        return { done: true };
      },
    },
  });
  runWorker(t, worker);
  const id = await errand.submit({ invoice: 8 });
  await errand.waitForJob(id, (job) => job.state === "running", 15_000, "the job to start");

  // Two and a half 3 s leases: without renewals errand would have rescued the job and counted attempt 2.
  const deadline = Date.now() + 7_500;
  while (Date.now() < deadline) {
    const job = await errand.job(id);
    assert.deepEqual([job.state, job.attempts], ["running", 1], JSON.stringify(job));
    await new Promise((done) => setTimeout(done, 200)); // pacing the observation; nothing waits on it
  }

  release.resolve();
  const job = await errand.waitForEnd(id);
  assert.deepEqual([job.status, job.attempts], ["completed", 1], JSON.stringify(job));
});
