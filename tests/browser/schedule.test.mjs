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

/** Opens "Repeat every…" and chooses a frequency, a time and a zone (weekly on `weekday` when given). */
async function choose(page, { every, weekday, time, timezone }) {
  const element = page.locator('errand-schedule');
  const toggle = element.getByRole('button', { name: 'Repeat every…' });
  if ((await toggle.getAttribute('aria-expanded')) !== 'true') await toggle.click();
  await element.getByLabel('Repeat', { exact: true }).selectOption({ label: every });
  if (weekday) await element.getByLabel('Weekday', { exact: true }).selectOption({ label: weekday });
  await element.getByLabel('Time', { exact: true }).fill(time);
  await element.getByLabel('Time zone', { exact: true }).fill(timezone);
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
