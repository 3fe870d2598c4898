/**
 * The TypeScript package's adapter for the worker conformance suite
 * (clients/conformance, whose README is the contract this follows).
 *
 * It runs a `Worker` against `$ERRAND_URL` with `$ERRAND_TOKEN` for the job
 * types in `$ERRAND_TYPES`, whose one handler does what each job's params say
 * (`steps`, or `by_attempt`), and prints one JSON object a line on stdout for
 * each thing the suite observes: `ready`, `started`, `did`, `stopped`,
 * `returned`, `threw`, `exited`. The worker's own log goes to stderr.
 * SIGTERM stops it as it stops any worker (`installSignalHandlers`).
 */

import { createHash } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Cancelled, type Job, LeaseLost, Permanent, Retryable, Worker } from "../src/index.js";

const NAME = process.env.ERRAND_WORKER_NAME ?? "typescript";
/** How often a waiting step looks whether the job must stop. */
const CHECK_MS = 50;
/** The longest a `wait_for_stop` waits: a test that never stops the job fails, not hangs. */
const WAIT_FOR_STOP_MS = 60_000;

interface Step {
  do: string;
  [field: string]: unknown;
}

interface Plan {
  steps?: Step[];
  by_attempt?: { steps?: Step[] }[];
}

function emit(event: string, fields: Record<string, unknown> = {}): void {
  process.stdout.write(`${JSON.stringify({ event, worker: NAME, ...fields })}\n`);
}

/** The bytes an `upload` step sends: SHA-256 of "<seed>:<i>" for i = 0, 1, ..., cut to `size`. */
function content(seed: string, size: number): Buffer {
  const blocks: Buffer[] = [];
  for (let i = 0; i * 32 < size; i++) blocks.push(createHash("sha256").update(`${seed}:${i}`).digest());
  return Buffer.concat(blocks).subarray(0, size);
}

/** The steps this attempt runs: `steps`, or entry `attempt - 1` of `by_attempt` (its last for later attempts). */
function stepsOf(params: Plan, attempt: number): Step[] {
  if (params.by_attempt) return params.by_attempt[Math.min(attempt, params.by_attempt.length) - 1]?.steps ?? [];
  return params.steps ?? [];
}

/** Wait `ms`, throwing as soon as the job must stop. */
async function wait(job: Job, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    job.check();
    const left = deadline - Date.now();
    if (left <= 0) return;
    await new Promise((done) => setTimeout(done, Math.min(CHECK_MS, left)));
  }
}

/** Do one step; answers the job's result for a `return` step. */
async function runStep(job: Job, step: Step): Promise<Record<string, unknown> | undefined> {
  const field = <T>(name: string) => step[name] as T;
  switch (step.do) {
    case "progress":
      await job.progress(
        field<number>("done"),
        field<number | undefined>("total"),
        field<string | undefined>("message"),
      );
      return undefined;
    case "log":
      job.log(field("level"), field("message"), field<Record<string, unknown> | undefined>("fields"));
      return undefined;
    case "checkpoint":
      await job.checkpoint(step.value, field<number | undefined>("done") ?? 0);
      return undefined;
    case "sleep":
      await wait(job, field<number>("ms"));
      return undefined;
    case "wait_for_stop":
      await wait(job, field<number | undefined>("ms") ?? WAIT_FOR_STOP_MS);
      throw new Error("wait_for_stop: the job was never stopped");
    case "upload": {
      const folder = await mkdtemp(join(tmpdir(), "errand-adapter-"));
      try {
        const path = join(folder, "upload.bin");
        await writeFile(path, content(field("seed"), field("size")));
        const contentType = field<string | undefined>("content_type");
        await job.upload(path, { fileName: field("file_name"), ...(contentType ? { contentType } : {}) });
      } finally {
        await rm(folder, { recursive: true, force: true });
      }
      return undefined;
    }
    case "die":
      process.kill(process.pid, "SIGKILL");
      return undefined;
    case "return":
      return field("result");
    case "fail":
      throw step.retryable === false ? new Permanent(field("message")) : new Retryable(field("message"));
    case "crash":
      throw new Error(field("message"));
    default:
      throw new Error(`unknown step ${step.do}`);
  }
}

async function handle(job: Job): Promise<Record<string, unknown>> {
  emit("started", { job: job.id, attempt: job.attempt, resumed: job.resumed });
  try {
    for (const step of stepsOf(job.params as Plan, job.attempt)) {
      const result = await runStep(job, step);
      if (result !== undefined) {
        emit("returned", { job: job.id, attempt: job.attempt });
        return result;
      }
      emit("did", { job: job.id, attempt: job.attempt, step: step.do });
    }
  } catch (error) {
    if (error instanceof LeaseLost || error instanceof Cancelled) {
      emit("stopped", { job: job.id, attempt: job.attempt, why: error.why });
    } else {
      const kind = error instanceof Retryable ? "retryable" : error instanceof Permanent ? "permanent" : "unexpected";
      emit("threw", { job: job.id, attempt: job.attempt, kind });
    }
    throw error;
  }
  emit("returned", { job: job.id, attempt: job.attempt });
  return { by: NAME, attempt: job.attempt };
}

const log = (message: string) => console.error(`${NAME}: ${message}`);
const worker = new Worker({
  baseUrl: process.env.ERRAND_URL ?? "",
  token: process.env.ERRAND_TOKEN ?? "",
  types: (process.env.ERRAND_TYPES ?? "").split(","),
  handler: handle,
  concurrency: Number(process.env.ERRAND_CONCURRENCY ?? "1"),
  pollWaitSeconds: Number(process.env.ERRAND_POLL_WAIT ?? "1"),
  installSignalHandlers: true,
  logger: { info: log, warn: log, error: (message, error) => log(`${message} ${error ?? ""}`) },
});
emit("ready", { pid: process.pid });
try {
  await worker.run();
  emit("exited");
} catch (error) {
  emit("error", { message: String(error) });
  process.exitCode = 1;
}
