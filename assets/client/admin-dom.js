/**
 * @file The operators' console's building blocks: an element builder that
 * only ever sets text (never HTML: params, errors and names are other
 * people's data, and may hold markup), the formats of times, ages and
 * counts, status badges, short ids, the filter forms and pagers the list
 * views share, and the hash links between views.
 */

/**
 * Builds an element. `props`: `className`, `text` (textContent), `data`
 * (dataset entries), `attrs` (attributes), `on` (event listeners), and any
 * other key as a DOM property (`href`, `type`, `disabled`, `title`…).
 * Children are nodes or strings (strings become text nodes), falsy skipped.
 */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  const { className, text, data, attrs, on, ...properties } = props;
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  for (const [key, value] of Object.entries(data ?? {})) node.dataset[key] = value;
  for (const [key, value] of Object.entries(attrs ?? {})) node.setAttribute(key, value);
  for (const [type, listener] of Object.entries(on ?? {})) node.addEventListener(type, listener);
  Object.assign(node, properties);
  node.append(...children.flat().filter((child) => child !== null && child !== undefined && child !== false));
  return node;
}

/** A status line that screen readers announce when its text changes. */
export function statusLine(props = {}) {
  return el('p', { className: 'status-line', attrs: { role: 'status', 'aria-live': 'polite' }, ...props });
}

const numberFormat = new Intl.NumberFormat('en-US');

/** `1234` → `1,234` (one locale, so the tests and the screenshots read alike). */
export function formatNumber(n) {
  return typeof n === 'number' ? numberFormat.format(n) : '—';
}

/** A count the server stops at `cap` + 1: past the cap it reads `10,000+`. */
export function formatCount(n, cap) {
  if (typeof n !== 'number') return '0';
  return typeof cap === 'number' && n > cap ? `${formatNumber(cap)}+` : formatNumber(n);
}

/** `1 job` / `3 jobs`. */
export function plural(n, word) {
  return `${formatNumber(n)} ${word}${n === 1 ? '' : 's'}`;
}

/** A local date and time, to the second. */
export function formatTime(iso) {
  return iso ? new Date(iso).toLocaleString() : '—';
}

/** A length of time, roughly: `42 s`, `3 min`, `2 h 5 min`, `4 d`. */
export function formatDuration(seconds) {
  if (typeof seconds !== 'number' || !Number.isFinite(seconds)) return '—';
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86400)} d`;
}

/** `3 min ago`, or `in 20 s` for a time still to come. */
export function relativeAge(iso) {
  if (!iso) return '—';
  const seconds = (Date.now() - new Date(iso).getTime()) / 1000;
  if (Math.abs(seconds) < 2) return 'just now';
  return seconds >= 0 ? `${formatDuration(seconds)} ago` : `in ${formatDuration(-seconds)}`;
}

/** A `<time>` showing the relative age, with the full local time in its title. */
export function timeAgo(iso) {
  if (!iso) return el('span', { className: 'muted', text: '—' });
  return el('time', { dateTime: iso, title: formatTime(iso), text: relativeAge(iso) });
}

/** A `<time>` showing the full local time. */
export function timeAt(iso) {
  if (!iso) return el('span', { className: 'muted', text: '—' });
  return el('time', { dateTime: iso, title: relativeAge(iso), text: formatTime(iso) });
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
  const shown = status === 'processing' && state === 'retry_scheduled' ? 'retrying' : status;
  return el('span', { className: `badge badge-${status}`, text: shown, title: state && state !== status ? state : '' });
}

/** `#/jobs?status=failed&type=sleep`: a view's address, leaving out empty values. */
export function hashFor(path, params = {}) {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== '') query.set(key, value);
  }
  const search = query.toString();
  return `#${path}${search ? `?${search}` : ''}`;
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
  return el('a', { href: hashFor(`/jobs/${encodeURIComponent(id)}`), text: shortId(id), title: id, className: 'mono' });
}

/**
 * A table: `columns` are `[heading, (row) => cell content]`; cell content is
 * a node, a string or a number. `label` names it for assistive technology.
 */
export function table(label, columns, rows, { rowProps } = {}) {
  const head = el('thead', {}, el('tr', {}, columns.map(([heading]) => el('th', { scope: 'col', text: heading }))));
  const body = el('tbody', {}, rows.map((row) => el('tr', rowProps?.(row) ?? {},
    columns.map(([, cell]) => el('td', {}, cellContent(cell(row)))))));
  return el('table', { className: 'grid', attrs: { 'aria-label': label } }, head, body);
}

function cellContent(value) {
  if (value instanceof Node) return value;
  return value === null || value === undefined || value === '' ? el('span', { className: 'muted', text: '—' }) : String(value);
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
      control = el('input', { id, name: field.name, type: 'text', placeholder: field.placeholder ?? '', autocomplete: 'off', spellcheck: false });
      control.value = values[field.name] ?? '';
    }
    return el('div', { className: 'field' }, el('label', { htmlFor: id, text: field.label }), control);
  });
  const problem = el('p', { className: 'error form-problem', hidden: true, attrs: { role: 'alert' } });
  const form = el('form', { className: 'filters', attrs: { 'aria-label': label } },
    controls,
    el('div', { className: 'form-buttons' },
      el('button', { type: 'submit', className: 'primary', text: 'Apply' }),
      el('button', { type: 'button', className: 'secondary', text: 'Clear', on: { click: onClear } })));
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
  return el('nav', { className: 'pager', attrs: { 'aria-label': 'Pages' } },
    cursor ? el('a', { href: hashFor(path, filters), text: 'First page' }) : null,
    nextCursor ? el('a', { href: hashFor(path, { ...filters, cursor: nextCursor }), text: 'Next page' }) : null);
}
