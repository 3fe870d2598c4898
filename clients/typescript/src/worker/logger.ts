/**
 * Where the worker says what it does: a line per job started and ended,
 * warnings for lost leases and calls retried, the stack of every unexpected
 * handler error (logged here, never sent to errand: it may hold internals).
 */

export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string, error?: unknown): void;
}

/** The default: warnings and errors on stderr, nothing else (stdout stays the application's). */
export const stderrLogger: Logger = {
  info() {},
  warn(message) {
    console.warn(`errand-worker: ${message}`);
  },
  error(message, error) {
    if (error === undefined) console.error(`errand-worker: ${message}`);
    else console.error(`errand-worker: ${message}`, error);
  },
};
