/**
 * `LogBuffer`: the lines one attempt's handler logs (`job.log()`), held and
 * sent to `/logs` in batches, for the operators' timeline of the job.
 *
 * No request per line: a batch goes when 100 lines wait, with each renewal
 * of the lease, and once more after the attempt ended (errand takes lines
 * under the lease the attempt just ended with). It never throws for
 * errand's sake: lines errand could not be reached for wait for the next
 * batch (at the end they are dropped, and said so); a lost lease drops them
 * all and interrupts the attempt, which the handler's next `check()` sees.
 * One batch is in flight at a time, so lines arrive in the order logged.
 */

import { LeaseLost } from "../errors.js";
import { describeError, isTransient } from "../http.js";
import type { LogLevel, LogLine, WorkerApi } from "./api.js";
import type { Lease } from "./lease.js";
import type { Logger } from "./logger.js";

export const LOG_LEVELS: readonly LogLevel[] = ["debug", "info", "warn", "error"];
/** errand's limit of lines a call, and the count of waiting lines that sends them. */
const BATCH_LINES = 100;
/** errand takes bodies up to 64 KiB; the rest of the body is a few dozen bytes. */
const BATCH_BYTES = 60 * 1024;
/** The longest message errand keeps; longer ones are cut here, before they are sent. */
const MESSAGE_CHARS = 4096;
/** A line bigger than this (as JSON) goes without its fields, so that every line fits a call. */
const LINE_BYTES = 32 * 1024;
/** The most lines an attempt keeps (errand's cap). One more is sent, for errand to record that the log was cut. */
const KEPT_LINES = 1000;

export class LogBuffer {
  private waiting: { line: LogLine; bytes: number }[] = [];
  private logged = 0;
  /** False once lines are dropped rather than kept: past the cap, after a lost lease, once the attempt ended. */
  private open = true;
  private sending: Promise<void> | undefined;

  constructor(
    private readonly api: WorkerApi,
    private readonly lease: Lease,
    private readonly logger: Logger,
  ) {}

  /** Buffer a line (see `Job.log`); sends the waiting lines, not waited for, when 100 wait. */
  add(level: LogLevel, message: string, fields: Record<string, unknown> | undefined, retryForMs: number): void {
    if (!LOG_LEVELS.includes(level)) throw new RangeError(`log level ${level}: one of ${LOG_LEVELS.join(", ")}`);
    const line: LogLine = {
      level,
      message: jsonSafe(message.slice(0, MESSAGE_CHARS)) as string,
      at: new Date().toISOString(),
    };
    if (fields && Object.keys(fields).length > 0) line.fields = jsonSafe(fields) as Record<string, unknown>;
    let bytes = Buffer.byteLength(JSON.stringify(line));
    if (bytes > LINE_BYTES && line.fields) {
      this.logger.warn(
        `job ${this.lease.jobId}: a log line's fields were left out: ${bytes} bytes, over ${LINE_BYTES}`,
      );
      delete line.fields;
      bytes = Buffer.byteLength(JSON.stringify(line));
    }
    if (!this.open) return;
    if (this.lease.lost) {
      this.drop();
      return;
    }
    this.waiting.push({ line, bytes });
    this.logged += 1;
    if (this.logged > KEPT_LINES) this.open = false;
    if (this.waiting.length % BATCH_LINES === 0) void this.send(retryForMs, { ifIdle: true, last: false });
  }

  /**
   * Send the waiting lines in batches. With `ifIdle`, returns at once when a
   * send is under way (it, or the next renewal, takes them); otherwise waits
   * for it, then sends what is left. With `last`, lines errand could not be
   * reached for are dropped instead of kept for later.
   */
  async send(retryForMs: number, how: { ifIdle: boolean; last: boolean }): Promise<void> {
    if (this.sending) {
      if (how.ifIdle) return;
      await this.sending.catch(() => {});
      return this.send(retryForMs, how);
    }
    this.sending = this.sendWaiting(retryForMs, how.last);
    try {
      await this.sending;
    } finally {
      this.sending = undefined;
    }
  }

  /** The attempt ended: take no more lines, and send those waiting (or, after a lost lease, drop them). */
  async close(send: boolean, retryForMs: number): Promise<void> {
    this.open = false;
    if (send) await this.send(retryForMs, { ifIdle: false, last: true });
    else this.drop();
  }

  private async sendWaiting(retryForMs: number, last: boolean): Promise<void> {
    for (;;) {
      const batch = nextBatch(this.waiting);
      if (batch.length === 0) return;
      try {
        await this.api.logs(this.lease.jobId, this.lease.id, batch, retryForMs, this.lease.traceparent);
      } catch (error) {
        if (error instanceof LeaseLost) {
          this.logger.warn(`job ${this.lease.jobId}: lease lost: ${this.drop()} log line(s) dropped`);
          this.lease.interrupt(this.lease.lostError());
          return;
        }
        if (isTransient(error)) {
          const why = describeError(error);
          if (last) this.logger.warn(`job ${this.lease.jobId}: ${this.drop()} log line(s) not sent: ${why}`);
          else this.logger.info(`job ${this.lease.jobId}: log lines not sent yet: ${why}`);
          return;
        }
        // Another try would be refused too.
        this.logger.warn(`job ${this.lease.jobId}: errand refused ${batch.length} log line(s): ${String(error)}`);
      }
      this.waiting.splice(0, batch.length);
    }
  }

  /** Drop the lines waiting, and any logged later; answers how many were waiting. */
  private drop(): number {
    this.open = false;
    const dropped = this.waiting.length;
    this.waiting = [];
    return dropped;
  }
}

/** The first lines one `/logs` call takes: up to 100 and 60 KiB, at least one. */
function nextBatch(waiting: { line: LogLine; bytes: number }[]): LogLine[] {
  const batch: LogLine[] = [];
  let bytes = 0;
  for (const { line, bytes: size } of waiting.slice(0, BATCH_LINES)) {
    if (batch.length > 0 && bytes + size > BATCH_BYTES) break;
    batch.push(line);
    bytes += size + 1;
  }
  return batch;
}

/** `value` as a log line carries it: strings without NUL (errand refuses it), finite numbers, arrays and objects of them; anything else as its text. */
function jsonSafe(value: unknown): unknown {
  if (typeof value === "string") return value.replaceAll("\0", "\ufffd");
  if (value === null || value === undefined) return null;
  if (typeof value === "boolean") return value;
  if (typeof value === "number") return Number.isFinite(value) ? value : String(value);
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(jsonSafe);
  if (typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [jsonSafe(key), jsonSafe(item)]));
  }
  return jsonSafe(String(value));
}
