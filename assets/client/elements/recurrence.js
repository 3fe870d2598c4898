/**
 * @file How `<errand-schedule>` writes a recurrence and its params
 * (`/client/elements/recurrence.js`): the cron expression of the form's
 * choice and that expression in words again, the next run on the
 * browser's clock, and the "Dates" presets: a range's ends sent as
 * `{"$date": …}` params, recognised again in a schedule's params, which
 * are shown as text. No element state: `./schedule.js` draws with these.
 */

import { el } from '../core/dom.js';

/** Cron's weekdays (0 is Sunday), in the order the form lists them. */
export const WEEKDAYS = [1, 2, 3, 4, 5, 6, 0];
/**
 * The "Dates" choices beside "As in the form": the range's ends sent as
 * `{"$date": …}` expressions, which errand resolves for each occurrence on
 * the schedule's wall clock (weeks from Monday), so that a weekly export
 * covers the week before each run rather than the dates the page's form
 * held when the schedule was made. `text` names the pair in the list.
 */
export const DATE_PRESETS = [
  { value: 'last_7_days', label: 'Last 7 days', text: 'last 7 days', from: 'today-7d', to: 'today-1d' },
  { value: 'previous_week', label: 'Previous week', text: 'previous week', from: 'start_of_previous_week', to: 'end_of_previous_week' },
  { value: 'previous_month', label: 'Previous month', text: 'previous month', from: 'start_of_previous_month', to: 'end_of_previous_month' },
];
/** The next run on the browser's clock, its zone named: the schedule's own zone may be another. */
const DATE_TIME = new Intl.DateTimeFormat(undefined, {
  weekday: 'long', year: 'numeric', month: 'long', day: 'numeric', hour: 'numeric', minute: '2-digit', timeZoneName: 'short',
});

/** The five-field expression of the form's choice: `0 8 * * 1` is every Monday at 08:00. */
export function cronOf({ every, weekday, monthday, time }) {
  const [hour, minute] = time.split(':').map(Number);
  return `${minute} ${hour} ${every === 'month' ? Number(monthday) : '*'} * ${every === 'week' ? weekday : '*'}`;
}

/** "Every week on Monday at 08:00 (Europe/Paris)" for the expressions this form makes; others as they are. */
export function describeRecurrence({ cron, timezone }) {
  const [, minute, hour, day, weekday] = /^(\d+) (\d+) (\*|\d+) \* (\*|[0-7])$/.exec(cron) ?? [];
  const every = day === '*' && weekday === '*' ? 'Every day'
    : day === '*' ? `Every week on ${weekdayName(Number(weekday) % 7)}`
      : weekday === '*' ? `Every month on day ${day}` : null;
  const at = every && `${hour.padStart(2, '0')}:${minute.padStart(2, '0')}`;
  return `${every ? `${every} at ${at}` : cron} (${timezone})`;
}

/** The weekday's name in the browser's language (0 is Sunday: 7 January 2024 was one). */
export function weekdayName(day) {
  return new Intl.DateTimeFormat(undefined, { weekday: 'long', timeZone: 'UTC' }).format(Date.UTC(2024, 0, 7 + day));
}

/** "next run Monday, 5 January 2026 at 08:00" (the browser's clock), "paused" or "no further runs". */
export function whenText(schedule) {
  if (schedule.paused) return ['paused'];
  if (!schedule.next_run_at) return ['no further runs'];
  return ['next run ', el('time', { datetime: schedule.next_run_at }, DATE_TIME.format(new Date(schedule.next_run_at)))];
}

/**
 * `params` with the range's ends as `preset`'s expressions, set even where
 * the form has no such field (the preset says which dates the user wants);
 * without a preset, the form's values as they are.
 */
export function withDates(params, preset, range) {
  if (!preset) return params;
  return { ...params, [range.from]: { $date: preset.from }, [range.to]: { $date: preset.to } };
}

/** The preset whose expressions `params`' range ends are (errand keeps them as written), or null. */
function presetOf(params, range) {
  const same = (value, expression) => JSON.stringify(value) === JSON.stringify({ $date: expression });
  return DATE_PRESETS.find((preset) => same(params?.[range.from], preset.from) && same(params?.[range.to], preset.to)) ?? null;
}

/** A `{"$date": …}` or `{"$datetime": …}` value's expression ("today-7d"), or null for any other value. */
function expressionOf(value) {
  const keys = value !== null && typeof value === 'object' && !Array.isArray(value) ? Object.keys(value) : [];
  return keys.length === 1 && ['$date', '$datetime'].includes(keys[0]) ? String(value[keys[0]]) : null;
}

/** A param's value as text: a list's items joined, an expression as itself, another object as JSON (never "[object Object]"). */
function valueText(value) {
  if (Array.isArray(value)) return value.map(valueText).join(', ');
  if (value !== null && typeof value === 'object') return expressionOf(value) ?? JSON.stringify(value);
  return String(value ?? '');
}

/**
 * "from 2026-01-01 · to 2026-01-31", "previous week · status paid" or
 * "from today-14d · to today-1d": which of the form's runs this is, a
 * preset's range named as the "Dates" choice was, first.
 */
export function paramsText(params, range) {
  const preset = presetOf(params, range);
  const ends = preset ? [range.from, range.to] : [];
  const rest = Object.entries(params ?? {}).filter(([name]) => !ends.includes(name));
  return [...(preset ? [preset.text] : []), ...rest.map(([name, value]) => `${name} ${valueText(value)}`)].join(' · ');
}
