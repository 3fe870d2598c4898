/**
 * What the tests wait and watch with, errand or not: `waitUntil` (a
 * condition with a timeout, never a bare sleep), `withTimeout`, `deferred`
 * (a handler's go-ahead, a test's "it started"), `onTeardown` (clean-up in
 * the reverse order of set-up), and `Recorder` (a fetch that keeps what went
 * over the wire to the real errand).
 */

import type { TestContext } from "node:test";

/** Poll `condition` until it answers something truthy, and answer that; throw after `timeoutMs`. */
export async function waitUntil<T>(
  condition: () => T | Promise<T>,
  timeoutMs = 15_000,
  what = "the condition",
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await condition();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((done) => setTimeout(done, 50));
  }
}

const teardowns = new WeakMap<TestContext, (() => unknown)[]>();

/**
 * Run `step` when the test ends, after the steps registered later (last in,
 * first out, as nested fixtures unwind): a worker stops before its errand.
 */
export function onTeardown(t: TestContext, step: () => unknown): void {
  let steps = teardowns.get(t);
  if (!steps) {
    const registered: (() => unknown)[] = [];
    teardowns.set(t, registered);
    t.after(async () => {
      // Every step runs (errand stops even when a worker did not); the first failure is the test's.
      const failures: unknown[] = [];
      for (const each of registered.reverse())
        await Promise.resolve()
          .then(each)
          .catch((error) => failures.push(error));
      if (failures.length > 0) throw failures[0];
    });
    steps = registered;
  }
  steps.push(step);
}

/** `promise`, or a rejection naming `what` after `ms`. */
export async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** A promise and the functions that settle it: a handler's go-ahead, a test's "it started". */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

/** One request a `Recorder` saw: what was sent and what came of it. */
export interface Sent {
  method: string;
  path: string;
  headers: Headers;
  /** The body, when it was text (JSON); a stream is not read here. */
  body: string | undefined;
  /** The answer's status, or the network error's text. */
  outcome: number | string;
}

/**
 * A `fetch` that sends through the real one (to the real errand) and keeps
 * what went over the wire, for tests about what a client sends: keys,
 * retries, `traceparent` headers, batches.
 */
export class Recorder {
  readonly sent: Sent[] = [];
  readonly fetch: typeof fetch = async (input, init) => {
    // Not a `Request` made of them: that would take a streamed body from the real fetch.
    const url = input instanceof Request ? input.url : input.toString();
    const entry: Sent = {
      method: init?.method ?? "GET",
      path: new URL(url).pathname,
      headers: new Headers(init?.headers),
      body: typeof init?.body === "string" ? init.body : undefined,
      outcome: "pending",
    };
    this.sent.push(entry);
    try {
      const response = await fetch(input, init);
      entry.outcome = response.status;
      return response;
    } catch (error) {
      entry.outcome = String(error);
      throw error;
    }
  };

  /** The requests whose path ends with `suffix`. */
  to(suffix: string): Sent[] {
    return this.sent.filter((entry) => entry.path.endsWith(suffix));
  }
}
