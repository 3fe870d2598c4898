/**
 * Traces: a job submitted with a W3C `traceparent` reaches the worker with it
 * (`job.traceparent` on its first attempt, `job.traceLink` on a later one),
 * and every call the worker makes about a first attempt sends it as its
 * `traceparent` header, so that errand's spans of those calls join the
 * click's trace. (No spans of the worker's own: see the README.)
 */

import assert from "node:assert/strict";
import { randomBytes, randomUUID } from "node:crypto";
import { test } from "node:test";
import { ErrandClient, Retryable } from "../src/index.js";
import { Errand, JOB_TYPE, userToken } from "./harness.js";
import { Recorder } from "./support.js";
import { newWorker, runWorker } from "./workers.js";

test("a first attempt carries the submitted traceparent, and a retry a link to it", async (t) => {
  const errand = await Errand.forTest(t);
  const traceparent = `00-${randomUUID().replaceAll("-", "")}-${randomBytes(8).toString("hex")}-01`;
  const seen: unknown[] = [];
  const recorder = new Recorder();
  const worker = newWorker(errand, {
    fetch: recorder.fetch,
    types: {
      render_invoice: async (job) => {
        seen.push([job.attempt, job.traceparent, job.traceLink]);
        await job.progress(1, 1);
        job.log("info", "drawn");
        if (job.attempt === 1) throw new Retryable("The renderer is busy.");
        return { pages: 1 };
      },
    },
  });
  runWorker(t, worker);
  const client = new ErrandClient({ baseUrl: errand.url, token: userToken() });
  const { job } = await client.submit(JOB_TYPE, { invoice: 1 }, { traceparent });

  assert.equal((await errand.waitForEnd(job.id)).status, "completed");
  assert.deepEqual(seen, [
    [1, traceparent, null],
    [2, null, traceparent],
  ]);
  // Attempt 1's calls (progress, its failure) name the trace; attempt 2's (progress, completion) do not.
  const about = recorder.sent.filter((each) => each.path.startsWith(`/worker/v1/jobs/${job.id}/`));
  const calls = about.map((each) => [each.path.split("/").at(-1), each.headers.get("traceparent")]);
  const failAt = calls.findIndex(([call]) => call === "fail");
  assert.ok(failAt > 0, JSON.stringify(calls));
  for (const [call, header] of calls.slice(0, failAt + 1)) {
    if (call !== "logs") assert.equal(header, traceparent, `${call} of attempt 1`);
  }
  for (const [call, header] of calls.slice(failAt + 1).filter(([call]) => call !== "logs")) {
    assert.equal(header, null, `${call} of attempt 2`);
  }
  assert.ok(calls.some(([call]) => call === "complete"));
});
