/**
 * @file The jobs list (`#/jobs?…`, `/client/admin/jobs.js`): a filter form whose values live in the
 * hash, a page of any tenant's jobs with keyset paging, keyboard movement
 * between rows (a roving tabindex), and, for operators who may act, a
 * selection to retry or cancel job by job, plus the bulk actions by filter
 * (`./bulk.js`).
 */

import { el } from '../core/dom.js';
import { formatNumber } from '../core/format.js';
import { bulkActions } from './bulk.js';
import {
  filterForm, navigate, hashFor, jobLink, pager, statusBadge, statusLine, timeAgo,
} from './widgets.js';

const PAGE_SIZE = 50;
const STATUSES = ['pending', 'processing', 'completed', 'failed', 'cancelled'];
const FIELDS = [
  { name: 'status', label: 'Status', kind: 'select', options: [['', 'Any'], ...STATUSES.map((s) => [s, s])] },
  { name: 'type', label: 'Type' },
  { name: 'tenant', label: 'Tenant' },
  { name: 'user', label: 'User' },
  { name: 'error', label: 'Error text' },
  { name: 'param', label: 'Params field', placeholder: 'customer.id=42' },
  { name: 'created_after', label: 'Created after', kind: 'datetime' },
  { name: 'created_before', label: 'Created before', kind: 'datetime' },
];
const ERROR_SHOWN = 80;


function truncated(text, length) {
  if (!text) return el('span', { class: 'muted', text: '—' });
  return el('span', { class: 'error-text', title: text, text: text.length > length ? `${text.slice(0, length - 1)}…` : text });
}

/** Moves the focus between rows: only the current row is in the tab order. */
function rovingRows(tbody, { onOpen, onToggle }) {
  const rows = () => [...tbody.rows];
  function focusRow(row) {
    if (!row) return;
    for (const other of rows()) other.tabIndex = other === row ? 0 : -1;
    row.focus();
  }
  tbody.addEventListener('focusin', (event) => {
    const row = event.target.closest('tr');
    if (row) for (const other of rows()) other.tabIndex = other === row ? 0 : -1;
  });
  tbody.addEventListener('keydown', (event) => {
    const row = event.target.closest('tr');
    if (!row || event.altKey || event.ctrlKey || event.metaKey) return;
    const onRow = event.target === row;
    const all = rows();
    const at = all.indexOf(row);
    const moves = {
      ArrowDown: () => all[Math.min(at + 1, all.length - 1)],
      ArrowUp: () => all[Math.max(at - 1, 0)],
      Home: () => all[0],
      End: () => all[all.length - 1],
    };
    // j and k only on a row itself: never steal letters from a control.
    const key = onRow && event.key === 'j' ? 'ArrowDown' : onRow && event.key === 'k' ? 'ArrowUp' : event.key;
    if (moves[key]) {
      event.preventDefault();
      focusRow(moves[key]());
    } else if (onRow && event.key === 'Enter') {
      event.preventDefault();
      onOpen(row.dataset.jobId);
    } else if (onRow && event.key === ' ' && onToggle) {
      event.preventDefault();
      onToggle(row);
    }
  });
  return { focusRow };
}

export function mount(container, { api, params, canAct }) {
  const filters = Object.fromEntries(FIELDS.map((f) => [f.name, params[f.name]]).filter(([, v]) => v));
  const { form, problem } = filterForm({
    label: 'Job filters',
    fields: FIELDS,
    values: params,
    onApply: (values) => navigate(hashFor('/jobs', values), load),
    onClear: () => navigate('#/jobs', load),
  });
  const selected = new Set();
  const listStatus = statusLine();
  const results = el('div', { class: 'results' });
  const retrySelected = el('button', { type: 'button', class: 'secondary', text: 'Retry selected', disabled: true });
  const cancelSelected = el('button', { type: 'button', class: 'secondary', text: 'Cancel selected', disabled: true });
  const selectionStatus = statusLine();
  let stopped = false;

  const hint = canAct
    ? 'Keyboard: ↓/↑ or j/k move between rows, Home/End go to the first/last, Enter opens the job, Space selects it.'
    : 'Keyboard: ↓/↑ or j/k move between rows, Home/End go to the first/last, Enter opens the job.';

  container.append(
    el('div', { class: 'view-head' }, el('h1', { text: 'Jobs' })),
    el('section', { class: 'card' }, form, problem),
    el('section', { class: 'card' },
      el('div', { class: 'toolbar' },
        canAct ? el('div', { class: 'selection' }, retrySelected, cancelSelected, selectionStatus) : null,
        canAct ? bulkActions({ api, filters: { ...filters }, onDone: () => load() }) : null),
      el('p', { class: 'muted small hint', text: hint }),
      listStatus,
      results),
  );

  function selectionChanged() {
    retrySelected.disabled = selected.size === 0;
    cancelSelected.disabled = selected.size === 0;
    retrySelected.textContent = selected.size ? `Retry selected (${selected.size})` : 'Retry selected';
    cancelSelected.textContent = selected.size ? `Cancel selected (${selected.size})` : 'Cancel selected';
  }

  function checkbox(job) {
    const box = el('input', { type: 'checkbox', 'aria-label': `Select job ${job.id}` });
    box.checked = selected.has(job.id);
    box.addEventListener('change', () => {
      if (box.checked) selected.add(job.id);
      else selected.delete(job.id);
      selectionChanged();
    });
    return el('td', { class: 'select' }, box);
  }

  function row(job, index) {
    return el('tr', { tabindex: index === 0 ? 0 : -1, 'data-job-id': job.id },
      canAct ? checkbox(job) : null,
      el('td', {}, jobLink(job.id)),
      el('td', { text: job.type }),
      el('td', { text: job.tenant }),
      el('td', { text: job.user }),
      el('td', {}, statusBadge(job.status, job.state)),
      el('td', { class: 'num', text: formatNumber(job.priority) }),
      el('td', { class: 'num', text: `${job.attempts}/${job.max_attempts}` }),
      el('td', {}, timeAgo(job.created_at)),
      el('td', {}, truncated(job.error_message, ERROR_SHOWN)));
  }

  // A params search never reads some types' params: say which, so "no match" is not misread.
  function notSearched(page) {
    const types = page.params_not_searched || [];
    return types.length
      ? [el('p', { class: 'hint', text: `Params of ${types.join(', ')} are not searched: sealed at rest, or kept from you.` })]
      : [];
  }

  function render(page, focusId) {
    if (!page.jobs.length) {
      results.replaceChildren(...notSearched(page), el('p', { class: 'empty', text: 'No jobs match.' }), pager('/jobs', params, null));
      return;
    }
    const headings = [...(canAct ? [''] : []), 'Job', 'Type', 'Tenant', 'User', 'Status', 'Priority', 'Attempts', 'Created', 'Error'];
    const tbody = el('tbody', {}, page.jobs.map(row));
    const roving = rovingRows(tbody, {
      onOpen: (id) => { location.hash = hashFor(`/jobs/${encodeURIComponent(id)}`); },
      onToggle: canAct ? (tr) => tr.querySelector('input[type="checkbox"]')?.click() : null,
    });
    const thead = el('thead', {}, el('tr', {}, headings.map((text, i) => (canAct && i === 0
      ? el('th', { scope: 'col' }, el('span', { class: 'visually-hidden', text: 'Selected' }))
      : el('th', { scope: 'col', text })))));
    results.replaceChildren(
      ...notSearched(page),
      el('table', { class: 'grid jobs', 'aria-label': 'Jobs' }, thead, tbody),
      pager('/jobs', params, page.next_cursor));
    if (focusId) roving.focusRow([...tbody.rows].find((tr) => tr.dataset.jobId === focusId));
  }

  async function load({ keepFocus = false } = {}) {
    const focusId = keepFocus ? document.activeElement?.closest?.('tr[data-job-id]')?.dataset.jobId : null;
    listStatus.textContent = 'Loading…';
    try {
      const page = await api.get('/admin/jobs', { ...filters, cursor: params.cursor, limit: PAGE_SIZE });
      if (stopped) return;
      problem.hidden = true;
      // Jobs no longer on the page cannot stay selected.
      const shown = new Set(page.jobs.map((j) => j.id));
      for (const id of selected) if (!shown.has(id)) selected.delete(id);
      selectionChanged();
      render(page, focusId);
      listStatus.textContent = page.jobs.length ? `${formatNumber(page.jobs.length)} shown${page.next_cursor ? ', more on the next page' : ''}.` : '';
    } catch (error) {
      if (stopped || error.signedOut) return;
      listStatus.textContent = '';
      if (error.status === 400) {
        // A filter errand refused: say why beside the form.
        problem.textContent = error.detail || error.message;
        problem.hidden = false;
        results.replaceChildren();
      } else {
        results.replaceChildren(el('p', { class: 'error', text: `Could not load the jobs: ${error.message}` }));
      }
    }
  }

  /** Retries or cancels the selected jobs one after another, then says how it went. */
  async function actOnSelected(action) {
    const ids = [...selected];
    retrySelected.disabled = cancelSelected.disabled = true;
    const tally = { done: 0, stopping: 0, refused: 0, failed: 0 };
    let lastError = '';
    for (const [i, id] of ids.entries()) {
      selectionStatus.textContent = `${action === 'retry' ? 'Retrying' : 'Cancelling'} ${i + 1} of ${ids.length}…`;
      try {
        const job = await api.post(`/admin/jobs/${encodeURIComponent(id)}/${action}`);
        if (action === 'cancel' && job.status !== 'cancelled') tally.stopping++;
        else tally.done++;
      } catch (error) {
        if (error.signedOut) return;
        if (error.status === 409) tally.refused++;
        else {
          tally.failed++;
          lastError = error.message;
        }
      }
    }
    const parts = [action === 'retry' ? `Retried ${tally.done}` : `Cancelled ${tally.done}`];
    if (tally.stopping) parts.push(`${tally.stopping} stopping`);
    if (tally.refused) parts.push(action === 'retry' ? `${tally.refused} not retryable` : `${tally.refused} already ended`);
    if (tally.failed) parts.push(`${tally.failed} failed (${lastError})`);
    selectionStatus.textContent = `${parts.join(', ')}.`;
    selected.clear();
    if (!stopped) await load({ keepFocus: true });
  }

  retrySelected.addEventListener('click', () => actOnSelected('retry'));
  cancelSelected.addEventListener('click', () => actOnSelected('cancel'));
  load();
  return () => { stopped = true; };
}
