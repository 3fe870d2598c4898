/**
 * @file errand's error answers in the browser (`/client/core/problem.js`):
 * an RFC 9457 `application/problem+json` document with a stable `code`,
 * read into an `ErrandError`. The JS client throws it (and exports it from
 * `/client/errand.js`); the operators' console throws it too. It reads
 * answers only: what to do about one (retry, sign out) is the caller's.
 */

/**
 * An error answer from errand (always RFC 9457 `application/problem+json`
 * with a stable `code`), or errand out of reach (`status` 0, `code`
 * `unreachable`).
 */
export class ErrandError extends Error {
  /**
   * @param {{status?: number, code?: string, title?: string, detail?: string}} problem the problem document
   * @param {{cause?: unknown, retryAfterMs?: number}} [options]
   */
  constructor(problem, { cause, retryAfterMs } = {}) {
    super(problem.detail || problem.title || `errand answered ${problem.status}`, { cause });
    this.name = 'ErrandError';
    /** @type {number} the HTTP status; 0 when errand could not be reached */
    this.status = problem.status ?? 0;
    /** @type {string} the stable machine-readable code, e.g. `invalid_params` */
    this.code = problem.code ?? 'unknown';
    /** @type {string|undefined} */
    this.title = problem.title;
    /** @type {string|undefined} */
    this.detail = problem.detail;
    /** @type {object} every member of the problem, e.g. `field` of `invalid_params` */
    this.problem = problem;
    /** @type {number|undefined} from a 503's `Retry-After` */
    this.retryAfterMs = retryAfterMs;
  }
}

/**
 * The `ErrandError` of an error answer: its problem document, or one made
 * up for an answer that has none (a proxy's HTML page), titled by the
 * status text or, without one, `untitled`. The JS client keeps its
 * `'Request failed'`; the console passes `''`, so that such an error reads
 * "errand answered 502", as it always has there.
 * @param {Response} response an answer that is not ok
 * @param {{untitled?: string}} [options]
 * @returns {Promise<ErrandError>}
 */
export async function problemOf(response, { untitled = 'Request failed' } = {}) {
  let problem;
  try {
    problem = await response.json();
  } catch {
    problem = { title: response.statusText || untitled };
  }
  if (typeof problem !== 'object' || problem === null) problem = {};
  problem.status ??= response.status;
  problem.code ??= response.status === 503 ? 'unavailable' : 'unknown';
  const retryAfter = Number(response.headers.get('Retry-After'));
  return new ErrandError(problem, { retryAfterMs: Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : undefined });
}
