/**
 * @file The operators' console at `/admin`: signs in (from a link's
 * `#token=` fragment or a pasted token), draws the top bar, and routes the
 * hash to a view. Routes live in the hash because `/admin/jobs` and the
 * like are the JSON API's paths; filters live there too, so that a link
 * reproduces what its sender saw.
 *
 * Each view module exports `mount(container, context)` and returns a
 * function that stops it (its timers); the router stops the old view
 * before it mounts the next. The token's claims are decoded here unverified,
 * only to show who is signed in and to hide actions a read-only operator
 * may not take: errand checks the token on every request.
 */

import { createApi } from '/client/admin-api.js';
import { el } from '/client/admin-dom.js';
import * as overview from '/client/admin-overview.js';
import * as jobs from '/client/admin-jobs.js';
import * as job from '/client/admin-job.js';
import * as audit from '/client/admin-audit.js';

/** Where this tab keeps its token: per tab, gone when the tab closes. */
const TOKEN_KEY = 'errand-admin:token';

const ROUTES = [
  { pattern: /^\/?$/, nav: 'overview', title: 'Overview', view: overview },
  { pattern: /^\/jobs$/, nav: 'jobs', title: 'Jobs', view: jobs },
  { pattern: /^\/jobs\/([^/]+)$/, nav: 'jobs', title: 'Job', view: job },
  { pattern: /^\/audit$/, nav: 'audit', title: 'Audit', view: audit },
];

const $ = (id) => document.getElementById(id);

/** The hash as a path and its parameters: `#/jobs?status=failed` → `/jobs`, `{status: 'failed'}`. */
function parseHash(hash) {
  const text = hash.replace(/^#/, '');
  const at = text.indexOf('?');
  const path = at === -1 ? text : text.slice(0, at);
  return { path: path || '/', params: new URLSearchParams(at === -1 ? '' : text.slice(at + 1)) };
}

/**
 * Takes the token out of a sign-in link (`/admin#token=…`, or a route with
 * `token=` among its parameters) into sessionStorage and drops it from the
 * address, keeping the route, so it is not left in the history, a bookmark
 * or a shared screen. Says whether there was one.
 */
function takeTokenFromLink() {
  const raw = location.hash.replace(/^#/, '');
  const routed = raw.startsWith('/');
  const { path, params } = routed ? parseHash(raw) : { path: '', params: new URLSearchParams(raw) };
  const token = params.get('token');
  if (!token) return false;
  sessionStorage.setItem(TOKEN_KEY, token.trim());
  params.delete('token');
  const rest = params.toString();
  const route = routed ? `#${path}${rest ? `?${rest}` : ''}` : '';
  history.replaceState(null, '', location.pathname + location.search + route);
  return true;
}

/** The JWT's claims, unverified: only for who is shown and which buttons are drawn. */
function claimsOf(token) {
  try {
    const payload = token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
    const bytes = Uint8Array.from(atob(payload), (c) => c.charCodeAt(0));
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return null;
  }
}

const session = {
  token: null,
  claims: null,
  /** Stops the view on screen (its polls); replaced on every route. */
  stopView: null,
};

const api = createApi({
  token: () => session.token,
  onUnauthorized: (detail) => signOut(`errand did not accept the token (${detail}). Sign in again.`),
});

function stopView() {
  session.stopView?.();
  session.stopView = null;
}

function showSignedOut(reason) {
  stopView();
  session.token = null;
  session.claims = null;
  $('view').hidden = true;
  $('view').replaceChildren();
  $('nav').hidden = true;
  $('session').hidden = true;
  $('signed-out').hidden = false;
  $('signed-out-reason').hidden = !reason;
  $('signed-out-reason').textContent = reason ?? '';
  document.title = 'Sign in · errand operators';
}

function signOut(reason) {
  sessionStorage.removeItem(TOKEN_KEY);
  showSignedOut(reason);
}

/** Checks the stored token with errand (one overview read), then shows the console. */
async function signIn() {
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (!token) return showSignedOut(null);
  const claims = claimsOf(token) ?? {};
  if (typeof claims.exp === 'number' && claims.exp * 1000 <= Date.now()) {
    return signOut('That sign-in has expired: make a new link.');
  }
  session.token = token;
  try {
    await api.get('/admin/overview');
  } catch (error) {
    // A 401 has signed out already, saying why.
    if (!error.signedOut) signOut(`errand refused this token: ${error.message}`);
    return;
  }
  session.claims = claims;
  const scopes = String(claims.scope ?? '').split(' ');
  $('who').textContent = claims.sub ?? 'operator';
  $('read-only').hidden = scopes.includes('operator');
  $('signed-out').hidden = true;
  $('signed-out-reason').hidden = true;
  $('token-input').value = '';
  $('nav').hidden = false;
  $('session').hidden = false;
  $('view').hidden = false;
  route();
}

/** Draws the view the hash names, stopping the one before. */
function route() {
  if (!session.claims) return;
  stopView();
  const { path, params } = parseHash(location.hash);
  const container = $('view');
  container.replaceChildren();
  const match = ROUTES.map((r) => ({ r, found: r.pattern.exec(path) })).find(({ found }) => found);
  for (const link of document.querySelectorAll('#nav a')) {
    if (match && link.dataset.nav === match.r.nav) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  if (!match) {
    document.title = 'Not found · errand operators';
    container.append(el('section', { className: 'card' },
      el('h1', { text: 'No such page' }),
      el('p', {}, 'The console has no page at this address. ', el('a', { href: '#/', text: 'Go to the overview.' }))));
    return;
  }
  document.title = `${match.r.title} · errand operators`;
  const scopes = String(session.claims.scope ?? '').split(' ');
  session.stopView = match.r.view.mount(container, {
    api,
    params: Object.fromEntries(params),
    id: match.found[1] ? decodeURIComponent(match.found[1]) : null,
    canAct: scopes.includes('operator'),
    operator: session.claims.sub ?? '',
  }) ?? null;
}

$('sign-in-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const token = $('token-input').value.trim();
  if (!token) return;
  sessionStorage.setItem(TOKEN_KEY, token);
  signIn();
});

$('sign-out').addEventListener('click', () => signOut(null));

window.addEventListener('hashchange', () => {
  // A sign-in link opened in this tab changes only the fragment: sign in with it.
  if (takeTokenFromLink()) return signIn();
  route();
});

takeTokenFromLink();
signIn();
