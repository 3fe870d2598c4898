/**
 * @file What errand's web components share (`/client/elements/base.js`):
 * the base element tied to a client, the shared stylesheet, a `<time>` of
 * a notification, a download link that stays usable, and a form's fields
 * as params. What the console shares with them too (`el`, time formats)
 * is in `../core/`. Pages import `../errand-elements.js`, not this.
 *
 * Every text an element shows is a message of its client's catalogue
 * (`client.messages()`, from `templates/locales/<tag>/elements.ftl`), by
 * an id starting `ui-`: an element starts only once its client's messages
 * are here, and stays hidden until then. Numbers, dates and plural forms
 * follow the catalogue's `locale`.
 */

import { el } from '../core/dom.js';
import { formatTime, relativeTimeWords } from '../core/format.js';
import { NO_MESSAGES } from '../core/messages.js';

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
  button:hover { border-color: var(--errand-accent, var(--errand-brand, #2563eb)); }
  button:focus-visible, a:focus-visible, [tabindex="-1"]:focus-visible {
    outline: 2px solid var(--errand-accent, var(--errand-brand, #2563eb)); outline-offset: 2px;
  }
  button:disabled, button[aria-disabled="true"] { opacity: 0.55; cursor: default; }
  a { color: var(--errand-accent, var(--errand-brand, #2563eb)); }
  :host(:not(:state(ready))) { visibility: hidden; }
  .sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
`;

/** A constructable stylesheet of `css` (the page's CSP allows no `<style>`). */
export function sheet(css) {
  const result = new CSSStyleSheet();
  result.replaceSync(css);
  return result;
}
export const SHARED_SHEET = sheet(SHARED_CSS);

/** "3 minutes ago" in `locale` (the messages'), with the exact time as the element's title. */
export function timeElement(iso, locale) {
  return el('time', { datetime: iso, title: formatTime(iso, locale) }, relativeTimeWords(iso, locale));
}

/**
 * A download link to a job's result that stays usable: signed URLs expire,
 * so a click on one fetched more than `URL_REFRESH_MS` ago fetches a fresh
 * one first. Returns null for a job without a downloadable file.
 * @param {import('../errand.js').Errand} client
 * @param {import('../core/messages.js').Messages} messages the link's words
 */
export function downloadLink(client, messages, job, attributes) {
  if (!job.result_url) return null;
  const name = job.result?.file_name;
  const text = name ? messages.t('ui-download', { name }) : messages.t('ui-download-unnamed');
  const link = el('a', { ...attributes, href: job.result_url, download: name ?? 'result' }, text);
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

/** The client's messages, or none (each text then shows its id) when errand could not give them. */
async function messagesOf(client) {
  if (typeof client.messages !== 'function') return NO_MESSAGES;
  try {
    return await client.messages();
  } catch (error) {
    console.warn('errand: the elements\' words could not be read; they show their ids', error);
    return NO_MESSAGES;
  }
}

/** The tenant's colour (`#rrggbb`, as errand checked it when set), or null. */
async function brandingOf(client) {
  if (typeof client.branding !== 'function') return null;
  try {
    const color = (await client.branding())?.primary_color;
    return /^#[0-9a-f]{6}$/i.test(color ?? '') ? color : null;
  } catch {
    return null; // errand's own colour: a page is not refused for its colours
  }
}

/**
 * Base of every element: a client property, a start/stop tied to being in
 * the document, and the client's words. `start(client)` runs once the
 * element is in the document, has a client and that client's messages are
 * here; `stop()` only after a `start`.
 */
export class ClientElement extends HTMLElement {
  #client = null;
  /** In the document with a client: started, or waiting for the messages to start. */
  #running = false;
  /** `start` ran (and `stop` has not since). */
  #started = false;
  /** Bumped by every start and stop: a start whose messages come after a stop, or a later start, is dropped. */
  #runs = 0;
  /** @type {import('../core/messages.js').Messages} */
  #messages = NO_MESSAGES;
  /** @type {Array<(messages: import('../core/messages.js').Messages) => void>} what to write again with new messages */
  #writers = [];
  #internals = this.attachInternals();

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
    const client = this.#client;
    const run = ++this.#runs;
    brandingOf(client).then((color) => {
      // Below the page's own --errand-accent, above errand's colour (see SHARED_CSS).
      if (color) this.style.setProperty('--errand-brand', color);
    });
    messagesOf(client).then((messages) => {
      if (run !== this.#runs) return; // stopped (or started again) meanwhile
      this.#useMessages(messages);
      this.#started = true;
      this.start(client);
    });
  }

  #stopIfRunning() {
    if (!this.#running) return;
    this.#running = false;
    this.#runs++;
    if (!this.#started) return;
    this.#started = false;
    this.stop();
  }

  #useMessages(messages) {
    this.#messages = messages;
    for (const write of this.#writers) write(messages);
    try {
      this.#internals.states?.add('ready');
    } catch {
      // A browser with the older custom states (`--ready`): the element shows from the start.
    }
  }

  /** Whether `client` is still this element's running client (answers may arrive after a swap). */
  isCurrent(client) {
    return this.#started && this.#client === client;
  }

  /** The client's words (ids only until they are here). */
  get messages() {
    return this.#messages;
  }

  /** Message `id` with `vars` (see `Messages#t`). */
  t(id, vars) {
    return this.#messages.t(id, vars);
  }

  /** The plural form of `id` for `n` (see `Messages#plural`). */
  plural(id, n, vars) {
    return this.#messages.plural(id, n, vars);
  }

  /**
   * Runs `write(messages)` whenever the messages change (a client of
   * another language), and now if they are here: for what the constructor
   * draws before any client.
   */
  whenWords(write) {
    this.#writers.push(write);
    if (this.#messages !== NO_MESSAGES) write(this.#messages);
  }

  /** `node` with message `id` as its text, or as its `attribute`'s value: now, and again with new messages. */
  words(node, id, attribute = null) {
    this.whenWords((messages) => {
      if (attribute) node.setAttribute(attribute, messages.t(id));
      else node.textContent = messages.t(id);
    });
    return node;
  }
}

