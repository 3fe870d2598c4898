/**
 * @file The JS client's live stream of a user's notifications
 * (`/client/core/notification-stream.js`): one `fetch` of
 * `text/event-stream` at a time, reopened with `Last-Event-ID` after any
 * drop (backing off), so nothing sent while it was closed is lost, with
 * repeats dropped by id. It turns errand's events into the client's
 * (`Errand#subscribe` documents them); how a connection is opened (a fresh
 * stream ticket each time) is the client's, handed in as `open`.
 */

import { fullJitter } from './backoff.js';
import { readEventStream } from './event-stream.js';

/** The stream's events that carry a notification (ids deduplicated). */
export const NOTIFICATION_EVENTS = new Set(['job_completed', 'job_cancelled', 'job_superseded', 'batch_completed', 'webhook_disabled', 'schedule_paused']);
/** Those kept out of the feed: the user knows (they cancelled the job, or a newer request of theirs replaced it). */
export const STREAM_ONLY_EVENTS = new Set(['job_cancelled', 'job_superseded']);
/** Those that say one of the user's jobs ended. */
export const JOB_END_EVENTS = new Set(['job_completed', ...STREAM_ONLY_EVENTS]);
/** Notification ids remembered to drop repeats (the stream is at-least-once). */
const REMEMBERED_IDS = 500;
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
 * The live stream: one `fetch` of `text/event-stream` at a time, reopened
 * with `Last-Event-ID` after any drop, so nothing sent while it was closed
 * is lost, and repeats dropped by id.
 */
export class NotificationStream {
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
  /** @type {{unreadCount: number, unseenCount: number}|null} the counts last heard */
  #counts = null;

  /**
   * Starts at once.
   * @param {object} options
   * @param {(headers: object, signal: AbortSignal) => Promise<Response>} options.open opens one connection
   * @param {() => Promise<string[]>} options.existingNotificationIds the newest notifications' ids, newest first (the baseline)
   * @param {(event: object) => void} options.emit hears the client's events
   */
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
      if (this.#counts !== null) onEvent({ type: 'unread_count', ...this.#counts });
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
      const counts = JSON.parse(data);
      // An errand from before unseen counts sends the unread count alone: nothing is seen then but by reading.
      this.#counts = { unreadCount: counts.unread_count, unseenCount: counts.unseen_count ?? counts.unread_count };
      this.#emit({ type: 'unread_count', ...this.#counts });
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
