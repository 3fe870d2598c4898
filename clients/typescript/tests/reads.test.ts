/** ErrandClient's reads: waitForJob to a job's end (or a timeout, or an abort), cancel, and a failed job's words. */

import assert from "node:assert/strict";
import { test } from "node:test";
import { ErrandClient, ErrandError, WaitTimeout } from "../src/index.js";
import { Errand, JOB_TYPE, userToken } from "./harness.js";

test("waitForJob answers the job once it ended", async (t) => {
  const errand = await Errand.forTest(t);
  const client = new ErrandClient({ baseUrl: errand.url, token: userToken() });
  // errand's own `sleep` handler: typed params of a configured type.
  const { job } = await client.submit("sleep", { ms: 300 });

  const ended = await client.waitForJob(job.id, { timeoutMs: 15_000 });
  assert.equal(ended.status, "completed", JSON.stringify(ended));
  assert.equal(ended.id, job.id);
});

test("waitForJob gives up with WaitTimeout, or stops on its signal", async (t) => {
  const errand = await Errand.forTest(t);
  const client = new ErrandClient({ baseUrl: errand.url, token: userToken() });
  // No worker runs render_invoice: the job waits.
  const { job } = await client.submit(JOB_TYPE, {});

  const started = Date.now();
  const timedOut = await client.waitForJob(job.id, { timeoutMs: 600 }).catch((error: unknown) => error);
  assert.ok(timedOut instanceof WaitTimeout, String(timedOut));
  assert.equal((timedOut.lastSeen as { id: string }).id, job.id);
  assert.ok(Date.now() - started < 3_000);

  const reason = new Error("the page was closed");
  const controller = new AbortController();
  setTimeout(() => controller.abort(reason), 300);
  assert.equal(await client.waitForJob(job.id, { signal: controller.signal }).catch((error: unknown) => error), reason);
});

test("cancel ends a waiting job at once; a second cancel gives the same", async (t) => {
  const errand = await Errand.forTest(t);
  const client = new ErrandClient({ baseUrl: errand.url, token: userToken() });
  const { job } = await client.submit(JOB_TYPE, {});

  assert.equal((await client.cancel(job.id)).status, "cancelled");
  assert.equal((await client.cancel(job.id)).status, "cancelled");
  assert.equal((await client.waitForJob(job.id, { timeoutMs: 5_000 })).status, "cancelled");
  const missing = await client.getJob("01960000-0000-7000-8000-000000000000").catch((error: unknown) => error);
  assert.ok(missing instanceof ErrandError && missing.status === 404, String(missing));
});

test("a failed job ends the wait with its error message", async (t) => {
  // One attempt: errand's `sleep` handler fails its first `fail_times` ones.
  const errand = await Errand.forTest(t, { env: { ERRAND_JOB_TYPES__SLEEP__MAX_ATTEMPTS: "1" } });
  const client = new ErrandClient({ baseUrl: errand.url, token: userToken() });
  const { job } = await client.submit("sleep", { ms: 1, fail_times: 1 });

  const ended = await client.waitForJob(job.id, { timeoutMs: 15_000 });
  assert.equal(ended.status, "failed", JSON.stringify(ended));
  assert.ok(ended.error_message, JSON.stringify(ended));
});
