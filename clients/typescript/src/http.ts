/**
 * The wire: one `Transport` per base URL sends every request of the client
 * and of the worker, with the bearer token, a per-try timeout, and retries.
 *
 * Retrying lives here and only here. A try that got no answer (a network
 * error, a timeout), or an answer of 429 or 5xx, is tried again after a
 * backoff with full jitter, or after errand's `Retry-After` when that is
 * longer, as long as the call's `RetryPolicy` allows; any other 4xx is
 * thrown at once as an `ErrandError`. Callers only retry calls that are safe
 * to repeat: a submission with its idempotency key, reads, a cancel, and the
 * worker's calls, which errand fences on the lease (see worker/api.ts).
 */

import { ErrandError, ErrandUnreachable, type Problem } from "./errors.js";

/** A token, or a function answering the current one (asked before every try, so a long-running process can swap in a fresh one). */
export type TokenSource = string | (() => string | Promise<string>);

type RequestBody = NonNullable<RequestInit["body"]>;

/** How long one call may keep trying. */
export interface RetryPolicy {
  /** Tries, the first included: 1 means no retry. */
  maxAttempts: number;
  /** No try starts after this long since the first; a `Retry-After` past it ends the call with the refusal. */
  retryForMs: number;
}

/** The longest pause between two tries, unless errand's `Retry-After` asks for more. */
const MAX_BACKOFF_MS = 5_000;
const FIRST_BACKOFF_MS = 100;

export interface TransportOptions {
  baseUrl: string;
  token: TokenSource;
  /** The time allowed for one try of a request (a claim's long poll adds its own wait). */
  timeoutMs: number;
  userAgent: string;
  /** The `fetch` to send with (the global one by default): a proxy or a recorder may wrap it. */
  fetch?: typeof fetch;
  /** Told of every retry, for the caller's logs. */
  onRetry?: (what: string, pauseMs: number, failure: Error) => void;
}

/** One request. `body` is a function so that a retry sends a fresh body (a stream can be read once). */
export interface Call {
  method: "GET" | "POST" | "PUT";
  path: string;
  query?: Record<string, string | number | undefined>;
  json?: unknown;
  body?: () => { body: RequestBody; contentType: string; contentLength?: number };
  headers?: Record<string, string | undefined>;
  retry: RetryPolicy;
  signal?: AbortSignal | undefined;
  /** Overrides the transport's per-try timeout (a long poll, a large upload). */
  timeoutMs?: number;
  /** `manual` answers a redirect itself instead of following it (the result's 303). */
  redirect?: "manual";
}

export class Transport {
  readonly baseUrl: string;
  private readonly options: TransportOptions;
  private readonly fetch: typeof fetch;

  constructor(options: TransportOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.options = options;
    this.fetch = options.fetch ?? globalThis.fetch;
  }

  /**
   * Send `call`, retried as its policy allows; answers the first answer under
   * 400. Throws `ErrandError` for a refusal, `ErrandUnreachable` when no
   * answer came in time, and the signal's reason once `call.signal` aborts.
   */
  async send(call: Call): Promise<Response> {
    const what = `${call.method} ${call.path}`;
    const started = Date.now();
    let backoff = FIRST_BACKOFF_MS;
    for (let attempt = 1; ; attempt++) {
      call.signal?.throwIfAborted();
      let failure: Error;
      let retryAfterMs = 0;
      const answer = await this.sendOnce(call).catch((error: unknown) => {
        if (call.signal?.aborted) throw call.signal.reason;
        return unreachable(what, error);
      });
      if (answer instanceof Response) {
        if (answer.status < 400) return answer;
        const refusal = await errandError(answer);
        if (answer.status !== 429 && answer.status < 500) throw refusal;
        failure = refusal;
        retryAfterMs = (refusal.retryAfterSeconds ?? 0) * 1000;
      } else {
        failure = answer;
      }
      // Full jitter: clients that lost errand together do not all come back at once.
      const pause = Math.max(retryAfterMs, backoff / 2 + Math.random() * (backoff / 2));
      if (attempt >= call.retry.maxAttempts || Date.now() - started + pause > call.retry.retryForMs) throw failure;
      this.options.onRetry?.(what, pause, failure);
      await sleep(pause, call.signal);
      backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
    }
  }

  /** `send`, then the answer's body as JSON. */
  async json<T>(call: Call): Promise<{ body: T; response: Response }> {
    const response = await this.send(call);
    return { body: (await response.json()) as T, response };
  }

  private async sendOnce(call: Call): Promise<Response> {
    const headers = new Headers({ "User-Agent": this.options.userAgent });
    headers.set("Authorization", `Bearer ${await currentToken(this.options.token)}`);
    for (const [name, value] of Object.entries(call.headers ?? {})) {
      if (value !== undefined) headers.set(name, value);
    }
    let body: RequestBody | undefined;
    if (call.json !== undefined) {
      headers.set("Content-Type", "application/json");
      body = JSON.stringify(call.json);
    } else if (call.body) {
      const made = call.body();
      headers.set("Content-Type", made.contentType);
      if (made.contentLength !== undefined) headers.set("Content-Length", String(made.contentLength));
      body = made.body;
    }
    const timeout = AbortSignal.timeout(call.timeoutMs ?? this.options.timeoutMs);
    const init: RequestInit & { duplex?: "half" } = {
      method: call.method,
      headers,
      signal: call.signal ? AbortSignal.any([call.signal, timeout]) : timeout,
      redirect: call.redirect ?? "follow",
    };
    if (body !== undefined) {
      init.body = body;
      // A streamed body: fetch insists on being told it is sent before the answer is read.
      if (body instanceof ReadableStream) init.duplex = "half";
    }
    return this.fetch(this.url(call.path, call.query), init);
  }

  private url(path: string, query: Call["query"]): string {
    const url = new URL(this.baseUrl + path);
    for (const [name, value] of Object.entries(query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    return url.toString();
  }
}

async function currentToken(token: TokenSource): Promise<string> {
  return typeof token === "string" ? token : await token();
}

/** The `ErrandError` for a refusal, from its problem+json body (or the start of whatever body it had). */
export async function errandError(response: Response): Promise<ErrandError> {
  const text = await response.text().catch(() => "");
  let problem: Problem = { detail: text.slice(0, 500) };
  if ((response.headers.get("content-type") ?? "").includes("json")) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) problem = parsed as Problem;
    } catch {
      // Not JSON after all: keep the text.
    }
  }
  return new ErrandError(response.status, problem, retryAfterSeconds(response));
}

/** The seconds a `Retry-After` asks for (seconds, or an HTTP date), if the answer has one. */
export function retryAfterSeconds(response: Response): number | undefined {
  const header = response.headers.get("retry-after");
  if (header === null) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, (at - Date.now()) / 1000);
}

function unreachable(what: string, error: unknown): ErrandUnreachable {
  // fetch's own TypeError says only "fetch failed"; the reason is its cause.
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  const words = cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
  return new ErrandUnreachable(`${what}: ${words}`, { cause: error });
}

/** Wait `ms`, or reject with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Whether a call's error may pass with time (no answer, 429, 5xx), as opposed to a refusal another try would get again. */
export function isTransient(error: unknown): boolean {
  return (
    error instanceof ErrandUnreachable ||
    (error instanceof ErrandError && (error.status === 429 || error.status >= 500))
  );
}

/** An error's words for a log line. */
export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
