/**
 * @file `<errand-export-button>` (`/client/elements/export-button.js`): see `../errand-elements.js`.
 */

import { el } from '../core/dom.js';
import { ENDED_STATUSES } from '../core/job-status.js';
import { JOB_END_EVENTS } from '../core/notification-stream.js';
import { ClientElement, SHARED_SHEET, downloadLink, formParams, sheet } from './base.js';

const EXPORT_CSS = `
  :host { display: inline-block; }
  .row { display: flex; flex-wrap: wrap; align-items: center; gap: 0.6rem 0.9rem; }
  .start, .download {
    background: var(--errand-accent, var(--errand-brand, #2563eb)); color: var(--errand-accent-text, #fff);
    border-color: var(--errand-accent, var(--errand-brand, #2563eb)); font-weight: 600;
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
  progress { width: 8rem; accent-color: var(--errand-accent, var(--errand-brand, #2563eb)); }
`;

const EXPORT_SHEET = sheet(EXPORT_CSS);

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
    this.#start = el('button', { class: 'start', part: 'button', type: 'button' }, this.words(el('slot'), 'ui-export-button'));
    this.#status = el('span', { class: 'status', role: 'status' });
    this.#progress = el('progress', { max: '1', hidden: true });
    this.#result = el('span', { class: 'result' });
    this.#again = el('button', { class: 'again', type: 'button', hidden: true });
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
      const ended = JOB_END_EVENTS.has(event.type);
      const mine = ended && event.notification.job_id === this.#jobId;
      if (mine || (event.type === 'open' && !this.#jobEnded)) {
        this.#check(client, this.#jobId);
      }
    });
    // After a reload, pick up the job this intent started.
    const jobId = client.intentJobId(this.intent);
    if (jobId) {
      this.#jobId = jobId;
      this.#showWorking(this.t('ui-export-processing'));
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
    this.#showWorking(this.t('ui-export-starting'));
    try {
      // Busy (a quota or rate limit, errand overloaded): say so, and when the next try is.
      const onRetry = ({ inMs, error }) => {
        const why = error.status === 0 ? 'ui-retry-offline' : 'ui-retry-busy';
        if (this.isCurrent(client)) this.#showWorking(this.t(why, { seconds: Math.max(1, Math.round(inMs / 1000)) }));
      };
      const job = await client.createJob(this.type, formParams(this.#form), { intent: this.intent, onRetry });
      if (!this.isCurrent(client)) return;
      this.#show(client, job);
      // The answer to a new job says only that it was recorded: whether the
      // operators hold its kind back (paused) is read with the job itself.
      if (!ENDED_STATUSES.has(job.status)) this.#check(client, job.id);
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
    this.#jobEnded = ENDED_STATUSES.has(job.status);
    const shown = JSON.stringify([job.id, job.status, job.progress]);
    if (shown !== this.#shown) this.dispatchEvent(new CustomEvent('errand-job', { bubbles: true, composed: true, detail: job }));
    this.#shown = shown;
    const hadFocus = this.shadowRoot.activeElement !== null;
    if (job.status === 'completed') {
      const link = downloadLink(client, this.messages, job, { class: 'download', part: 'link' });
      this.#showEnded(this.t(link ? 'ui-export-ready' : 'ui-export-done'), link ?? (job.result?.expired ? this.t('ui-export-file-expired') : ''));
      if (hadFocus) (link ?? this.#again).focus();
    } else if (job.status === 'failed') {
      const reason = job.error_message;
      this.#showEnded(reason ? this.t('ui-export-failed', { reason }) : this.t('ui-export-failed-no-reason'), '');
      this.#status.classList.add('failed');
      this.#again.textContent = this.t('ui-export-try-again');
      this.#againSubmits = true;
      if (hadFocus) this.#again.focus();
    } else if (job.status === 'cancelled') {
      this.#showEnded(this.t('ui-export-cancelled'), '');
      if (hadFocus) this.#again.focus();
    } else if (job.state === 'paused') {
      // It waits for the operators, not for a worker: say so, not "Processing…".
      this.#showWorking(job.paused_reason ?? this.t('ui-export-paused'));
    } else {
      // Completion and progress both come from the stream (`job_progress`).
      this.#showProgress(job.progress);
    }
  }

  #showProgress(progress) {
    this.#showWorking(processingText(this.messages, progress), progress?.total ? progress.done / progress.total : null);
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
    this.#again.textContent = this.t('ui-export-again');
    this.#againSubmits = false;
    this.#again.hidden = false;
  }
}

/** "Processing… 40 %", or what the handler said, or how much is done when the total is unknown. */
function processingText(messages, progress) {
  if (!progress) return messages.t('ui-export-processing');
  if (progress.total) return messages.t('ui-export-processing-percent', { percent: Math.round((100 * progress.done) / progress.total) });
  if (progress.message) return messages.t('ui-export-processing-message', { message: progress.message });
  return messages.t('ui-export-processing-done', { done: progress.done });
}

if (!customElements.get('errand-export-button')) customElements.define('errand-export-button', ErrandExportButton);
