/**
 * @file errand's browser client: submit a job once per intent, repeat one on
 * a schedule, read jobs and notifications, choose which job ends reach the
 * user where, and hear of jobs' ends live. A standard ES module with no
 * dependencies and no build step, served by errand at `/client/errand.js`.
 *
 * ```js
 * import { Errand } from '/client/errand.js';
 * const errand = new Errand({ token: async () => auth.currentJwt() });
 * const job = await errand.createJob('export_sales_report', { from, to }, { intent: 'sales-export' });
 * const unsubscribe = errand.subscribe((event) => {
 *   if (event.type === 'job_completed') show(event.notification);
 *   if (event.type === 'unread_count') badge(event.unreadCount);
 * });
 * ```
 *
 * What it must not do: keep the token anywhere (it asks `token()` before
 * every request, so the host app stays free to refresh it), or count
 * anything itself that the server counts (unread counts come from errand).
 */

/** Where an intent's key and job are kept, per tab, across reloads. */
const INTENT_PREFIX = 'errand:intent:';
/** A job in one of these states is over: its intent may take a new key. */
const ENDED = new Set(['completed', 'failed', 'cancelled']);
/** A submit is retried this many times after a network error, a 503 or a 429 (busy: errand's Retry-After is waited out). */
const SUBMIT_RETRIES = 10;
/** Notification ids remembered to drop repeats (the stream is at-least-once). */
const REMEMBERED_IDS = 500;
/** The stream's events that carry a notification (ids deduplicated); `job_cancelled` is the only one kept out of the feed. */
export const NOTIFICATION_EVENTS = new Set(['job_completed', 'job_cancelled', 'batch_completed', 'webhook_disabled']);
/** Newest notifications read before the first connection: they are not news. */
const BASELINE_SIZE = 20;
/** errand sends a keep-alive every 15 s: three missed means the connection is dead. */
const STREAM_IDLE_MS = 45_000;
const RECONNECT_FIRST_MS = 500;
const RECONNECT_MAX_MS = 30_000;
/**
 * `Last-Event-ID` for a user who has no notification yet: errand replays what
 * came after the given id, so the smallest id replays everything, which for
 * such a user is only what arrived while the stream was down.
 */
const BEFORE_ALL = '00000000-0000-0000-0000-000000000000';

/**
 * An error answer from errand (always RFC 9457 `application/problem+json`
 * with a stable `code`), or errand out of reach (`status` 0, `code`
 * `unreachable`).
 */
export class ErrandError extends Error {
  /**
   * @param {{status?: number, code?: string, title?: string, detail?: string}} problem the problem document
   * @param {{cause?: unknown, retryAfterMs?: number}} [options]
   */
  constructor(problem, { cause, retryAfterMs } = {}) {
    super(problem.detail || problem.title || `errand answered ${problem.status}`, { cause });
    this.name = 'ErrandError';
    /** @type {number} the HTTP status; 0 when errand could not be reached */
    this.status = problem.status ?? 0;
    /** @type {string} the stable machine-readable code, e.g. `invalid_params` */
    this.code = problem.code ?? 'unknown';
    /** @type {string|undefined} */
    this.title = problem.title;
    /** @type {string|undefined} */
    this.detail = problem.detail;
    /** @type {object} every member of the problem, e.g. `field` of `invalid_params` */
    this.problem = problem;
    /** @type {number|undefined} from a 503's `Retry-After` */
    this.retryAfterMs = retryAfterMs;
  }
}

/**
 * A client of one errand, for one signed-in user.
 */
export class Errand {
  #baseUrl;
  #token;
  #storage;
  #fetch;
  /** @type {Map<string, {fingerprint: string, promise: Promise<object>}>} submits in flight, per intent */
  #submitting = new Map();
  /** @type {Set<(event: object) => void>} */
  #listeners = new Set();
  /** @type {NotificationStream|null} one stream, shared by every subscriber */
  #stream = null;

  /**
   * @param {object} options
   * @param {() => Promise<string>|string} options.token returns the current bearer JWT; asked before every request
   * @param {string} [options.baseUrl] where errand is, e.g. `https://errand.example.com`; default: this page's origin
   * @param {Storage} [options.storage] where intents are kept; default `sessionStorage` (per tab, survives reloads)
   * @param {typeof fetch} [options.fetch] for tests
   */
  constructor({ token, baseUrl = '', storage = defaultStorage(), fetch = globalThis.fetch.bind(globalThis) }) {
    if (typeof token !== 'function') throw new TypeError('Errand needs a token callback');
    this.#token = token;
    this.#baseUrl = baseUrl.replace(/\/+$/, '');
    this.#storage = storage;
    this.#fetch = fetch;
  }

  /**
   * Submits a job once per intent: `POST /jobs/{type}` with an
   * `Idempotency-Key` kept per intent in `sessionStorage`, so a
   * double-click, a retried request or a page reload while the job runs all
   * name the same job. A new key is made only once the intent's job has
   * ended, or for other params. Concurrent calls for one intent share one
   * request; network errors, 503s and 429s (a quota or rate limit) are
   * retried with the same key, after errand's `Retry-After`: `onRetry`
   * hears of each wait, e.g. to show "busy, retrying in 30 s".
   *
   * @param {string} type a configured job type, e.g. `export_sales_report`
   * @param {object} [params] the job's params (a JSON object)
   * @param {{intent?: string, onRetry?: (wait: {inMs: number, error: ErrandError}) => void}} [options]
   *   what the user means to do (default: the type), and who hears of waits
   * @returns {Promise<object>} the job
   * @throws {ErrandError}
   */
  async createJob(type, params = {}, { intent = type, onRetry } = {}) {
    const fingerprint = stableJson([type, params]);
    for (let current; (current = this.#submitting.get(intent)); ) {
      if (current.fingerprint === fingerprint) return current.promise;
      // Other params for the same intent: let the first submit record its job first.
      await current.promise.catch(() => {});
    }
    const entry = { fingerprint, promise: null };
    entry.promise = this.#submit(type, params, intent, fingerprint, onRetry).finally(() => {
      if (this.#submitting.get(intent) === entry) this.#submitting.delete(intent);
    });
    this.#submitting.set(intent, entry);
    return entry.promise;
  }

  /**
   * The job this tab last submitted for `intent` (kept across reloads), or
   * null: a component shows it again after a reload.
   * @param {string} intent
   * @returns {string|null}
   */
  intentJobId(intent) {
    return this.#readIntent(intent)?.jobId ?? null;
  }

  /** Forgets every intent of this tab, e.g. on sign-out. */
  forgetIntents() {
    for (const name of this.#intentNames()) this.#storage.removeItem(INTENT_PREFIX + name);
  }

  /**
   * `GET /jobs/{id}`: one of the caller's jobs, with a fresh signed `result_url` once completed.
   * @param {string} id
   * @returns {Promise<object>}
   * @throws {ErrandError} `not_found` for anything but the caller's own job
   */
  async job(id) {
    const job = await this.#request('GET', `/jobs/${encodeURIComponent(id)}`, { retries: 2 });
    this.#noteJob(job);
    return job;
  }

  /**
   * `GET /jobs`: the caller's jobs, newest first.
   * @param {{status?: string, type?: string, limit?: number, cursor?: string}} [query]
   * @returns {Promise<{jobs: object[], next_cursor: string|null}>}
   */
  async jobs(query = {}) {
    const page = await this.#request('GET', `/jobs${queryString(query)}`, { retries: 2 });
    page.jobs.forEach((job) => this.#noteJob(job));
    return page;
  }

  /**
   * `GET /notifications`: the caller's feed, newest first, with the server's `unread_count`.
   * @param {{unreadOnly?: boolean, limit?: number, cursor?: string}} [query]
   * @returns {Promise<{notifications: object[], unread_count: number, next_cursor: string|null}>}
   */
  notifications({ unreadOnly, limit, cursor } = {}) {
    const query = queryString({ unread_only: unreadOnly || undefined, limit, cursor });
    return this.#request('GET', `/notifications${query}`, { retries: 2 });
  }

  /**
   * `POST /notifications/{id}/read`.
   * @param {string} id a notification's id
   * @returns {Promise<void>}
   */
  async markRead(id) {
    await this.#request('POST', `/notifications/${encodeURIComponent(id)}/read`, { retries: 2 });
  }

  /**
   * `POST /notifications/read-all`.
   * @returns {Promise<{marked_read: number}>}
   */
  markAllRead() {
    return this.#request('POST', '/notifications/read-all', { retries: 2 });
  }

  /**
   * `GET /me/notification-preferences`: per category of job, whether its
   * ends reach the caller in the app and by email, and whether it is
   * required (configured: cannot be turned off).
   * @returns {Promise<{categories: {category: string, required: boolean, channels: {in_app: boolean, email: boolean}}[]}>}
   *   one entry per category, in name order
   */
  preferences() {
    return this.#request('GET', '/me/notification-preferences', { retries: 2 });
  }

  /**
   * `PUT /me/notification-preferences/{category}` with only the one channel
   * (the body is partial), so a change of the other channel, in another tab
   * say, is not undone. Retried like a read: it sets a value, so sending it
   * twice is the same as once.
   * @param {string} category a category of the configured job types, e.g. `exports`
   * @param {'in_app'|'email'} channel
   * @param {boolean} on
   * @returns {Promise<{category: string, required: boolean, channels: {in_app: boolean, email: boolean}}>} the category as it now stands
   * @throws {ErrandError} `invalid_preference` for an unknown category or channel, or turning off a required category
   */
  setPreference(category, channel, on) {
    const path = `/me/notification-preferences/${encodeURIComponent(category)}`;
    return this.#request('PUT', path, { body: { [channel]: on }, retries: 2 });
  }

  /**
   * `POST /schedules/{type}`: a recurring job ("every Monday at 08:00,
   * Europe/Paris"), made once per `idempotencyKey`: send the same key again
   * (a double-click, a retry after a lost answer) and errand answers with
   * the schedule it made. Retried as `createJob` is, with the same key,
   * except at the cap on a user's schedules, which only a delete lifts.
   * @param {string} type a job type configured `schedulable`, e.g. `export_sales_report`
   * @param {{params: object, cron: string, timezone: string, ends_at?: string, missed?: 'skip'|'catch_up',
   *   catch_up_limit?: number, overlap?: 'skip'|'queue'|'cancel_previous'}} schedule
   * @param {{idempotencyKey?: string, onRetry?: (wait: {inMs: number, error: ErrandError}) => void}} [options]
   *   one key per intent (default: a new one, this call being the intent), and who hears of waits
   * @returns {Promise<object>} the schedule, with its `next_run_at`
   * @throws {ErrandError} `invalid_schedule` or `invalid_params` (with `field`), `job_type_not_schedulable`,
   *   `quota_exceeded` (`scope` `user_schedules`)
   */
  createSchedule(type, schedule, { idempotencyKey = newIdempotencyKey(), onRetry } = {}) {
    return this.#request('POST', `/schedules/${encodeURIComponent(type)}`, {
      body: schedule,
      headers: { 'Idempotency-Key': idempotencyKey },
      retries: SUBMIT_RETRIES,
      onRetry,
    });
  }

  /**
   * `GET /schedules`: the caller's schedules (every type), newest first.
   * @param {{limit?: number, cursor?: string}} [query] `limit` 1 to 100 (default 20)
   * @returns {Promise<{schedules: object[], next_cursor: string|null}>}
   */
  schedules({ limit, cursor } = {}) {
    return this.#request('GET', `/schedules${queryString({ limit, cursor })}`, { retries: 2 });
  }

  /**
   * `PATCH /schedules/{id}` with `{paused}`: pauses or resumes. Retried like
   * a read: it sets a value, so sending it twice is the same as once.
   * @param {string} id
   * @param {boolean} paused
   * @returns {Promise<object>} the schedule as it now stands
   * @throws {ErrandError} `not_found` for anything but the caller's own schedule
   */
  pauseSchedule(id, paused) {
    return this.#request('PATCH', `/schedules/${encodeURIComponent(id)}`, { body: { paused }, retries: 2 });
  }

  /**
   * `DELETE /schedules/{id}`: no more runs (the jobs it made stay).
   * @param {string} id
   * @returns {Promise<void>}
   * @throws {ErrandError} `not_found` for anything but the caller's own schedule, and for one already
   *   deleted (by a retry of this call whose first answer was lost, say): gone either way
   */
  async deleteSchedule(id) {
    await this.#request('DELETE', `/schedules/${encodeURIComponent(id)}`, { retries: 2 });
  }

  /**
   * Hears the caller's notifications live, over one stream shared by every
   * subscriber of this client (`GET /notifications/stream?ticket=…`, with a
   * fresh stream ticket for every connection, read with `fetch` so that a
   * reconnect resumes with `Last-Event-ID`). `onEvent` receives:
   * - `{type: 'open'}` each time the stream (re)opens: re-check anything
   *   that may have ended while it was closed;
   * - `{type: 'job_completed', notification}` once per notification (repeats dropped);
   * - `{type: 'job_cancelled', notification}` when the user cancelled a job
   *   (in this tab or another; never in the feed);
   * - `{type: 'batch_completed', notification}` when the last job of one of
   *   the user's batches ended (with its `counts`), and
   *   `{type: 'webhook_disabled', notification}` (to a tenant's admins), both
   *   in the feed as `job_completed` is;
   * - `{type: 'job_progress', jobId, progress}` when a running job reports
   *   progress (`{done, total, message, updated_at}`, about once a second);
   * - `{type: 'batch_progress', batchId, counts}` when a running batch's
   *   counts change (`{total, completed, failed, cancelled, status}`);
   * - `{type: 'unread_count', unreadCount}` when it opens and whenever the
   *   count changes anywhere (another tab's mark-read included);
   * - `{type: 'closed', error, retryInMs}` when it dropped; it reconnects by
   *   itself, backing off (0.5 s doubling to 30 s, full jitter).
   *
   * @param {(event: object) => void} onEvent
   * @returns {() => void} unsubscribes; the stream closes with its last subscriber
   */
  subscribe(onEvent) {
    this.#listeners.add(onEvent);
    if (!this.#stream) {
      this.#stream = new NotificationStream({
        open: async (headers, signal) => {
          // A fresh ticket for every connection (it lives 60 s and opens
          // streams only), so a reconnect never presents an expired one, and
          // the long-lived stream never carries the token itself.
          const { ticket } = await this.#request('POST', '/notifications/stream-tickets', {});
          const path = `/notifications/stream?ticket=${encodeURIComponent(ticket)}`;
          return this.#open(path, headers, signal, { method: 'GET' }, { bearer: false });
        },
        existingNotificationIds: async () => (await this.notifications({ limit: BASELINE_SIZE })).notifications.map((n) => n.id),
        emit: (event) => this.#emit(event),
      });
    } else {
      // A late subscriber learns the state at once instead of at the next change.
      this.#stream.replayState(onEvent);
    }
    return () => {
      this.#listeners.delete(onEvent);
      if (this.#listeners.size === 0 && this.#stream) {
        this.#stream.stop();
        this.#stream = null;
      }
    };
  }

  #emit(event) {
    if (event.type === 'job_completed' || event.type === 'job_cancelled') {
      this.#noteJob({ id: event.notification.job_id, status: event.notification.job_status });
    }
    for (const listener of [...this.#listeners]) {
      try {
        listener(event);
      } catch (error) {
        // One broken listener must not stop the others, nor the stream.
        globalThis.reportError?.(error);
      }
    }
  }

  async #submit(type, params, intent, fingerprint, onRetry) {
    let record = this.#readIntent(intent);
    if (!record || record.fingerprint !== fingerprint || (await this.#intentEnded(record))) {
      record = { key: newIdempotencyKey(), fingerprint, jobId: null, ended: false };
      this.#writeIntent(intent, record);
    }
    const job = await this.#request('POST', `/jobs/${encodeURIComponent(type)}`, {
      body: params,
      headers: { 'Idempotency-Key': record.key },
      retries: SUBMIT_RETRIES,
      onRetry,
    });
    this.#writeIntent(intent, { ...record, jobId: job.id, ended: ENDED.has(job.status) });
    return job;
  }

  /** Whether the intent's job is over; in doubt, no: reusing the key is the side that cannot duplicate. */
  async #intentEnded(record) {
    if (record.ended) return true;
    if (!record.jobId) return false; // the answer never came: the same key finds the job if it was made
    try {
      return ENDED.has((await this.job(record.jobId)).status);
    } catch (error) {
      return error.status === 404; // gone with its history: its key is free again
    }
  }

  /** Marks the intents whose job has ended, so their next submit takes a new key. */
  #noteJob(job) {
    if (!ENDED.has(job.status)) return;
    for (const name of this.#intentNames()) {
      const record = this.#readIntent(name);
      if (record?.jobId === job.id && !record.ended) this.#writeIntent(name, { ...record, ended: true });
    }
  }

  #intentNames() {
    const names = [];
    for (let i = 0; i < this.#storage.length; i++) {
      const key = this.#storage.key(i);
      if (key?.startsWith(INTENT_PREFIX)) names.push(key.slice(INTENT_PREFIX.length));
    }
    return names;
  }

  #readIntent(intent) {
    try {
      return JSON.parse(this.#storage.getItem(INTENT_PREFIX + intent) ?? 'null');
    } catch {
      return null; // unreadable: a new key, as for a first submit
    }
  }

  #writeIntent(intent, record) {
    this.#storage.setItem(INTENT_PREFIX + intent, JSON.stringify(record));
  }

  /** Sends one request, retrying network errors, 503s and 429s `retries` times; JSON answer or null. */
  async #request(method, path, { body, headers = {}, retries = 0, onRetry }) {
    for (let attempt = 0; ; attempt++) {
      try {
        const init = { method, headers: { Accept: 'application/json', ...headers } };
        if (body !== undefined) {
          init.headers['Content-Type'] = 'application/json';
          init.body = JSON.stringify(body);
        }
        const response = await this.#open(path, init.headers, undefined, init);
        return response.status === 204 ? null : await response.json();
      } catch (error) {
        const transient = error instanceof ErrandError && [0, 429, 503].includes(error.status) && !isLasting(error);
        if (!transient || attempt >= retries) throw error;
        const inMs = Math.max(error.retryAfterMs ?? 0, fullJitter(attempt, 500, 8_000));
        try {
          onRetry?.({ inMs, error });
        } catch (listenerError) {
          globalThis.reportError?.(listenerError);
        }
        await sleep(inMs);
      }
    }
  }

  /**
   * A successful response to `path` (with the bearer token unless `bearer` is false: a stream ticket in the URL authorises it), or an ErrandError.
   * An error of `token()` itself goes to the caller as it is: it is the host
   * app's (signed out, say), and no retry here would mend it.
   */
  async #open(path, headers, signal, init = { method: 'GET' }, { bearer = true } = {}) {
    const withAuth = bearer ? { ...headers, Authorization: `Bearer ${await this.#token()}` } : { ...headers };
    let response;
    try {
      response = await this.#fetch(this.#baseUrl + path, { ...init, headers: withAuth, signal, cache: 'no-store' });
    } catch (cause) {
      if (cause?.name === 'AbortError') throw cause;
      throw new ErrandError({ status: 0, code: 'unreachable', title: 'errand could not be reached' }, { cause });
    }
    if (response.ok) return response;
    throw await problemOf(response);
  }
}

/**
 * The live stream: one `fetch` of `text/event-stream` at a time, reopened
 * with `Last-Event-ID` after any drop, so nothing sent while it was closed
 * is lost, and repeats dropped by id.
 */
class NotificationStream {
  #open;
  #existingNotificationIds;
  #emit;
  #stopped = false;
  #controller = null;
  #wake = null;
  #failures = 0;
  #lastEventId = null;
  #seen = new Set();
  #isOpen = false;
  #unreadCount = null;

  constructor({ open, existingNotificationIds, emit }) {
    this.#open = open;
    this.#existingNotificationIds = existingNotificationIds;
    this.#emit = emit;
    this.#run();
  }

  stop() {
    this.#stopped = true;
    this.#controller?.abort();
    this.#wake?.();
  }

  /** Tells a late subscriber what the others already know. */
  replayState(onEvent) {
    queueMicrotask(() => {
      if (this.#isOpen) onEvent({ type: 'open' });
      if (this.#unreadCount !== null) onEvent({ type: 'unread_count', unreadCount: this.#unreadCount });
    });
  }

  async #run() {
    while (!this.#stopped) {
      let error = null;
      try {
        await this.#connect();
      } catch (caught) {
        error = caught;
      }
      this.#isOpen = false;
      if (this.#stopped) return;
      const retryInMs = fullJitter(this.#failures++, RECONNECT_FIRST_MS, RECONNECT_MAX_MS);
      this.#emit({ type: 'closed', error, retryInMs });
      await new Promise((resolve) => {
        this.#wake = resolve;
        setTimeout(resolve, retryInMs);
      });
    }
  }

  async #connect() {
    // Without a baseline, a reconnect would start from "now" and lose what
    // came while the stream was down: the newest notification is where the
    // first connection starts, so every reconnect can resume from an id.
    // errand resumes a little before that id (its look-back), so what
    // existed already counts as seen, not as news.
    if (this.#lastEventId === null) {
      const existing = await this.#existingNotificationIds();
      existing.forEach((id) => this.#remember(id));
      this.#lastEventId = existing[0] ?? BEFORE_ALL;
    }
    if (this.#stopped) return;
    this.#controller = new AbortController();
    const headers = { Accept: 'text/event-stream', 'Last-Event-ID': this.#lastEventId };
    const response = await this.#open(headers, this.#controller.signal);
    this.#failures = 0;
    this.#isOpen = true;
    this.#emit({ type: 'open' });
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let idle = setTimeout(() => this.#controller.abort(), STREAM_IDLE_MS);
    try {
      await readEventStream(reader, {
        onBytes: () => {
          clearTimeout(idle);
          idle = setTimeout(() => this.#controller.abort(), STREAM_IDLE_MS);
        },
        onEvent: (event) => this.#dispatch(event),
      });
    } finally {
      clearTimeout(idle);
      reader.cancel().catch(() => {});
    }
  }

  /** Remembers an id as sent, forgetting the oldest beyond `REMEMBERED_IDS` (a Set keeps insertion order). */
  #remember(id) {
    this.#seen.add(id);
    if (this.#seen.size > REMEMBERED_IDS) this.#seen.delete(this.#seen.values().next().value);
  }

  #dispatch({ type, data, id }) {
    if (id !== undefined) this.#lastEventId = id || this.#lastEventId;
    if (data === null) return;
    if (type === 'unread_count') {
      this.#unreadCount = JSON.parse(data).unread_count;
      this.#emit({ type: 'unread_count', unreadCount: this.#unreadCount });
    } else if (NOTIFICATION_EVENTS.has(type)) {
      const notification = JSON.parse(data);
      if (this.#seen.has(notification.id)) return;
      this.#remember(notification.id);
      this.#emit({ type, notification });
    } else if (type === 'job_progress') {
      const { job_id: jobId, progress } = JSON.parse(data);
      this.#emit({ type: 'job_progress', jobId, progress });
    } else if (type === 'batch_progress') {
      const { batch_id: batchId, ...counts } = JSON.parse(data);
      this.#emit({ type: 'batch_progress', batchId, counts });
    }
    // Other event types are for newer clients: ignored.
  }
}

/**
 * Reads Server-Sent Events (the WHATWG event stream format) from a reader
 * of text until the stream ends. `onEvent` gets `{type, data, id}`: `data`
 * null for a block with no data, `id` undefined when the block had none.
 */
async function readEventStream(reader, { onBytes, onEvent }) {
  let buffer = '';
  let data = [];
  let type = '';
  let id;
  let first = true;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    onBytes();
    buffer += first ? value.replace(/^\uFEFF/, '') : value;
    first = false;
    for (let end; (end = /\r\n|\r|\n/.exec(buffer)); ) {
      // A CR at the very end may be the first half of a CRLF still on its way.
      if (end[0] === '\r' && end.index === buffer.length - 1) break;
      const line = buffer.slice(0, end.index);
      buffer = buffer.slice(end.index + end[0].length);
      if (line === '') {
        if (data.length > 0 || id !== undefined) onEvent({ type: type || 'message', data: data.length ? data.join('\n') : null, id });
        [data, type, id] = [[], '', undefined];
      } else if (!line.startsWith(':')) {
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const fieldValue = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'data') data.push(fieldValue);
        else if (field === 'event') type = fieldValue;
        else if (field === 'id' && !fieldValue.includes('\0')) id = fieldValue;
      }
    }
  }
}

/** The problem document of an error answer (or one made up for a proxy's HTML page). */
async function problemOf(response) {
  let problem;
  try {
    problem = await response.json();
  } catch {
    problem = { title: response.statusText || 'Request failed' };
  }
  if (typeof problem !== 'object' || problem === null) problem = {};
  problem.status ??= response.status;
  problem.code ??= response.status === 503 ? 'unavailable' : 'unknown';
  const retryAfter = Number(response.headers.get('Retry-After'));
  return new ErrandError(problem, { retryAfterMs: Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : undefined });
}

/** A refusal that no wait lifts: the cap on a user's schedules (a delete does; errand sends no `Retry-After`). */
function isLasting(error) {
  return error.status === 429 && error.problem.scope === 'user_schedules';
}

/** JSON with object keys sorted at every depth: equal params, equal text. */
function stableJson(value) {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const keys = Object.keys(value).filter((k) => value[k] !== undefined).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${stableJson(value[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function queryString(query) {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== null && value !== '') params.set(name, String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

/**
 * A new `Idempotency-Key` (a random UUID), for a caller that keeps its own
 * intents, e.g. one per open of a form. (`crypto.randomUUID` exists only on
 * https and localhost pages.)
 */
export function newIdempotencyKey() {
  if (globalThis.crypto?.randomUUID) return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** "Full jitter": anywhere between 0 and the doubled delay, so clients that failed together do not return together. */
function fullJitter(attempt, firstMs, maxMs) {
  return Math.random() * Math.min(maxMs, firstMs * 2 ** attempt);
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** `sessionStorage`, or a memory stand-in where it is refused (some private modes, sandboxed frames). */
function defaultStorage() {
  try {
    const storage = globalThis.sessionStorage;
    storage.setItem('errand:probe', '1');
    storage.removeItem('errand:probe');
    return storage;
  } catch {
    const items = new Map();
    return {
      get length() { return items.size; },
      key: (i) => [...items.keys()][i] ?? null,
      getItem: (k) => items.get(k) ?? null,
      setItem: (k, v) => items.set(k, String(v)),
      removeItem: (k) => items.delete(k),
    };
  }
}
