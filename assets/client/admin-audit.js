/**
 * @file The audit trail (`#/audit?…`): who did what, when, to which jobs,
 * newest first, from `GET /admin/actions`, filterable by operator, action,
 * job and time, with keyset paging. Any operator may read it.
 */

import { el, filterForm, navigate, formatNumber, hashFor, jobLink, pager, statusLine, table, timeAgo } from '/client/admin-dom.js';

const PAGE_SIZE = 50;
const ACTIONS = ['retry', 'cancel', 'bulk_retry', 'bulk_cancel', 'set_quotas'];
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
  if (action.filter) return el('code', { className: 'filter-json', text: JSON.stringify(action.filter) });
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
  const results = el('div', { className: 'results' });
  let stopped = false;
  container.append(
    el('div', { className: 'view-head' }, el('h1', { text: 'Audit' }),
      el('span', { className: 'muted small', text: 'Every operator action, newest first' })),
    el('section', { className: 'card' }, form, problem),
    el('section', { className: 'card' }, status, results));

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
            ['Action', (a) => el('span', { className: 'badge', text: a.action })],
            ['On', target],
            ['Affected', (a) => formatNumber(a.affected)],
          ], page.actions, { rowProps: (a) => ({ data: { actionId: String(a.id), action: a.action } }) })
          : el('p', { className: 'empty', text: 'No actions match.' }),
        pager('/audit', params, page.next_cursor));
    } catch (error) {
      if (stopped || error.signedOut) return;
      status.textContent = '';
      if (error.status === 400) {
        problem.textContent = error.detail || error.message;
        problem.hidden = false;
        results.replaceChildren();
      } else {
        results.replaceChildren(el('p', { className: 'error', text: `Could not load the audit trail: ${error.message}` }));
      }
    }
  }

  load();
  return () => { stopped = true; };
}
