/**
 * @file How the JS client's requests reach errand (`/client/core/transport.js`):
 * `fetch` with the bearer token asked of the host app before every request
 * (never kept here), error answers read into `ErrandError`s, errand out of
 * reach as one too (`unreachable`), and network errors, 503s and 429s
 * retried after errand's `Retry-After`. Which paths exist is `Errand`'s;
 * this module knows only how one request goes.
 */

import { fullJitter, sleep } from './backoff.js';
import { ErrandError, problemOf } from './problem.js';

/** Requests to one errand, as one signed-in user. */
export class Transport {
  #baseUrl;
  #token;
  #fetch;

  /**
   * @param {object} options
   * @param {string} options.baseUrl where errand is (a trailing `/` is dropped); `''` for this page's origin
   * @param {() => Promise<string>|string} options.token returns the current bearer JWT
   * @param {typeof fetch} options.fetch
   */
  constructor({ baseUrl, token, fetch }) {
    this.#baseUrl = baseUrl.replace(/\/+$/, '');
    this.#token = token;
    this.#fetch = fetch;
  }

  /**
   * Sends one request, retrying network errors, 503s and 429s `retries` times; JSON answer or null.
   * `bearer: false` sends no token (a public route); `cache` is `fetch`'s (`no-store` unless told).
   */
  async request(method, path, { body, headers = {}, retries = 0, onRetry, bearer = true, cache = 'no-store' }) {
    for (let attempt = 0; ; attempt++) {
      try {
        const init = { method, headers: { Accept: 'application/json', ...headers } };
        if (body !== undefined) {
          init.headers['Content-Type'] = 'application/json';
          init.body = JSON.stringify(body);
        }
        const response = await this.open(path, init.headers, undefined, init, { bearer, cache });
        return response.status === 204 ? null : await response.json();
      } catch (error) {
        const transient = error instanceof ErrandError && [0, 429, 503].includes(error.status) && !isLasting(error);
        if (!transient || attempt >= retries) throw error;
        const inMs = Math.max(error.retryAfterMs ?? 0, fullJitter(attempt, 500, 8_000));
        try {
          onRetry?.({ inMs, error });
        } catch (listenerError) {
          globalThis.reportError?.(listenerError);
        }
        await sleep(inMs);
      }
    }
  }

  /**
   * A successful response to `path` (with the bearer token unless `bearer` is false: a stream ticket in the URL
   * authorises it, or the route is public), or an ErrandError. `cache` is `fetch`'s, `no-store` unless told.
   * An error of `token()` itself goes to the caller as it is: it is the host
   * app's (signed out, say), and no retry here would mend it.
   */
  async open(path, headers, signal, init = { method: 'GET' }, { bearer = true, cache = 'no-store' } = {}) {
    const withAuth = bearer ? { ...headers, Authorization: `Bearer ${await this.#token()}` } : { ...headers };
    let response;
    try {
      response = await this.#fetch(this.#baseUrl + path, { ...init, headers: withAuth, signal, cache });
    } catch (cause) {
      if (cause?.name === 'AbortError') throw cause;
      throw new ErrandError({ status: 0, code: 'unreachable', title: 'errand could not be reached' }, { cause });
    }
    if (response.ok) return response;
    throw await problemOf(response);
  }
}

/** A refusal that no wait lifts: the cap on a user's schedules (a delete does; errand sends no `Retry-After`). */
function isLasting(error) {
  return error.status === 429 && error.problem.scope === 'user_schedules';
}
