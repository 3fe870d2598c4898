/**
 * @file Waiting before trying again (`/client/core/backoff.js`), for the JS
 * client's retried requests and its stream's reconnects: a delay that
 * doubles up to a cap, drawn at random below it.
 */

/** "Full jitter": anywhere between 0 and the doubled delay, so clients that failed together do not return together. */
export function fullJitter(attempt, firstMs, maxMs) {
  return Math.random() * Math.min(maxMs, firstMs * 2 ** attempt);
}

/** Resolves after `ms`. */
export function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
