/**
 * @file One submit per intent, on the browser's side
 * (`/client/core/idempotency.js`): new `Idempotency-Key`s, the intents a
 * tab keeps (each with its key, the fingerprint of what it submitted, and
 * its job) in `sessionStorage` across reloads, and the fingerprint itself.
 * When an intent takes a new key is the JS client's decision (`Errand`);
 * this module only keeps what it decided.
 */

/** Where an intent's key and job are kept, per tab, across reloads. */
const INTENT_PREFIX = 'errand:intent:';

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

/** JSON with object keys sorted at every depth: equal params, equal text (an intent's fingerprint). */
export function stableJson(value) {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const keys = Object.keys(value).filter((k) => value[k] !== undefined).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${stableJson(value[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * The intents of one tab, each a record `{key, fingerprint, jobId, ended}`
 * kept as JSON under `errand:intent:<intent>` in a `Storage`.
 */
export class IntentStore {
  #storage;

  /** @param {Storage} storage */
  constructor(storage) {
    this.#storage = storage;
  }

  /** The intents kept. */
  names() {
    const names = [];
    for (let i = 0; i < this.#storage.length; i++) {
      const key = this.#storage.key(i);
      if (key?.startsWith(INTENT_PREFIX)) names.push(key.slice(INTENT_PREFIX.length));
    }
    return names;
  }

  /** The intent's record, or null (none, or unreadable). */
  read(intent) {
    try {
      return JSON.parse(this.#storage.getItem(INTENT_PREFIX + intent) ?? 'null');
    } catch {
      return null; // unreadable: a new key, as for a first submit
    }
  }

  write(intent, record) {
    this.#storage.setItem(INTENT_PREFIX + intent, JSON.stringify(record));
  }

  /** Forgets every intent kept. */
  forgetAll() {
    for (const name of this.names()) this.#storage.removeItem(INTENT_PREFIX + name);
  }
}

/** `sessionStorage`, or a memory stand-in where it is refused (some private modes, sandboxed frames). */
export function defaultStorage() {
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
