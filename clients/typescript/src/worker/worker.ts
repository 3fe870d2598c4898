/**
 * `Worker`: runs handlers for the jobs errand hands out over `/worker/v1`.
 *
 * One claim loop long-polls for as many jobs as there are free slots
 * (`concurrency`), starts each on the event loop, and the heartbeater
 * renews their leases. A handler's end is turned into the attempt's end:
 * a returned object (or nothing) `/complete`s it; `Retryable` and
 * `Permanent` `/fail` it with their message; anything else fails it as
 * retryable with a generic message (the error is logged, never sent: it may
 * hold internals); an attempt whose lease was lost sends nothing, and one
 * whose job was cancelled is failed at once so that it ends now.
 *
 * `stop()` (or SIGTERM/SIGINT with `installSignalHandlers`) stops claiming;
 * `run()` resolves once the running jobs have ended, those a claim under way
 * brings included (they are leased to this worker: dropping them would
 * leave them waiting for their leases to run out).
 */

import { ErrandError, JobFailure, LeaseLost } from "../errors.js";
import { describeError, isTransient, sleep, type TokenSource, Transport } from "../http.js";
import { type ClaimedJob, WorkerApi } from "./api.js";
import { Heartbeater } from "./heartbeat.js";
import { Job } from "./job.js";
import { Lease } from "./lease.js";
import { type Logger, stderrLogger } from "./logger.js";
import { LogBuffer } from "./logs.js";

/** What a job's owner reads when a handler threw something unexpected. */
export const GENERIC_ERROR = "The job failed because of an unexpected error in its worker.";

/** A job's result: a JSON object, or nothing. */
export type JobResult = Record<string, unknown>;

// biome-ignore lint/suspicious/noConfusingVoidType: a handler that returns nothing is a void function.
export type Handler = (job: Job) => Promise<JobResult | null | undefined | void> | JobResult | null | undefined | void;

/** The handlers: one per type, or one for every type listed. */
export type WorkerHandlers = { types: Record<string, Handler> } | { types: readonly string[]; handler: Handler };

export type WorkerOptions = WorkerHandlers & {
  /** errand's base URL. */
  baseUrl: string;
  /** A worker token (`errand token --worker --types ...`), or a function answering the current one. */
  token: TokenSource;
  /** Jobs run at once. */
  concurrency?: number;
  /** How long one claim waits for work, 1 to 60 s: it bounds how long an idle worker takes to stop. */
  pollWaitSeconds?: number;
  /** How long a job's end (`/complete`, `/fail`), upload or checkpoint is retried while errand cannot be reached. */
  retryForMs?: number;
  /** The time allowed for one request (a claim gets its wait more). */
  timeoutMs?: number;
  /** SIGTERM and SIGINT stop the worker (and a second one acts as without it). */
  installSignalHandlers?: boolean;
  logger?: Logger;
  fetch?: typeof fetch;
};

/** The most jobs one claim may ask for (errand's limit). */
const MAX_CLAIM = 100;
/** The longest pause of the claim loop after errand could not be reached. */
const MAX_CLAIM_BACKOFF_MS = 30_000;

export class Worker {
  readonly concurrency: number;
  /** Exposed for tests (its `pause()` lets leases run out); not for applications. */
  readonly heartbeater: Heartbeater;
  private readonly handlers: Map<string, Handler>;
  private readonly api: WorkerApi;
  private readonly logger: Logger;
  private readonly pollWaitSeconds: number;
  private readonly retryForMs: number;
  private readonly installSignals: boolean;
  private readonly running = new Set<Promise<void>>();
  private readonly stopping = new AbortController();
  /** Resolves the claim loop's wait for a free slot or a stop. */
  private wake: (() => void) | undefined;
  private started = false;

  constructor(options: WorkerOptions) {
    this.handlers = handlerMap(options);
    this.concurrency = options.concurrency ?? 1;
    if (!Number.isInteger(this.concurrency) || this.concurrency < 1) throw new RangeError("concurrency: at least 1");
    this.pollWaitSeconds = options.pollWaitSeconds ?? 10;
    // errand takes whole seconds, and 0 would make an idle worker poll in a tight loop.
    if (!Number.isInteger(this.pollWaitSeconds) || this.pollWaitSeconds < 1 || this.pollWaitSeconds > 60) {
      throw new RangeError("pollWaitSeconds: a whole number of seconds from 1 to 60");
    }
    this.retryForMs = options.retryForMs ?? 60_000;
    this.installSignals = options.installSignalHandlers ?? false;
    this.logger = options.logger ?? stderrLogger;
    const transport = new Transport({
      baseUrl: options.baseUrl,
      token: options.token,
      timeoutMs: options.timeoutMs ?? 10_000,
      userAgent: "errand-worker-typescript",
      onRetry: (what, pauseMs, failure) =>
        this.logger.info(`retrying ${what} in ${Math.round(pauseMs)} ms after ${failure.message}`),
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
    this.api = new WorkerApi(transport);
    this.heartbeater = new Heartbeater(this.api, this.logger);
  }

  /** Stop claiming; `run()` resolves once the running jobs have ended. */
  stop(): void {
    this.stopping.abort();
    this.wake?.();
  }

  /**
   * Claim and run jobs until `stop()`; then let the running jobs finish and
   * resolve. A worker runs once. Rejects with the `ErrandError` when errand
   * refuses to hand out jobs at all (a bad token, a type it may not take),
   * after the running jobs have ended.
   */
  async run(): Promise<void> {
    if (this.started) throw new Error("a Worker runs once: make a new one");
    this.started = true;
    const removeSignalHandlers = this.installSignals ? this.onSignals() : () => {};
    this.logger.info(`worker started: types ${[...this.handlers.keys()].join(", ")}, concurrency ${this.concurrency}`);
    try {
      await this.claimLoop();
    } finally {
      this.logger.info(`worker stopping: waiting for ${this.running.size} running job(s)`);
      await Promise.all(this.running);
      removeSignalHandlers();
      this.logger.info("worker stopped");
    }
  }

  private async claimLoop(): Promise<void> {
    const types = [...this.handlers.keys()].sort();
    let failures = 0;
    for (;;) {
      const free = await this.freeSlots();
      if (free === 0) return;
      let claimed: Awaited<ReturnType<WorkerApi["claim"]>>;
      try {
        claimed = await this.api.claim(types, Math.min(free, MAX_CLAIM), this.pollWaitSeconds);
      } catch (error) {
        if (!isTransient(error)) {
          // A refusal another try cannot change (token, types): say so rather than poll forever.
          this.logger.error("errand refused to hand out jobs; stopping", error);
          throw error;
        }
        failures += 1;
        const pause = Math.min(MAX_CLAIM_BACKOFF_MS, 500 * 2 ** Math.min(failures, 10));
        this.logger.warn(`claiming jobs failed (${describeError(error)}); trying again in ${pause} ms`);
        await sleep(pause, this.stopping.signal).catch(() => {});
        continue;
      }
      failures = 0;
      for (const job of claimed.jobs) this.start(job, claimed.serverTime);
    }
  }

  /** Wait until a slot is free; answers how many are, or 0 once stopping. */
  private async freeSlots(): Promise<number> {
    while (this.running.size >= this.concurrency && !this.stopping.signal.aborted) {
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
    return this.stopping.signal.aborted ? 0 : this.concurrency - this.running.size;
  }

  private start(claimed: ClaimedJob, serverTime: Date | undefined): void {
    let lease: Lease;
    try {
      lease = new Lease(claimed);
    } catch (error) {
      // Without its id and lease nothing can be sent for it: errand rescues it when the lease runs out.
      this.logger.error(`errand handed out a job this worker cannot read: ${JSON.stringify(claimed)}`, error);
      return;
    }
    const logs = new LogBuffer(this.api, lease, this.logger);
    const job = new Job(claimed, lease, this.api, logs, this.retryForMs, this.logger);
    this.heartbeater.track(lease, logs, serverTime);
    const execution = this.execute(job, lease, logs).finally(() => {
      this.running.delete(execution);
      this.wake?.();
    });
    this.running.add(execution);
  }

  private async execute(job: Job, lease: Lease, logs: LogBuffer): Promise<void> {
    try {
      await this.runHandler(job, lease);
    } catch (error) {
      this.logger.error(`job ${job.id}: ending it failed unexpectedly`, error);
    } finally {
      // Renewed until here: sending the outcome may take retries.
      this.heartbeater.forget(lease);
      // The last lines, under the lease the attempt ended with (after a lost lease they are dropped).
      await logs.close(!lease.lost, this.retryForMs).catch((error: unknown) => {
        this.logger.error(`job ${job.id}: sending its last log lines failed unexpectedly`, error);
      });
    }
  }

  private async runHandler(job: Job, lease: Lease): Promise<void> {
    const handler = this.handlers.get(job.type);
    if (!handler) {
      this.logger.error(`job ${job.id}: no handler for type ${job.type}`);
      return this.fail(job, lease, GENERIC_ERROR, true);
    }
    this.logger.info(`job ${job.id} (${job.type}, attempt ${job.attempt}): started`);
    let result: JobResult | undefined;
    try {
      result = checkedResult(await handler(job));
    } catch (error) {
      // Once errand said stop, whatever the handler did after is moot.
      if (lease.signal.aborted) return this.endInterrupted(job, lease);
      if (error instanceof JobFailure) return this.fail(job, lease, error.message, error.retryable);
      // A JobInterrupted lands here when no call of this job threw it: the handler's own doing, so a bug.
      this.logger.error(`job ${job.id} (${job.type}, attempt ${job.attempt}): handler threw`, error);
      return this.fail(job, lease, GENERIC_ERROR, true);
    }
    if (lease.signal.aborted) return this.endInterrupted(job, lease);
    return this.complete(job, lease, result);
  }

  private async endInterrupted(job: Job, lease: Lease): Promise<void> {
    if (lease.cancelRequested) {
      // Any end but a completion ends a cancelled job `cancelled`: saying so now spares the user the wait for the lease.
      this.logger.info(`job ${job.id}: stopped after its cancel`);
      return this.fail(job, lease, "Cancelled.", false);
    }
    this.logger.info(`job ${job.id}: stopped after its lease was lost; nothing sent`);
  }

  private async complete(job: Job, lease: Lease, result: JobResult | undefined): Promise<void> {
    try {
      await this.api.complete(job.id, lease.id, result, this.retryForMs, lease.traceparent);
      this.logger.info(`job ${job.id}: completed`);
    } catch (error) {
      if (error instanceof LeaseLost) {
        this.logger.warn(`job ${job.id}: lease lost before its completion was recorded`);
      } else if (error instanceof ErrandError && !isTransient(error)) {
        // errand refused the result itself (a `storage_key` field, NUL): failing says so at once, rather than on every attempt's lease.
        this.logger.error(`job ${job.id}: errand refused its result: ${error.message}`);
        await this.fail(job, lease, GENERIC_ERROR, true);
      } else {
        this.logger.error(`job ${job.id}: completion not recorded; errand runs it again once its lease expires`, error);
      }
    }
  }

  private async fail(job: Job, lease: Lease, message: string, retryable: boolean): Promise<void> {
    try {
      const verdict = await this.api.fail(job.id, lease.id, message, retryable, this.retryForMs, lease.traceparent);
      this.logger.info(`job ${job.id}: failed (${verdict}): ${message}`);
    } catch (error) {
      if (error instanceof LeaseLost) this.logger.warn(`job ${job.id}: lease lost before its end was recorded`);
      else this.logger.error(`job ${job.id}: failure not recorded; errand runs it again once its lease expires`, error);
    }
  }

  /** SIGTERM and SIGINT stop the worker, once; answers the function that takes the listeners off again. */
  private onSignals(): () => void {
    const onSignal = (signal: NodeJS.Signals) => {
      this.logger.info(`${signal} received: stopping once the running jobs end`);
      // The next one acts as it would without the worker (Node exits).
      remove();
      this.stop();
    };
    const remove = () => {
      process.off("SIGTERM", onSignal);
      process.off("SIGINT", onSignal);
    };
    process.on("SIGTERM", onSignal);
    process.on("SIGINT", onSignal);
    return remove;
  }
}

function handlerMap(options: WorkerHandlers): Map<string, Handler> {
  const handlers = Array.isArray(options.types)
    ? new Map(options.types.map((type) => [type, (options as { handler: Handler }).handler]))
    : new Map(Object.entries(options.types as Record<string, Handler>));
  if (handlers.size === 0) throw new TypeError("no job type: give types and their handlers");
  for (const [type, handler] of handlers) {
    if (typeof handler !== "function") throw new TypeError(`no handler for ${type}`);
  }
  return handlers;
}

/** The handler's value, if it can be a job's result: a plain object JSON can carry, or nothing. */
function checkedResult(value: unknown): JobResult | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "object" || Array.isArray(value)) {
    throw new TypeError(
      `the handler returned ${Array.isArray(value) ? "an array" : typeof value}; a job's result is an object`,
    );
  }
  JSON.stringify(value); // throws on what JSON cannot carry (a cycle, a BigInt)
  return value as JobResult;
}
