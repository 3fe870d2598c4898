/**
 * @file The demo page at `/`: signs in from a link, then shows the bell, an
 * export form (to run now or on a schedule), the user's recent jobs and
 * notification preferences, all through `errand.js` and its components.
 * The page's content security policy allows no inline script or style, so
 * everything here works by DOM properties and classes.
 */

import { Errand } from '/client/errand.js';
import '/client/errand-elements.js';

/** Where this tab keeps its token: per tab, gone when the tab closes. */
const TOKEN_KEY = 'errand-demo:token';
const JOBS_SHOWN = 10;
const REFUSED = 'errand did not accept this sign-in (expired, or made with another secret): make a new link.';

const $ = (id) => document.getElementById(id);

/**
 * Takes the token out of a sign-in link (`/#token=…`) into sessionStorage
 * and drops the fragment from the address, so it is not left in the
 * history, a bookmark or a shared screen. (A fragment never reaches the server.)
 */
function takeTokenFromLink() {
  const fragment = new URLSearchParams(location.hash.slice(1));
  const token = fragment.get('token');
  if (!token) return;
  sessionStorage.setItem(TOKEN_KEY, token);
  history.replaceState(null, '', location.pathname + location.search);
}

/** The JWT's claims, unverified: only to show who is signed in (errand verifies every request). */
function claimsOf(token) {
  try {
    const payload = token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
    const bytes = Uint8Array.from(atob(payload), (c) => c.charCodeAt(0));
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return null;
  }
}

function isExpired(claims) {
  return typeof claims.exp === 'number' && claims.exp * 1000 <= Date.now();
}

function showSignedOut(reason) {
  $('signed-in').hidden = true;
  $('session').hidden = true;
  $('signed-out').hidden = false;
  $('signed-out-reason').hidden = !reason;
  $('signed-out-reason').textContent = reason ?? '';
}

function signOut(client) {
  client?.forgetIntents();
  sessionStorage.removeItem(TOKEN_KEY);
  // A fresh page: every stream and component of the old session goes with it.
  location.replace('/');
}

/** Sets the export form's range to the past twelve months (the demo data's range). */
function defaultRange() {
  const today = new Date();
  const yearAgo = new Date(today);
  yearAgo.setFullYear(today.getFullYear() - 1);
  const day = (date) => date.toISOString().slice(0, 10);
  if (!$('from').value) $('from').value = day(yearAgo);
  if (!$('to').value) $('to').value = day(today);
}

function statusBadge(job) {
  const badge = document.createElement('span');
  badge.className = `status status-${job.status}`;
  badge.textContent = job.status === 'processing' && job.state === 'retry_scheduled' ? 'retrying' : job.status;
  return badge;
}

function resultCell(job) {
  const cell = document.createElement('td');
  if (job.result_url) {
    const link = document.createElement('a');
    link.href = job.result_url;
    link.download = job.result?.file_name ?? '';
    link.textContent = job.result?.file_name ?? 'Download';
    const size = job.result?.row_count != null ? ` (${job.result.row_count.toLocaleString()} rows)` : '';
    cell.append(link, size);
  } else if (job.status === 'failed') {
    cell.className = 'error';
    cell.textContent = job.error_message ?? 'failed';
  } else if (job.result?.expired) {
    cell.className = 'muted';
    cell.textContent = 'expired';
  } else {
    cell.className = 'muted';
    cell.textContent = '—';
  }
  return cell;
}

function jobRow(job) {
  const row = document.createElement('tr');
  row.dataset.jobId = job.id;
  const name = document.createElement('td');
  const type = document.createElement('span');
  type.className = 'job-type';
  type.textContent = job.type;
  const range = [job.params?.from, job.params?.to].filter(Boolean).join(' → ');
  name.append(type);
  if (range) {
    const params = document.createElement('span');
    params.className = 'muted params';
    params.textContent = range;
    name.append(params);
  }
  const started = document.createElement('td');
  const time = document.createElement('time');
  time.dateTime = job.created_at;
  time.textContent = new Date(job.created_at).toLocaleString();
  started.append(time);
  const status = document.createElement('td');
  status.append(statusBadge(job));
  row.append(name, status, started, resultCell(job));
  return row;
}

/** Draws the newest jobs; one read at a time, and one more if asked meanwhile. */
function jobList(client) {
  let running = null;
  let again = false;
  async function load() {
    try {
      const { jobs } = await client.jobs({ limit: JOBS_SHOWN });
      $('jobs').tBodies[0].replaceChildren(...jobs.map(jobRow));
      $('jobs').hidden = jobs.length === 0;
      $('jobs-empty').hidden = jobs.length > 0;
      $('jobs-error').hidden = true;
    } catch (error) {
      if (error.status === 401) return showSignedOut(REFUSED);
      $('jobs-error').textContent = `Could not load the jobs: ${error.message}`;
      $('jobs-error').hidden = false;
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
  takeTokenFromLink();
  const token = sessionStorage.getItem(TOKEN_KEY);
  const claims = token && claimsOf(token);
  if (!token || !claims) return showSignedOut(token ? 'That sign-in link was not valid.' : null);
  if (isExpired(claims)) return showSignedOut('Your sign-in has expired: make a new link.');

  const client = new Errand({
    token: async () => {
      const current = sessionStorage.getItem(TOKEN_KEY);
      if (!current || isExpired(claimsOf(current) ?? {})) {
        showSignedOut('Your sign-in has expired: make a new link.');
        throw new Error('signed out');
      }
      return current;
    },
  });

  $('who').textContent = `${claims.sub} · ${claims.tenant}`;
  $('who').title = claims.email ?? '';
  $('sign-out').addEventListener('click', () => signOut(client));
  $('session').hidden = false;
  $('signed-out').hidden = true;
  $('signed-in').hidden = false;
  defaultRange();

  const refreshJobs = jobList(client);
  $('refresh-jobs').addEventListener('click', refreshJobs);
  // The button announces each change of its job; other jobs end in the stream.
  document.addEventListener('errand-job', refreshJobs);
  client.subscribe((event) => {
    if (event.type === 'job_completed' || event.type === 'open') refreshJobs();
    if (event.type === 'closed' && event.error?.status === 401) showSignedOut(REFUSED);
  });

  $('bell').client = client;
  $('export').client = client;
  $('schedule').client = client;
  $('preferences').client = client;
}

// A sign-in link opened in this tab while it shows the page changes only the
// fragment: no new page loads, so take the token and start again.
window.addEventListener('hashchange', () => {
  if (!new URLSearchParams(location.hash.slice(1)).has('token')) return;
  takeTokenFromLink();
  location.reload();
});

main();
