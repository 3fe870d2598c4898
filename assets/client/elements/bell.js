/**
 * @file `<errand-bell>` (`/client/elements/bell.js`): see `../errand-elements.js`.
 */

import { el } from '../core/dom.js';
import { NOTIFICATION_EVENTS, STREAM_ONLY_EVENTS } from '../core/notification-stream.js';
import { ClientElement, SHARED_SHEET, URL_REFRESH_MS, downloadLink, sheet, timeElement } from './base.js';

/** Entries shown in the bell. */
const FEED_SIZE = 20;
/** The stream's events whose notification is a feed entry. */
const FEED_KINDS = new Set([...NOTIFICATION_EVENTS].filter((kind) => !STREAM_ONLY_EVENTS.has(kind)));

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
  .actions, .entry-actions { display: flex; gap: 0.4rem; flex-wrap: wrap; justify-content: flex-end; }
  ul { list-style: none; margin: 0; padding: 0; }
  li { display: grid; grid-template-columns: 0.6rem 1fr fit-content(50%); gap: 0.6rem; padding: 0.75rem 1rem; align-items: start; }
  li + li { border-top: 1px solid var(--errand-border, #e5e7eb); }
  .dot { width: 0.5rem; height: 0.5rem; margin-top: 0.4rem; border-radius: 50%; }
  li.unread .dot { background: var(--errand-accent, var(--errand-brand, #2563eb)); }
  p { margin: 0; }
  .title { font-weight: 600; }
  li:not(.unread) .title { font-weight: 500; }
  .body, .meta { font-size: 0.875rem; }
  .meta { color: var(--errand-muted, #6b7280); margin-top: 0.25rem; display: flex; flex-wrap: wrap; gap: 0.25rem 0.75rem; }
  li.failed .body { color: var(--errand-danger, #b91c1c); }
  li button { font-size: 0.8rem; padding: 0.25rem 0.6rem; white-space: nowrap; }
  .empty, .error { padding: 1rem; color: var(--errand-muted, #6b7280); }
  .push { display: flex; align-items: center; gap: 0.5rem; padding: 0.75rem 1rem; font-size: 0.875rem;
    border-top: 1px solid var(--errand-border, #e5e7eb); }
  .error { color: var(--errand-danger, #b91c1c); }
`;

const BELL_ICON = `<svg viewBox="0 0 24 24" aria-hidden="true" fill="none" stroke="currentColor" stroke-width="1.8"
  stroke-linecap="round" stroke-linejoin="round"><path d="M6 8a6 6 0 1 1 12 0c0 7 3 9 3 9H3s3-2 3-9"/>
  <path d="M10.3 21a1.94 1.94 0 0 0 3.4 0"/></svg>`;

const BELL_SHEET = sheet(BELL_CSS);

/**
 * `<errand-bell>`: a button with the count of new (unseen) notifications and
 * a dropdown feed; opening it marks them seen (not read). Reflects the
 * counts in the `unseen-count` and `unread-count` attributes (read-only,
 * e.g. for `errand-bell[unread-count="0"]` selectors). The counts are never
 * computed here: they are the server's, from the stream's `unread_count`
 * events or a feed read's `unread_count` and `unseen_count`.
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
  /** "Notify me on this device": shown where the browser can take Web Push and errand offers it. */
  #push;
  #pushBox;
  #unsubscribe = null;
  /** @type {Map<string, object>} notifications by id */
  #items = new Map();
  /** @type {Map<string, Promise<object>>} jobs of the entries, read for their links */
  #jobs = new Map();
  /** @type {{unread: number, unseen: number}|null} the server's counts, once known */
  #counts = null;
  #archiveRead;
  /** Bumped by every count from the stream, so an older feed read cannot overwrite a newer count. */
  #streamCounts = 0;
  /** The read marks may have changed elsewhere since the feed was read. */
  #stale = true;
  /** Feed reads started: only the latest one's answer is drawn, never an older one arriving late. */
  #reads = 0;
  /** @type {Map<string, number>} entries the stream brought, with the feed read under way when each came */
  #arrivals = new Map();
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
    this.#heading = this.words(el('h2', { id: 'heading', tabindex: '-1' }), 'ui-bell-heading');
    this.#markAll = this.words(el('button', { class: 'mark-all', type: 'button' }), 'ui-bell-mark-all-read');
    this.#archiveRead = this.words(el('button', { class: 'archive-read', type: 'button' }), 'ui-bell-archive-read');
    this.#list = el('ul', { 'aria-labelledby': 'heading' });
    this.#empty = this.words(el('p', { class: 'empty' }), 'ui-bell-empty');
    this.#error = el('p', { class: 'error', role: 'alert', hidden: true });
    this.#panel = el('div', { id: 'panel', class: 'panel', part: 'panel', role: 'dialog', 'aria-labelledby': 'heading', hidden: true },
      el('div', { class: 'head' }, this.#heading, el('span', { class: 'actions' }, this.#markAll, this.#archiveRead)),
      this.#error, this.#empty, this.#list);
    this.#pushBox = el('input', { type: 'checkbox', class: 'push-toggle' });
    this.#push = el('label', { class: 'push', hidden: true }, this.#pushBox, this.words(el('span'), 'ui-bell-push'));
    this.#panel.append(this.#push);
    this.#announcer = el('div', { class: 'sr-only', 'aria-live': 'polite' });
    root.append(this.#toggle, this.#panel, this.#announcer);
    this.whenWords(() => this.#showCount());

    this.#toggle.addEventListener('click', () => (this.isOpen ? this.close() : this.open()));
    this.#markAll.addEventListener('click', () => this.#markAllRead());
    this.#archiveRead.addEventListener('click', () => this.#bulk((client) => client.archiveRead(), 'ui-bell-error-archive-read'));
    this.#pushBox.addEventListener('change', () => this.#setPush(this.#pushBox.checked));
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
    return this.#counts?.unread ?? null;
  }

  /** The server's count of notifications not seen yet (the badge's), once known. */
  get unseenCount() {
    return this.#counts?.unseen ?? null;
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
    if (this.#counts?.unseen) this.#markSeen();
  }

  /** The person saw the feed: errand marks it seen, and the stream brings the count of none. */
  async #markSeen() {
    try {
      await this.client?.markSeen();
    } catch (error) {
      this.#showError(this.t('ui-bell-error-mark-seen', { error: error.message }));
    }
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
    this.#showPush(client);
  }

  /** Shows "Notify me on this device" as this device stands, where it can be offered at all. */
  async #showPush(client) {
    let state;
    try {
      state = await client.pushState();
    } catch {
      state = 'unsupported';
    }
    if (!this.isCurrent(client)) return;
    this.#push.hidden = state !== 'on' && state !== 'off';
    this.#pushBox.checked = state === 'on';
  }

  /** Turns Web Push on or off for this device; on failure the box shows what still holds. */
  async #setPush(on) {
    const client = this.client;
    if (!client) return;
    this.#pushBox.disabled = true;
    try {
      if (on) await client.enablePush();
      else await client.disablePush();
      this.#error.hidden = true;
    } catch (error) {
      this.#pushBox.checked = !on;
      this.#showError(this.t(on ? 'ui-bell-error-push-on' : 'ui-bell-error-push-off', { error: error.message }));
    } finally {
      this.#pushBox.disabled = false;
    }
  }

  stop() {
    this.#unsubscribe?.();
    this.#unsubscribe = null;
    this.#items.clear();
    this.#jobs.clear();
    this.#counts = null;
    this.#showCount();
    this.#render();
  }

  #onEvent(client, event) {
    if (event.type === 'unread_count') {
      this.#streamCounts++;
      this.#setCount({ unread: event.unreadCount, unseen: event.unseenCount });
      if (this.isOpen && event.unseenCount > 0) this.#markSeen(); // new ones arrived while the person looks
      // Someone may have marked entries read (or new ones came): the open list reads again.
      this.#stale = true;
      if (this.isOpen) this.#refresh(client);
    } else if (FEED_KINDS.has(event.type)) {
      const notification = event.notification;
      if (this.#items.has(notification.id)) return;
      this.#items.set(notification.id, notification);
      this.#arrivals.set(notification.id, this.#reads);
      this.#announcer.textContent = this.t('ui-bell-announce', { title: notification.title });
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
      // Only what came while this read was under way: a newer entry the read
      // left out for another reason (archived, here or in another tab) goes.
      const later = [...this.#items.values()].filter((n) => n.id > newest && this.#arrivals.get(n.id) === read);
      this.#arrivals.clear();
      this.#items = new Map([...later, ...page.notifications].map((n) => [n.id, n]));
      if (this.#streamCounts === countsBefore) this.#setCount({ unread: page.unread_count, unseen: page.unseen_count });
      this.#error.hidden = true;
    } catch (error) {
      if (read !== this.#reads) return;
      this.#stale = true;
      this.#showError(this.t('ui-bell-error-load', { error: error.message }));
    }
    this.#render();
  }

  #markRead(id) {
    this.#bulk((client) => client.markRead(id), 'ui-bell-error-mark-read');
  }

  /** Asks errand for `change` (a mark or an archive), then reads the feed again; `failed` is the message of its error. */
  async #bulk(change, failed) {
    const client = this.client;
    if (!client) return;
    try {
      await change(client);
    } catch (error) {
      this.#showError(this.t(failed, { error: error.message }));
      return;
    }
    await this.#refresh(client);
  }

  #markAllRead() {
    if (this.#markAll.getAttribute('aria-disabled') === 'true') return;
    this.#bulk((client) => client.markAllRead(), 'ui-bell-error-mark-all-read');
  }

  #setCount(counts) {
    this.#counts = counts;
    this.#showCount();
  }

  #showCount() {
    const { unread = null, unseen = null } = this.#counts ?? {};
    this.#badge.hidden = !unseen;
    this.#badge.textContent = unseen > 99 ? '99+' : String(unseen ?? '');
    for (const [name, count] of [['unread-count', unread], ['unseen-count', unseen]]) {
      if (count === null) this.removeAttribute(name);
      else this.setAttribute(name, String(count));
    }
    const counts = { new: unseen ? this.plural('ui-bell-new', unseen) : null, unread: unread ? this.plural('ui-bell-unread', unread) : null };
    const label = counts.new && counts.unread ? 'ui-bell-label-new-unread'
      : counts.new ? 'ui-bell-label-new' : counts.unread ? 'ui-bell-label-unread' : 'ui-bell-label';
    this.#toggle.setAttribute('aria-label', this.t(label, counts));
    // aria-disabled, not disabled: a disabled button would drop the focus it holds.
    this.#markAll.setAttribute('aria-disabled', String(!unread));
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
    const meta = el('p', { class: 'meta' }, timeElement(notification.created_at, this.messages.locale));
    const item = el('li', { 'data-id': notification.id, 'data-version': entryVersion(notification), tabindex: '-1', class: [unread && 'unread', failed && 'failed'].filter(Boolean).join(' ') },
      el('span', { class: 'dot', 'aria-hidden': 'true' }),
      el('div', {},
        el('p', { class: 'title' }, unread ? [el('span', { class: 'sr-only' }, this.t('ui-bell-entry-unread')), ' '] : null, notification.title),
        el('p', { class: 'body' }, notification.body),
        meta),
      el('span', { class: 'entry-actions' },
        unread ? el('button', { type: 'button', class: 'mark-read', 'aria-label': this.t('ui-bell-mark-read-label', { title: notification.title }) },
          this.t('ui-bell-mark-read')) : null,
        el('button', { type: 'button', class: 'archive', 'aria-label': this.t('ui-bell-archive-label', { title: notification.title }) },
          this.t('ui-bell-archive'))));
    item.querySelector('.mark-read')?.addEventListener('click', () => {
      item.focus(); // the button goes away: keep the focus on its entry
      this.#markRead(notification.id);
    });
    item.querySelector('.archive').addEventListener('click', () => {
      this.#heading.focus(); // the entry goes away: the focus stays in the dropdown
      this.#bulk((client) => client.archive(notification.id), 'ui-bell-error-archive');
    });
    // A completed job may have a file: its link comes with a fresh signed URL from the job.
    if (!failed && notification.job_id && this.client) this.#addDownloadLink(this.client, notification.job_id, meta);
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
      const link = downloadLink(client, this.messages, job, { class: 'download' });
      if (link) meta.append(link);
      else if (job.result?.expired) meta.append(el('span', {}, this.t('ui-bell-file-expired')));
    } catch {
      this.#jobs.delete(jobId); // no link this time; the next render tries again
    }
  }
}

/** What an entry shows that can change: a changed one is drawn again. */
function entryVersion(notification) {
  return `${notification.read_at ?? ''}|${notification.job_status}`;
}

if (!customElements.get('errand-bell')) customElements.define('errand-bell', ErrandBell);
