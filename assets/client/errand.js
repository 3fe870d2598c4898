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
 *
 * This module is the client's API, a method per thing a page asks of
 * errand. How one request goes (`./core/transport.js`), the live stream
 * (`./core/notification-stream.js`, read by `./core/event-stream.js`), the
 * intents kept per tab (`./core/idempotency.js`) and errand's error
 * answers (`./core/problem.js`) each live in a module of their own under
 * `./core/`. Pages import `Errand`, `ErrandError`, `NOTIFICATION_EVENTS`
 * and `newIdempotencyKey` from here, never from `./core/`.
 *
 * The web components' words come from errand too: `messages()` reads the
 * catalogue of the client's `locale` (`GET /i18n/elements`) once, and
 * `./core/messages.js` writes texts with it.
 */

import { IntentStore, defaultStorage, newIdempotencyKey, stableJson } from './core/idempotency.js';
import { ENDED_STATUSES } from './core/job-status.js';
import { Messages } from './core/messages.js';
import { JOB_END_EVENTS, NotificationStream } from './core/notification-stream.js';
import { queryString } from './core/query.js';
import { Transport } from './core/transport.js';
import { browserSubscription, pushSupported, registerWorker, subscribeBrowser } from './core/web-push.js';

export { ErrandError } from './core/problem.js';
export { NOTIFICATION_EVENTS } from './core/notification-stream.js';
export { newIdempotencyKey } from './core/idempotency.js';

/** A submit is retried this many times after a network error, a 503 or a 429 (busy: errand's Retry-After is waited out). */
const SUBMIT_RETRIES = 10;
/** Newest notifications read before the first connection: they are not news. */
const BASELINE_SIZE = 20;

/**
 * A client of one errand, for one signed-in user.
 */
export class Errand {
  /** @type {Transport} every request goes through it */
  #transport;
  /** @type {IntentStore} this tab's intents, with their keys and jobs */
  #intents;
  /** @type {Map<string, {fingerprint: string, promise: Promise<object>}>} submits in flight, per intent */
  #submitting = new Map();
  /** @type {Set<(event: object) => void>} */
  #listeners = new Set();
  /** @type {NotificationStream|null} one stream, shared by every subscriber */
  #stream = null;
  /** @type {string} where errand is ('' for this page's origin) */
  #baseUrl;
  /** @type {string|undefined} the language asked for the components' words (undefined: the browser's) */
  #locale;
  /** @type {Promise<Messages>|null} the components' words, read once (null again after a failed read) */
  #messages = null;
  /** The tenant's branding, read once (`branding()`). */
  #branding = null;

  /**
   * @param {object} options
   * @param {() => Promise<string>|string} options.token returns the current bearer JWT; asked before every request
   * @param {string} [options.baseUrl] where errand is, e.g. `https://errand.example.com`; default: this page's origin
   * @param {Storage} [options.storage] where intents are kept; default `sessionStorage` (per tab, survives reloads)
   * @param {string} [options.locale] the language of the web components' words, a BCP 47 tag such as `fr`;
   *   default: errand picks one from the browser's `Accept-Language` (else its own default)
   * @param {typeof fetch} [options.fetch] for tests
   */
  constructor({ token, baseUrl = '', storage = defaultStorage(), locale, fetch = globalThis.fetch.bind(globalThis) }) {
    if (typeof token !== 'function') throw new TypeError('Errand needs a token callback');
    this.#transport = new Transport({ baseUrl, token, fetch });
    this.#baseUrl = baseUrl.replace(/\/+$/, '');
    this.#intents = new IntentStore(storage);
    this.#locale = locale || undefined;
  }

  /** The language asked for in the options, or undefined (errand picks one). */
  get locale() {
    return this.#locale;
  }

  /**
   * The web components' words in this client's language: `GET
   * /i18n/elements?locale=…` (public: no token is sent), read once per
   * client and shared by every element; read again after a failure. errand
   * answers with the language it has nearest the one asked (or the
   * browser's `Accept-Language` when none is), and that is the `locale`
   * numbers and dates are written in.
   * @returns {Promise<{locale: string|undefined, t: (id: string, vars?: object) => string,
   *   plural: (id: string, n: number, vars?: object) => string, parts: (id: string, vars?: object) => Array<string|Node>,
   *   has: (id: string) => boolean, number: (n: number) => string}>} a `Messages` (`./core/messages.js`)
   * @throws {ErrandError} when errand could not give them (the elements then show each text's id)
   */
  messages() {
    if (!this.#messages) {
      const query = this.#locale ? `?locale=${encodeURIComponent(this.#locale)}` : '';
      const loading = this.#transport
        .request('GET', `/i18n/elements${query}`, { retries: 2, bearer: false, cache: 'default' })
        .then((answer) => new Messages(answer?.locale ?? this.#locale, answer?.messages ?? {}));
      this.#messages = loading;
      loading.catch(() => {
        if (this.#messages === loading) this.#messages = null;
      });
    }
    return this.#messages;
  }

  /**
   * How the signed-in user's tenant presents itself (`GET /tenant/branding`,
   * as its admins set it: `{name, logo_url, primary_color, from_name,
   * footer}`, each null until set), read once per client. The elements take
   * its `primary_color` as their accent unless the page sets
   * `--errand-accent` itself.
   * @returns {Promise<{name: string|null, logo_url: string|null, primary_color: string|null}>}
   */
  branding() {
    if (!this.#branding) {
      const loading = this.#transport.request('GET', '/tenant/branding', { retries: 2 });
      this.#branding = loading;
      loading.catch(() => {
        if (this.#branding === loading) this.#branding = null;
      });
    }
    return this.#branding;
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
    return this.#intents.read(intent)?.jobId ?? null;
  }

  /** Forgets every intent of this tab, e.g. on sign-out. */
  forgetIntents() {
    this.#intents.forgetAll();
  }

  /**
   * `GET /jobs/{id}`: one of the caller's jobs, with a fresh signed `result_url` once completed.
   * @param {string} id
   * @returns {Promise<object>}
   * @throws {ErrandError} `not_found` for anything but the caller's own job
   */
  async job(id) {
    const job = await this.#transport.request('GET', `/jobs/${encodeURIComponent(id)}`, { retries: 2 });
    this.#noteJob(job);
    return job;
  }

  /**
   * `GET /jobs`: the caller's jobs, newest first.
   * @param {{status?: string, type?: string, limit?: number, cursor?: string}} [query]
   * @returns {Promise<{jobs: object[], next_cursor: string|null}>}
   */
  async jobs(query = {}) {
    const page = await this.#transport.request('GET', `/jobs${queryString(query)}`, { retries: 2 });
    page.jobs.forEach((job) => this.#noteJob(job));
    return page;
  }

  /**
   * `GET /notifications`: the caller's feed, newest first, with the server's
   * `unread_count` and `unseen_count` (archived notifications aside).
   * @param {{status?: 'all'|'unread'|'unseen'|'archived', unreadOnly?: boolean, limit?: number, cursor?: string}} [query]
   *   `status` picks which (default: every one not archived); `unreadOnly` is `status: 'unread'`
   * @returns {Promise<{notifications: object[], unread_count: number, unseen_count: number, next_cursor: string|null}>}
   */
  notifications({ status, unreadOnly, limit, cursor } = {}) {
    const query = queryString({ status: status ?? (unreadOnly ? 'unread' : undefined), limit, cursor });
    return this.#transport.request('GET', `/notifications${query}`, { retries: 2 });
  }

  /**
   * `POST /notifications/seen`: the person opened the feed: every unseen
   * notification is seen (read or not), and the badge's count is zero.
   * @returns {Promise<{marked_seen: number}>}
   */
  markSeen() {
    return this.#transport.request('POST', '/notifications/seen', { retries: 2 });
  }

  /**
   * `POST /notifications/{id}/archive`: out of the feed and its counts
   * (`notifications({status: 'archived'})` lists it).
   * @param {string} id a notification's id
   * @returns {Promise<void>}
   */
  async archive(id) {
    await this.#transport.request('POST', `/notifications/${encodeURIComponent(id)}/archive`, { retries: 2 });
  }

  /**
   * `POST /notifications/archive-read`: archives every read notification.
   * @returns {Promise<{archived: number}>}
   */
  archiveRead() {
    return this.#transport.request('POST', '/notifications/archive-read', { retries: 2 });
  }

  /**
   * `POST /notifications/{id}/read`.
   * @param {string} id a notification's id
   * @returns {Promise<void>}
   */
  async markRead(id) {
    await this.#transport.request('POST', `/notifications/${encodeURIComponent(id)}/read`, { retries: 2 });
  }

  /**
   * `POST /notifications/read-all`.
   * @returns {Promise<{marked_read: number}>}
   */
  markAllRead() {
    return this.#transport.request('POST', '/notifications/read-all', { retries: 2 });
  }

  /**
   * `GET /me/notification-preferences`: per category of job, whether its
   * ends reach the caller in the app, by email (at once, `true`, or in their
   * digest, `'digest'`) and by Web Push where offered, and whether it is
   * required (configured: cannot be turned off).
   * @returns {Promise<{categories: {category: string, required: boolean, channels: {in_app: boolean, email: boolean|'digest', push?: boolean}}[]}>}
   *   one entry per category, in name order
   */
  preferences() {
    return this.#transport.request('GET', '/me/notification-preferences', { retries: 2 });
  }

  /**
   * `PUT /me/notification-preferences/{category}` with only the one channel
   * (the body is partial), so a change of the other channel, in another tab
   * say, is not undone. Retried like a read: it sets a value, so sending it
   * twice is the same as once.
   * @param {string} category a category of the configured job types, e.g. `exports`
   * @param {'in_app'|'email'|'push'} channel
   * @param {boolean|'instant'|'digest'|'off'} on `'digest'`: email only, once a digest time is set
   * @returns {Promise<{category: string, required: boolean, channels: {in_app: boolean, email: boolean|'digest', push?: boolean}}>} the category as it now stands
   * @throws {ErrandError} `invalid_preference` for an unknown category or channel, turning off a required
   *   category, or a digest before a digest time is set
   */
  setPreference(category, channel, on) {
    const path = `/me/notification-preferences/${encodeURIComponent(category)}`;
    return this.#transport.request('PUT', path, { body: { [channel]: on }, retries: 2 });
  }

  /**
   * `GET /me/notification-settings`: the caller's time zone (their token's
   * `zoneinfo` claim until they set one), quiet hours and digest time.
   * @returns {Promise<{timezone: string|null, quiet_hours: {start: string, end: string}|null, digest: {every: 'hour'|'day', at?: string}|null}>}
   */
  notificationSettings() {
    return this.#transport.request('GET', '/me/notification-settings', { retries: 2 });
  }

  /**
   * `PUT /me/notification-settings`: sets them whole (what is left out is
   * none; without a digest, what a digest held is sent at once).
   * @param {{timezone?: string, quiet_hours?: {start: string, end: string}|null, digest?: {every: 'hour'|'day', at?: string}|null}} settings
   *   times `HH:MM`, local to `timezone` (IANA, e.g. `Europe/Paris`)
   * @returns {Promise<{timezone: string, quiet_hours: {start: string, end: string}|null, digest: {every: 'hour'|'day', at?: string}|null}>}
   * @throws {ErrandError} `invalid_preference` for no or an unknown zone, or a time that is not `HH:MM`
   */
  setNotificationSettings(settings) {
    return this.#transport.request('PUT', '/me/notification-settings', { body: settings, retries: 2 });
  }

  /**
   * `GET /me/push-subscriptions`: the devices the caller subscribed to Web
   * Push, and errand's VAPID public key.
   * @returns {Promise<{vapid_public_key: string, subscriptions: {id: string, endpoint: string, user_agent: string|null, created_at: string}[]}>}
   * @throws {ErrandError} `push_not_enabled` where errand does not offer Web Push
   */
  pushSubscriptions() {
    return this.#transport.request('GET', '/me/push-subscriptions', { retries: 2 });
  }

  /**
   * Whether job ends reach this device by Web Push: `unsupported` (this
   * browser cannot), `not_offered` (errand does not), `off` or `on` (this
   * browser is subscribed and errand has the subscription).
   * @param {{serviceWorker?: string}} [options] the worker's URL, as `enablePush` takes it
   * @returns {Promise<'unsupported'|'not_offered'|'off'|'on'>}
   */
  async pushState({ serviceWorker } = {}) {
    if (!pushSupported()) return 'unsupported';
    let devices;
    try {
      devices = await this.pushSubscriptions();
    } catch (error) {
      if (error.code === 'push_not_enabled') return 'not_offered';
      throw error;
    }
    const subscription = await browserSubscription(this.#workerUrl(serviceWorker));
    return subscription && devices.subscriptions.some((d) => d.endpoint === subscription.endpoint) ? 'on' : 'off';
  }

  /**
   * Turns Web Push on for this device: registers errand's service worker,
   * asks the person's permission, subscribes the browser with errand's VAPID
   * key and gives errand the subscription (`POST /me/push-subscriptions`).
   * Safe to call again: the same subscription is the same device.
   * @param {{serviceWorker?: string}} [options] the worker's URL: errand's
   *   `/client/errand-sw.js` by default; a page on another origin serves a copy of its own
   * @returns {Promise<object>} the device as errand keeps it
   * @throws {DOMException} `NotAllowedError` when the person refused notifications
   * @throws {ErrandError} `push_not_enabled`, `invalid_push_subscription` (e.g. at the cap on devices)
   */
  async enablePush({ serviceWorker } = {}) {
    if (!pushSupported()) throw new DOMException('this browser cannot receive Web Push', 'NotSupportedError');
    const { vapid_public_key: key } = await this.pushSubscriptions();
    const subscription = await subscribeBrowser(await registerWorker(this.#workerUrl(serviceWorker)), key);
    return this.#transport.request('POST', '/me/push-subscriptions', { body: subscription.toJSON(), retries: 2 });
  }

  /**
   * Turns Web Push off for this device: errand forgets it and the browser unsubscribes.
   * @param {{serviceWorker?: string}} [options] as `enablePush` takes it
   * @returns {Promise<void>}
   */
  async disablePush({ serviceWorker } = {}) {
    const subscription = pushSupported() ? await browserSubscription(this.#workerUrl(serviceWorker)) : null;
    if (!subscription) return;
    const { subscriptions } = await this.pushSubscriptions();
    for (const device of subscriptions.filter((d) => d.endpoint === subscription.endpoint)) {
      await this.#transport.request('DELETE', `/me/push-subscriptions/${encodeURIComponent(device.id)}`, { retries: 2 });
    }
    await subscription.unsubscribe();
  }

  /** The service worker's absolute URL: `url`, or errand's own. */
  #workerUrl(url) {
    return new URL(url ?? `${this.#baseUrl}/client/errand-sw.js`, globalThis.location.href).href;
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
    return this.#transport.request('POST', `/schedules/${encodeURIComponent(type)}`, {
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
    return this.#transport.request('GET', `/schedules${queryString({ limit, cursor })}`, { retries: 2 });
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
    return this.#transport.request('PATCH', `/schedules/${encodeURIComponent(id)}`, { body: { paused }, retries: 2 });
  }

  /**
   * `DELETE /schedules/{id}`: no more runs (the jobs it made stay).
   * @param {string} id
   * @returns {Promise<void>}
   * @throws {ErrandError} `not_found` for anything but the caller's own schedule, and for one already
   *   deleted (by a retry of this call whose first answer was lost, say): gone either way
   */
  async deleteSchedule(id) {
    await this.#transport.request('DELETE', `/schedules/${encodeURIComponent(id)}`, { retries: 2 });
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
   * - `{type: 'job_superseded', notification}` when a newer request of the
   *   user's with the same admission key replaced a job (never in the feed);
   * - `{type: 'batch_completed', notification}` when the last job of one of
   *   the user's batches ended (with its `counts`), and
   *   `{type: 'webhook_disabled', notification}` (to a tenant's admins) and
   *   `{type: 'schedule_paused', notification}` (errand paused one of the
   *   user's schedules: they had not signed in for long), all in the feed as
   *   `job_completed` is;
   * - `{type: 'job_progress', jobId, progress}` when a running job reports
   *   progress (`{done, total, message, updated_at}`, about once a second);
   * - `{type: 'batch_progress', batchId, counts}` when a running batch's
   *   counts change (`{total, completed, failed, cancelled, status}`);
   * - `{type: 'unread_count', unreadCount, unseenCount}` when it opens and
   *   whenever a count changes anywhere (another tab's mark-read, seen or
   *   archive included); the bell's badge shows `unseenCount`;
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
          const { ticket } = await this.#transport.request('POST', '/notifications/stream-tickets', {});
          const path = `/notifications/stream?ticket=${encodeURIComponent(ticket)}`;
          return this.#transport.open(path, headers, signal, { method: 'GET' }, { bearer: false });
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
    if (JOB_END_EVENTS.has(event.type)) {
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
    let record = this.#intents.read(intent);
    if (!record || record.fingerprint !== fingerprint || (await this.#intentEnded(record))) {
      record = { key: newIdempotencyKey(), fingerprint, jobId: null, ended: false };
      this.#intents.write(intent, record);
    }
    const job = await this.#transport.request('POST', `/jobs/${encodeURIComponent(type)}`, {
      body: params,
      headers: { 'Idempotency-Key': record.key },
      retries: SUBMIT_RETRIES,
      onRetry,
    });
    this.#intents.write(intent, { ...record, jobId: job.id, ended: ENDED_STATUSES.has(job.status) });
    return job;
  }

  /** Whether the intent's job is over; in doubt, no: reusing the key is the side that cannot duplicate. */
  async #intentEnded(record) {
    if (record.ended) return true;
    if (!record.jobId) return false; // the answer never came: the same key finds the job if it was made
    try {
      return ENDED_STATUSES.has((await this.job(record.jobId)).status);
    } catch (error) {
      return error.status === 404; // gone with its history: its key is free again
    }
  }

  /** Marks the intents whose job has ended, so their next submit takes a new key. */
  #noteJob(job) {
    if (!ENDED_STATUSES.has(job.status)) return;
    for (const name of this.#intents.names()) {
      const record = this.#intents.read(name);
      if (record?.jobId === job.id && !record.ended) this.#intents.write(name, { ...record, ended: true });
    }
  }
}
