/**
 * A checkpoint one attempt records is what the run's next attempt resumes
 * from (`job.resumed`), and only the attempt holding the lease may record one.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import { ErrandError, LeaseLost, Retryable } from "../src/index.js";
import { Errand } from "./harness.js";
import { deferred, withTimeout } from "./support.js";
import { newWorker, runWorker } from "./workers.js";

const SAVED = { page: 40, cursor: "abc" };

test("the next attempt resumes from the checkpoint of a failed one", async (t) => {
  const errand = await Errand.forTest(t);
  const resumed: unknown[] = [];
  const refused: unknown[] = [];
  const worker = newWorker(errand, {
    types: {
      render_invoice: async (job) => {
        resumed.push([job.attempt, job.resumed]);
        if (job.attempt === 1) {
          await job.checkpoint(SAVED, 400);
          await job.checkpoint({ cursor: "a\u0000b" }, 999).catch((error: unknown) => {
            refused.push(error instanceof ErrandError ? [error.status, error.code] : String(error));
          });
          throw new Retryable("the printer jammed after page 40");
        }
        return { pages: 80, from_page: (job.resumed as typeof SAVED).page };
      },
    },
  });
  runWorker(t, worker);
  const id = await errand.submit({ invoice: 40 });

  const job = await errand.waitForEnd(id);
  assert.equal(job.status, "completed", JSON.stringify(job));
  assert.equal(job.attempts, 2);
  assert.deepEqual(resumed, [
    [1, null],
    [2, SAVED],
  ]);
  assert.deepEqual(job.result, { pages: 80, from_page: 40 });
  assert.equal(job.resumed_from, 400);
  // A checkpoint holding NUL is refused, and the one before it stands.
  assert.deepEqual(refused, [[400, "bad_request"]]);
});

test("a checkpoint set to null is forgotten", async (t) => {
  const errand = await Errand.forTest(t);
  const resumed: unknown[] = [];
  const worker = newWorker(errand, {
    types: {
      render_invoice: async (job) => {
        resumed.push([job.attempt, job.resumed]);
        if (job.attempt === 1) {
          await job.checkpoint({ page: 3 }, 30);
          await job.checkpoint(null);
          throw new Retryable("start over");
        }
        return { pages: 1 };
      },
    },
  });
  runWorker(t, worker);
  const id = await errand.submit({ invoice: 41 });

  const job = await errand.waitForEnd(id);
  assert.equal(job.status, "completed", JSON.stringify(job));
  assert.deepEqual(resumed, [
    [1, null],
    [2, null],
  ]);
  assert.equal(job.resumed_from, undefined, JSON.stringify(job));
});

test("a checkpoint under a lost lease throws LeaseLost and is not recorded", async (t) => {
  const errand = await Errand.forTest(t);
  const rescued = deferred();
  const firstCheckpointed = deferred();
  const lateCheckpoint = deferred<string>();
  const resumed: unknown[] = [];
  const worker = newWorker(errand, {
    concurrency: 2,
    logger: { info() {}, warn() {}, error() {} },
    types: {
      render_invoice: async (job) => {
        resumed.push([job.attempt, job.resumed]);
        if (job.attempt > 1) return { rendered_on_attempt: job.attempt };
        await job.checkpoint(SAVED, 400);
        firstCheckpointed.resolve();
        await rescued.promise;
        try {
          await job.checkpoint({ page: 99 }, 990);
          lateCheckpoint.resolve("recorded");
        } catch (error) {
          lateCheckpoint.resolve(error instanceof LeaseLost ? "lease lost" : String(error));
          throw error;
        }
        return { rendered_on_attempt: 1 };
      },
    },
  });
  // The test hook: no lease is renewed, so attempt 1's lease runs out, as if its worker died.
  worker.heartbeater.pause();
  runWorker(t, worker);
  const id = await errand.submit({ invoice: 42 });
  await withTimeout(firstCheckpointed.promise, 15_000, "attempt 1's checkpoint");

  await errand.waitForRescue(id);
  rescued.resolve();

  assert.equal(await withTimeout(lateCheckpoint.promise, 15_000, "attempt 1's late checkpoint"), "lease lost");
  const job = await errand.waitForEnd(id);
  assert.equal(job.status, "completed", JSON.stringify(job));
  assert.deepEqual(job.result, { rendered_on_attempt: 2 });
  // Attempt 2 resumed from what attempt 1 recorded while it held the lease.
  assert.deepEqual(resumed, [
    [1, null],
    [2, SAVED],
  ]);
  assert.equal(job.resumed_from, 400);
});
