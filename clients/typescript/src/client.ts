/**
 * `ErrandClient`: a backend's side of errand's user API. Submit a job (one
 * idempotency key per intent, reused on every retry), read it, list,
 * cancel, wait for its end, and get its result's download URL.
 *
 * Every call may act for a user through a service token (`onBehalfOf`, sent
 * as `Errand-On-Behalf-Of: <tenant>/<user>`). Retries and errors are the
 * transport's (http.ts): a refusal is an `ErrandError` carrying errand's
 * problem, no answer in time an `ErrandUnreachable`.
 */

import { randomUUID } from "node:crypto";
import { ErrandError, WaitTimeout } from "./errors.js";
import { type RetryPolicy, retryAfterSeconds, sleep, type TokenSource, Transport } from "./http.js";
import type { BundledJobTypes, JobList, JobStatus, JobView } from "./job-types.js";

/** The statuses a job does not leave. */
const TERMINAL: ReadonlySet<string> = new Set<JobStatus>(["completed", "failed", "cancelled"]);

/** The user a service token acts for. */
export interface OnBehalfOf {
  tenant: string;
  user: string;
}

export interface CallOptions {
  signal?: AbortSignal;
  /** Act as this user (a service token's power, `Errand-On-Behalf-Of`): the job is theirs, their scope, quotas and notifications. */
  onBehalfOf?: OnBehalfOf;
}

export interface SubmitOptions extends CallOptions {
  /** One per intent (a click, a nightly run): a retry of the same intent names the same job. A fresh UUID when absent, kept for this call's retries. */
  idempotencyKey?: string;
  /** The W3C `traceparent` of the work asking for the job: its worker continues the trace. */
  traceparent?: string;
  /** How soon it runs beside its tenant's other interactive jobs, -4 to 4 (`?priority=`). */
  priority?: number;
  /** An export's file format, one its type offers (`?format=`). */
  format?: string;
}

/** What a submission made of the request. */
export interface Submitted {
  job: JobView;
  /** The key the job was submitted under (the generated one when none was given). */
  idempotencyKey: string;
  /** A new job was recorded (`202`). */
  created: boolean;
  /** The key named a job recorded before: this is it (`Idempotent-Replayed`). */
  replayed: boolean;
  /** An unfinished job of the same admission key is this request's job (`Errand-Joined`). */
  joined: boolean;
  /** The waiting job of the same admission key took these params and starts later (`Errand-Debounced`). */
  debounced: boolean;
}

export interface ListOptions extends CallOptions {
  status?: JobStatus;
  type?: string;
  limit?: number;
  cursor?: string;
}

export interface WaitOptions extends CallOptions {
  /** Give up (`WaitTimeout`) after this long; 10 minutes by default. */
  timeoutMs?: number;
  /** The first pause between two reads; it grows by half each time up to `maxPollMs`. */
  pollMs?: number;
  maxPollMs?: number;
}

export interface ErrandClientOptions {
  /** errand's base URL, e.g. `https://errand.example.com`. */
  baseUrl: string;
  /** A user's token, or a service token acting for users through `onBehalfOf`; or a function answering the current one. */
  token: TokenSource;
  /** How long one call keeps retrying through network errors, 429 and 5xx (defaults: 6 tries within 2 minutes). */
  retry?: Partial<RetryPolicy>;
  /** The time allowed for one try of a request: 30 s by default. */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/** A function answering whether a string is a job type name of `Types` or another (the escape hatch). */
type OtherTypeName<Types, T extends string> = T extends keyof Types ? never : T;

/**
 * A client of errand's user API. `Types` maps each job type's name to its
 * params: by default the types of the `config.toml` this package was
 * generated from; `ErrandClient<JobTypesOf<paths>>` with your own errand's
 * generated `paths` types yours.
 */
export class ErrandClient<Types extends object = BundledJobTypes> {
  private readonly transport: Transport;
  private readonly retry: RetryPolicy;

  constructor(options: ErrandClientOptions) {
    this.transport = new Transport({
      baseUrl: options.baseUrl,
      token: options.token,
      timeoutMs: options.timeoutMs ?? 30_000,
      userAgent: "errand-client-typescript",
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
    this.retry = { maxAttempts: 6, retryForMs: 120_000, ...options.retry };
  }

  /**
   * `POST /jobs/{type}`: record a job (or find the one the key names). A
   * known type takes its params' type; another name takes any JSON object.
   * Retried with the same key through network errors, 429 and 503 (after
   * errand's `Retry-After`), so however many tries it takes there is one job.
   */
  submit<T extends keyof Types & string>(type: T, params: Types[T], options?: SubmitOptions): Promise<Submitted>;
  submit<T extends string>(
    type: OtherTypeName<Types, T>,
    params: Record<string, unknown>,
    options?: SubmitOptions,
  ): Promise<Submitted>;
  async submit(type: string, params: unknown, options: SubmitOptions = {}): Promise<Submitted> {
    const idempotencyKey = options.idempotencyKey ?? randomUUID();
    const { body, response } = await this.transport.json<JobView>({
      method: "POST",
      path: `/jobs/${encodeURIComponent(type)}`,
      query: { priority: options.priority, format: options.format },
      json: params,
      headers: { "Idempotency-Key": idempotencyKey, traceparent: options.traceparent, ...behalf(options) },
      retry: this.retry,
      signal: options.signal,
    });
    const flag = (name: string) => response.headers.get(name)?.toLowerCase() === "true";
    return {
      job: body,
      idempotencyKey,
      created: response.status === 202,
      replayed: flag("Idempotent-Replayed"),
      joined: flag("Errand-Joined"),
      debounced: flag("Errand-Debounced"),
    };
  }

  /** `GET /jobs/{id}`: the caller's job (`ErrandError` 404 for anything else). */
  async getJob(id: string, options: CallOptions = {}): Promise<JobView> {
    return (await this.read(id, options)).job;
  }

  /** `GET /jobs`: the caller's jobs, newest first; `next_cursor` for the next page. */
  async listJobs(options: ListOptions = {}): Promise<JobList> {
    const { status, type, limit, cursor } = options;
    const { body } = await this.transport.json<JobList>({
      method: "GET",
      path: "/jobs",
      query: { status, type, limit, cursor },
      headers: behalf(options),
      retry: this.retry,
      signal: options.signal,
    });
    return body;
  }

  /** `POST /jobs/{id}/cancel`: `cancelled` at once for a waiting job, `cancelling` while a running one stops. */
  async cancel(id: string, options: CallOptions = {}): Promise<JobView> {
    const { body } = await this.transport.json<JobView>({
      method: "POST",
      path: `/jobs/${encodeURIComponent(id)}/cancel`,
      headers: behalf(options),
      retry: this.retry,
      signal: options.signal,
    });
    return body;
  }

  /** `GET /jobs/{id}/result`: a fresh signed download URL of the job's file (the 303's `Location`). */
  async resultUrl(id: string, options: CallOptions = {}): Promise<string> {
    const response = await this.transport.send({
      method: "GET",
      path: `/jobs/${encodeURIComponent(id)}/result`,
      headers: behalf(options),
      retry: this.retry,
      signal: options.signal,
      redirect: "manual",
    });
    await response.body?.cancel();
    const location = response.headers.get("location");
    if (response.status !== 303 || location === null) {
      throw new ErrandError(response.status, { detail: "expected a 303 to the result's download URL" });
    }
    return new URL(location, this.transport.baseUrl).toString();
  }

  /**
   * Poll `GET /jobs/{id}` until the job ended (completed, failed or
   * cancelled) and answer it; the pause between reads grows, and follows
   * errand's `Retry-After` when it sends one. `WaitTimeout` after `timeoutMs`.
   */
  async waitForJob(id: string, options: WaitOptions = {}): Promise<JobView> {
    const deadline = Date.now() + (options.timeoutMs ?? 600_000);
    const maxPoll = options.maxPollMs ?? 5_000;
    let pause = options.pollMs ?? 250;
    for (;;) {
      const remaining = deadline - Date.now();
      const { job, retryAfterMs } = await this.read(id, options, Math.max(remaining, 0));
      if (TERMINAL.has(job.status)) return job;
      const left = deadline - Date.now();
      if (left <= 0) throw new WaitTimeout(`job ${id} did not end within ${options.timeoutMs ?? 600_000} ms`, job);
      await sleep(Math.min(Math.max(pause, retryAfterMs ?? 0), left), options.signal);
      pause = Math.min(pause * 1.5, maxPoll);
    }
  }

  private async read(
    id: string,
    options: CallOptions,
    retryForMs = this.retry.retryForMs,
  ): Promise<{ job: JobView; retryAfterMs: number | undefined }> {
    const { body, response } = await this.transport.json<JobView>({
      method: "GET",
      path: `/jobs/${encodeURIComponent(id)}`,
      headers: behalf(options),
      retry: { ...this.retry, retryForMs: Math.min(retryForMs, this.retry.retryForMs) },
      signal: options.signal,
    });
    const seconds = retryAfterSeconds(response);
    return { job: body, retryAfterMs: seconds === undefined ? undefined : seconds * 1000 };
  }
}

/**
 * The `Errand-On-Behalf-Of` header of a call, if it acts for a user:
 * `tenant/user`, each part percent-encoded (errand decodes them), so that a
 * `/` or a non-ASCII character in either cannot be misread.
 */
function behalf(options: CallOptions): Record<string, string> {
  const who = options.onBehalfOf;
  if (!who) return {};
  if (!who.tenant || !who.user) throw new TypeError("onBehalfOf needs a tenant and a user");
  return { "Errand-On-Behalf-Of": `${encodeURIComponent(who.tenant)}/${encodeURIComponent(who.user)}` };
}
