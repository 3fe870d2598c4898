// The demo page's "Repeat every…" (`<errand-schedule>`) in a real Chromium
// against a real errand: `node --test tests/browser/schedule.test.mjs`, with
// the environment of the demo page's tests (see demo.test.mjs). Schedules
// are read back through the API as the same user. No demo data is seeded:
// making a schedule runs no export, and demo.test.mjs (which may share the
// database) seeds its own.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';

import { Harness, eventually } from './harness.mjs';
import { openSignedIn } from './demo-page.mjs';

const EXPORT = 'export_sales_report';

/** @type {Harness} */
let harness;

before(async () => {
  harness = await Harness.start({ seed: false });
});

after(async () => {
  await harness?.stop();
});

/** Opens "Repeat every…" and chooses a frequency, a time and a zone (weekly on `weekday`, and `dates`, when given). */
async function choose(page, { every, weekday, time, timezone, dates }) {
  const element = page.locator('errand-schedule');
  const toggle = element.getByRole('button', { name: 'Repeat every…' });
  if ((await toggle.getAttribute('aria-expanded')) !== 'true') await toggle.click();
  await element.getByLabel('Repeat', { exact: true }).selectOption({ label: every });
  if (weekday) await element.getByLabel('Weekday', { exact: true }).selectOption({ label: weekday });
  await element.getByLabel('Time', { exact: true }).fill(time);
  await element.getByLabel('Time zone', { exact: true }).fill(timezone);
  if (dates) await element.getByLabel('Dates', { exact: true }).selectOption({ label: dates });
}

/** The text of `locator` once `expected` matches it. */
function waitForText(what, locator, expected) {
  return eventually(what, async () => {
    const text = await locator.textContent();
    return expected.test(text) && text;
  });
}

/** The wall-clock weekday and time of `iso` in `timeZone`, e.g. "Monday 08:00". */
function wallClock(iso, timeZone) {
  const format = new Intl.DateTimeFormat('en-US', { timeZone, weekday: 'long', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
  return format.format(new Date(iso)).replace(',', '');
}

test('every Monday at 08:00 in Paris: a double-click and a lost answer make one schedule, which pauses, resumes and goes', { timeout: 30_000 }, async () => {
  const context = await harness.browser.newContext({ locale: 'en-US' });
  const { page, problems } = await openSignedIn(harness, context, 'sid');
  const api = await harness.api('sid');
  // The first answer is lost on its way back (errand made the schedule): the retry must send the same key.
  const keys = [];
  await page.route(`**/schedules/${EXPORT}`, async (route) => {
    keys.push(route.request().headers()['idempotency-key']);
    if (keys.length > 1) return route.continue();
    await route.fetch();
    return route.abort('connectionreset');
  });
  const replayed = page.waitForResponse((r) => r.url().endsWith(`/schedules/${EXPORT}`) && r.status() === 200);

  await choose(page, { every: 'Every week', weekday: 'Monday', time: '08:00', timezone: 'Europe/Paris' });
  await page.locator('errand-schedule').getByRole('button', { name: 'Schedule', exact: true }).dblclick();
  const made = page.locator('errand-schedule p.result');
  await waitForText('"Scheduled: next run"', made.getByRole('status'), /^Scheduled: next run \S/);
  assert.equal((await replayed).headers()['idempotent-replayed'], 'true');

  const { schedules } = await api.get('/schedules');
  assert.equal(schedules.length, 1, 'one schedule for the double-click and the retry');
  assert.deepEqual(keys, [keys[0], keys[0]], 'one request for the double-click, retried once under the same key');
  const [schedule] = schedules;
  const fields = await page.evaluate(() => Object.fromEntries(
    [...new FormData(document.getElementById('sales-export'))].filter(([, value]) => value !== '')));
  assert.ok(fields.from && fields.to, `the form's range: ${JSON.stringify(fields)}`);
  assert.deepEqual(
    { type: schedule.type, cron: schedule.cron, timezone: schedule.timezone, params: schedule.params, paused: schedule.paused },
    { type: EXPORT, cron: '0 8 * * 1', timezone: 'Europe/Paris', params: fields, paused: false },
  );
  assert.equal(wallClock(schedule.next_run_at, 'Europe/Paris'), 'Monday 08:00');
  assert.equal(await made.locator('time').getAttribute('datetime'), schedule.next_run_at, 'the next run shown is errand\'s');

  // The list below shows it, with its own buttons.
  const row = page.locator(`errand-schedule li[data-id="${schedule.id}"]`);
  await waitForText('the schedule in the list', row, /Every week on Monday at 08:00 \(Europe\/Paris\).*next run/);

  await made.getByRole('button', { name: 'Pause' }).click();
  await eventually('paused in the API', async () => (await api.get(`/schedules/${schedule.id}`)).paused === true);
  await waitForText('"paused" shown', made.getByRole('status'), /^Scheduled: paused$/);
  await row.getByRole('button', { name: 'Resume' }).waitFor();

  await row.getByRole('button', { name: 'Resume' }).click();
  await eventually('resumed in the API', async () => (await api.get(`/schedules/${schedule.id}`)).paused === false);
  await made.getByRole('button', { name: 'Pause' }).waitFor();

  await made.getByRole('button', { name: 'Delete' }).click();
  await eventually('deleted in the API', async () => (await api.get('/schedules')).schedules.length === 0);
  await waitForText('"Deleted." shown', made.getByRole('status'), /^Deleted\.$/);
  await row.waitFor({ state: 'detached' });
  assert.deepEqual(problems, []);
  await context.close();
});

test('a time zone errand does not know shows its refusal, naming the field, and makes no schedule', { timeout: 30_000 }, async () => {
  const context = await harness.browser.newContext({ locale: 'en-US' });
  const { page, problems } = await openSignedIn(harness, context, 'tia');
  const api = await harness.api('tia');
  await choose(page, { every: 'Every day', time: '07:30', timezone: 'Europe/Atlantis' });
  const answer = page.waitForResponse((r) => r.url().endsWith(`/schedules/${EXPORT}`));
  await page.locator('errand-schedule').getByRole('button', { name: 'Schedule', exact: true }).click();
  const response = await answer;
  const problem = await response.json();
  assert.equal(response.status(), 422);
  assert.equal(problem.code, 'invalid_schedule');
  assert.equal(problem.field, 'timezone');

  const shown = await waitForText('the refusal', page.locator('errand-schedule [role="alert"]'), /\S/);
  assert.match(shown, /timezone/, 'the field is named');
  assert.ok(shown.includes(problem.detail), `errand's detail shown: ${shown}`);
  const zone = page.locator('errand-schedule').getByLabel('Time zone', { exact: true });
  assert.equal(await zone.getAttribute('aria-invalid'), 'true');
  assert.equal(await page.locator('errand-schedule p.result').isHidden(), true);
  assert.deepEqual((await api.get('/schedules')).schedules, []);

  // Put right, the same form makes the schedule.
  await zone.fill('Europe/Paris');
  assert.equal(await zone.getAttribute('aria-invalid'), null, 'the mark goes with the edit');
  await page.locator('errand-schedule').getByRole('button', { name: 'Schedule', exact: true }).click();
  await waitForText('"Scheduled: next run"', page.locator('errand-schedule p.result [role="status"]'), /^Scheduled: next run \S/);
  const [schedule] = (await api.get('/schedules')).schedules;
  assert.deepEqual([schedule.cron, schedule.timezone], ['30 7 * * *', 'Europe/Paris']);
  assert.equal(await page.locator('errand-schedule [role="alert"]').textContent(), '');
  assert.deepEqual(problems, []);
  await context.close();
});

test('"Previous week" sends the range as date expressions, under a new key once the choice changed, and the list names it', { timeout: 30_000 }, async () => {
  const context = await harness.browser.newContext({ locale: 'en-US' });
  const api = await harness.api('pia');
  // Made beforehand through the API: a range that is no preset shows as its expressions.
  const own = await api.request('POST', `/schedules/${EXPORT}`, {
    body: { params: { from: { $date: 'today-14d' }, to: { $date: 'today-1d' } }, cron: '0 6 * * *', timezone: 'UTC' },
    headers: { 'Idempotency-Key': crypto.randomUUID() },
  });
  const { page, problems } = await openSignedIn(harness, context, 'pia');
  const ownRow = page.locator(`errand-schedule li[data-id="${own.id}"]`);
  await waitForText('the expressions in the list', ownRow.locator('.params'), /^from today-14d · to today-1d$/);

  // The first request reaches errand with an expression it does not know, as if the preset were wrong: its refusal names the field.
  const sent = [];
  await page.route(`**/schedules/${EXPORT}`, (route) => {
    const request = route.request();
    sent.push({ key: request.headers()['idempotency-key'], body: request.postDataJSON() });
    if (sent.length > 1) return route.continue();
    const body = request.postDataJSON();
    return route.continue({ postData: JSON.stringify({ ...body, params: { ...body.params, from: { $date: 'start_of_fortnight' } } }) });
  });
  // A preset stands for the form's range: its dates may be left empty, though required.
  await page.locator('#from').fill('');
  await page.locator('#to').fill('');

  await choose(page, { every: 'Every week', weekday: 'Monday', time: '08:00', timezone: 'Europe/Paris', dates: 'Last 7 days' });
  const schedule = page.locator('errand-schedule').getByRole('button', { name: 'Schedule', exact: true });
  await schedule.click();
  await waitForText('the refusal', page.locator('errand-schedule [role="alert"]'), /\/params\/from/);
  const dates = page.locator('errand-schedule').getByLabel('Dates', { exact: true });
  assert.equal(await dates.getAttribute('aria-invalid'), 'true', 'the preset sent the field errand named');
  assert.deepEqual(sent[0].body.params, { from: { $date: 'today-7d' }, to: { $date: 'today-1d' } }, 'what "Last 7 days" sent');

  await dates.selectOption({ label: 'Previous week' });
  assert.equal(await dates.getAttribute('aria-invalid'), null, 'the mark goes with the change');
  await schedule.click();
  await waitForText('"Scheduled: next run"', page.locator('errand-schedule p.result [role="status"]'), /^Scheduled: next run \S/);
  assert.equal(sent.length, 2);
  assert.notEqual(sent[1].key, sent[0].key, 'another preset is another request: a new key');
  const range = { from: { $date: 'start_of_previous_week' }, to: { $date: 'end_of_previous_week' } };
  assert.deepEqual(sent[1].body.params, range, 'the form\'s empty dates are not sent, the preset\'s are');

  const made = (await api.get('/schedules')).schedules.find((s) => s.id !== own.id);
  assert.deepEqual(
    { cron: made.cron, timezone: made.timezone, params: made.params },
    { cron: '0 8 * * 1', timezone: 'Europe/Paris', params: range },
    'errand keeps the expressions as written',
  );
  const row = page.locator(`errand-schedule li[data-id="${made.id}"]`);
  const shown = await waitForText('the preset named in the list', row.locator('.params'), /\S/);
  assert.equal(shown, 'previous week');
  assert.doesNotMatch(await page.locator('errand-schedule ul').textContent(), /object Object/);
  assert.deepEqual(problems, []);
  await context.close();
});
