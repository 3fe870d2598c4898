/**
 * The errors of errand-client, each a class a caller can tell apart with
 * `instanceof`; none is a bare string.
 *
 * Three families live here:
 * - what a call to errand ended with: `ErrandError` (errand answered with an
 *   RFC 9457 problem), `ErrandUnreachable` (no answer for as long as the call
 *   was allowed to retry), `WaitTimeout` (a job did not end in time);
 * - what a worker's handler throws to say how its job failed: `Retryable`,
 *   `Permanent` (both `JobFailure`);
 * - what the worker throws into a handler to tell it to stop: `LeaseLost`,
 *   `Cancelled` (both `JobInterrupted`; also `job.signal.reason`);
 * and `WebhookVerificationError`, a delivery that is not errand's.
 */

/** An RFC 9457 problem as errand writes it (`application/problem+json`). */
export interface Problem {
  type?: string;
  title?: string;
  status?: number;
  detail?: string;
  /** errand's stable snake_case code: `rate_limited`, `lease_lost`, ... */
  code?: string;
  /** The JSON pointer of the param a `422 invalid_params` names. */
  field?: string;
  [member: string]: unknown;
}

/**
 * errand refused a call: an answer of 4xx, or of 429/5xx once retrying was
 * no longer allowed. Carries the problem errand sent (`code` is the member
 * to act on) and, when errand sent one, its `Retry-After`.
 */
export class ErrandError extends Error {
  override readonly name = "ErrandError";
  readonly status: number;
  readonly code: string | undefined;
  readonly title: string | undefined;
  readonly detail: string | undefined;
  readonly field: string | undefined;
  /** Seconds errand asked the caller to wait (429, 503), if it said. */
  readonly retryAfterSeconds: number | undefined;
  /** The whole problem, its extension members included (`job_id` of an `admission_conflict`). */
  readonly problem: Problem;

  constructor(status: number, problem: Problem, retryAfterSeconds?: number) {
    const code = typeof problem.code === "string" ? problem.code : undefined;
    const words = problem.detail ?? problem.title ?? "no detail";
    super(`errand answered ${status} (${code ?? "no code"}): ${words}`);
    this.status = status;
    this.code = code;
    this.title = problem.title;
    this.detail = problem.detail;
    this.field = problem.field;
    this.retryAfterSeconds = retryAfterSeconds;
    this.problem = problem;
  }
}

/** errand could not be reached (or timed out) for as long as the call could retry; `cause` is the last failure. */
export class ErrandUnreachable extends Error {
  override readonly name = "ErrandUnreachable";
}

/** `waitForJob` ran out of time before the job ended; `lastSeen` is the job as last read. */
export class WaitTimeout extends Error {
  override readonly name = "WaitTimeout";
  constructor(
    message: string,
    readonly lastSeen: unknown,
  ) {
    super(message);
  }
}

/**
 * Base of the failures a handler throws on purpose. The message is shown to
 * the job's owner as the job's `error_message`: write it for a person and
 * keep internals out of it.
 */
export abstract class JobFailure extends Error {
  /** Whether errand should run the job again (while attempts remain). */
  abstract readonly retryable: boolean;
}

/** A failure that may pass: errand runs the job again after its backoff, until `max_attempts` is spent. */
export class Retryable extends JobFailure {
  override readonly name = "Retryable";
  readonly retryable = true;
}

/** A failure another attempt cannot fix (bad params, a missing record): the job fails at once. */
export class Permanent extends JobFailure {
  override readonly name = "Permanent";
  readonly retryable = false;
}

/** Base of what tells a handler to stop: the job is no longer this worker's to finish. */
export abstract class JobInterrupted extends Error {
  /** Why, as the conformance suite and logs name it. */
  abstract readonly why: "lease_lost" | "cancelled";
}

/**
 * errand no longer counts this worker as the job's runner: its lease expired
 * and the job was rescued (it may already run elsewhere), or the job ended.
 * Stop; nothing more is sent for this attempt.
 */
export class LeaseLost extends JobInterrupted {
  override readonly name = "LeaseLost";
  readonly why = "lease_lost";
}

/** The job's owner (or an operator) cancelled it. Stop; the worker tells errand, which ends the job `cancelled`. */
export class Cancelled extends JobInterrupted {
  override readonly name = "Cancelled";
  readonly why = "cancelled";
}

/**
 * A webhook delivery whose headers do not prove it errand's: a header is
 * missing or malformed, its timestamp is out of tolerance, or no signature
 * matches the body. Answer it with a 4xx and do not act on the body.
 */
export class WebhookVerificationError extends Error {
  override readonly name = "WebhookVerificationError";
}
