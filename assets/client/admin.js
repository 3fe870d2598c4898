/**
 * @file The operators' console at `/admin`: signs in (from a link's
 * `#token=` fragment or a pasted token), draws the top bar, and routes the
 * hash to a view. Routes live in the hash because `/admin/jobs` and the
 * like are the JSON API's paths; filters live there too, so that a link
 * reproduces what its sender saw.
 *
 * Each view module exports `mount(container, context)` and returns a
 * function that stops it (its timers); the router stops the old view
 * before it mounts the next. The views live in `./admin/`; what they share
 * with the demo page and the web components (`el`, query strings, errand's
 * errors, the token's claims, time formats) in `./core/`. The token's
 * claims are decoded unverified (`./core/token.js`), only to show who is
 * signed in and to hide actions a read-only operator may not take: errand
 * checks the token on every request.
 */

import { byId, el } from './core/dom.js';
import { parseHash } from './core/query.js';
import { claimsOf, isExpired, takeTokenFromLink } from './core/token.js';
import { createApi } from './admin/api.js';
import * as overview from './admin/overview.js';
import * as jobs from './admin/jobs.js';
import * as job from './admin/job.js';
import * as audit from './admin/audit.js';

/** Where this tab keeps its token: per tab, gone when the tab closes. */
const TOKEN_KEY = 'errand-admin:token';

const ROUTES = [
  { pattern: /^\/?$/, nav: 'overview', title: 'Overview', view: overview },
  { pattern: /^\/jobs$/, nav: 'jobs', title: 'Jobs', view: jobs },
  { pattern: /^\/jobs\/([^/]+)$/, nav: 'jobs', title: 'Job', view: job },
  { pattern: /^\/audit$/, nav: 'audit', title: 'Audit', view: audit },
];

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
  byId('view').hidden = true;
  byId('view').replaceChildren();
  byId('nav').hidden = true;
  byId('session').hidden = true;
  byId('signed-out').hidden = false;
  byId('signed-out-reason').hidden = !reason;
  byId('signed-out-reason').textContent = reason ?? '';
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
  if (isExpired(claims)) {
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
  byId('who').textContent = claims.sub ?? 'operator';
  byId('read-only').hidden = scopes.includes('operator');
  byId('signed-out').hidden = true;
  byId('signed-out-reason').hidden = true;
  byId('token-input').value = '';
  byId('nav').hidden = false;
  byId('session').hidden = false;
  byId('view').hidden = false;
  route();
}

/** Draws the view the hash names, stopping the one before. */
function route() {
  if (!session.claims) return;
  stopView();
  const { path, params } = parseHash(location.hash);
  const container = byId('view');
  container.replaceChildren();
  const match = ROUTES.map((r) => ({ r, found: r.pattern.exec(path) })).find(({ found }) => found);
  for (const link of document.querySelectorAll('#nav a')) {
    if (match && link.dataset.nav === match.r.nav) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  if (!match) {
    document.title = 'Not found · errand operators';
    container.append(el('section', { class: 'card' },
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

byId('sign-in-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const token = byId('token-input').value.trim();
  if (!token) return;
  sessionStorage.setItem(TOKEN_KEY, token);
  signIn();
});

byId('sign-out').addEventListener('click', () => signOut(null));

window.addEventListener('hashchange', () => {
  // A sign-in link opened in this tab changes only the fragment: sign in with it.
  if (takeTokenFromLink(TOKEN_KEY)) return signIn();
  route();
});

takeTokenFromLink(TOKEN_KEY);
signIn();
