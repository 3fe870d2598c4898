/**
 * @file The overview (`#/`, `/client/admin/overview.js`): how the queue stands, for an operator during an
 * incident. Counts by state, waits, backlogs, processes, throughput and
 * pauses, from `GET /admin/overview`, `/admin/queues` and `/admin/pauses`,
 * refreshed by a short poll every two seconds while the view is shown and
 * the tab visible.
 * Tiles are drawn once and their numbers changed in place, so nothing
 * jumps under the reader; each table is redrawn only when its data changed.
 */

import { el } from '../core/dom.js';
import { formatCount, formatDuration, formatNumber } from '../core/format.js';
import { shortPoll } from './api.js';
import { pausesSection } from './pauses.js';
import {
  hashFor, shortId, statusLine, table, timeAgo,
} from './widgets.js';

const POLL_MS = 2_000;
/** How far back the rates look. */
const RATE_WINDOW_MS = 5 * 60_000;

/**
 * Samples of the cumulative totals (`{at, claimed, attempts_ended, created,
 * ended, attempts_failed}`; claims and attempt ends as each process last
 * published them, every few seconds)
 * taken while this page is open, oldest first. Module state on purpose: it
 * outlives a visit to another view, so the rates need not start over.
 */
const samples = [];

function keepSample(totals) {
  if (!totals?.at) return;
  const at = new Date(totals.at).getTime();
  if (samples.length && samples[samples.length - 1].at >= at) return;
  samples.push({ ...totals, at });
  while (samples.length > 2 && at - samples[0].at > RATE_WINDOW_MS) samples.shift();
}

/** Per second over the samples kept, or `…` until there are two. */
function rate(key) {
  if (samples.length < 2) return '…';
  const first = samples[0];
  const last = samples[samples.length - 1];
  const seconds = (last.at - first.at) / 1000;
  if (seconds <= 0) return '…';
  const perSecond = Math.max(0, (last[key] - first[key]) / seconds);
  return perSecond >= 10 ? formatNumber(Math.round(perSecond)) : perSecond.toFixed(2);
}

function windowText() {
  if (samples.length < 2) return 'Measured since this page opened: two samples are needed.';
  const seconds = (samples[samples.length - 1].at - samples[0].at) / 1000;
  return `Measured since this page opened, over the last ${formatDuration(seconds)} (at most 5 min).`;
}

/** A tile: a label and a number whose element carries `data-count` when given. */
function tile(label, key, hint) {
  const value = el('span', { class: 'tile-value', text: '…', 'data-count': key || null });
  const node = el('div', { class: 'tile' }, el('span', { class: 'tile-label', text: label }), value,
    hint ? el('span', { class: 'tile-hint muted', text: hint }) : null);
  return { node, value };
}

function tileGroup(title, tiles, note) {
  return el('section', { class: 'card', 'aria-label': title },
    el('h2', { text: title }),
    el('div', { class: 'tiles' }, tiles.map((t) => t.node)),
    note ?? null);
}

/** A section whose body is redrawn only when its data changed. */
function redrawable(title) {
  const body = el('div');
  let drawn = null;
  return {
    node: el('section', { class: 'card', 'aria-label': title }, el('h2', { text: title }), body),
    draw(data, render) {
      const key = JSON.stringify(data);
      if (key === drawn) return;
      drawn = key;
      body.replaceChildren(...[render(data)].flat());
    },
  };
}

function empty(text) {
  return el('p', { class: 'muted', text });
}

function processesBody(o) {
  const facts = el('dl', { class: 'facts' },
    el('dt', { text: 'Processes' }), el('dd', { text: formatNumber(o.processes) }),
    el('dt', { text: 'Running jobs' }), el('dd', { text: formatNumber(o.running) }),
    el('dt', { text: 'Database' }), el('dd', { class: 'mono', text: o.database }),
    el('dt', { text: 'Writable' }), el('dd', {}, yesNo(o.writable, 'takes writes', 'read-only: a standby?')),
    el('dt', { text: 'Listening' }), el('dd', {}, yesNo(o.listening, 'hears announcements', 'not listening: polling only')));
  const processes = (o.process_list ?? []).length
    ? table('Processes', [
      ['Name', (p) => el('span', { class: 'mono', text: p.name })],
      ['Address', (p) => p.address],
      ['Since', (p) => timeAgo(p.since)],
      ['Connections', (p) => formatNumber(p.connections)],
    ], o.process_list)
    : empty('No errand process is connected.');
  const owners = (o.running_by_owner ?? []).length
    ? table('Running by lease owner', [
      ['Lease owner', (r) => el('span', { class: 'mono', title: r.owner, text: shortId(r.owner) })],
      ['Running', (r) => formatNumber(r.running)],
      ['Oldest started', (r) => timeAgo(r.oldest_started_at)],
    ], o.running_by_owner)
    : empty('No job is running.');
  return [facts, processes, el('h3', { text: 'Running, by lease owner' }), owners];
}

function yesNo(ok, yes, no) {
  return el('span', { class: `badge ${ok ? 'badge-completed' : 'badge-failed'}`, text: ok ? `yes: ${yes}` : `no: ${no}` });
}

function backlogsBody(backlogs) {
  if (!backlogs?.length) return empty('No tenant has unfinished jobs.');
  return table('Largest backlogs', [
    ['Tenant', (b) => el('a', { href: hashFor('/jobs', { tenant: b.tenant }), text: b.tenant })],
    ['Unfinished', (b) => formatNumber(b.unfinished)],
  ], backlogs);
}

function failuresBody({ failures, cap }) {
  if (!failures?.length) return empty('No job has failed.');
  return [
    el('p', { class: 'muted small', text: `Among the newest ${formatNumber(cap)} failed jobs.` }),
    table('Recent failures by type', [
      ['Type', (f) => el('a', { href: hashFor('/jobs', { status: 'failed', type: f.job_type }), text: f.job_type })],
      ['Failed', (f) => formatNumber(f.failed)],
    ], failures),
  ];
}

function queuesBody(queues) {
  if (!queues?.queues?.length) return empty('No unfinished jobs.');
  const parts = [table('Unfinished jobs by type', [
    ['Type', (q) => el('a', { href: hashFor('/jobs', { type: q.job_type }), text: q.job_type })],
    ['State', (q) => q.state],
    ['Jobs', (q) => formatNumber(q.jobs)],
    ['Oldest wait', (q) => formatDuration(q.oldest_due_seconds)],
  ], queues.queues)];
  const near = [...(queues.nearest_quotas?.tenants ?? []), ...(queues.nearest_quotas?.users ?? [])];
  if (near.length) {
    parts.push(el('h3', { text: 'Nearest their quotas' }), table('Nearest their quotas', [
      ['Tenant', (n) => el('a', { href: hashFor('/jobs', { tenant: n.tenant }), text: n.tenant })],
      ['User', (n) => n.user ?? 'all users'],
      ['Unfinished', (n) => formatNumber(n.unfinished)],
      ['Cap', (n) => (n.limit === null || n.limit === undefined ? 'none' : formatNumber(n.limit))],
    ], near));
  }
  return parts;
}

export function mount(container, { api, canAct }) {
  const unfinished = { available: tile('Waiting', 'available'), retryable: tile('Retrying', 'retryable'), running: tile('Running', 'running') };
  const oldest = tile('Oldest due wait', null);
  const finished = { completed: tile('Completed', 'completed'), failed: tile('Failed', 'failed'), cancelled: tile('Cancelled', 'cancelled') };
  const outbox = { emails: tile('Emails waiting', null), webhooks: tile('Webhooks waiting', null) };
  const rates = {
    claimed: tile('Claims / s', null, 'attempts started'),
    attempts_ended: tile('Attempts ended / s', null),
    ended: tile('Completions / s', null, 'jobs ended: completed, failed or cancelled'),
    created: tile('Created / s', null),
    attempts_failed: tile('Failed attempts / s', null),
  };
  const rateNote = el('p', { class: 'muted small' });
  const problem = statusLine({ class: 'status-line error', hidden: true });
  const processes = redrawable('Processes');
  const backlogs = redrawable('Largest backlogs');
  const failures = redrawable('Recent failures by type');
  const queues = redrawable('Queues');
  const pauses = pausesSection({ api, canAct, onChange: () => refresh() });

  container.append(
    el('div', { class: 'view-head' }, el('h1', { text: 'Overview' }),
      el('span', { class: 'muted small', text: `Refreshed every ${POLL_MS / 1000} s while shown` })),
    problem,
    pauses.banner,
    el('div', { class: 'overview-grid' },
      tileGroup('Unfinished', [...Object.values(unfinished), oldest]),
      tileGroup('Finished', Object.values(finished)),
      tileGroup('Outbox', Object.values(outbox)),
      tileGroup('Throughput', Object.values(rates), rateNote)),
    queues.node,
    pauses.node,
    el('div', { class: 'two-columns' }, backlogs.node, failures.node),
    processes.node,
  );

  async function refresh() {
    try {
      const [o, q, p] = await Promise.all([api.get('/admin/overview'), api.get('/admin/queues'), api.get('/admin/pauses')]);
      problem.hidden = true;
      for (const [key, t] of Object.entries(unfinished)) t.value.textContent = formatCount(o.unfinished?.[key] ?? 0);
      oldest.value.textContent = o.oldest_due_seconds === null || o.oldest_due_seconds === undefined ? 'none' : formatDuration(o.oldest_due_seconds);
      for (const [key, t] of Object.entries(finished)) t.value.textContent = formatCount(o.finished?.[key], o.finished_count_cap);
      outbox.emails.value.textContent = formatNumber(o.emails_waiting);
      outbox.webhooks.value.textContent = formatNumber(o.webhooks_waiting);
      keepSample(o.totals);
      for (const [key, t] of Object.entries(rates)) t.value.textContent = rate(key);
      rateNote.textContent = windowText();
      const { processes: count, running, database, writable, listening, process_list, running_by_owner } = o;
      processes.draw({ processes: count, running, database, writable, listening, process_list, running_by_owner }, processesBody);
      backlogs.draw(o.largest_backlogs, backlogsBody);
      failures.draw({ failures: o.recent_failures_by_type, cap: o.finished_count_cap }, failuresBody);
      queues.draw(q, queuesBody);
      pauses.draw(p.pauses);
    } catch (error) {
      if (error.signedOut) return;
      problem.textContent = `Could not read the overview: ${error.message}`;
      problem.hidden = false;
    }
  }

  return shortPoll(refresh, POLL_MS);
}
