/**
 * @file The audit trail (`#/audit?…`, `/client/admin/audit.js`): who did what, when, to which jobs,
 * newest first, from `GET /admin/actions`, filterable by operator, action,
 * job and time, with keyset paging. Any operator may read it.
 */

import { el } from '../core/dom.js';
import { formatNumber } from '../core/format.js';
import { filterForm, navigate, hashFor, jobLink, pager, statusLine, table, timeAgo } from './widgets.js';

const PAGE_SIZE = 50;
const ACTIONS = [
  'retry', 'cancel', 'bulk_retry', 'bulk_cancel', 'set_quotas', 'pause', 'resume', 'hold', 'release',
  'erase', 'schedule_pause', 'schedule_delete', 'set_retention',
];
const FIELDS = [
  { name: 'operator', label: 'Operator' },
  { name: 'action', label: 'Action', kind: 'select', options: [['', 'Any'], ...ACTIONS.map((a) => [a, a])] },
  { name: 'job', label: 'Job id' },
  { name: 'since', label: 'Since', kind: 'datetime' },
  { name: 'until', label: 'Until', kind: 'datetime' },
];

/** What an action was taken on: its job, or the filter of a bulk action (as JSON text). */
function target(action) {
  if (action.job_id) return jobLink(action.job_id);
  if (action.filter) return el('code', { class: 'filter-json', text: JSON.stringify(action.filter) });
  return null;
}


export function mount(container, { api, params }) {
  const filters = Object.fromEntries(FIELDS.map((f) => [f.name, params[f.name]]).filter(([, v]) => v));
  const { form, problem } = filterForm({
    label: 'Audit filters',
    fields: FIELDS,
    values: params,
    onApply: (values) => navigate(hashFor('/audit', values), load),
    onClear: () => navigate('#/audit', load),
  });
  const status = statusLine();
  const results = el('div', { class: 'results' });
  let stopped = false;
  container.append(
    el('div', { class: 'view-head' }, el('h1', { text: 'Audit' }),
      el('span', { class: 'muted small', text: 'Every operator action, newest first' })),
    el('section', { class: 'card' }, form, problem),
    el('section', { class: 'card' }, status, results));

  async function load() {
    status.textContent = 'Loading…';
    try {
      const page = await api.get('/admin/actions', { ...filters, cursor: params.cursor, limit: PAGE_SIZE });
      if (stopped) return;
      problem.hidden = true;
      status.textContent = '';
      results.replaceChildren(
        page.actions.length
          ? table('Operator actions', [
            ['When', (a) => timeAgo(a.at)],
            ['Operator', (a) => a.operator],
            ['Action', (a) => el('span', { class: 'badge', text: a.action })],
            ['On', target],
            ['Affected', (a) => formatNumber(a.affected)],
          ], page.actions, { rowProps: (a) => ({ 'data-action-id': String(a.id), 'data-action': a.action }) })
          : el('p', { class: 'empty', text: 'No actions match.' }),
        pager('/audit', params, page.next_cursor));
    } catch (error) {
      if (stopped || error.signedOut) return;
      status.textContent = '';
      if (error.status === 400) {
        problem.textContent = error.detail || error.message;
        problem.hidden = false;
        results.replaceChildren();
      } else {
        results.replaceChildren(el('p', { class: 'error', text: `Could not load the audit trail: ${error.message}` }));
      }
    }
  }

  load();
  return () => { stopped = true; };
}
