/**
 * @file One job (`#/jobs/<id>`, `/client/admin/job.js`): who it belongs to, its params, result and
 * error, every attempt (who claimed it, under which lease, how it ended,
 * what its handler logged),
 * the notifications, emails, push messages and webhook deliveries its ends made, and the
 * operator actions taken on it; Retry and Cancel for operators who may act.
 * While the job is unfinished the view follows it by a short poll.
 */

import { el } from '../core/dom.js';
import { formatNumber } from '../core/format.js';
import { UNFINISHED_STATUSES } from '../core/job-status.js';
import { shortPoll } from './api.js';
import {
  hashFor, shortId, statusBadge, statusLine, table, timeAgo, timeAt,
} from './widgets.js';

const POLL_MS = 2_000;
const REDACTED = 'Redacted (needs the operator:sensitive scope)';

function section(title, ...content) {
  return el('section', { class: 'card', 'aria-label': title }, el('h2', { text: title }), ...content);
}

function none(text = 'None.') {
  return el('p', { class: 'muted', text });
}

function mono(id) {
  return el('span', { class: 'mono', title: id ?? '', text: shortId(id) });
}

function progressText(progress) {
  if (!progress) return null;
  const of = progress.total === null || progress.total === undefined ? '' : `/${formatNumber(progress.total)}`;
  return `${formatNumber(progress.done)}${of}${progress.message ? ` ${progress.message}` : ''}`;
}

/** Params, result or error (`data-field` `name`), unless `redacted` names it (or `alias`): the token may not see it. */
function field(job, name, build, alias = name) {
  const redacted = job.redacted ?? [];
  if (redacted.includes(name) || redacted.includes(alias)) {
    return el('p', { class: 'redacted muted', 'data-field': name, text: REDACTED });
  }
  return build();
}

function json(name, value) {
  return el('pre', { class: 'json', 'data-field': name, text: JSON.stringify(value, null, 2) });
}

/** A URL errand made, as a link only when it is http(s). */
function safeLink(url, text) {
  try {
    const parsed = new URL(url, location.href);
    if (parsed.protocol === 'http:' || parsed.protocol === 'https:') return el('a', { href: parsed.href, text, rel: 'noreferrer' });
  } catch {
    // not a URL: shown as text below
  }
  return el('span', { text: url });
}

function attemptItem(a) {
  const running = a.outcome === 'running';
  const facts = [
    ['Claimed', timeAt(a.started_at)],
    ['By', mono(a.lease_owner)],
    ['Lease', mono(a.lease_id)],
    ...(running
      ? [['Lease until', timeAt(a.lease_expires_at)], ['Progress', progressText(a.progress) ?? '—']]
      : [['Ended', timeAt(a.ended_at)]]),
  ];
  return el('li', { class: 'attempt', 'data-outcome': a.outcome },
    el('div', { class: 'attempt-head' },
      el('strong', { text: `Run ${a.run} · attempt ${a.attempt}` }), ' ', statusBadge(a.outcome)),
    el('dl', { class: 'inline-facts' }, facts.flatMap(([label, value]) => [el('dt', { text: label }), el('dd', {}, value)])),
    a.error ? el('p', { class: 'error-text', text: a.error }) : null,
    attemptLog(a));
}

/** What the attempt's handler logged, folded away: one line each, time, level, message and fields. */
function attemptLog(a) {
  const lines = a.logs ?? [];
  if (!lines.length) return null;
  const summary = `Log: ${formatNumber(lines.length)} line${lines.length === 1 ? '' : 's'}${a.log_truncated ? ' (cut at the cap)' : ''}`;
  return el('details', { class: 'attempt-log' },
    el('summary', { text: summary }),
    el('ol', { class: 'log-lines', 'aria-label': `Log of run ${a.run}, attempt ${a.attempt}` }, lines.map((line) => el('li', { 'data-level': line.level },
      el('time', { datetime: line.at, text: new Date(line.at).toISOString().slice(11, 23) }), ' ',
      el('span', { class: 'log-level', text: line.level }), ' ',
      el('span', { class: 'log-message', text: line.message }),
      line.fields ? el('code', { class: 'log-fields', text: ` ${JSON.stringify(line.fields)}` }) : null))));
}

/** The trace of the request that recorded the job: a link where `[telemetry] trace_url` is set. */
function traceLine(trace) {
  if (!trace) return null;
  const link = trace.url ? safeLink(trace.url, 'Open trace') : el('span', { class: 'mono', text: trace.trace_id });
  return el('p', { class: 'trace', 'data-field': 'trace' }, 'Trace of the request: ', link,
    el('span', { class: 'muted', text: ' (a retry is a trace of its own, linked to it)' }));
}

function historySections(history) {
  const h = history ?? {};
  const list = (rows, build) => (rows?.length ? build(rows) : none());
  return [
    section('Attempts', traceLine(h.trace), h.attempts?.length
      ? el('ol', { class: 'attempts', 'aria-label': 'Attempts' }, h.attempts.map(attemptItem))
      : none('No attempt yet.')),
    section('Notifications', list(h.notifications, (rows) => table('Notifications', [
      ['Id', (n) => mono(n.id)], ['Run', (n) => n.run], ['Kind', (n) => n.kind], ['Job status', (n) => n.job_status],
      ['Created', (n) => timeAgo(n.created_at)], ['Read', (n) => (n.read_at ? timeAgo(n.read_at) : 'unread')],
    ], rows))),
    section('Emails', list(h.emails, (rows) => table('Emails', [
      ['Recipient', (m) => m.recipient], ['Run', (m) => m.run], ['State', (m) => m.state], ['Attempts', (m) => m.attempts],
      ['Last error', (m) => m.last_error], ['Created', (m) => timeAgo(m.created_at)], ['Sent', (m) => (m.sent_at ? timeAgo(m.sent_at) : null)],
    ], rows))),
    section('Push messages', list(h.pushes, (rows) => table('Push messages', [
      ['Push service', (p) => p.service ?? 'unsubscribed'], ['Run', (p) => p.run], ['State', (p) => p.state],
      ['Attempts', (p) => p.attempts], ['Last status', (p) => p.response_status], ['Last error', (p) => p.last_error],
      ['Created', (p) => timeAgo(p.created_at)], ['Sent', (p) => (p.sent_at ? timeAgo(p.sent_at) : null)],
    ], rows))),
    section('Webhook deliveries', list(h.webhooks, (rows) => table('Webhook deliveries', [
      ['Endpoint', (w) => mono(w.endpoint_id)], ['Run', (w) => w.run], ['Event', (w) => w.event], ['State', (w) => w.state],
      ['Attempts', (w) => w.attempts], ['Last status', (w) => w.last_status], ['Last error', (w) => w.last_error],
      ['Created', (w) => timeAgo(w.created_at)], ['Delivered', (w) => (w.delivered_at ? timeAgo(w.delivered_at) : null)],
    ], rows))),
    section('Operator actions', list(h.actions, (rows) => table('Operator actions', [
      ['When', (a) => timeAgo(a.at)], ['Operator', (a) => a.operator], ['Action', (a) => a.action],
      ['Affected', (a) => formatNumber(a.affected)],
    ], rows))),
  ];
}

/** What the action line says while an action is under way, and once it is done (but a cancel's). */
const ACTING = { retry: 'Retrying…', cancel: 'Cancelling…', hold: 'Holding…', release: 'Releasing…' };
const DONE = {
  retry: 'Retried: the job is back in the queue as a new run.',
  hold: 'Held: no process claims it until it is released.',
  release: 'Released: it may start at once.',
};

function header(job, actions) {
  const facts = [
    ['Type', job.type],
    // An export's file format (errand sends none for other jobs).
    job.format ? ['Format', job.format] : null,
    ['Status', statusBadge(job.status, job.state)],
    ['Tenant', el('a', { href: hashFor('/jobs', { tenant: job.tenant }), text: job.tenant })],
    ['User', job.user],
    // Higher runs first within its tenant's share: interactive 0, scheduled -10, bulk -20, each moved -4 to 4.
    ['Priority', formatNumber(job.priority)],
    ['Attempts', `${job.attempts}/${job.max_attempts}`],
    ['Created', timeAt(job.created_at)],
    job.completed_at ? ['Ended', timeAt(job.completed_at)] : null,
    job.next_attempt_at ? ['Next attempt', timeAt(job.next_attempt_at)] : null,
    job.progress ? ['Progress', progressText(job.progress)] : null,
    job.held_by ? ['Held by', job.held_by] : null,
  ].filter(Boolean);
  return el('section', { class: 'card job-head', 'aria-label': 'Job' },
    el('h1', {}, 'Job ', el('span', { class: 'mono', text: job.id })),
    el('dl', { class: 'facts' }, facts.flatMap(([label, value]) => [el('dt', { text: label }), el('dd', {}, value)])),
    actions);
}

function body(job) {
  return [
    section('Params', field(job, 'params', () => json('params', job.params))),
    section('Result', field(job, 'result', () => (job.result === null || job.result === undefined
      ? el('p', { class: 'muted', 'data-field': 'result', text: 'No result.' })
      : json('result', job.result))),
    job.result_url ? el('p', {}, safeLink(job.result_url, 'Download the result')) : null),
    section('Error', field(job, 'error', () => el('p', {
      class: job.error_message ? 'error-text' : 'muted', 'data-field': 'error', text: job.error_message ?? 'None.',
    }), 'error_message')),
    ...historySections(job.history),
  ];
}

export function mount(container, { api, id, canAct }) {
  const head = el('div');
  const rest = el('div', { class: 'stack' });
  const actionStatus = statusLine();
  const problem = statusLine({ class: 'status-line error' });
  container.append(
    el('p', { class: 'back' }, el('a', { href: '#/jobs', text: '← Jobs' })),
    problem, head, rest);
  let drawn = null;
  let stopPoll = null;
  let stopped = false;

  function actions(job) {
    if (!canAct) return null;
    const buttons = [];
    if (job.status === 'failed' || job.status === 'cancelled') {
      buttons.push(el('button', { type: 'button', class: 'primary', text: 'Retry', on: { click: () => act('retry') } }));
    }
    // Only a waiting job is held (running ones are cancelled instead).
    if (UNFINISHED_STATUSES.has(job.status) && !['running', 'cancelling'].includes(job.state)) {
      buttons.push(job.held_by
        ? el('button', { type: 'button', text: 'Release', on: { click: () => act('release') } })
        : el('button', { type: 'button', text: 'Hold', on: { click: () => act('hold') } }));
    }
    if (UNFINISHED_STATUSES.has(job.status)) {
      buttons.push(el('button', { type: 'button', class: 'danger', text: 'Cancel job', on: { click: () => act('cancel') } }));
    }
    return el('div', { class: 'job-actions' }, buttons, actionStatus);
  }

  function draw(job) {
    const key = JSON.stringify(job);
    if (key === drawn) return;
    drawn = key;
    document.title = `Job ${shortId(job.id)} · errand operators`;
    head.replaceChildren(header(job, actions(job)));
    rest.replaceChildren(...body(job).filter(Boolean));
  }

  async function tick() {
    try {
      const job = await api.get(`/admin/jobs/${encodeURIComponent(id)}`);
      if (stopped) return;
      problem.textContent = '';
      draw(job);
      if (!UNFINISHED_STATUSES.has(job.status)) unfollow();
    } catch (error) {
      if (stopped || error.signedOut) return;
      unfollow();
      if (error.status === 404 || error.status === 400) {
        head.replaceChildren(el('section', { class: 'card' }, el('h1', { text: 'No such job' }),
          el('p', { class: 'muted', text: error.status === 400 ? error.message : `errand has no job ${id}.` })));
        rest.replaceChildren();
      } else {
        problem.textContent = `Could not read the job: ${error.message}`;
      }
    }
  }

  /** Polls while the job is unfinished (and the first read, whatever it finds). */
  function follow() {
    if (!stopPoll && !stopped) stopPoll = shortPoll(tick, POLL_MS);
  }
  function unfollow() {
    stopPoll?.();
    stopPoll = null;
  }

  async function act(action) {
    for (const button of head.querySelectorAll('.job-actions button')) button.disabled = true;
    actionStatus.textContent = ACTING[action];
    try {
      const job = await api.post(`/admin/jobs/${encodeURIComponent(id)}/${action}`);
      actionStatus.textContent = action === 'cancel'
        ? (job.status === 'cancelled' ? 'Cancelled.' : 'Stopping: the running attempt is being cancelled.')
        : DONE[action];
    } catch (error) {
      if (error.signedOut) return;
      actionStatus.textContent = error.status === 409
        ? `errand refused: ${error.detail || error.message}`
        : `Could not ${action}: ${error.message}`;
    }
    // Read it again (with its history), and follow it while it runs.
    drawn = null;
    unfollow();
    follow();
  }

  follow();
  return () => {
    stopped = true;
    unfollow();
  };
}
