/**
 * @file A job's status as the pages read it (`/client/core/job-status.js`):
 * which statuses are over, and the word a status badge shows. errand's
 * `status` is the truth; `state` (e.g. `retry_scheduled`) only refines
 * what is shown.
 */

/** A job in one of these statuses is over: it will not change again (unless an operator retries it). */
export const ENDED_STATUSES = new Set(['completed', 'failed', 'cancelled']);

/** A job in one of these statuses is still to run or running. */
export const UNFINISHED_STATUSES = new Set(['pending', 'processing']);

/**
 * The word a badge shows for a status: `processing` while a retry waits
 * reads `retrying`, and while the service's operators hold it back `paused`.
 */
export function statusLabel(status, state) {
  if (status === 'processing' && state === 'retry_scheduled') return 'retrying';
  if (status === 'processing' && state === 'paused') return 'paused';
  return status;
}
