/** Progress a handler reports shows in the owner's view of the job. */

import assert from "node:assert/strict";
import { test } from "node:test";
import { Errand } from "./harness.js";
import { deferred } from "./support.js";
import { newWorker, runWorker } from "./workers.js";

test("progress shows in the job while the handler runs", async (t) => {
  const errand = await Errand.forTest(t);
  const release = deferred();
  const worker = newWorker(errand, {
    types: {
      render_invoice: async (job) => {
        await job.progress(1, 3, "page 1 of 3");
        await release.promise;
        return { pages: 3 };
      },
    },
  });
  runWorker(t, worker);
  const id = await errand.submit({ invoice: 3 });

  // errand writes progress at most once a second: poll for it.
  const job = await errand.waitForJob(id, (job) => job.progress != null, 15_000, "progress to show");
  assert.equal(job.status, "processing");
  assert.deepEqual([job.progress?.done, job.progress?.total, job.progress?.message], [1, 3, "page 1 of 3"]);

  release.resolve();
  assert.equal((await errand.waitForEnd(id)).status, "completed");
});
