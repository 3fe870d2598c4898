/**
 * @file How the pages write times, lengths of time and counts
 * (`/client/core/format.js`). Text only, no DOM: each app wraps these in
 * its own elements (`<time>` with the other form as its title).
 *
 * Two relative forms live here on purpose, one per audience: the web
 * components speak to any user, in the language of their words (the
 * `locale` of `Errand#messages()`: "3 minutes ago", "il y a 3 minutes",
 * `relativeTimeWords`); the operators' console is compact and in one
 * locale, so its tests and screenshots read alike ("3 min ago",
 * `relativeAge`). Counts in the console are `en-US` for the same reason.
 */

const numberFormat = new Intl.NumberFormat('en-US');

/** `1234` → `1,234` (one locale, so the tests and the screenshots read alike); `—` for no number. */
export function formatNumber(n) {
  return typeof n === 'number' ? numberFormat.format(n) : '—';
}

/** A count the server stops at `cap` + 1: past the cap it reads `10,000+`. */
export function formatCount(n, cap) {
  if (typeof n !== 'number') return '0';
  return typeof cap === 'number' && n > cap ? `${formatNumber(cap)}+` : formatNumber(n);
}

/** `1 job` / `3 jobs`. */
export function plural(n, word) {
  return `${formatNumber(n)} ${word}${n === 1 ? '' : 's'}`;
}

/** A local date and time, to the second, in `locale` (default: the browser's language); `—` for no time. */
export function formatTime(iso, locale = undefined) {
  return iso ? new Date(iso).toLocaleString(locale) : '—';
}

/** A length of time, roughly: `42 s`, `3 min`, `2 h 5 min`, `4 d`. */
export function formatDuration(seconds) {
  if (typeof seconds !== 'number' || !Number.isFinite(seconds)) return '—';
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86400)} d`;
}

/** The console's relative time: `3 min ago`, or `in 20 s` for a time still to come; `just now` within 2 s. */
export function relativeAge(iso) {
  if (!iso) return '—';
  const seconds = (Date.now() - new Date(iso).getTime()) / 1000;
  if (Math.abs(seconds) < 2) return 'just now';
  return seconds >= 0 ? `${formatDuration(seconds)} ago` : `in ${formatDuration(-seconds)}`;
}

/** The components' relative time in `locale` (their words'; default: the browser's): "3 minutes ago", "yesterday". */
export function relativeTimeWords(iso, locale = undefined) {
  const seconds = Math.round((new Date(iso).getTime() - Date.now()) / 1000);
  const format = new Intl.RelativeTimeFormat(locale, { numeric: 'auto' });
  const [value, unit] =
    Math.abs(seconds) < 60 ? [seconds, 'second'] : Math.abs(seconds) < 3600 ? [Math.round(seconds / 60), 'minute']
      : Math.abs(seconds) < 86400 ? [Math.round(seconds / 3600), 'hour'] : [Math.round(seconds / 86400), 'day'];
  return format.format(value, unit);
}
