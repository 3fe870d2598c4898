/**
 * The calls of errand's worker routes (`/worker/v1/...`): paths and bodies.
 *
 * Every call about a job names its lease and is fenced on it: errand answers
 * `409 lease_lost` (thrown here as `LeaseLost`) to a worker that no longer
 * holds it, and changes nothing. That fence is what makes them safe to retry
 * (http.ts retries them through network errors, 429 and 5xx for the
 * `retryForMs` each caller gives): `/complete` and `/fail` answer a repeat
 * as they answered the first. A claim is not retried: one whose answer was
 * lost may have leased jobs that nobody runs until their leases expire, so
 * the claim loop calls again on its own schedule (worker.ts).
 *
 * Each call about a job sends the `traceparent` it is given (the job's
 * first attempt's), so errand's spans of those calls join the job's trace.
 */

import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { Readable } from "node:stream";
import { ErrandError, LeaseLost } from "../errors.js";
import type { Transport } from "../http.js";
import type { Ended, LeasedJob, LeaseRenewed } from "../job-types.js";

/** A job as `POST /worker/v1/claim` hands it out. */
export type ClaimedJob = LeasedJob;

/** A line of an attempt's log, as `/logs` takes it. */
export interface LogLine {
  level: LogLevel;
  message: string;
  fields?: Record<string, unknown>;
  at: string;
}

export type LogLevel = "debug" | "info" | "warn" | "error";

/** A result file: a path (streamed from disk, and retried from its start) or a stream (sent once). */
export type UploadSource = string | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>;

/** The file's metadata as errand stored it. */
export interface StoredFile {
  file_name: string;
  content_type: string;
  size_bytes: number;
  [member: string]: unknown;
}

export class WorkerApi {
  constructor(private readonly transport: Transport) {}

  /** Long-poll for up to `max` jobs of `types`, waiting at most `waitSeconds`. Tried once (see the module doc). */
  async claim(types: string[], max: number, waitSeconds: number): Promise<{ jobs: ClaimedJob[]; serverTime?: Date }> {
    const { body, response } = await this.transport.json<{ jobs: LeasedJob[] }>({
      method: "POST",
      path: "/worker/v1/claim",
      json: { types, max, wait: waitSeconds },
      retry: { maxAttempts: 1, retryForMs: 0 },
      // The try must outlast errand's own wait, or every idle poll would end as a timeout.
      timeoutMs: waitSeconds * 1000 + 10_000,
    });
    return { jobs: body.jobs, ...serverTime(response) };
  }

  /** Renew the lease; answers its new end and whether someone asked for the job to stop. */
  async heartbeat(
    job: string,
    lease: string,
    retryForMs: number,
    traceparent: string | undefined,
  ): Promise<{ leaseExpiresAt: Date; cancelRequested: boolean; serverTime?: Date }> {
    const response = await this.post(job, "heartbeat", { lease_id: lease }, retryForMs, traceparent);
    const body = (await response.json()) as LeaseRenewed;
    return {
      leaseExpiresAt: new Date(body.lease_expires_at),
      cancelRequested: body.cancel_requested === true,
      ...serverTime(response),
    };
  }

  async progress(
    job: string,
    lease: string,
    report: { done: number; total?: number | undefined; message?: string | undefined },
    retryForMs: number,
    traceparent: string | undefined,
  ): Promise<void> {
    await drained(this.post(job, "progress", { lease_id: lease, ...report }, retryForMs, traceparent));
  }

  /** Record `value` (any JSON; null forgets it) as the attempt's checkpoint, `done` its progress then. The same checkpoint twice is one. */
  async checkpoint(
    job: string,
    lease: string,
    value: unknown,
    done: number,
    retryForMs: number,
    traceparent: string | undefined,
  ): Promise<void> {
    const body = { lease_id: lease, checkpoint: value, done };
    await drained(this.post(job, "checkpoint", body, retryForMs, traceparent));
  }

  /** 1 to 100 lines, oldest first. Not idempotent: a batch retried after a lost answer may be recorded twice (harmless for a log). */
  async logs(
    job: string,
    lease: string,
    lines: LogLine[],
    retryForMs: number,
    traceparent: string | undefined,
  ): Promise<void> {
    await drained(this.post(job, "logs", { lease_id: lease, lines }, retryForMs, traceparent));
  }

  async complete(
    job: string,
    lease: string,
    result: Record<string, unknown> | undefined,
    retryForMs: number,
    traceparent: string | undefined,
  ): Promise<void> {
    await drained(this.post(job, "complete", { lease_id: lease, result }, retryForMs, traceparent));
  }

  /** End the attempt as failed; answers errand's verdict (`failed`, `retry_scheduled`, `cancelled`). */
  async fail(
    job: string,
    lease: string,
    error: string,
    retryable: boolean,
    retryForMs: number,
    traceparent: string | undefined,
  ): Promise<string> {
    const body = { lease_id: lease, error, retryable };
    const response = await this.post(job, "fail", body, retryForMs, traceparent);
    return ((await response.json()) as Ended).status;
  }

  /**
   * Stream `source` as the job's result file, never holding it whole in
   * memory. A path is sent with its length and retried from its start; a
   * stream cannot be read twice, so it is sent once.
   */
  async uploadResult(
    job: string,
    lease: string,
    source: UploadSource,
    file: { fileName: string; contentType: string },
    retryForMs: number,
    traceparent: string | undefined,
  ): Promise<StoredFile> {
    const size = typeof source === "string" ? (await stat(source)).size : undefined;
    const body = () => ({
      body: webStream(typeof source === "string" ? createReadStream(source) : source),
      contentType: file.contentType,
      ...(size === undefined ? {} : { contentLength: size }),
    });
    return fenced(async () => {
      const { body: stored } = await this.transport.json<StoredFile>({
        method: "PUT",
        path: `/worker/v1/jobs/${encodeURIComponent(job)}/result`,
        query: { lease_id: lease, file_name: file.fileName },
        body,
        headers: { traceparent },
        retry: typeof source === "string" ? { maxAttempts: Infinity, retryForMs } : { maxAttempts: 1, retryForMs: 0 },
        // Storing a large file may take errand a while after the last byte.
        timeoutMs: 600_000,
      });
      return stored;
    });
  }

  /** POST a call about a job, retried for `retryForMs`, fenced on its lease; answers the response (its body unread). */
  private post(
    job: string,
    call: string,
    json: Record<string, unknown>,
    retryForMs: number,
    traceparent: string | undefined,
  ): Promise<Response> {
    return fenced(() =>
      this.transport.send({
        method: "POST",
        path: `/worker/v1/jobs/${encodeURIComponent(job)}/${call}`,
        json,
        headers: { traceparent },
        retry: { maxAttempts: Infinity, retryForMs },
      }),
    );
  }
}

/** Run `call`, turning errand's `409 lease_lost` into `LeaseLost`. */
async function fenced<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof ErrandError && error.status === 409 && error.code === "lease_lost") {
      throw new LeaseLost(error.detail ?? "the lease is no longer this worker's", { cause: error });
    }
    throw error;
  }
}

/** Wait for an answer whose body says nothing more, and let its connection go back to the pool. */
async function drained(answer: Promise<Response>): Promise<void> {
  await (await answer).body?.cancel();
}

function webStream(source: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>): ReadableStream<Uint8Array> {
  if (source instanceof ReadableStream) return source;
  const readable = source instanceof Readable ? source : Readable.from(source);
  return Readable.toWeb(readable) as ReadableStream<Uint8Array>;
}

/** errand's clock from the `Date` header (whole seconds), if it sent one, for lease timing. */
function serverTime(response: Response): { serverTime?: Date } {
  const header = response.headers.get("date");
  const at = header === null ? Number.NaN : Date.parse(header);
  return Number.isNaN(at) ? {} : { serverTime: new Date(at) };
}
