/**
 * @file How the operators' console talks to errand (`/client/admin/api.js`):
 * JSON over fetch with the operator's bearer token, problem+json answers
 * turned into an `ErrandError` (`../core/problem.js`, the JS client's
 * too), and a short poll for the views that follow live numbers. It draws
 * nothing; a 401 is handed to the page (which signs out and says why). No
 * retries: an operator sees a failure at once, and the polls try again.
 */

import { problemOf } from '../core/problem.js';
import { queryString } from '../core/query.js';

/**
 * A client for the `/admin` routes. `token()` gives the current token;
 * `onUnauthorized(reason)` runs on a 401 (an expired or foreign token),
 * before the request's promise rejects.
 */
export function createApi({ token, onUnauthorized }) {
  async function request(method, path, { query, body } = {}) {
    const headers = { Authorization: `Bearer ${token()}`, Accept: 'application/json' };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const response = await fetch(path + queryString(query), {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      // Answers about live jobs: never one the browser kept.
      cache: 'no-store',
    });
    if (!response.ok) {
      const error = await problemOf(response, { untitled: '' });
      if (response.status === 401) {
        error.signedOut = true;
        onUnauthorized(error.detail || 'errand did not accept the token.');
      }
      throw error;
    }
    return response.status === 204 ? null : response.json();
  }
  return {
    get: (path, query) => request('GET', path, { query }),
    post: (path, body) => request('POST', path, { body }),
    delete: (path) => request('DELETE', path),
  };
}

/**
 * Calls `tick` now and then every `intervalMs` after each one ends (never
 * two at once), while the tab is visible: a short poll, one cheap request
 * per viewer, where a held stream would pin a connection per viewer. A
 * hidden tab asks nothing, and asks at once when shown again. Returns `stop`.
 */
export function shortPoll(tick, intervalMs) {
  let timer = null;
  let stopped = false;
  let inFlight = false;
  async function run() {
    timer = null;
    if (stopped || inFlight || document.visibilityState !== 'visible') return;
    inFlight = true;
    try {
      await tick();
    } catch {
      // The tick shows its own failures; the poll goes on (errand may be back next time).
    } finally {
      inFlight = false;
      if (!stopped && document.visibilityState === 'visible') timer = setTimeout(run, intervalMs);
    }
  }
  function onVisibility() {
    if (document.visibilityState === 'visible' && !timer) run();
  }
  document.addEventListener('visibilitychange', onVisibility);
  run();
  return function stop() {
    stopped = true;
    clearTimeout(timer);
    document.removeEventListener('visibilitychange', onVisibility);
  };
}
