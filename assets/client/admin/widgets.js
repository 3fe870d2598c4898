/**
 * @file The operators' console's building blocks (`/client/admin/widgets.js`):
 * status lines, `<time>`s, status badges, short ids, the tables, filter
 * forms and pagers the views share, and the hash links between views.
 * They build with `el` (`../core/dom.js`), which only ever sets text, never
 * HTML (params, errors and names are other people's data, and may hold
 * markup); times and counts are written by `../core/format.js`.
 */

import { el } from '../core/dom.js';
import { formatTime, relativeAge } from '../core/format.js';
import { statusLabel } from '../core/job-status.js';
import { queryString } from '../core/query.js';

/** A status line that screen readers announce when its text changes. */
export function statusLine(props = {}) {
  return el('p', { class: 'status-line', role: 'status', 'aria-live': 'polite', ...props });
}

/** A `<time>` showing the relative age, with the full local time in its title. */
export function timeAgo(iso) {
  if (!iso) return el('span', { class: 'muted', text: '—' });
  return el('time', { datetime: iso, title: formatTime(iso), text: relativeAge(iso) });
}

/** A `<time>` showing the full local time. */
export function timeAt(iso) {
  if (!iso) return el('span', { class: 'muted', text: '—' });
  return el('time', { datetime: iso, title: relativeAge(iso), text: formatTime(iso) });
}

/**
 * A UUID's last eight digits: enough to tell jobs apart on a screen (the
 * whole id goes in the title). The last, not the first: errand's ids are
 * UUIDv7, whose first digits are the time, alike for jobs made together.
 */
export function shortId(id) {
  return id ? String(id).replace(/-/g, '').slice(-8) : '—';
}

/** A status badge; `processing` while a retry waits reads `retrying`. */
export function statusBadge(status, state) {
  return el('span', { class: `badge badge-${status}`, text: statusLabel(status, state), title: state && state !== status ? state : '' });
}

/** `#/jobs?status=failed&type=sleep`: a view's address, leaving out empty values. */
export function hashFor(path, params = {}) {
  return `#${path}${queryString(params)}`;
}

/**
 * Goes to `hash`. When that is the address already (Apply with the same
 * filters), no hashchange fires, so `reload` runs instead.
 */
export function navigate(hash, reload) {
  const before = location.hash;
  location.hash = hash;
  if (location.hash === before) reload();
}

/** A link to a job's detail, showing its short id. */
export function jobLink(id) {
  return el('a', { href: hashFor(`/jobs/${encodeURIComponent(id)}`), text: shortId(id), title: id, class: 'mono' });
}

/**
 * A table: `columns` are `[heading, (row) => cell content]`; cell content is
 * a node, a string or a number. `label` names it for assistive technology.
 */
export function table(label, columns, rows, { rowProps } = {}) {
  const head = el('thead', {}, el('tr', {}, columns.map(([heading]) => el('th', { scope: 'col', text: heading }))));
  const body = el('tbody', {}, rows.map((row) => el('tr', rowProps?.(row) ?? {},
    columns.map(([, cell]) => el('td', {}, cellContent(cell(row)))))));
  return el('table', { class: 'grid', 'aria-label': label }, head, body);
}

function cellContent(value) {
  if (value instanceof Node) return value;
  return value === null || value === undefined || value === '' ? el('span', { class: 'muted', text: '—' }) : String(value);
}

/** `2026-03-01T09:30` (what `<input type="datetime-local">` holds) from an ISO time, in local time. */
function localInputValue(iso) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  const pad = (n) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/**
 * A filter form. `fields`: `{name, label, kind: 'text' | 'select' |
 * 'datetime', options: [[value, label]], placeholder}`; `values` fills it
 * (times as ISO). On submit, `onApply` gets the values, times as ISO
 * (the API's RFC 3339), empty ones left out. Returns the form and the line
 * where a refused filter's reason goes.
 */
export function filterForm({ label, fields, values, onApply, onClear }) {
  const controls = fields.map((field) => {
    const id = `filter-${field.name}`;
    let control;
    if (field.kind === 'select') {
      control = el('select', { id, name: field.name }, field.options.map(([value, text]) => el('option', { value, text })));
      control.value = values[field.name] ?? '';
    } else if (field.kind === 'datetime') {
      control = el('input', { id, name: field.name, type: 'datetime-local', step: 60 });
      control.value = values[field.name] ? localInputValue(values[field.name]) : '';
    } else {
      control = el('input', { id, name: field.name, type: 'text', placeholder: field.placeholder ?? '', autocomplete: 'off', spellcheck: 'false' });
      control.value = values[field.name] ?? '';
    }
    return el('div', { class: 'field' }, el('label', { for: id, text: field.label }), control);
  });
  const problem = el('p', { class: 'error form-problem', hidden: true, role: 'alert' });
  const form = el('form', { class: 'filters', 'aria-label': label },
    controls,
    el('div', { class: 'form-buttons' },
      el('button', { type: 'submit', class: 'primary', text: 'Apply' }),
      el('button', { type: 'button', class: 'secondary', text: 'Clear', on: { click: onClear } })));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const applied = {};
    for (const field of fields) {
      const raw = form.elements[field.name].value.trim();
      if (!raw) continue;
      applied[field.name] = field.kind === 'datetime' ? new Date(raw).toISOString() : raw;
    }
    onApply(applied);
  });
  return { form, problem };
}

/** Keyset paging: "First page" when on a later one, "Next page" when there is one. */
export function pager(path, params, nextCursor) {
  const { cursor, ...filters } = params;
  return el('nav', { class: 'pager', 'aria-label': 'Pages' },
    cursor ? el('a', { href: hashFor(path, filters), text: 'First page' }) : null,
    nextCursor ? el('a', { href: hashFor(path, { ...filters, cursor: nextCursor }), text: 'Next page' }) : null);
}
