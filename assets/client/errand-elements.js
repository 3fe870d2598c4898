/**
 * @file Two web components on top of `./errand.js`, served by errand at
 * `/client/errand-elements.js`; importing the module defines them.
 *
 * - `<errand-bell>`: the unread count (always the server's) and a dropdown
 *   feed with "Mark read" per entry and "Mark all read".
 * - `<errand-export-button type="export_sales_report">`: submits its closest
 *   `<form>`'s fields once per intent, shows progress, then a download link
 *   or the error. Its light DOM is the button's label.
 *
 * Each needs a client: `element.client = new Errand({ token })`. It starts
 * once it is both in the document and given a client, and stops (closing its
 * share of the live stream) when removed.
 *
 * Styling: shadow DOM, with these custom properties (inherited, so set them
 * on the elements or any ancestor):
 *   --errand-font          font family (default: inherit)
 *   --errand-text          text colour (#1f2937)
 *   --errand-muted         secondary text (#6b7280)
 *   --errand-accent        buttons and links (#2563eb)
 *   --errand-accent-text   text on the accent (#fff)
 *   --errand-surface       panel background (#fff)
 *   --errand-border        borders and dividers (#e5e7eb)
 *   --errand-badge         unread badge background (#dc2626)
 *   --errand-danger        error text (#b91c1c)
 *   --errand-radius        corner radius (8px)
 *   --errand-panel-width   width of the bell's dropdown (24rem)
 * and the parts `button` (both), `panel` (bell), `link` (export button).
 *
 * The page's content security policy forbids `<style>` elements and style
 * attributes, so styles are constructable stylesheets (`adoptedStyleSheets`).
 */

/** The client, for pages that import only this module. */
export { Errand, ErrandError } from './errand.js';

/** A signed download URL lives 15 minutes; one older than this is fetched again before use. */
const URL_REFRESH_MS = 10 * 60_000;
/** Entries shown in the bell. */
const FEED_SIZE = 20;

const SHARED_CSS = `
  :host { font-family: var(--errand-font, inherit); color: var(--errand-text, #1f2937); }
  [hidden] { display: none !important; }
  button {
    font: inherit; cursor: pointer; border-radius: var(--errand-radius, 8px);
    border: 1px solid var(--errand-border, #e5e7eb); background: var(--errand-surface, #fff); color: inherit;
    padding: 0.45rem 0.9rem;
  }
  button:hover { border-color: var(--errand-accent, #2563eb); }
  button:focus-visible, a:focus-visible, [tabindex="-1"]:focus-visible {
    outline: 2px solid var(--errand-accent, #2563eb); outline-offset: 2px;
  }
  button:disabled, button[aria-disabled="true"] { opacity: 0.55; cursor: default; }
  a { color: var(--errand-accent, #2563eb); }
  .sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
`;

const BELL_CSS = `
  :host { position: relative; display: inline-block; }
  .toggle { position: relative; display: inline-flex; align-items: center; padding: 0.45rem; border-radius: 999px; }
  .toggle svg { width: 1.35rem; height: 1.35rem; }
  .badge {
    position: absolute; top: -0.3rem; right: -0.35rem; min-width: 1.25rem; height: 1.25rem; padding: 0 0.3rem;
    box-sizing: border-box; border-radius: 999px; background: var(--errand-badge, #dc2626); color: #fff;
    font-size: 0.72rem; font-weight: 600; line-height: 1.25rem; text-align: center;
  }
  .panel {
    position: absolute; right: 0; top: calc(100% + 0.5rem); z-index: 10; width: var(--errand-panel-width, 24rem);
    max-width: calc(100vw - 2rem); max-height: 70vh; overflow: auto; box-sizing: border-box;
    background: var(--errand-surface, #fff); border: 1px solid var(--errand-border, #e5e7eb);
    border-radius: var(--errand-radius, 8px); box-shadow: 0 12px 32px rgb(15 23 42 / 0.14);
  }
  .head {
    display: flex; align-items: center; justify-content: space-between; gap: 1rem; padding: 0.75rem 1rem;
    border-bottom: 1px solid var(--errand-border, #e5e7eb); position: sticky; top: 0; background: inherit;
  }
  h2 { font-size: 1rem; margin: 0; }
  .head button { font-size: 0.85rem; padding: 0.3rem 0.7rem; }
  ul { list-style: none; margin: 0; padding: 0; }
  li { display: grid; grid-template-columns: 0.6rem 1fr auto; gap: 0.6rem; padding: 0.75rem 1rem; align-items: start; }
  li + li { border-top: 1px solid var(--errand-border, #e5e7eb); }
  .dot { width: 0.5rem; height: 0.5rem; margin-top: 0.4rem; border-radius: 50%; }
  li.unread .dot { background: var(--errand-accent, #2563eb); }
  p { margin: 0; }
  .title { font-weight: 600; }
  li:not(.unread) .title { font-weight: 500; }
  .body, .meta { font-size: 0.875rem; }
  .meta { color: var(--errand-muted, #6b7280); margin-top: 0.25rem; display: flex; flex-wrap: wrap; gap: 0.25rem 0.75rem; }
  li.failed .body { color: var(--errand-danger, #b91c1c); }
  li button { font-size: 0.8rem; padding: 0.25rem 0.6rem; white-space: nowrap; }
  .empty, .error { padding: 1rem; color: var(--errand-muted, #6b7280); }
  .error { color: var(--errand-danger, #b91c1c); }
`;

const EXPORT_CSS = `
  :host { display: inline-block; }
  .row { display: flex; flex-wrap: wrap; align-items: center; gap: 0.6rem 0.9rem; }
  .start, .download {
    background: var(--errand-accent, #2563eb); color: var(--errand-accent-text, #fff);
    border-color: var(--errand-accent, #2563eb); font-weight: 600;
  }
  .download {
    display: inline-block; text-decoration: none; padding: 0.45rem 0.9rem; border-radius: var(--errand-radius, 8px);
  }
  .status { color: var(--errand-muted, #6b7280); }
  .status:empty, .result:empty { display: none; }
  .status.failed { color: var(--errand-danger, #b91c1c); }
  .status.working::before {
    content: ""; display: inline-block; width: 0.8em; height: 0.8em; margin-right: 0.5em; vertical-align: -0.1em;
    border: 2px solid currentColor; border-right-color: transparent; border-radius: 50%; animation: spin 0.8s linear infinite;
  }
  @keyframes spin { to { transform: rotate(360deg); } }
  @media (prefers-reduced-motion: reduce) { .status.working::before { animation: none; } }
  progress { width: 8rem; accent-color: var(--errand-accent, #2563eb); }
`;

const BELL_ICON = `<svg viewBox="0 0 24 24" aria-hidden="true" fill="none" stroke="currentColor" stroke-width="1.8"
  stroke-linecap="round" stroke-linejoin="round"><path d="M6 8a6 6 0 1 1 12 0c0 7 3 9 3 9H3s3-2 3-9"/>
  <path d="M10.3 21a1.94 1.94 0 0 0 3.4 0"/></svg>`;

function sheet(css) {
  const result = new CSSStyleSheet();
  result.replaceSync(css);
  return result;
}
const SHARED_SHEET = sheet(SHARED_CSS);
const BELL_SHEET = sheet(BELL_CSS);
const EXPORT_SHEET = sheet(EXPORT_CSS);

/** An element with attributes and children (text stays text: server strings are never parsed as HTML). */
function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === false || value == null) continue;
    node.setAttribute(name, value === true ? '' : value);
  }
  node.append(...children.filter((child) => child != null && child !== false));
  return node;
}

/** "3 minutes ago", with the exact time as the element's title. */
function timeElement(iso) {
  const at = new Date(iso);
  const seconds = Math.round((at.getTime() - Date.now()) / 1000);
  const format = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });
  const [value, unit] =
    Math.abs(seconds) < 60 ? [seconds, 'second'] : Math.abs(seconds) < 3600 ? [Math.round(seconds / 60), 'minute']
      : Math.abs(seconds) < 86400 ? [Math.round(seconds / 3600), 'hour'] : [Math.round(seconds / 86400), 'day'];
  return el('time', { datetime: iso, title: at.toLocaleString() }, format.format(value, unit));
}

/**
 * A download link to a job's result that stays usable: signed URLs expire,
 * so a click on one fetched more than `URL_REFRESH_MS` ago fetches a fresh
 * one first. Returns null for a job without a downloadable file.
 */
function downloadLink(client, job, attributes) {
  if (!job.result_url) return null;
  const name = job.result?.file_name ?? 'result';
  const link = el('a', { ...attributes, href: job.result_url, download: name }, `Download ${name}`);
  let fetchedAt = Date.now();
  link.addEventListener('click', async (event) => {
    if (Date.now() - fetchedAt < URL_REFRESH_MS) return;
    event.preventDefault();
    let fresh;
    try {
      fresh = await client.job(job.id);
    } catch {
      return; // errand is away: the link stays as it was, for another click
    }
    if (!fresh.result_url) return;
    link.href = fresh.result_url;
    fetchedAt = Date.now();
    link.click();
  });
  return link;
}

/** Base of both elements: a client property, and a start/stop tied to being in the document. */
class ClientElement extends HTMLElement {
  #client = null;
  #running = false;

  /** @type {import('./errand.js').Errand|null} the client this element uses */
  get client() {
    return this.#client;
  }

  set client(client) {
    this.#stopIfRunning();
    this.#client = client;
    this.#startIfReady();
  }

  connectedCallback() {
    this.#startIfReady();
  }

  disconnectedCallback() {
    this.#stopIfRunning();
  }

  #startIfReady() {
    if (this.#running || !this.#client || !this.isConnected) return;
    this.#running = true;
    this.start(this.#client);
  }

  #stopIfRunning() {
    if (!this.#running) return;
    this.#running = false;
    this.stop();
  }

  /** Whether `client` is still this element's running client (answers may arrive after a swap). */
  isCurrent(client) {
    return this.#running && this.#client === client;
  }
}

/**
 * `<errand-bell>`: a button with the unread count and a dropdown feed.
 * Reflects the count in the `unread-count` attribute (read-only, e.g. for
 * `errand-bell[unread-count="0"]` selectors). The count is never computed
 * here: it is the server's, from the stream's `unread_count` events or the
 * `unread_count` of a feed read.
 */
export class ErrandBell extends ClientElement {
  #toggle;
  #badge;
  #panel;
  #heading;
  #markAll;
  #list;
  #empty;
  #error;
  #announcer;
  #unsubscribe = null;
  /** @type {Map<string, object>} notifications by id */
  #items = new Map();
  /** @type {Map<string, Promise<object>>} jobs of the entries, read for their links */
  #jobs = new Map();
  #unreadCount = null;
  /** Bumped by every count from the stream, so an older feed read cannot overwrite a newer count. */
  #streamCounts = 0;
  /** The read marks may have changed elsewhere since the feed was read. */
  #stale = true;
  /** Feed reads started: only the latest one's answer is drawn, never an older one arriving late. */
  #reads = 0;
  #closeOnOutside = (event) => {
    if (!event.composedPath().includes(this)) this.close({ restoreFocus: false });
  };

  constructor() {
    super();
    const root = this.attachShadow({ mode: 'open' });
    root.adoptedStyleSheets = [SHARED_SHEET, BELL_SHEET];
    this.#badge = el('span', { class: 'badge', 'aria-hidden': 'true', hidden: true });
    this.#toggle = el('button', { class: 'toggle', part: 'button', 'aria-expanded': 'false', 'aria-controls': 'panel' });
    this.#toggle.innerHTML = BELL_ICON;
    this.#toggle.append(this.#badge);
    this.#heading = el('h2', { id: 'heading', tabindex: '-1' }, 'Notifications');
    this.#markAll = el('button', { class: 'mark-all', type: 'button' }, 'Mark all read');
    this.#list = el('ul', { 'aria-labelledby': 'heading' });
    this.#empty = el('p', { class: 'empty' }, 'Nothing yet: finished jobs show up here.');
    this.#error = el('p', { class: 'error', role: 'alert', hidden: true });
    this.#panel = el('div', { id: 'panel', class: 'panel', part: 'panel', role: 'dialog', 'aria-labelledby': 'heading', hidden: true },
      el('div', { class: 'head' }, this.#heading, this.#markAll), this.#error, this.#empty, this.#list);
    this.#announcer = el('div', { class: 'sr-only', 'aria-live': 'polite' });
    root.append(this.#toggle, this.#panel, this.#announcer);
    this.#showCount();

    this.#toggle.addEventListener('click', () => (this.isOpen ? this.close() : this.open()));
    this.#markAll.addEventListener('click', () => this.#markAllRead());
    root.addEventListener('keydown', (event) => {
      if (event.key === 'Escape' && this.isOpen) {
        event.stopPropagation();
        this.close();
      }
    });
    // Tabbing out of the dropdown closes it, as clicking elsewhere does.
    // (Focus moving inside the shadow root is seen here with the bell itself as `relatedTarget`.)
    this.addEventListener('focusout', (event) => {
      const next = event.relatedTarget;
      if (next && next !== this && !this.contains(next)) this.close({ restoreFocus: false });
    });
  }

  /** The server's unread count, once known. */
  get unreadCount() {
    return this.#unreadCount;
  }

  /** Whether the dropdown is open. */
  get isOpen() {
    return !this.#panel.hidden;
  }

  /** Opens the dropdown and moves focus into it. */
  open() {
    this.#panel.hidden = false;
    this.#toggle.setAttribute('aria-expanded', 'true');
    document.addEventListener('pointerdown', this.#closeOnOutside, true);
    this.#render();
    this.#heading.focus();
    if (this.#stale && this.client) this.#refresh(this.client);
  }

  /** Closes the dropdown; focus returns to the bell unless told otherwise. */
  close({ restoreFocus = true } = {}) {
    if (!this.isOpen) return;
    this.#panel.hidden = true;
    this.#toggle.setAttribute('aria-expanded', 'false');
    document.removeEventListener('pointerdown', this.#closeOnOutside, true);
    if (restoreFocus) this.#toggle.focus();
  }

  start(client) {
    this.#unsubscribe = client.subscribe((event) => this.#onEvent(client, event));
    this.#refresh(client);
  }

  stop() {
    this.#unsubscribe?.();
    this.#unsubscribe = null;
    this.#items.clear();
    this.#jobs.clear();
    this.#unreadCount = null;
    this.#showCount();
    this.#render();
  }

  #onEvent(client, event) {
    if (event.type === 'unread_count') {
      this.#streamCounts++;
      this.#setCount(event.unreadCount);
      // Someone may have marked entries read (or new ones came): the open list reads again.
      this.#stale = true;
      if (this.isOpen) this.#refresh(client);
    } else if (event.type === 'job_completed') {
      const notification = event.notification;
      if (this.#items.has(notification.id)) return;
      this.#items.set(notification.id, notification);
      this.#announcer.textContent = `New notification: ${notification.title}`;
      this.#render();
    } else if (event.type === 'open') {
      this.#stale = true;
      if (this.isOpen) this.#refresh(client);
    }
  }

  /** Reads the feed again: entries, read marks, and the count, unless the stream sent a newer one meanwhile. */
  async #refresh(client) {
    const countsBefore = this.#streamCounts;
    const read = ++this.#reads;
    this.#stale = false;
    try {
      const page = await client.notifications({ limit: FEED_SIZE });
      if (!this.isCurrent(client) || read !== this.#reads) return;
      const newest = page.notifications[0]?.id ?? '';
      // Keep what the stream brought after this page was read; replace the rest.
      const later = [...this.#items.values()].filter((n) => n.id > newest);
      this.#items = new Map([...later, ...page.notifications].map((n) => [n.id, n]));
      if (this.#streamCounts === countsBefore) this.#setCount(page.unread_count);
      this.#error.hidden = true;
    } catch (error) {
      if (read !== this.#reads) return;
      this.#stale = true;
      this.#showError(`Could not load notifications: ${error.message}`);
    }
    this.#render();
  }

  async #markRead(id) {
    const client = this.client;
    if (!client) return;
    try {
      await client.markRead(id);
    } catch (error) {
      this.#showError(`Could not mark it read: ${error.message}`);
      return;
    }
    await this.#refresh(client);
  }

  async #markAllRead() {
    const client = this.client;
    if (!client || this.#markAll.getAttribute('aria-disabled') === 'true') return;
    try {
      await client.markAllRead();
    } catch (error) {
      this.#showError(`Could not mark them read: ${error.message}`);
      return;
    }
    await this.#refresh(client);
  }

  #setCount(count) {
    this.#unreadCount = count;
    this.#showCount();
  }

  #showCount() {
    const count = this.#unreadCount;
    this.#badge.hidden = !count;
    this.#badge.textContent = count > 99 ? '99+' : String(count ?? '');
    if (count === null) this.removeAttribute('unread-count');
    else this.setAttribute('unread-count', String(count));
    this.#toggle.setAttribute('aria-label', count ? `Notifications, ${count} unread` : 'Notifications');
    // aria-disabled, not disabled: a disabled button would drop the focus it holds.
    this.#markAll.setAttribute('aria-disabled', String(!count));
  }

  #showError(message) {
    this.#error.textContent = message;
    this.#error.hidden = false;
  }

  /**
   * Draws the entries (only while open). An entry that did not change keeps
   * its element, so the focus and a click in progress survive a redraw.
   */
  #render() {
    if (!this.isOpen) return;
    const focusedId = this.shadowRoot.activeElement?.closest('li')?.dataset.id;
    const entries = [...this.#items.values()].sort((a, b) => (a.id < b.id ? 1 : -1)).slice(0, FEED_SIZE);
    const existing = new Map([...this.#list.children].map((item) => [item.dataset.id, item]));
    const wanted = entries.map((n) => {
      const item = existing.get(n.id);
      return item?.dataset.version === entryVersion(n) ? item : this.#entry(n);
    });
    const keep = new Set(wanted);
    for (const item of [...this.#list.children]) if (!keep.has(item)) item.remove();
    wanted.forEach((item, index) => {
      if (this.#list.children[index] !== item) this.#list.insertBefore(item, this.#list.children[index] ?? null);
    });
    this.#empty.hidden = entries.length > 0;
    if (focusedId && !this.shadowRoot.activeElement) this.#list.querySelector(`li[data-id="${focusedId}"]`)?.focus();
  }

  #entry(notification) {
    const unread = !notification.read_at;
    const failed = notification.job_status === 'failed';
    const meta = el('p', { class: 'meta' }, timeElement(notification.created_at));
    const item = el('li', { 'data-id': notification.id, 'data-version': entryVersion(notification), tabindex: '-1', class: [unread && 'unread', failed && 'failed'].filter(Boolean).join(' ') },
      el('span', { class: 'dot', 'aria-hidden': 'true' }),
      el('div', {},
        el('p', { class: 'title' }, unread ? el('span', { class: 'sr-only' }, 'Unread: ') : null, notification.title),
        el('p', { class: 'body' }, notification.body),
        meta),
      unread ? el('button', { type: 'button', class: 'mark-read', 'aria-label': `Mark read: ${notification.title}` }, 'Mark read') : el('span'));
    item.querySelector('.mark-read')?.addEventListener('click', () => {
      item.focus(); // the button goes away: keep the focus on its entry
      this.#markRead(notification.id);
    });
    // A completed job may have a file: its link comes with a fresh signed URL from the job.
    if (!failed && this.client) this.#addDownloadLink(this.client, notification.job_id, meta);
    return item;
  }

  async #addDownloadLink(client, jobId, meta) {
    if (!this.#jobs.has(jobId)) this.#jobs.set(jobId, client.job(jobId).then((job) => ({ job, at: Date.now() })));
    try {
      const { job, at } = await this.#jobs.get(jobId);
      if (Date.now() - at > URL_REFRESH_MS) {
        this.#jobs.delete(jobId);
        return this.#addDownloadLink(client, jobId, meta);
      }
      const link = downloadLink(client, job, { class: 'download' });
      if (link) meta.append(link);
      else if (job.result?.expired) meta.append(el('span', {}, 'The file has expired'));
    } catch {
      this.#jobs.delete(jobId); // no link this time; the next render tries again
    }
  }
}

/**
 * `<errand-export-button type="…" intent="…">`: submits the fields of its
 * closest `<form>` (empty ones left out) as a job of `type`, once per
 * intent (`intent` attribute; default: the type and the form's id), then
 * shows "Processing…" (with progress when the job reports
 * `progress: {done, total}`), and finally a download link or the error.
 * After a reload it shows the job its intent last started. Fires
 * `errand-job` (bubbling, `detail`: the job) whenever the job it shows changes.
 */
export class ErrandExportButton extends ClientElement {
  #start;
  #status;
  #progress;
  #result;
  #again;
  #unsubscribe = null;
  #jobId = null;
  /** The shown job has ended: a reconnect need not read it again. */
  #jobEnded = false;
  /** "Try again" (after a failure) submits at once; "New export" only clears the way. */
  #againSubmits = false;
  /** What the last `errand-job` event told, so that a job read again unchanged is not told twice. */
  #shown = null;
  #form = null;
  #submitOnEnter = (event) => {
    // The page may not post forms anywhere (CSP form-action 'none'): Enter exports instead.
    event.preventDefault();
    if (!this.#start.hidden && !this.#start.disabled) this.#start.click();
  };

  constructor() {
    super();
    const root = this.attachShadow({ mode: 'open' });
    root.adoptedStyleSheets = [SHARED_SHEET, EXPORT_SHEET];
    this.#start = el('button', { class: 'start', part: 'button', type: 'button' }, el('slot', {}, 'Export'));
    this.#status = el('span', { class: 'status', role: 'status' });
    this.#progress = el('progress', { max: '1', hidden: true });
    this.#result = el('span', { class: 'result' });
    this.#again = el('button', { class: 'again', type: 'button', hidden: true }, 'New export');
    root.append(el('div', { class: 'row' }, this.#start, this.#status, this.#progress, this.#result, this.#again));
    this.#start.addEventListener('click', () => this.#submit());
    this.#again.addEventListener('click', () => {
      this.#jobId = null;
      this.#showIdle();
      this.#start.focus();
      if (this.#againSubmits) this.#submit();
    });
  }

  /** The job type to submit. */
  get type() {
    return this.getAttribute('type') ?? '';
  }

  /** The intent: one idempotency key per intent until its job ends. */
  get intent() {
    return this.getAttribute('intent') ?? [this.type, this.closest('form')?.id].filter(Boolean).join(':');
  }

  start(client) {
    this.#form = this.closest('form');
    this.#form?.addEventListener('submit', this.#submitOnEnter);
    this.#unsubscribe = client.subscribe((event) => {
      if (!this.#jobId) return;
      if (event.type === 'job_progress') {
        if (event.jobId === this.#jobId && !this.#jobEnded) this.#showProgress(event.progress);
        return;
      }
      const ended = event.type === 'job_completed' || event.type === 'job_cancelled';
      const mine = ended && event.notification.job_id === this.#jobId;
      if (mine || (event.type === 'open' && !this.#jobEnded)) {
        this.#check(client, this.#jobId);
      }
    });
    // After a reload, pick up the job this intent started.
    const jobId = client.intentJobId(this.intent);
    if (jobId) {
      this.#jobId = jobId;
      this.#showWorking('Processing…');
      this.#check(client, jobId);
    } else {
      this.#showIdle();
    }
  }

  stop() {
    this.#unsubscribe?.();
    this.#unsubscribe = null;
    this.#form?.removeEventListener('submit', this.#submitOnEnter);
  }

  async #submit() {
    const client = this.client;
    if (!client || this.#start.disabled) return;
    // The browser's own messages for required or malformed fields, before any request.
    if (this.#form && !this.#form.reportValidity()) return;
    // Disabled at once: a double-click's second click lands on a disabled button.
    this.#start.disabled = true;
    this.#showWorking('Starting…');
    try {
      const job = await client.createJob(this.type, formParams(this.#form), { intent: this.intent });
      if (this.isCurrent(client)) this.#show(client, job);
    } catch (error) {
      if (!this.isCurrent(client)) return;
      this.#showIdle();
      this.#status.textContent = error.message;
      this.#status.classList.add('failed');
    }
  }

  async #check(client, jobId) {
    try {
      const job = await client.job(jobId);
      if (this.isCurrent(client) && this.#jobId === job.id) this.#show(client, job);
    } catch (error) {
      if (!this.isCurrent(client) || this.#jobId !== jobId) return;
      if (error.status === 404) {
        this.#jobId = null; // gone with its history
        this.#showIdle();
      }
      // Otherwise errand is away: the stream's next `open` checks again.
    }
  }

  #show(client, job) {
    this.#jobId = job.id;
    this.#jobEnded = ['completed', 'failed', 'cancelled'].includes(job.status);
    const shown = JSON.stringify([job.id, job.status, job.progress]);
    if (shown !== this.#shown) this.dispatchEvent(new CustomEvent('errand-job', { bubbles: true, composed: true, detail: job }));
    this.#shown = shown;
    const hadFocus = this.shadowRoot.activeElement !== null;
    if (job.status === 'completed') {
      const link = downloadLink(client, job, { class: 'download', part: 'link' });
      this.#showEnded(link ? 'Ready.' : 'Done.', link ?? (job.result?.expired ? 'The file has expired.' : ''));
      if (hadFocus) (link ?? this.#again).focus();
    } else if (job.status === 'failed') {
      this.#showEnded(`Failed: ${job.error_message ?? 'no reason was given'}`, '');
      this.#status.classList.add('failed');
      this.#again.textContent = 'Try again';
      this.#againSubmits = true;
      if (hadFocus) this.#again.focus();
    } else if (job.status === 'cancelled') {
      this.#showEnded('Cancelled.', '');
      if (hadFocus) this.#again.focus();
    } else {
      // Completion and progress both come from the stream (`job_progress`).
      this.#showProgress(job.progress);
    }
  }

  #showProgress(progress) {
    this.#showWorking(progressText(progress), progress?.total ? progress.done / progress.total : null);
  }

  #showIdle() {
    const statusHadFocus = this.shadowRoot.activeElement === this.#status;
    this.#start.hidden = false;
    this.#start.disabled = false;
    if (statusHadFocus) this.#start.focus();
    this.#status.textContent = '';
    this.#status.classList.remove('failed', 'working', 'sr-only');
    this.#progress.hidden = true;
    this.#result.replaceChildren();
    this.#again.hidden = true;
  }

  #showWorking(text, share = null) {
    const hadFocus = this.shadowRoot.activeElement === this.#start;
    this.#start.hidden = true;
    this.#start.disabled = true;
    this.#status.textContent = text;
    this.#status.classList.remove('failed', 'sr-only');
    this.#status.classList.add('working');
    this.#progress.hidden = share === null;
    if (share !== null) this.#progress.value = share;
    this.#result.replaceChildren();
    this.#again.hidden = true;
    // The button is gone: the status holds the focus until the link replaces it.
    if (hadFocus) {
      this.#status.tabIndex = -1;
      this.#status.focus();
    }
  }

  #showEnded(text, result) {
    this.#start.hidden = true;
    this.#status.textContent = text;
    this.#status.classList.remove('failed', 'working');
    // With a link to show, the status is for screen readers only ("Ready."): the link says the rest.
    this.#status.classList.toggle('sr-only', Boolean(result));
    this.#progress.hidden = true;
    this.#result.replaceChildren(result);
    this.#again.textContent = 'New export';
    this.#againSubmits = false;
    this.#again.hidden = false;
  }
}

/** "Processing… 40 %", or what the handler said, or how much is done when the total is unknown. */
function progressText(progress) {
  if (!progress) return 'Processing…';
  if (progress.total) return `Processing… ${Math.round((100 * progress.done) / progress.total)} %`;
  if (progress.message) return `Processing… ${progress.message}`;
  return `Processing… ${progress.done.toLocaleString()} done`;
}

/** What an entry shows that can change: a changed one is drawn again. */
function entryVersion(notification) {
  return `${notification.read_at ?? ''}|${notification.job_status}`;
}

/**
 * A form's fields as job params: what `FormData` sends, empty ones left out,
 * repeated names as arrays, and the values of number inputs as numbers (a
 * type's schema may ask for integers, and a form only holds text).
 */
function formParams(form) {
  const params = {};
  if (!form) return params;
  for (const [name, text] of new FormData(form)) {
    if (typeof text !== 'string' || text.trim() === '') continue;
    const field = form.elements.namedItem(name);
    const value = field?.type === 'number' || field?.type === 'range' ? Number(text) : text;
    params[name] = name in params ? [].concat(params[name], value) : value;
  }
  return params;
}

if (!customElements.get('errand-bell')) customElements.define('errand-bell', ErrandBell);
if (!customElements.get('errand-export-button')) customElements.define('errand-export-button', ErrandExportButton);
