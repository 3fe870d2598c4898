/**
 * @file Acting on every job a filter matches (`/client/admin/bulk.js`):
 * `POST /admin/jobs/retry` and `/admin/jobs/cancel`. A dry run counts
 * them, a modal dialog asks for the count to be confirmed, and the run
 * goes in batches that follow `next_after`, so the page can show progress
 * and a very large set does not hang on one request. The per-job actions
 * on a selection live with the list (`./jobs.js`); this module knows only
 * filters.
 */

import { el } from '../core/dom.js';
import { formatNumber, plural } from '../core/format.js';
import { statusLine } from './widgets.js';

/** Jobs per batch request (errand takes 1 to 1000). */
const BATCH = 500;

/** The list filters a bulk body takes (the status is the action's own: failed for retry, unfinished for cancel). */
const BODY_KEYS = ['tenant', 'user', 'type', 'error', 'param', 'created_after', 'created_before'];

const KINDS = {
  retry: {
    route: '/admin/jobs/retry',
    button: 'Retry all matching…',
    wouldKey: 'would_retry',
    doneKey: 'retried',
    which: 'failed',
    noneText: 'No failed jobs match.',
    confirmText: (n) => `Retry ${formatNumber(n)} ${n === 1 ? 'job' : 'jobs'}`,
    explain: 'Each goes back to the queue as a new run, with a fresh attempt budget.',
    progressText: (done, of) => `Retried ${formatNumber(done)} of ${formatNumber(of)}…`,
    doneText: (done) => `Retried ${plural(done, 'job')}.`,
    stoppedText: (done) => `Stopped after retrying ${plural(done, 'job')}`,
  },
  cancel: {
    route: '/admin/jobs/cancel',
    button: 'Cancel all matching…',
    wouldKey: 'would_cancel',
    doneKey: 'cancelled',
    which: 'unfinished',
    noneText: 'No unfinished jobs match.',
    confirmText: (n) => `Cancel ${formatNumber(n)} ${n === 1 ? 'job' : 'jobs'}`,
    // A bulk cancel takes no status: both waiting and running jobs match.
    explain: 'Waiting and running jobs both match (pending or processing). Running ones stop at their next step; their owners are told.',
    progressText: (done, of) => `Cancelled ${formatNumber(done)} of ${formatNumber(of)}…`,
    doneText: (done) => `Cancelled ${plural(done, 'job')}.`,
    stoppedText: (done) => `Stopped after cancelling ${plural(done, 'job')}`,
  },
};

/** Which bulk action the list's filter allows, if any. errand needs a tenant, a type or created_after. */
function kindFor(filters) {
  if (!(filters.tenant || filters.type || filters.created_after)) return null;
  if (filters.status === 'failed') return 'retry';
  if (filters.status === 'pending' || filters.status === 'processing') return 'cancel';
  return null;
}

function bodyOf(filters) {
  return Object.fromEntries(BODY_KEYS.filter((key) => filters[key]).map((key) => [key, filters[key]]));
}

/** The filter as the dialog names it: `tenant=demo-1 type=sleep`. */
function describeFilter(body) {
  return Object.entries(body).map(([key, value]) => `${key}=${value}`).join(' ');
}

/** Asks to confirm; resolves true on the confirm button, false on "Keep them" or Escape. */
function confirmDialog(kind, count, body) {
  const k = KINDS[kind];
  return new Promise((resolve) => {
    const confirm = el('button', { type: 'button', class: 'danger', text: k.confirmText(count) });
    const keep = el('button', { type: 'button', class: 'secondary', text: 'Keep them' });
    const dialog = el('dialog', { class: 'confirm', 'aria-labelledby': 'bulk-title', 'aria-describedby': 'bulk-question' },
      el('h2', { id: 'bulk-title', text: kind === 'retry' ? 'Retry failed jobs' : 'Cancel unfinished jobs' }),
      el('p', { id: 'bulk-question', text: `${kind === 'retry' ? 'Retry' : 'Cancel'} ${formatNumber(count)} ${k.which} ${count === 1 ? 'job' : 'jobs'} matching ${describeFilter(body)}?` }),
      el('p', { class: 'muted small', text: k.explain }),
      el('div', { class: 'dialog-buttons' }, confirm, keep));
    let answer = false;
    confirm.addEventListener('click', () => { answer = true; dialog.close(); });
    keep.addEventListener('click', () => dialog.close());
    dialog.addEventListener('close', () => {
      dialog.remove();
      resolve(answer);
    });
    document.body.append(dialog);
    dialog.showModal();
    // The safe choice has the focus: Enter alone changes nothing.
    keep.focus();
  });
}

/**
 * The bulk button for `filters` (or null when they allow none), with its
 * progress bar and status line. `onDone` runs after a run, to redraw the list.
 */
export function bulkActions({ api, filters, onDone }) {
  const kind = kindFor(filters);
  if (!kind) return null;
  const k = KINDS[kind];
  const body = bodyOf(filters);
  const button = el('button', { type: 'button', class: kind === 'retry' ? 'primary' : 'danger', text: k.button });
  const progress = el('progress', { hidden: true, value: 0, max: 1, 'aria-label': 'Bulk progress' });
  const status = statusLine({ 'data-bulk-status': '' });

  async function run() {
    button.disabled = true;
    progress.hidden = true;
    status.textContent = 'Counting…';
    try {
      const counted = await api.post(k.route, { ...body, dry_run: true });
      const expected = counted[k.wouldKey] ?? 0;
      if (expected === 0) {
        status.textContent = k.noneText;
        return;
      }
      status.textContent = '';
      if (!(await confirmDialog(kind, expected, body))) return;
      await runBatches(expected);
      await onDone();
    } catch (error) {
      if (!error.signedOut) status.textContent = `errand refused: ${error.message}`;
    } finally {
      button.disabled = false;
    }
  }

  async function runBatches(expected) {
    let done = 0;
    let after = null;
    progress.max = expected;
    progress.value = 0;
    progress.hidden = false;
    status.textContent = k.progressText(0, expected);
    try {
      for (;;) {
        const answer = await api.post(k.route, { ...body, limit: BATCH, ...(after ? { after } : {}) });
        done += answer[k.doneKey] ?? 0;
        // Jobs may have changed since the count: the bar never runs past its end.
        progress.max = Math.max(expected, done);
        progress.value = done;
        after = answer.next_after ?? null;
        if (!after) break;
        status.textContent = k.progressText(done, Math.max(expected, done));
      }
      status.textContent = k.doneText(done);
    } catch (error) {
      if (error.signedOut) throw error;
      status.textContent = `${k.stoppedText(done)}: ${error.message}`;
    }
  }

  button.addEventListener('click', run);
  return el('div', { class: 'bulk' }, button, progress, status);
}
