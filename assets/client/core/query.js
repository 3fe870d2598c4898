/**
 * @file Query strings both ways (`/client/core/query.js`): `?a=1&b=2` from
 * an object, for the API's list filters and the console's hash links, and a
 * hash route read back into its path and parameters. Empty values are never
 * sent: an unset filter and an empty one mean the same to errand.
 */

/**
 * `?a=1&b=2` from an object, leaving out `undefined`, `null` and `''`
 * values; `''` when nothing is left.
 * @param {Record<string, unknown>} [params]
 * @returns {string}
 */
export function queryString(params = {}) {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== '') query.set(name, String(value));
  }
  const text = query.toString();
  return text ? `?${text}` : '';
}

/**
 * The hash as a path and its parameters: `#/jobs?status=failed` → `/jobs`,
 * `{status: 'failed'}` (a `URLSearchParams`); `/` for an empty hash.
 * @param {string} hash with or without its leading `#`
 * @returns {{path: string, params: URLSearchParams}}
 */
export function parseHash(hash) {
  const text = hash.replace(/^#/, '');
  const at = text.indexOf('?');
  const path = at === -1 ? text : text.slice(0, at);
  return { path: path || '/', params: new URLSearchParams(at === -1 ? '' : text.slice(at + 1)) };
}
