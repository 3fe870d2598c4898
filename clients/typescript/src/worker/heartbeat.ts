/**
 * The `Heartbeater`: renews the lease of every running job, each on a timer
 * of its own, every third of what is left of the lease, so that two
 * renewals can fail before it runs out.
 *
 * A renewal's answer is also how the worker hears that a job must stop:
 * `409 lease_lost` (rescued elsewhere, or ended) or `cancel_requested`.
 * Either interrupts the job's lease (lease.ts), and the job is no longer
 * renewed. A renewal also sends the lines the job logged since the last one.
 *
 * Timers run on the event loop: a handler that keeps the loop busy (CPU
 * work without awaiting) delays its own renewals and those of every other
 * job, and may lose their leases. Run such work in a worker thread.
 */

import { LeaseLost } from "../errors.js";
import { describeError } from "../http.js";
import type { WorkerApi } from "./api.js";
import type { Lease } from "./lease.js";
import type { Logger } from "./logger.js";
import type { LogBuffer } from "./logs.js";

/** The shortest pause between two renewals, should the clocks say the lease already ended. */
const MIN_INTERVAL_MS = 200;
/** After a renewal failed for a reason that may pass, the next try comes this soon (or at the normal interval, if sooner). */
const RETRY_INTERVAL_MS = 1_000;

/**
 * Milliseconds until a lease ending at `expires` should be renewed: a third
 * of what is left, measured on this machine's clock and, when errand sent a
 * `Date`, on errand's, the shorter winning (a worker whose clock lags
 * errand's would otherwise renew too late).
 */
export function renewalInterval(expires: Date, serverTime?: Date): number {
  let remaining = expires.getTime() - Date.now();
  if (serverTime) remaining = Math.min(remaining, expires.getTime() - serverTime.getTime());
  return Math.max(MIN_INTERVAL_MS, remaining / 3);
}

interface Tracked {
  lease: Lease;
  logs: LogBuffer;
  timer: NodeJS.Timeout | undefined;
}

export class Heartbeater {
  private readonly tracked = new Map<string, Tracked>();
  /** A test hook: while paused, no lease is renewed, so that leases run out. */
  private paused = false;

  constructor(
    private readonly api: WorkerApi,
    private readonly logger: Logger,
  ) {}

  /** Renew `lease` until `forget(lease)`; `serverTime` is errand's clock when it handed the job out. */
  track(lease: Lease, logs: LogBuffer, serverTime?: Date): void {
    const entry: Tracked = { lease, logs, timer: undefined };
    this.tracked.set(lease.id, entry);
    this.schedule(entry, renewalInterval(lease.expires, serverTime));
  }

  /** Stop renewing `lease` (its attempt ended, or must stop). */
  forget(lease: Lease): void {
    const entry = this.tracked.get(lease.id);
    if (entry) clearTimeout(entry.timer);
    this.tracked.delete(lease.id);
  }

  /** Test hook: renew nothing until `resume()`. */
  pause(): void {
    this.paused = true;
  }

  /** Test hook: undo `pause()`; renewals due meanwhile go at once. */
  resume(): void {
    this.paused = false;
    for (const entry of this.tracked.values()) this.schedule(entry, 0);
  }

  private schedule(entry: Tracked, ms: number): void {
    clearTimeout(entry.timer);
    entry.timer = setTimeout(() => void this.renew(entry), ms);
  }

  private async renew(entry: Tracked): Promise<void> {
    const { lease } = entry;
    if (this.paused || this.tracked.get(lease.id) !== entry) return;
    if (lease.signal.aborted) {
      this.forget(lease);
      return;
    }
    const interval = renewalInterval(lease.expires);
    // Retrying beyond a fraction of the interval would let the lease run out while waiting: try again on the next round.
    const retryForMs = Math.min(interval, RETRY_INTERVAL_MS);
    try {
      const answer = await this.api.heartbeat(lease.jobId, lease.id, retryForMs, lease.traceparent);
      lease.renewed(answer.leaseExpiresAt);
      if (answer.cancelRequested) {
        this.logger.info(`job ${lease.jobId}: cancel requested: stopping it`);
        lease.interrupt(lease.cancelledError());
        this.forget(lease);
        return;
      }
      if (this.tracked.get(lease.id) !== entry) return; // forgotten while the renewal was under way
      this.schedule(entry, renewalInterval(answer.leaseExpiresAt, answer.serverTime));
      void entry.logs.send(retryForMs, { ifIdle: true, last: false });
    } catch (error) {
      if (error instanceof LeaseLost) {
        this.logger.warn(`job ${lease.jobId}: lease lost (rescued after expiring, or ended): stopping it`);
        lease.interrupt(error);
        this.forget(lease);
      } else {
        const why = describeError(error);
        this.logger.warn(`job ${lease.jobId}: lease not renewed: ${why}`);
        if (this.tracked.get(lease.id) === entry) this.schedule(entry, retryForMs);
      }
    }
  }
}
