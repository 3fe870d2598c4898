/**
 * ErrandClient.submit: one idempotency key per call, reused on every retry
 * (network errors, 429 after errand's Retry-After), so that however many
 * tries it takes there is one job; refusals are ErrandErrors with errand's problem.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import { ErrandClient, ErrandError } from "../src/index.js";
import { Errand, freePort, JOB_TYPE, userToken } from "./harness.js";
import { Recorder, waitUntil, withTimeout } from "./support.js";

test("a submission is created once and replayed under the same key", async (t) => {
  const errand = await Errand.forTest(t);
  const client = new ErrandClient({ baseUrl: errand.url, token: userToken() });

  const first = await client.submit(JOB_TYPE, { invoice: 1 });
  assert.deepEqual([first.job.status, first.job.state], ["processing", "queued"], JSON.stringify(first.job));
  assert.deepEqual([first.created, first.replayed, first.joined, first.debounced], [true, false, false, false]);
  assert.match(first.idempotencyKey, /^[0-9a-f-]{36}$/);

  const again = await client.submit(JOB_TYPE, { invoice: 1 }, { idempotencyKey: first.idempotencyKey });
  assert.deepEqual([again.created, again.replayed, again.job.id], [false, true, first.job.id]);

  const other = await client.submit(JOB_TYPE, { invoice: 1 });
  assert.notEqual(other.job.id, first.job.id, "a call without a key is a new intent");
  const listed = await client.listJobs({ type: JOB_TYPE });
  assert.deepEqual(listed.jobs.map((job) => job.id).sort(), [first.job.id, other.job.id].sort());
});

test("a request for a resource whose job is unfinished joins that job", async (t) => {
  // An admission key: one unfinished render per invoice and user.
  const errand = await Errand.forTest(t, {
    env: { ERRAND_JOB_TYPES__RENDER_INVOICE__ADMISSION_KEY: "{user}:{params.invoice}" },
  });
  const client = new ErrandClient({ baseUrl: errand.url, token: userToken() });

  const first = await client.submit(JOB_TYPE, { invoice: 5 });
  const second = await client.submit(JOB_TYPE, { invoice: 5 });
  assert.deepEqual([second.created, second.joined, second.replayed], [false, true, false]);
  assert.equal(second.job.id, first.job.id);
  assert.notEqual(second.idempotencyKey, first.idempotencyKey);
});

test("a refusal waiting cannot mend is an ErrandError at once, with errand's problem", async (t) => {
  const errand = await Errand.forTest(t);
  const recorder = new Recorder();
  const client = new ErrandClient({ baseUrl: errand.url, token: userToken(), fetch: recorder.fetch });

  const invalid = await client.submit("sleep", { ms: -1 }).catch((error: unknown) => error);
  assert.ok(invalid instanceof ErrandError, String(invalid));
  assert.deepEqual([invalid.status, invalid.code, invalid.field], [422, "invalid_params", "/ms"]);
  assert.ok(invalid.title, "the problem's title is kept");

  const reused = await client.submit("sleep", { ms: 1 }, { idempotencyKey: "k" });
  assert.equal(reused.created, true);
  const conflict = await client.submit("sleep", { ms: 2 }, { idempotencyKey: "k" }).catch((error: unknown) => error);
  assert.ok(conflict instanceof ErrandError && conflict.status === 422, String(conflict));

  const unknown = await client.submit("no_such_type", {}).catch((error: unknown) => error);
  assert.ok(unknown instanceof ErrandError && unknown.status === 404, String(unknown));
  // Each refusal was one request: nothing was retried.
  assert.equal(recorder.sent.length, 4);
});

test("a rate-limited submission waits out Retry-After and makes exactly one job", async (t) => {
  // One create a second: the burst is spent first.
  const errand = await Errand.forTest(t, { env: { ERRAND_RATE_LIMITS__CREATES_PER_USER: "60" } });
  let refused: Response | undefined;
  for (let i = 0; i < 70 && !refused; i++) {
    const response = await errand.request(`/jobs/${JOB_TYPE}`, {
      method: "POST",
      body: "{}",
      headers: { "Idempotency-Key": `burst-${i}` },
    });
    if (response.status === 429) refused = response;
    else assert.equal(response.status, 202);
  }
  assert.ok(refused, "the budget never ran out");
  assert.ok(Number(refused.headers.get("retry-after")) >= 1);

  const recorder = new Recorder();
  const client = new ErrandClient({ baseUrl: errand.url, token: userToken(), fetch: recorder.fetch });
  const started = Date.now();
  const submitted = await client.submit(JOB_TYPE, { n: 1 });
  assert.equal(submitted.created, true);
  const tries = recorder.to(`/jobs/${JOB_TYPE}`);
  assert.equal(tries[0]?.outcome, 429, "the first try was refused");
  assert.equal(tries.at(-1)?.outcome, 202);
  assert.deepEqual(
    new Set(tries.map((each) => each.headers.get("idempotency-key"))),
    new Set([submitted.idempotencyKey]),
  );
  assert.ok(Date.now() - started >= 500, "it waited for the budget to come back");

  const listed = await errand.request(`/jobs?limit=100&type=${JOB_TYPE}`);
  const jobs = ((await listed.json()) as { jobs: { id: string; params: unknown }[] }).jobs;
  assert.deepEqual(
    jobs.filter((job) => JSON.stringify(job.params) === '{"n":1}').map((job) => job.id),
    [submitted.job.id],
  );

  // A Retry-After past the call's budget ends it at once with the refusal.
  const hurried = new ErrandClient({ baseUrl: errand.url, token: userToken(), retry: { retryForMs: 200 } });
  for (let i = 0; i < 70; i++) {
    const before = Date.now();
    const outcome = await hurried.submit(JOB_TYPE, { n: 2 + i }).catch((error: unknown) => error);
    if (!(outcome instanceof ErrandError)) continue;
    assert.deepEqual([outcome.status, outcome.code], [429, "rate_limited"]);
    assert.ok((outcome.retryAfterSeconds ?? 0) >= 1, String(outcome.retryAfterSeconds));
    assert.ok(Date.now() - before < 1000, "it did not wait");
    return;
  }
  assert.fail("the budget never ran out again");
});

test("a wait for Retry-After is abortable, and one past the budget is not waited", async (t) => {
  // One unfinished job per user, and a refused caller told to come back in 30 s.
  const errand = await Errand.forTest(t, {
    env: { ERRAND_QUOTAS__MAX_UNFINISHED_PER_USER: "1", ERRAND_QUOTAS__RETRY_AFTER: "30s" },
  });
  const recorder = new Recorder();
  const client = new ErrandClient({ baseUrl: errand.url, token: userToken(), fetch: recorder.fetch });
  const first = await client.submit(JOB_TYPE, { n: 1 });

  const reason = new Error("the user left");
  const controller = new AbortController();
  const waiting = client.submit(JOB_TYPE, { n: 2 }, { signal: controller.signal }).catch((error: unknown) => error);
  await waitUntil(() => recorder.sent.some((each) => each.outcome === 429), 10_000, "the quota's refusal");
  controller.abort(reason);
  assert.equal(await withTimeout(waiting, 2_000, "the aborted submission"), reason);

  const hurried = new ErrandClient({ baseUrl: errand.url, token: userToken(), retry: { retryForMs: 5_000 } });
  const started = Date.now();
  const refused = await hurried.submit(JOB_TYPE, { n: 3 }).catch((error: unknown) => error);
  assert.ok(refused instanceof ErrandError, String(refused));
  assert.deepEqual([refused.status, refused.code, refused.retryAfterSeconds], [429, "quota_exceeded", 30]);
  assert.ok(Date.now() - started < 2_000, "it did not wait");

  // Once the first job ends, the same intent goes through.
  await client.cancel(first.job.id);
  const again = await hurried.submit(JOB_TYPE, { n: 3 });
  assert.equal(again.created, true);
});

test("a submission retried through network errors keeps its key and makes one job", async (t) => {
  const port = await freePort();
  const recorder = new Recorder();
  const client = new ErrandClient({
    baseUrl: `http://127.0.0.1:${port}`,
    token: userToken(),
    fetch: recorder.fetch,
    retry: { maxAttempts: 50, retryForMs: 60_000 },
  });
  // Nothing listens yet: the first tries fail to connect.
  const submitting = client.submit(JOB_TYPE, { invoice: 3 });
  await waitUntil(
    () => recorder.sent.filter((each) => typeof each.outcome === "string" && each.outcome !== "pending").length >= 2,
    15_000,
    "two refused connections",
  );
  const errand = await Errand.forTest(t, { port });

  const submitted = await submitting;
  assert.equal(submitted.created, true);
  const keys = new Set(recorder.sent.map((each) => each.headers.get("idempotency-key")));
  assert.deepEqual(keys, new Set([submitted.idempotencyKey]));
  assert.equal((await errand.job(submitted.job.id)).id, submitted.job.id);
});
