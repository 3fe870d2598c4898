/** What a handler's return or throw makes of its job, as the owner reads it through `GET /jobs/{id}`. */

import assert from "node:assert/strict";
import { test } from "node:test";
import { GENERIC_ERROR, Permanent, Retryable } from "../src/index.js";
import { Errand } from "./harness.js";
import { newWorker, runWorker } from "./workers.js";

test("a returned object becomes the completed job's result", async (t) => {
  const errand = await Errand.forTest(t);
  const seen: unknown[] = [];
  const worker = newWorker(errand, {
    types: {
      render_invoice: (job) => {
        seen.push([job.type, job.params, job.tenant, job.user, job.attempt, job.resumed]);
        return { pages: 3 };
      },
    },
  });
  runWorker(t, worker);
  const id = await errand.submit({ invoice: 42 });

  const job = await errand.waitForEnd(id);
  assert.equal(job.status, "completed", JSON.stringify(job));
  assert.deepEqual(job.result, { pages: 3 });
  assert.equal(job.attempts, 1);
  assert.deepEqual(seen, [["render_invoice", { invoice: 42 }, "acme", "alice", 1, null]]);
});

test("Retryable fails the attempt and the next one can succeed", async (t) => {
  const errand = await Errand.forTest(t);
  const attempts: number[] = [];
  // The types-and-handler form: one handler for every type listed.
  const worker = newWorker(errand, {
    types: ["render_invoice"],
    handler: async (job) => {
      attempts.push(job.attempt);
      if (job.attempt === 1) throw new Retryable("the printer is busy");
      return { rendered_on_attempt: job.attempt };
    },
  });
  runWorker(t, worker);
  const id = await errand.submit({ invoice: 1 });

  const job = await errand.waitForEnd(id);
  assert.equal(job.status, "completed", JSON.stringify(job));
  assert.equal(job.attempts, 2);
  assert.deepEqual(job.result, { rendered_on_attempt: 2 });
  assert.deepEqual(attempts, [1, 2]);
});

test("Permanent fails the job at once with the handler's message", async (t) => {
  const errand = await Errand.forTest(t);
  const attempts: number[] = [];
  const worker = newWorker(errand, {
    types: {
      render_invoice: (job) => {
        attempts.push(job.attempt);
        throw new Permanent("invoice 7 has no lines");
      },
    },
  });
  runWorker(t, worker);
  const id = await errand.submit({ invoice: 7 });

  const job = await errand.waitForEnd(id);
  assert.equal(job.status, "failed", JSON.stringify(job));
  assert.equal(job.error_message, "invoice 7 has no lines");
  assert.equal(job.attempts, 1);
  assert.deepEqual(attempts, [1]);
});

test("an unexpected error is retried and its text never reaches the user", async (t) => {
  const errand = await Errand.forTest(t);
  const attempts: number[] = [];
  const logged: string[] = [];
  const worker = newWorker(errand, {
    types: {
      render_invoice: async (job) => {
        attempts.push(job.attempt);
        throw new Error("connection to db-internal-7 refused; password=hunter2");
      },
    },
    logger: { info() {}, warn() {}, error: (message, error) => logged.push(`${message} ${String(error)}`) },
  });
  runWorker(t, worker);
  const id = await errand.submit({ invoice: 9 });

  const job = await errand.waitForEnd(id);
  // The type allows 3 attempts (see harness.errandEnv).
  assert.equal(job.status, "failed", JSON.stringify(job));
  assert.equal(job.attempts, 3);
  assert.deepEqual(attempts, [1, 2, 3]);
  assert.equal(job.error_message, GENERIC_ERROR);
  assert.ok(!JSON.stringify(job).includes("hunter2"));
  // The worker's own log has it, for its operators.
  assert.ok(
    logged.some((line) => line.includes("hunter2")),
    logged.join("\n"),
  );
});

test("a result errand refuses fails the attempt instead of waiting for the lease", async (t) => {
  const errand = await Errand.forTest(t);
  const worker = newWorker(errand, {
    // errand refuses a result naming a storage key: it would sign URLs for a file it never stored.
    types: { render_invoice: () => ({ storage_key: "someone-elses/file.csv" }) },
    logger: { info() {}, warn() {}, error() {} },
  });
  runWorker(t, worker);
  const id = await errand.submit({ invoice: 10 });

  // Three attempts within the 3 s one lease would take to run out.
  const job = await errand.waitForEnd(id, 8_000);
  assert.equal(job.status, "failed", JSON.stringify(job));
  assert.equal(job.attempts, 3);
  assert.equal(job.error_message, GENERIC_ERROR);
});

test("a handler that returns something other than an object fails the attempt", async (t) => {
  const errand = await Errand.forTest(t);
  const worker = newWorker(errand, {
    types: { render_invoice: (job) => (job.attempt < 3 ? ([1, 2] as unknown as { pages: number }) : { pages: 1 }) },
    logger: { info() {}, warn() {}, error() {} },
  });
  runWorker(t, worker);
  const id = await errand.submit({ invoice: 11 });

  const job = await errand.waitForEnd(id);
  assert.equal(job.status, "completed", JSON.stringify(job));
  assert.equal(job.attempts, 3);
});
