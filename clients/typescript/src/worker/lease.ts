/**
 * `Lease`: what makes this worker one job attempt's runner, and the one
 * place that knows whether the attempt must stop.
 *
 * The heartbeater renews it and hears, in a renewal's answer, that the job
 * was cancelled or the lease lost; the job's own calls may hear the latter
 * too. Either marks the lease interrupted (the first reason stands) and
 * aborts `signal` with a `Cancelled` or `LeaseLost` as its reason, which is
 * how a handler awaiting anything abortable hears of it at once. Handlers
 * never see this object: they get a `Job` (job.ts) reading it.
 */

import { Cancelled, type JobInterrupted, LeaseLost } from "../errors.js";
import type { ClaimedJob } from "./api.js";

export class Lease {
  readonly jobId: string;
  readonly id: string;
  /** The `traceparent` header of every call about the attempt: the received one, on a first attempt only. */
  readonly traceparent: string | undefined;
  private expiresAt: Date;
  private readonly controller = new AbortController();

  constructor(claimed: ClaimedJob) {
    this.jobId = String(claimed.id);
    this.id = String(claimed.lease_id);
    this.traceparent = claimed.traceparent ?? undefined;
    this.expiresAt = new Date(claimed.lease_expires_at);
    if (Number.isNaN(this.expiresAt.getTime())) throw new TypeError(`lease_expires_at ${claimed.lease_expires_at}`);
  }

  /** Aborted once the attempt must stop; its reason is the `Cancelled` or `LeaseLost`. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get interruption(): JobInterrupted | undefined {
    return this.controller.signal.aborted ? (this.controller.signal.reason as JobInterrupted) : undefined;
  }

  get cancelRequested(): boolean {
    return this.interruption instanceof Cancelled;
  }

  get lost(): boolean {
    return this.interruption instanceof LeaseLost;
  }

  get expires(): Date {
    return this.expiresAt;
  }

  renewed(until: Date): void {
    this.expiresAt = until;
  }

  /** Mark the attempt interrupted; the first reason stands. Answers whether this call marked it. */
  interrupt(reason: JobInterrupted): boolean {
    if (this.controller.signal.aborted) return false;
    this.controller.abort(reason);
    return true;
  }

  /** The `LeaseLost` for a call about a lease that errand no longer counts as this worker's. */
  lostError(): LeaseLost {
    return new LeaseLost(`job ${this.jobId}: lease ${this.id} is no longer this worker's`);
  }

  /** The `Cancelled` a renewal's `cancel_requested` makes. */
  cancelledError(): Cancelled {
    return new Cancelled(`job ${this.jobId} was cancelled`);
  }
}
