/**
 * @file What errand's web components share (`/client/elements/base.js`):
 * the base element tied to a client, the shared stylesheet, a `<time>` of
 * a notification, a download link that stays usable, and a form's fields
 * as params. What the console shares with them too (`el`, time formats)
 * is in `../core/`. Pages import `../errand-elements.js`, not this.
 */

import { el } from '../core/dom.js';
import { formatTime, relativeTimeWords } from '../core/format.js';

/** A signed download URL lives 15 minutes; one older than this is fetched again before use. */
export const URL_REFRESH_MS = 10 * 60_000;

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

/** A constructable stylesheet of `css` (the page's CSP allows no `<style>`). */
export function sheet(css) {
  const result = new CSSStyleSheet();
  result.replaceSync(css);
  return result;
}
export const SHARED_SHEET = sheet(SHARED_CSS);

/** "3 minutes ago", with the exact time as the element's title. */
export function timeElement(iso) {
  return el('time', { datetime: iso, title: formatTime(iso) }, relativeTimeWords(iso));
}

/**
 * A download link to a job's result that stays usable: signed URLs expire,
 * so a click on one fetched more than `URL_REFRESH_MS` ago fetches a fresh
 * one first. Returns null for a job without a downloadable file.
 */
export function downloadLink(client, job, attributes) {
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

/**
 * A form's fields as job params: what `FormData` sends, empty ones left out,
 * repeated names as arrays, and the values of number inputs as numbers (a
 * type's schema may ask for integers, and a form only holds text).
 */
export function formParams(form) {
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

/** Base of every element: a client property, and a start/stop tied to being in the document. */
export class ClientElement extends HTMLElement {
  #client = null;
  #running = false;

  /** @type {import('../errand.js').Errand|null} the client this element uses */
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

