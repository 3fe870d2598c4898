/**
 * @file `<errand-schedule>` (`/client/elements/schedule.js`): see `../errand-elements.js`.
 * How a recurrence is written (cron, words, date presets) is `./recurrence.js`.
 */

import { el } from '../core/dom.js';
import { newIdempotencyKey } from '../core/idempotency.js';
import { ClientElement, SHARED_SHEET, formParams, sheet } from './base.js';
import {
  DATE_PRESETS, WEEKDAYS, cronOf, describeRecurrence, paramsText, weekdayName, whenText, withDates,
} from './recurrence.js';

/** `GET /schedules`'s largest page, and the most pages read (a user has at most 100 schedules unless configured). */
const PAGE_SIZE = 100;
const MAX_PAGES = 10;
/** The form's controls that a problem's `field` points at. */
const FIELD_CONTROLS = { cron: ['every', 'weekday', 'monthday', 'time'], timezone: ['timezone'] };

const SCHEDULE_CSS = `
  :host { display: block; }
  .form {
    display: flex; flex-wrap: wrap; align-items: flex-end; gap: 0.75rem 1rem; margin-top: 0.75rem; padding: 0.9rem;
    border: 1px solid var(--errand-border, #e5e7eb); border-radius: var(--errand-radius, 8px);
  }
  .field { display: grid; gap: 0.3rem; }
  label { font-size: 0.85rem; font-weight: 600; color: var(--errand-muted, #6b7280); }
  input, select {
    font: inherit; font-weight: 400; color: var(--errand-text, #1f2937); background: var(--errand-surface, #fff);
    padding: 0.4rem 0.6rem; border: 1px solid var(--errand-border, #e5e7eb); border-radius: var(--errand-radius, 8px);
  }
  input[type="number"] { width: 5rem; }
  input:focus-visible, select:focus-visible { outline: 2px solid var(--errand-accent, var(--errand-brand, #2563eb)); outline-offset: 2px; }
  [aria-invalid="true"] { border-color: var(--errand-danger, #b91c1c); }
  .submit { background: var(--errand-accent, var(--errand-brand, #2563eb)); color: var(--errand-accent-text, #fff); border-color: transparent; font-weight: 600; }
  .problem { margin: 0.5rem 0 0; color: var(--errand-danger, #b91c1c); }
  .problem:empty { display: none; }
  .result { display: flex; flex-wrap: wrap; align-items: center; gap: 0.5rem 0.75rem; margin: 0.75rem 0 0; }
  .controls { display: contents; }
  .heading { margin: 1rem 0 0; font-size: 0.78rem; font-weight: 600; text-transform: uppercase; letter-spacing: 0.04em; }
  .heading, .params, .when { color: var(--errand-muted, #6b7280); }
  ul { list-style: none; margin: 0.25rem 0 0; padding: 0; }
  li { display: flex; flex-wrap: wrap; align-items: center; gap: 0.25rem 0.75rem; padding: 0.5rem 0; font-size: 0.92rem; }
  li + li { border-top: 1px solid var(--errand-border, #e5e7eb); }
  .what { font-weight: 600; }
  li .pause { margin-left: auto; }
  li button, .result button { font-size: 0.85rem; padding: 0.25rem 0.6rem; }
`;

const SCHEDULE_SHEET = sheet(SCHEDULE_CSS);

/**
 * `<errand-schedule type="…">`: "Repeat every…" for the fields of its
 * closest `<form>` (as `<errand-export-button>` submits them): a day, a
 * weekday or a day of the month, a time and a time zone (the browser's
 * unless changed) make a schedule of `type`, once per open of its form
 * (one idempotency key: a double-click or a retry makes one schedule).
 * "Dates" keeps the form's own range, or sends a moving one instead ("Last
 * 7 days", "Previous week", "Previous month") as the params named by the
 * attributes `from-field` and `to-field` (`from` and `to` unless set).
 * Then it shows the next run with Pause and Delete, and below, the user's
 * schedules of `type` with theirs. errand's refusals are shown as errand
 * words them, the field they name marked.
 */
export class ErrandSchedule extends ClientElement {
  #toggle;
  #form;
  #submit;
  #problem;
  #result;
  #made;
  #madeControls;
  #list;
  #rows;
  /** The key of this open of the form, and the request last sent under it (null: none yet). */
  #key = null;
  #keySentFor = null;
  /** The schedule made here last, shown with controls of its own (null after a delete). */
  #madeSchedule = null;
  /** Loads started: only the latest one's answer is drawn. */
  #loads = 0;

  constructor() {
    super();
    const root = this.attachShadow({ mode: 'open' });
    root.adoptedStyleSheets = [SHARED_SHEET, SCHEDULE_SHEET];
    // Every text is a message (`words`), written once the client's messages are here.
    const option = (value, id, selected = false) => this.words(el('option', { value, selected }), id);
    const weekday = (day) => {
      const node = el('option', { value: day });
      this.whenWords((messages) => { node.textContent = weekdayName(day, messages.locale); });
      return node;
    };
    const zones = Intl.supportedValuesOf?.('timeZone') ?? [];
    this.#toggle = this.words(el('button', { type: 'button', part: 'button', 'aria-expanded': 'false', 'aria-controls': 'form' }), 'ui-schedule-open');
    this.#submit = this.words(el('button', { type: 'submit', class: 'submit' }), 'ui-schedule-submit');
    const cancel = this.words(el('button', { type: 'button' }), 'ui-schedule-cancel');
    // Labelled by `for`, not by nesting: a label around a select would take the chosen option into its name.
    const field = (id, control, className = null) =>
      el('div', { class: ['field', className].filter(Boolean).join(' ') }, this.words(el('label', { for: control.id }), id), control);
    this.#form = this.words(el('form', { id: 'form', class: 'form', hidden: true }), 'ui-schedule-open', 'aria-label');
    this.#form.append(
      field('ui-schedule-field-every', el('select', { id: 'every', name: 'every' },
        option('day', 'ui-schedule-every-day'), option('week', 'ui-schedule-every-week', true), option('month', 'ui-schedule-every-month'))),
      field('ui-schedule-field-weekday', el('select', { id: 'weekday', name: 'weekday' }, ...WEEKDAYS.map(weekday)), 'week'),
      field('ui-schedule-field-monthday', this.words(el('input', {
        id: 'monthday', name: 'monthday', type: 'number', min: 1, max: 28, value: 1, required: true,
      }), 'ui-schedule-monthday-hint', 'title'), 'month'),
      field('ui-schedule-field-time', el('input', { id: 'time', name: 'time', type: 'time', value: '08:00', required: true })),
      field('ui-schedule-field-timezone', el('input', {
        id: 'timezone', name: 'timezone', list: 'zones', required: true, autocomplete: 'off', spellcheck: 'false',
      })),
      el('datalist', { id: 'zones' }, ...zones.map((zone) => el('option', { value: zone }))),
      field('ui-schedule-field-dates', this.words(el('select', { id: 'dates', name: 'dates' },
        option('', 'ui-schedule-dates-form', true), ...DATE_PRESETS.map(({ value, label }) => option(value, label))), 'ui-schedule-dates-hint', 'title')),
      this.#submit, cancel);
    this.#problem = el('p', { class: 'problem', id: 'problem', role: 'alert' });
    this.#made = el('span', { role: 'status' });
    this.#madeControls = el('span', { class: 'controls' });
    this.#result = el('p', { class: 'result', hidden: true }, this.#made, this.#madeControls);
    this.#rows = el('ul', { 'aria-labelledby': 'heading' });
    this.#list = el('div', { hidden: true }, this.words(el('p', { class: 'heading', id: 'heading' }), 'ui-schedule-heading'), this.#rows);
    root.append(this.#toggle, this.#form, this.#problem, this.#result, this.#list);

    this.#toggle.addEventListener('click', () => this.#open(this.#form.hidden));
    cancel.addEventListener('click', () => {
      this.#open(false);
      this.#toggle.focus();
    });
    this.#field('every').addEventListener('change', () => this.#showFrequency());
    this.#form.addEventListener('input', (event) => event.target.removeAttribute('aria-invalid'));
    // The page may post forms nowhere (CSP form-action 'none'): a submit, by button or Enter, schedules here.
    this.#form.addEventListener('submit', (event) => {
      event.preventDefault();
      this.#schedule();
    });
    this.#showFrequency();
  }

  /** The job type to schedule. */
  get type() {
    return this.getAttribute('type') ?? '';
  }

  /** The params that are the range's ends, which a "Dates" preset sends (`from-field`, `to-field`). */
  #range() {
    return { from: this.getAttribute('from-field') || 'from', to: this.getAttribute('to-field') || 'to' };
  }

  /** The "Dates" preset chosen, or null for "As in the form". */
  #preset() {
    return DATE_PRESETS.find(({ value }) => value === this.#field('dates').value) ?? null;
  }

  start(client) {
    const zone = this.#field('timezone');
    if (!zone.value) zone.value = Intl.DateTimeFormat().resolvedOptions().timeZone ?? 'UTC';
    this.#load(client);
  }

  stop() {
    this.#loads++;
    this.#open(false);
    this.#madeSchedule = null;
    this.#result.hidden = true;
    this.#rows.replaceChildren();
    this.#list.hidden = true;
  }

  #field(name) {
    return this.#form.elements.namedItem(name);
  }

  /** Opens the form as a new intent (a new key), or closes it. */
  #open(open) {
    this.#form.hidden = !open;
    this.#toggle.setAttribute('aria-expanded', String(open));
    this.#showProblem(null);
    if (!open) return;
    this.#key = newIdempotencyKey();
    this.#keySentFor = null;
    this.#result.hidden = true;
    this.#field('every').focus();
  }

  /** Shows (and enables) only the weekday or day of the month that the frequency asks for. */
  #showFrequency() {
    const every = this.#field('every').value;
    for (const name of ['week', 'month']) {
      const field = this.#form.querySelector(`.${name}`);
      field.hidden = every !== name;
      field.querySelector('input, select').disabled = every !== name; // disabled: neither sent nor validated
    }
  }

  async #schedule() {
    const client = this.client;
    if (!client || this.#submit.disabled) return;
    const outer = this.closest('form');
    const preset = this.#preset();
    const range = this.#range();
    // A preset stands for the range's ends: the form's own may be empty, even if required.
    if (outer && !reportValidity(outer, preset ? [range.from, range.to] : [])) return;
    const choice = Object.fromEntries(new FormData(this.#form));
    const body = { params: withDates(formParams(outer), preset, range), cron: cronOf(choice), timezone: choice.timezone.trim() };
    // Other fields (or another preset) under a key already sent are another intent: errand would refuse the key for them.
    const request = JSON.stringify([this.type, body]);
    if (this.#keySentFor !== null && this.#keySentFor !== request) this.#key = newIdempotencyKey();
    this.#keySentFor = request;
    // Disabled at once: a double-click's second click lands on a disabled button.
    this.#submit.disabled = true;
    this.#submit.textContent = this.t('ui-schedule-scheduling');
    this.#showProblem(null);
    const onRetry = ({ inMs, error }) => {
      const why = error.status === 0 ? 'ui-retry-offline' : 'ui-retry-busy';
      if (this.isCurrent(client)) this.#submit.textContent = this.t(why, { seconds: Math.max(1, Math.round(inMs / 1000)) });
    };
    try {
      const schedule = await client.createSchedule(this.type, body, { idempotencyKey: this.#key, onRetry });
      if (!this.isCurrent(client)) return;
      this.#open(false);
      this.#showMade(client, schedule);
      this.#madeControls.querySelector('button')?.focus();
      this.#load(client);
    } catch (error) {
      if (!this.isCurrent(client)) return;
      this.#showProblem(error);
      (this.#form.querySelector('[aria-invalid="true"]:not(:disabled)') ?? this.#submit).focus();
    } finally {
      this.#submit.disabled = false;
      this.#submit.textContent = this.t('ui-schedule-submit');
    }
  }

  /** errand's words for a refusal (naming its field), the field marked; or nothing. */
  #showProblem(error) {
    for (const control of this.#form.elements) {
      control.removeAttribute('aria-invalid');
      control.removeAttribute('aria-describedby');
    }
    const field = error?.problem?.field;
    const text = error?.message ?? '';
    this.#problem.textContent = field && !text.includes(field) ? this.t('ui-schedule-problem-field', { field, problem: text }) : text;
    for (const name of this.#controlsFor(field)) {
      this.#field(name).setAttribute('aria-invalid', 'true');
      this.#field(name).setAttribute('aria-describedby', 'problem');
    }
  }

  /**
   * The controls errand's `field` points at: a range's end that a preset
   * sent (`/params/from`) is the "Dates" choice's, not a field of this form.
   */
  #controlsFor(field) {
    const { from, to } = this.#range();
    const preset = this.#preset() && [`/params/${from}`, `/params/${to}`].includes(field);
    return preset ? ['dates'] : FIELD_CONTROLS[field] ?? [];
  }

  /** "Scheduled: next run …" with the schedule's Pause and Delete, or "Deleted." once it is gone. */
  #showMade(client, schedule) {
    this.#madeSchedule = schedule;
    const made = schedule ? this.messages.parts('ui-schedule-made', { when: whenText(schedule, this.messages) }) : [this.t('ui-schedule-deleted')];
    this.#made.replaceChildren(...made);
    this.#madeControls.replaceChildren(...(schedule ? this.#controls(client, schedule) : []));
    this.#result.hidden = false;
  }

  /** Reads the user's schedules of this type, every page, and draws the list anew. */
  async #load(client) {
    const load = ++this.#loads;
    const mine = [];
    try {
      let cursor = null;
      for (let page = 0; page < MAX_PAGES; page++) {
        const { schedules, next_cursor: next } = await client.schedules({ limit: PAGE_SIZE, cursor });
        mine.push(...schedules.filter((schedule) => schedule.type === this.type));
        if (!(cursor = next)) break;
      }
    } catch (error) {
      if (this.isCurrent(client) && load === this.#loads) this.#showProblem(new Error(this.t('ui-schedule-error-load', { error: error.message })));
      return;
    }
    if (!this.isCurrent(client) || load !== this.#loads) return;
    this.#rows.replaceChildren(...mine.map((schedule) => el('li', { 'data-id': schedule.id },
      el('span', { class: 'what', id: `what-${schedule.id}` }, describeRecurrence(schedule, this.messages)),
      el('span', { class: 'params' }, paramsText(schedule.params, this.#range(), this.messages)),
      el('span', { class: 'when' }, ...whenText(schedule, this.messages)),
      ...this.#controls(client, schedule))));
    this.#list.hidden = mine.length === 0;
  }

  /** Pause (or Resume) and Delete buttons for `schedule`. */
  #controls(client, schedule) {
    const attributes = { type: 'button', 'data-id': schedule.id, 'aria-describedby': `what-${schedule.id}` };
    const pause = el('button', { ...attributes, class: 'pause' }, this.t(schedule.paused ? 'ui-schedule-resume' : 'ui-schedule-pause'));
    const remove = el('button', { ...attributes, class: 'delete' }, this.t('ui-schedule-delete'));
    pause.addEventListener('click', () => this.#act(client, schedule, schedule.paused ? 'resume' : 'pause', [pause, remove]));
    remove.addEventListener('click', () => this.#act(client, schedule, 'delete', [pause, remove]));
    return [pause, remove];
  }

  /** Pauses, resumes or deletes `schedule`; then the result and the list show errand's answer. */
  async #act(client, schedule, action, buttons) {
    // The buttons are disabled meanwhile (a second click cannot race the first) and then redrawn: where was the focus?
    const active = this.shadowRoot.activeElement;
    const refocus = buttons.includes(active) && `${active.closest('ul') ? 'ul' : '.result'} .${active.className}[data-id="${schedule.id}"]`;
    buttons.forEach((button) => { button.disabled = true; });
    let now = schedule;
    try {
      if (action === 'delete') {
        // A 404 is a delete already done (another tab's, or a retry's whose first answer was lost).
        await client.deleteSchedule(schedule.id).catch((error) => { if (error.status !== 404) throw error; });
        now = null;
      } else {
        now = await client.pauseSchedule(schedule.id, action === 'pause');
      }
      if (this.isCurrent(client)) this.#showProblem(null);
    } catch (error) {
      if (this.isCurrent(client)) this.#showProblem(error);
    } finally {
      buttons.forEach((button) => { button.disabled = false; });
    }
    if (!this.isCurrent(client)) return;
    if (this.#madeSchedule?.id === schedule.id) this.#showMade(client, now);
    await this.#load(client);
    // Unless the user moved it meanwhile, the focus goes back to the redrawn button, or to "Repeat every…" if it is gone.
    if (refocus && !this.shadowRoot.activeElement && [null, document.body].includes(document.activeElement)) {
      (this.shadowRoot.querySelector(refocus) ?? this.#toggle).focus();
    }
  }
}

/**
 * Whether `form` may be scheduled, else shows why as `reportValidity` does;
 * its fields named in `skipped` are left out (a preset stands for them).
 */
function reportValidity(form, skipped) {
  const invalid = [...form.elements].find((control) =>
    !skipped.includes(control.name) && control.willValidate && !control.checkValidity());
  invalid?.reportValidity();
  return !invalid;
}

if (!customElements.get('errand-schedule')) customElements.define('errand-schedule', ErrandSchedule);
