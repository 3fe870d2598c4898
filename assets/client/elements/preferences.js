/**
 * @file `<errand-preferences>` (`/client/elements/preferences.js`): see `../errand-elements.js`.
 */

import { el } from '../core/dom.js';
import { ClientElement, SHARED_SHEET, sheet } from './base.js';

/** The channels errand knows, in column order, with their headings' messages (a column shows where errand offers its channel). */
const CHANNELS = [
  { channel: 'in_app', label: 'ui-preferences-channel-in-app' },
  { channel: 'email', label: 'ui-preferences-channel-email' },
  { channel: 'push', label: 'ui-preferences-channel-push' },
];

const PREFERENCES_CSS = `
  :host { display: block; }
  table { width: 100%; border-collapse: collapse; font-size: 0.92rem; }
  th, td { padding: 0.5rem 0.6rem; border-bottom: 1px solid var(--errand-border, #e5e7eb); text-align: left; vertical-align: middle; }
  thead th {
    font-size: 0.78rem; text-transform: uppercase; letter-spacing: 0.04em; font-weight: 600;
    color: var(--errand-muted, #6b7280);
  }
  tbody tr:last-child > * { border-bottom: 0; }
  th[scope="row"] { font-weight: 600; }
  .channel { width: 6rem; text-align: center; }
  .channel label { display: inline-flex; padding: 0.2rem; cursor: pointer; }
  input[type="checkbox"] {
    width: 1.1rem; height: 1.1rem; margin: 0; cursor: inherit; accent-color: var(--errand-accent, var(--errand-brand, #2563eb));
  }
  input:focus-visible { outline: 2px solid var(--errand-accent, var(--errand-brand, #2563eb)); outline-offset: 2px; }
  input:disabled { cursor: default; }
  tr.required .channel label { cursor: default; opacity: 0.7; }
  .note {
    margin-left: 0.5rem; padding: 0 0.45rem; border: 1px solid var(--errand-border, #e5e7eb); border-radius: 999px;
    font-size: 0.75rem; font-weight: 500; color: var(--errand-muted, #6b7280);
  }
  .digest { display: block; font-size: 0.72rem; color: var(--errand-muted, #6b7280); }
  .message { font-size: 0.85rem; color: var(--errand-muted, #6b7280); }
  .message.failed, .state.failed { color: var(--errand-danger, #b91c1c); }
  .state { margin: 0.5rem 0; color: var(--errand-muted, #6b7280); }
  .state button { margin-left: 0.75rem; font-size: 0.85rem; padding: 0.25rem 0.6rem; }
`;

const PREFERENCES_SHEET = sheet(PREFERENCES_CSS);

/**
 * `<errand-preferences>`: the user's notification preferences, one row per
 * category of job and one checkbox per channel; an email channel read as a
 * digest is checked and says "in digest" (unchecking turns it off, checking
 * it again sends at once: the digest is chosen through the API, where its
 * time is set). A change is saved at once
 * (the checkbox disabled meanwhile) and the row then shows what errand
 * answered, or, if errand refused, the checkbox goes back and the row says
 * why. A required category's checkboxes are checked and disabled: errand
 * would refuse to turn it off anyway.
 */
export class ErrandPreferences extends ClientElement {
  #table;
  #rows;
  #state;
  #head;
  /** The channels errand offers, as the last load found them. */
  #channels = CHANNELS;
  #stateText;
  #retry;
  /** Checkboxes whose change is being saved: an answer for their row must not overwrite them. */
  #saving = new Set();
  /** Loads started: only the latest one's answer is drawn, never an older one arriving late. */
  #loads = 0;

  constructor() {
    super();
    const root = this.attachShadow({ mode: 'open' });
    root.adoptedStyleSheets = [SHARED_SHEET, PREFERENCES_SHEET];
    this.#rows = el('tbody');
    this.#head = el('thead');
    this.#table = el('table', { part: 'table', hidden: true },
      this.words(el('caption', { class: 'sr-only' }), 'ui-preferences-caption'), this.#head, this.#rows);
    this.#stateText = el('span', { role: 'status' });
    this.#retry = this.words(el('button', { type: 'button', hidden: true }), 'ui-preferences-retry');
    this.#state = el('p', { class: 'state' }, this.#stateText, this.#retry);
    root.append(this.#state, this.#table);
    this.#retry.addEventListener('click', () => {
      if (this.client) this.#load(this.client);
    });
  }

  start(client) {
    this.#load(client);
  }

  stop() {
    this.#loads++;
    this.#saving.clear();
    this.#rows.replaceChildren();
    this.#table.hidden = true;
    this.#showState('');
  }

  /** Reads every category's preferences and draws the table anew. */
  async #load(client) {
    const load = ++this.#loads;
    this.#showState(this.t('ui-preferences-loading'));
    let categories;
    try {
      ({ categories } = await client.preferences());
    } catch (error) {
      if (this.isCurrent(client) && load === this.#loads) this.#showState(this.t('ui-preferences-error-load', { error: error.message }), { failed: true });
      return;
    }
    if (!this.isCurrent(client) || load !== this.#loads) return;
    this.#saving.clear();
    this.#channels = CHANNELS.filter(({ channel }) => categories.some((entry) => channel in entry.channels));
    this.#head.replaceChildren(el('tr', {},
      el('th', { scope: 'col' }, this.t('ui-preferences-category')),
      ...this.#channels.map(({ label }) => el('th', { scope: 'col', class: 'channel' }, this.t(label))),
      el('th', { scope: 'col' }, el('span', { class: 'sr-only' }, this.t('ui-preferences-status')))));
    this.#rows.replaceChildren(...categories.map((entry) => this.#row(client, entry)));
    this.#table.hidden = categories.length === 0;
    this.#showState(categories.length === 0 ? this.t('ui-preferences-none') : '');
  }

  /** A category's row: its name (and "required"), a labelled checkbox per channel, and where its saves report. */
  #row(client, entry) {
    const row = el('tr', { 'data-category': entry.category });
    const note = entry.required ? el('span', { class: 'note' }, this.t('ui-preferences-required')) : null;
    const toggles = this.#channels.map(({ channel, label }) => {
      const input = el('input', { type: 'checkbox', part: 'toggle', 'data-channel': channel });
      input.addEventListener('change', () => this.#save(client, row, input));
      const name = this.t(entry.required ? 'ui-preferences-toggle-required' : 'ui-preferences-toggle',
        { channel: this.t(label), category: entry.category });
      const digest = el('span', { class: 'digest', 'data-digest': channel, hidden: true }, this.t('ui-preferences-in-digest'));
      return el('td', { class: 'channel' }, el('label', {}, input, el('span', { class: 'sr-only' }, name)), digest);
    });
    row.append(
      el('th', { scope: 'row' }, el('span', { class: 'name' }, entry.category), note),
      ...toggles,
      el('td', {}, el('span', { class: 'message', 'aria-live': 'polite' })),
    );
    this.#showEntry(row, entry);
    return row;
  }

  /** Sets the row's checkboxes to `entry` (errand's word), except those still saving a change of their own. */
  #showEntry(row, entry) {
    row.classList.toggle('required', entry.required);
    for (const input of row.querySelectorAll('input[data-channel]')) {
      if (this.#saving.has(input)) continue;
      const value = entry.channels[input.dataset.channel];
      input.checked = entry.required || Boolean(value);
      input.disabled = entry.required;
      row.querySelector(`[data-digest="${input.dataset.channel}"]`).hidden = value !== 'digest';
    }
  }

  /** Saves one checkbox's new state; the row shows errand's answer, or the checkbox goes back and the row says why. */
  async #save(client, row, input) {
    const on = input.checked;
    const hadFocus = this.shadowRoot.activeElement === input;
    // Disabled until errand answers: a second click cannot race the first.
    this.#saving.add(input);
    input.disabled = true;
    showMessage(row, this.t('ui-preferences-saving'));
    let entry = null;
    let failure = null;
    try {
      entry = await client.setPreference(row.dataset.category, input.dataset.channel, on);
    } catch (error) {
      failure = error;
    }
    if (!this.isCurrent(client) || !this.#saving.delete(input)) return;
    input.disabled = false;
    if (entry) {
      this.#showEntry(row, entry);
      showMessage(row, this.t('ui-preferences-saved'));
    } else {
      input.checked = !on;
      showMessage(row, failure.message, { failed: true });
    }
    // Disabling dropped the focus (to the page): give it back unless the user moved it meanwhile.
    if (hadFocus && !input.disabled && [null, document.body].includes(document.activeElement)) input.focus();
  }

  #showState(text, { failed = false } = {}) {
    this.#stateText.textContent = text;
    this.#state.classList.toggle('failed', failed);
    this.#state.hidden = !text;
    this.#retry.hidden = !failed;
  }
}

/** The row's status cell: "Saving…", "Saved", or why errand refused (an `ErrandError`'s detail). */
function showMessage(row, text, { failed = false } = {}) {
  const message = row.querySelector('.message');
  message.textContent = text;
  message.classList.toggle('failed', failed);
}

if (!customElements.get('errand-preferences')) customElements.define('errand-preferences', ErrandPreferences);
