/**
 * @file The demo page at `/`: signs in from a link, then shows the bell, an
 * export form (to run now or on a schedule), the user's recent jobs and
 * notification preferences, all through `errand.js` and its components.
 * The page's content security policy allows no inline script or style, so
 * everything here works by DOM properties and classes. The sign-in link and
 * the token's claims are read as the console reads them (`./core/token.js`).
 * `?locale=fr` shows the components in that language (the client's
 * `locale`); without it errand picks one from the browser's languages.
 * The page's own text stays English.
 */

import { Errand } from './errand.js';
import './errand-elements.js';
import { byId, el } from './core/dom.js';
import { formatTime } from './core/format.js';
import { statusLabel } from './core/job-status.js';
import { claimsOf, isExpired, takeTokenFromLink } from './core/token.js';

/** Where this tab keeps its token: per tab, gone when the tab closes. */
const TOKEN_KEY = 'errand-demo:token';
const JOBS_SHOWN = 10;
const REFUSED = 'errand did not accept this sign-in (expired, or made with another secret): make a new link.';

function showSignedOut(reason) {
  byId('signed-in').hidden = true;
  byId('session').hidden = true;
  byId('signed-out').hidden = false;
  byId('signed-out-reason').hidden = !reason;
  byId('signed-out-reason').textContent = reason ?? '';
}

function signOut(client) {
  client?.forgetIntents();
  sessionStorage.removeItem(TOKEN_KEY);
  // A fresh page: every stream and component of the old session goes with it (in the same language).
  location.replace(`/${location.search}`);
}

/** Sets the export form's range to the past twelve months (the demo data's range). */
function defaultRange() {
  const today = new Date();
  const yearAgo = new Date(today);
  yearAgo.setFullYear(today.getFullYear() - 1);
  const day = (date) => date.toISOString().slice(0, 10);
  if (!byId('from').value) byId('from').value = day(yearAgo);
  if (!byId('to').value) byId('to').value = day(today);
}

/** The download link with the file's row count, or why there is none. */
function resultCell(job) {
  if (job.result_url) {
    const name = job.result?.file_name;
    const size = job.result?.row_count != null ? ` (${job.result.row_count.toLocaleString()} rows)` : '';
    return el('td', {}, el('a', { href: job.result_url, download: name ?? '', text: name ?? 'Download' }), size);
  }
  if (job.status === 'failed') return el('td', { class: 'error', text: job.error_message ?? 'failed' });
  if (job.result?.expired) return el('td', { class: 'muted', text: 'expired' });
  return el('td', { class: 'muted', text: '—' });
}

function jobRow(job) {
  const range = [job.params?.from, job.params?.to].filter(Boolean).join(' → ');
  return el('tr', { 'data-job-id': job.id },
    el('td', {}, el('span', { class: 'job-type', text: job.type }), range ? el('span', { class: 'muted params', text: range }) : null),
    el('td', {}, el('span', { class: `status status-${job.status}`, text: statusLabel(job.status, job.state) })),
    el('td', {}, el('time', { datetime: job.created_at, text: formatTime(job.created_at) })),
    resultCell(job));
}

/** Draws the newest jobs; one read at a time, and one more if asked meanwhile. */
function jobList(client) {
  let running = null;
  let again = false;
  async function load() {
    try {
      const { jobs } = await client.jobs({ limit: JOBS_SHOWN });
      byId('jobs').tBodies[0].replaceChildren(...jobs.map(jobRow));
      byId('jobs').hidden = jobs.length === 0;
      byId('jobs-empty').hidden = jobs.length > 0;
      byId('jobs-error').hidden = true;
    } catch (error) {
      if (error.status === 401) return showSignedOut(REFUSED);
      byId('jobs-error').textContent = `Could not load the jobs: ${error.message}`;
      byId('jobs-error').hidden = false;
    }
  }
  return async function refresh() {
    if (running) {
      again = true;
      return running;
    }
    running = load();
    await running;
    running = null;
    if (again) {
      again = false;
      await refresh();
    }
  };
}

function main() {
  takeTokenFromLink(TOKEN_KEY);
  const token = sessionStorage.getItem(TOKEN_KEY);
  const claims = token && claimsOf(token);
  if (!token || !claims) return showSignedOut(token ? 'That sign-in link was not valid.' : null);
  if (isExpired(claims)) return showSignedOut('Your sign-in has expired: make a new link.');

  const client = new Errand({
    locale: new URLSearchParams(location.search).get('locale') ?? undefined,
    token: async () => {
      const current = sessionStorage.getItem(TOKEN_KEY);
      if (!current || isExpired(claimsOf(current) ?? {})) {
        showSignedOut('Your sign-in has expired: make a new link.');
        throw new Error('signed out');
      }
      return current;
    },
  });

  byId('who').textContent = `${claims.sub} · ${claims.tenant}`;
  byId('who').title = claims.email ?? '';
  byId('sign-out').addEventListener('click', () => signOut(client));
  byId('session').hidden = false;
  byId('signed-out').hidden = true;
  byId('signed-in').hidden = false;
  defaultRange();

  const refreshJobs = jobList(client);
  byId('refresh-jobs').addEventListener('click', refreshJobs);
  // The button announces each change of its job; other jobs end in the stream.
  document.addEventListener('errand-job', refreshJobs);
  client.subscribe((event) => {
    if (event.type === 'job_completed' || event.type === 'open') refreshJobs();
    if (event.type === 'closed' && event.error?.status === 401) showSignedOut(REFUSED);
  });

  byId('bell').client = client;
  byId('export').client = client;
  byId('schedule').client = client;
  byId('preferences').client = client;
}

// A sign-in link opened in this tab while it shows the page changes only the
// fragment: no new page loads, so take the token and start again.
window.addEventListener('hashchange', () => {
  if (!new URLSearchParams(location.hash.slice(1)).has('token')) return;
  takeTokenFromLink(TOKEN_KEY);
  location.reload();
});

main();
