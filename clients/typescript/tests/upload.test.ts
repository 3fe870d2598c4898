/** A file a handler uploads becomes its job's result, downloadable by the owner through the result URL. */

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { ErrandClient } from "../src/index.js";
import { Errand, userToken } from "./harness.js";
import { Recorder } from "./support.js";
import { newWorker, runWorker } from "./workers.js";

// Larger than a stream's chunk, and not text: the bytes must come back as sent.
const CONTENT = randomBytes(600 * 1024);

async function download(errand: Errand, id: string): Promise<Buffer> {
  const client = new ErrandClient({ baseUrl: errand.url, token: userToken() });
  const url = await client.resultUrl(id);
  assert.ok(url.startsWith(`${errand.url}/files/`), url);
  const response = await fetch(url);
  assert.equal(response.status, 200);
  return Buffer.from(await response.arrayBuffer());
}

test("an uploaded file is the job's result and downloads as the same bytes", async (t) => {
  const errand = await Errand.forTest(t);
  const recorder = new Recorder();
  const worker = newWorker(errand, {
    fetch: recorder.fetch,
    types: {
      render_invoice: async (job) => {
        const path = join(errand.workDir, `render-${job.id}.bin`);
        await writeFile(path, CONTENT);
        const stored = await job.upload(path, { contentType: "application/pdf", fileName: "invoice-42.pdf" });
        assert.equal(stored.size_bytes, CONTENT.length);
        return { pages: 2 }; // added to the file's metadata
      },
    },
  });
  runWorker(t, worker);
  const id = await errand.submit({ invoice: 42 });

  const job = await errand.waitForEnd(id);
  assert.equal(job.status, "completed", JSON.stringify(job));
  assert.deepEqual(
    [job.result?.file_name, job.result?.content_type, job.result?.size_bytes, job.result?.pages],
    ["invoice-42.pdf", "application/pdf", CONTENT.length, 2],
  );
  assert.ok((await download(errand, id)).equals(CONTENT));
  // A path is sent with its length.
  const [put] = recorder.to("/result");
  assert.equal(put?.headers.get("content-length"), String(CONTENT.length));
});

test("a stream is uploaded as it is read, its type guessed from its name", async (t) => {
  const errand = await Errand.forTest(t);
  const worker = newWorker(errand, {
    types: {
      render_invoice: async (job) => {
        async function* chunks() {
          for (let at = 0; at < CONTENT.length; at += 64 * 1024) yield CONTENT.subarray(at, at + 64 * 1024);
        }
        await job.upload(chunks(), { fileName: "report.csv" });
      },
    },
  });
  runWorker(t, worker);
  const id = await errand.submit({ invoice: 43 });

  const job = await errand.waitForEnd(id);
  assert.equal(job.status, "completed", JSON.stringify(job));
  assert.deepEqual([job.result?.file_name, job.result?.content_type], ["report.csv", "text/csv"]);
  assert.ok((await download(errand, id)).equals(CONTENT));
});
