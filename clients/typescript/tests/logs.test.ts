/**
 * Lines a handler logs with `job.log()` reach the operators' timeline of the
 * job (`GET /admin/jobs/{id}`, `history.attempts[].logs`), in order, sent in
 * batches: with the lease's renewals while the handler runs, by the call that
 * brings the waiting lines to 100, and once more after the job ended.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import { type AttemptLogLine, Errand } from "./harness.js";
import { deferred, Recorder, waitUntil, withTimeout } from "./support.js";
import { newWorker, runWorker } from "./workers.js";

/** The first attempt's history once its log holds `count` lines. */
function attemptLogs(errand: Errand, id: string, count: number) {
  return waitUntil(
    async () => {
      const [first] = (await errand.adminJob(id)).history.attempts;
      return first && first.logs.length >= count ? first : undefined;
    },
    15_000,
    `${count} log lines of job ${id}`,
  );
}

const shape = (line: AttemptLogLine) => [line.level, line.message, line.fields ?? null];

test("logged lines show in the operators' timeline in order", async (t) => {
  const errand = await Errand.forTest(t);
  const logged = deferred();
  const release = deferred();
  const refused: string[] = [];
  const before = new Date();
  const worker = newWorker(errand, {
    types: {
      render_invoice: async (job) => {
        job.log("info", "rendering", { invoice: job.params.invoice, pages: 3 });
        job.log("debug", "fonts loaded");
        try {
          job.log("verbose" as "info", "not a level");
        } catch (error) {
          refused.push(String(error));
        }
        logged.resolve();
        await release.promise;
        job.log("warn", "page 2 was slow", { page: 2, ms: 1500.5, sizes: [1, 2], paper: { size: "A4" }, at: before });
        // errand refuses NUL: it is sent as U+FFFD.
        job.log("error", "page 3: a stray \u0000 byte", { page: 3 });
        return { pages: 3 };
      },
    },
  });
  runWorker(t, worker);
  const id = await errand.submit({ invoice: 7 });
  await withTimeout(logged.promise, 15_000, "the handler to log");
  assert.deepEqual(refused, ["RangeError: log level verbose: one of debug, info, warn, error"]);

  // While the handler waits, its lines go out with the lease's renewals (every second under a 3 s lease).
  try {
    const running = await attemptLogs(errand, id, 2);
    assert.equal((await errand.job(id)).state, "running");
    assert.deepEqual(
      running.logs.map((line) => line.message),
      ["rendering", "fonts loaded"],
    );
  } finally {
    release.resolve();
  }
  assert.equal((await errand.waitForEnd(id)).status, "completed");
  // The last lines are sent after the completion, under the lease it ended with.
  const attempt = await attemptLogs(errand, id, 4);
  const after = new Date();

  assert.deepEqual([attempt.run, attempt.attempt, attempt.log_truncated], [1, 1, false]);
  assert.deepEqual(attempt.logs.map(shape), [
    ["info", "rendering", { invoice: 7, pages: 3 }],
    ["debug", "fonts loaded", null],
    [
      "warn",
      "page 2 was slow",
      { page: 2, ms: 1500.5, sizes: [1, 2], paper: { size: "A4" }, at: before.toISOString() },
    ],
    ["error", "page 3: a stray \ufffd byte", { page: 3 }],
  ]);
  // Each line's time is when it was logged: in order, within the test.
  const times = attempt.logs.map((line) => new Date(line.at).getTime());
  assert.deepEqual(
    times,
    [...times].sort((a, b) => a - b),
  );
  assert.ok(before.getTime() <= (times[0] ?? 0) && (times.at(-1) ?? 0) <= after.getTime());
});

for (const [count, kept] of [
  [250, 250],
  [1050, 1000],
] as const) {
  test(`${count} lines are sent in batches of up to 100 and ${kept} arrive`, async (t) => {
    const errand = await Errand.forTest(t);
    const recorder = new Recorder();
    const worker = newWorker(errand, {
      fetch: recorder.fetch,
      types: {
        render_invoice: (job) => {
          for (let row = 0; row < count; row++) job.log("debug", `row ${row}`, { row });
        },
      },
    });
    runWorker(t, worker);
    const id = await errand.submit({ invoice: 8 });
    assert.equal((await errand.waitForEnd(id)).status, "completed");

    const truncated = count > kept;
    const attempt = await attemptLogs(errand, id, kept + Number(truncated));
    assert.equal(attempt.logs.length, kept + Number(truncated));
    assert.deepEqual(
      attempt.logs.slice(0, kept).map((line) => [line.message, line.fields]),
      Array.from({ length: kept }, (_, row) => [`row ${row}`, { row }]),
    );
    assert.equal(attempt.log_truncated, truncated);
    if (truncated) {
      assert.equal(attempt.logs.at(-1)?.level, "warn");
      assert.match(attempt.logs.at(-1)?.message ?? "", /^truncated/);
    }
    // Never one request per line: at most 100 a call; past the cap only the one line that records the cut is sent.
    const batches = recorder
      .to("/logs")
      .map((each) => (JSON.parse(each.body ?? "{}") as { lines: unknown[] }).lines.length);
    assert.ok(Math.max(...batches) <= 100, String(batches));
    assert.equal(
      batches.reduce((sum, size) => sum + size, 0),
      Math.min(count, kept + 1),
    );
    assert.ok(batches.length >= 3, String(batches));
  });
}
