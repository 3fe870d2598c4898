/**
 * @file How `<errand-schedule>` writes a recurrence and its params
 * (`/client/elements/recurrence.js`): the cron expression of the form's
 * choice and that expression in words again, the next run on the
 * browser's clock, and the "Dates" presets: a range's ends sent as
 * `{"$date": …}` params, recognised again in a schedule's params, which
 * are shown as text. No element state: `./schedule.js` draws with these,
 * in the words and the locale of its client's messages (`../core/messages.js`).
 */

import { el } from '../core/dom.js';

/** Cron's weekdays (0 is Sunday), in the order the form lists them. */
export const WEEKDAYS = [1, 2, 3, 4, 5, 6, 0];
/**
 * The "Dates" choices beside "As in the form": the range's ends sent as
 * `{"$date": …}` expressions, which errand resolves for each occurrence on
 * the schedule's wall clock (weeks from Monday), so that a weekly export
 * covers the week before each run rather than the dates the page's form
 * held when the schedule was made. `label` is the message of its choice in
 * the list, `text` the one naming the pair in the list of schedules.
 */
export const DATE_PRESETS = [
  { value: 'last_7_days', label: 'ui-schedule-dates-last-7-days', text: 'ui-schedule-range-last-7-days', from: 'today-7d', to: 'today-1d' },
  {
    value: 'previous_week', label: 'ui-schedule-dates-previous-week', text: 'ui-schedule-range-previous-week',
    from: 'start_of_previous_week', to: 'end_of_previous_week',
  },
  {
    value: 'previous_month', label: 'ui-schedule-dates-previous-month', text: 'ui-schedule-range-previous-month',
    from: 'start_of_previous_month', to: 'end_of_previous_month',
  },
];
/** @type {Map<string, Intl.DateTimeFormat>} the next run's format, by locale */
const DATE_TIMES = new Map();

/** The next run on the browser's clock in `locale`, its zone named: the schedule's own zone may be another. */
function dateTimeFormat(locale) {
  const key = locale ?? '';
  if (!DATE_TIMES.has(key)) {
    DATE_TIMES.set(key, new Intl.DateTimeFormat(locale, {
      weekday: 'long', year: 'numeric', month: 'long', day: 'numeric', hour: 'numeric', minute: '2-digit', timeZoneName: 'short',
    }));
  }
  return DATE_TIMES.get(key);
}

/** The five-field expression of the form's choice: `0 8 * * 1` is every Monday at 08:00. */
export function cronOf({ every, weekday, monthday, time }) {
  const [hour, minute] = time.split(':').map(Number);
  return `${minute} ${hour} ${every === 'month' ? Number(monthday) : '*'} * ${every === 'week' ? weekday : '*'}`;
}

/**
 * "Every week on Monday at 08:00 (Europe/Paris)" for the expressions this
 * form makes, in `messages`' words; others as they are, with their zone.
 * @param {{cron: string, timezone: string}} schedule
 * @param {import('../core/messages.js').Messages} messages
 */
export function describeRecurrence({ cron, timezone }, messages) {
  const [, minute, hour, day, weekday] = /^(\d+) (\d+) (\*|\d+) \* (\*|[0-7])$/.exec(cron) ?? [];
  if (minute === undefined) return messages.t('ui-schedule-recurrence-cron', { cron, timezone });
  const time = `${hour.padStart(2, '0')}:${minute.padStart(2, '0')}`;
  if (day === '*' && weekday === '*') return messages.t('ui-schedule-recurrence-day', { time, timezone });
  if (day === '*') {
    return messages.t('ui-schedule-recurrence-week', { weekday: weekdayName(Number(weekday) % 7, messages.locale), time, timezone });
  }
  if (weekday === '*') return messages.t('ui-schedule-recurrence-month', { day, time, timezone });
  return messages.t('ui-schedule-recurrence-cron', { cron, timezone });
}

/** The weekday's name in `locale` (default: the browser's language; 0 is Sunday: 7 January 2024 was one). */
export function weekdayName(day, locale = undefined) {
  return new Intl.DateTimeFormat(locale, { weekday: 'long', timeZone: 'UTC' }).format(Date.UTC(2024, 0, 7 + day));
}

/**
 * "next run Monday, 5 January 2026 at 08:00" (the browser's clock, in
 * `messages`' locale), "paused" or "no further runs", as parts for `el()`.
 * @param {object} schedule
 * @param {import('../core/messages.js').Messages} messages
 * @returns {Array<string|Node>}
 */
export function whenText(schedule, messages) {
  if (schedule.paused) return messages.parts('ui-schedule-paused');
  if (!schedule.next_run_at) return messages.parts('ui-schedule-no-more-runs');
  const time = el('time', { datetime: schedule.next_run_at }, dateTimeFormat(messages.locale).format(new Date(schedule.next_run_at)));
  return messages.parts('ui-schedule-next-run', { time });
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
 * preset's range named as the "Dates" choice was (in `messages`' words),
 * first. The params' names and values are the form's, shown as they are.
 */
export function paramsText(params, range, messages) {
  const preset = presetOf(params, range);
  const ends = preset ? [range.from, range.to] : [];
  const rest = Object.entries(params ?? {}).filter(([name]) => !ends.includes(name));
  return [...(preset ? [messages.t(preset.text)] : []), ...rest.map(([name, value]) => `${name} ${valueText(value)}`)].join(' · ');
}
