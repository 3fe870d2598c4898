/**
 * `Job`: one claimed attempt, as a handler sees it.
 *
 * It carries what errand sent with the claim, and its methods are the
 * handler's only channel back to errand while it runs. Each of them first
 * checks whether the attempt must stop (lease lost, cancel asked for) and
 * throws `LeaseLost` or `Cancelled` if so, so that a handler which reports
 * progress, records checkpoints or calls `check()` now and then stops soon
 * after errand says so; `signal` aborts at that moment, for handlers that
 * pass it to what they await. `log()` is the exception: it only buffers a
 * line (logs.ts) and never throws for errand's sake.
 */

import { basename, extname } from "node:path";
import { LeaseLost } from "../errors.js";
import { describeError, isTransient } from "../http.js";
import type { ClaimedJob, LogLevel, StoredFile, UploadSource, WorkerApi } from "./api.js";
import type { Lease } from "./lease.js";
import type { Logger } from "./logger.js";
import type { LogBuffer } from "./logs.js";

/** How long a progress report or a batch of log lines is retried: both are advisory, and a handler should not stall on them. */
export const ADVISORY_RETRY_MS = 5_000;

/** Content types guessed from a result file's name when none is given. */
const CONTENT_TYPES: Record<string, string> = {
  ".csv": "text/csv",
  ".gz": "application/gzip",
  ".html": "text/html",
  ".json": "application/json",
  ".ndjson": "application/x-ndjson",
  ".pdf": "application/pdf",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".txt": "text/plain",
  ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  ".xml": "application/xml",
  ".zip": "application/zip",
};

export interface UploadOptions {
  /** What a download is saved as; the path's own name by default (required for a stream). */
  fileName?: string;
  /** Guessed from the file name when absent, else `application/octet-stream`. */
  contentType?: string;
}

export class Job<Params = Record<string, unknown>> {
  readonly id: string;
  readonly type: string;
  /** The JSON object the user submitted (checked against the type's schema by errand). */
  readonly params: Params;
  readonly tenant: string;
  readonly user: string;
  /** 1 on the first run. */
  readonly attempt: number;
  /** The checkpoint an earlier attempt of this run recorded (the value as written), or null: start from the beginning. */
  readonly resumed: unknown;
  /** A first attempt's trace: the `traceparent` of the request that recorded the job, or null. */
  readonly traceparent: string | null;
  /** A later attempt's: that same value, a trace to link to (a retry is a trace of its own), or null. */
  readonly traceLink: string | null;

  constructor(
    claimed: ClaimedJob,
    private readonly lease: Lease,
    private readonly api: WorkerApi,
    private readonly logs: LogBuffer,
    private readonly retryForMs: number,
    private readonly logger: Logger,
  ) {
    this.id = lease.jobId;
    this.type = claimed.type;
    this.params = (claimed.params ?? {}) as Params;
    this.tenant = claimed.tenant ?? "";
    this.user = claimed.user ?? "";
    this.attempt = Number(claimed.attempt ?? 1);
    this.resumed = claimed.checkpoint ?? null;
    this.traceparent = claimed.traceparent ?? null;
    this.traceLink = claimed.trace_link ?? null;
  }

  /** Aborted once the job must stop; its `reason` is the `LeaseLost` or `Cancelled`. Pass it to what the handler awaits. */
  get signal(): AbortSignal {
    return this.lease.signal;
  }

  /** Whether the job must stop (lease lost or cancelled), without throwing. */
  get interrupted(): boolean {
    return this.lease.signal.aborted;
  }

  /** Whether the job's owner or an operator asked for it to stop. */
  get cancelRequested(): boolean {
    return this.lease.cancelRequested;
  }

  /** Throw `LeaseLost` or `Cancelled` if the job must stop. Costs no request: heartbeats bring the news. */
  check(): void {
    const interruption = this.lease.interruption;
    if (interruption) throw interruption;
  }

  /**
   * Tell errand how far the job got (whole steps: pages, rows, bytes); the
   * owner sees it on the job and their live stream. One request per call:
   * report per step or about once a second. `message` is up to 1000 bytes.
   * Throws `LeaseLost` or `Cancelled` when the job must stop; a report errand
   * could not be reached for is logged and dropped.
   */
  async progress(done: number, total?: number, message?: string): Promise<void> {
    this.check();
    try {
      const report = { done, total, message };
      await this.api.progress(this.id, this.lease.id, report, ADVISORY_RETRY_MS, this.lease.traceparent);
    } catch (error) {
      if (!isTransient(error)) throw this.fenced(error);
      this.logger.warn(`job ${this.id}: progress not reported: ${describeError(error)}`);
    }
  }

  /**
   * A line of the attempt's log, for operators (`GET /admin/jobs/{id}`, the
   * console's job page; the owner does not see it): `level` debug, info,
   * warn or error (else `RangeError`), `fields` kept as a JSON object. Sent
   * in batches (see logs.ts); never throws for errand's sake.
   */
  log(level: LogLevel, message: string, fields?: Record<string, unknown>): void {
    this.logs.add(level, message, fields, ADVISORY_RETRY_MS);
  }

  /**
   * Record how far the job has come, fenced on the lease, so that the run's
   * next attempt (after a crash, a lost lease, a `Retryable`) gets `value` as
   * its `job.resumed`. Write one once what it says is durable, not more often
   * than every few seconds; `null` forgets it. `done` is the progress then,
   * shown as the job's `resumed_from`. Retried for the worker's `retryForMs`
   * (then `ErrandUnreachable`); `LeaseLost` or `Cancelled` when the job must
   * stop; a checkpoint errand refuses is an `ErrandError`.
   */
  async checkpoint(value: unknown, done = 0): Promise<void> {
    this.check();
    try {
      await this.api.checkpoint(this.id, this.lease.id, value, done, this.retryForMs, this.lease.traceparent);
    } catch (error) {
      throw this.fenced(error);
    }
  }

  /**
   * Stream a file (a path) or a stream to errand as the job's result: it
   * becomes the job's result once the handler returns, and the object the
   * handler returns is added to its metadata. A path is retried from its
   * start through network errors; a stream is sent once. Answers the file's
   * metadata as errand stored it.
   */
  async upload(source: UploadSource, options: UploadOptions = {}): Promise<StoredFile> {
    const fileName = options.fileName ?? (typeof source === "string" ? basename(source) : undefined);
    if (!fileName) throw new TypeError("upload(stream) needs a fileName");
    const contentType =
      options.contentType ?? CONTENT_TYPES[extname(fileName).toLowerCase()] ?? "application/octet-stream";
    this.check();
    try {
      const file = { fileName, contentType };
      return await this.api.uploadResult(this.id, this.lease.id, source, file, this.retryForMs, this.lease.traceparent);
    } catch (error) {
      throw this.fenced(error);
    }
  }

  /** A call's error; a `LeaseLost` also interrupts the attempt, so that `signal` and `check()` say so from now on. */
  private fenced(error: unknown): unknown {
    if (error instanceof LeaseLost) this.lease.interrupt(error);
    return error;
  }
}
