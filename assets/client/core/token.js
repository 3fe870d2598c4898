/**
 * @file The pages' sign-in token (`/client/core/token.js`): taken out of a
 * sign-in link's `#fragment` (which the browser never sends to a server)
 * into the tab's sessionStorage, and its claims read unverified. The claims
 * serve only what a page shows (who is signed in, when it expires, which
 * buttons to draw): errand checks the token on every request. Used by the
 * demo page (`demo.js`) and the operators' console (`admin.js`); each keeps
 * its token under a key of its own.
 */

import { parseHash } from './query.js';

/**
 * Takes the token out of a sign-in link (`#token=…`, or a route with
 * `token=` among its parameters, `#/jobs?token=…`) into sessionStorage
 * under `storageKey`, and drops it from the address, keeping the route, so
 * it is not left in the history, a bookmark or a shared screen. Says
 * whether there was one.
 * @param {string} storageKey
 * @returns {boolean}
 */
export function takeTokenFromLink(storageKey) {
  const raw = location.hash.replace(/^#/, '');
  const routed = raw.startsWith('/');
  const { path, params } = routed ? parseHash(raw) : { path: '', params: new URLSearchParams(raw) };
  const token = params.get('token');
  if (!token) return false;
  sessionStorage.setItem(storageKey, token.trim());
  params.delete('token');
  const rest = params.toString();
  const route = routed ? `#${path}${rest ? `?${rest}` : ''}` : '';
  history.replaceState(null, '', location.pathname + location.search + route);
  return true;
}

/**
 * The JWT's claims, unverified, or null when it is no JWT: only for what
 * the page shows.
 * @param {string} token
 * @returns {object|null}
 */
export function claimsOf(token) {
  try {
    const payload = token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
    const bytes = Uint8Array.from(atob(payload), (c) => c.charCodeAt(0));
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return null;
  }
}

/** Whether the claims' `exp` has passed (claims without one never expire here: errand decides). */
export function isExpired(claims) {
  return typeof claims.exp === 'number' && claims.exp * 1000 <= Date.now();
}
