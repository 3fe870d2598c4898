// The demo page, errand.js and its components in a real Chromium against a
// real errand: `node --test tests/browser/` with ERRAND_BIN, DATABASE_URL (a
// fresh database), ERRAND_TEST_MAILDEV and ERRAND_TEST_PLAYWRIGHT set
// (scripts/test sets them). ERRAND_SCREENSHOTS=1 also writes the pictures in
// docs/screenshots/. Each test signs in its own user, so counts and job
// lists of one test never see another's.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';

import { ApiUser, Harness, TENANT, eventually, repoRoot } from './harness.mjs';
import {
  bellEntryIds, bellReady, exportLink, exportStatus, openBell, openSignedIn, preferenceCategories, preferenceMessage,
  preferenceToggle, recordEvents, submitTwiceAtOnce, waitForRecord, waitForUnreadCount,
} from './demo-page.mjs';

const screenshots = process.env.ERRAND_SCREENSHOTS === '1' ? path.join(repoRoot, 'docs/screenshots') : null;
const EXPORT = 'export_sales_report';
/** The demo's export button: its type and its form's id. */
const EXPORT_INTENT = 'export_sales_report:sales-export';
const PREFERENCES = '/me/notification-preferences';

/** @type {Harness} */
let harness;

before(async () => {
  harness = await Harness.start();
  if (screenshots) await mkdir(screenshots, { recursive: true });
});

after(async () => {
  await harness?.stop();
});

/** Clicks a download link and returns the bytes the browser saved. */
async function download(page, link) {
  const [saved] = await Promise.all([page.waitForEvent('download'), link.click()]);
  return readFile(await saved.path());
}

test('an export raises the bell live, and its link downloads the same bytes as the API', { timeout: 30_000 }, async () => {
  const context = await harness.browser.newContext({ viewport: { width: 1280, height: 800 } });
  const { page, problems } = await openSignedIn(harness, context, 'ann');
  const api = await harness.api('ann');
  await waitForUnreadCount(page, 0);
  // A mark that a reload would wipe: the count below must change on this very page.
  await page.evaluate(() => { window.notReloaded = true; });

  await page.getByRole('button', { name: 'Export CSV' }).click();
  await waitForUnreadCount(page, 1, 15_000);
  assert.equal(await page.evaluate(() => window.notReloaded), true, 'the count rose without a reload');

  const link = exportLink(page);
  await link.waitFor();
  const viaPage = await download(page, link);
  const { jobs } = await api.get(`/jobs?type=${EXPORT}`);
  assert.equal(jobs.length, 1);
  const viaApi = await api.resultBytes(jobs[0].id);
  assert.ok(viaApi.toString().startsWith('Sale ID,'), 'a CSV with its header');
  assert.ok(viaPage.equals(viaApi), `the page's download (${viaPage.length} bytes) equals the API's (${viaApi.length})`);

  if (screenshots) {
    await page.screenshot({ path: path.join(screenshots, 'demo.png') });
    await openBell(page);
    await page.locator('errand-bell li a.download').first().waitFor();
    await page.screenshot({ path: path.join(screenshots, 'demo-bell.png') });
  }
  assert.deepEqual(problems, []);
  await context.close();
});

test("while the operators pause exports the button says so instead of spinning, and the export runs once they resume", { timeout: 30_000 }, async () => {
  const context = await harness.browser.newContext();
  const { page, problems } = await openSignedIn(harness, context, 'pia');
  const operator = new ApiUser(harness.baseUrl, await harness.operatorToken('olga'));
  const pause = await operator.request('POST', '/admin/pauses', {
    body: { tenant: TENANT, type: EXPORT, reason: 'the sales database is being upgraded' },
  });
  try {
    await page.getByRole('button', { name: 'Export CSV' }).click();
    await exportStatus(page).filter({ hasText: 'Paused by the service' }).waitFor({ timeout: 10_000 });
    const { jobs } = await (await harness.api('pia')).get(`/jobs?type=${EXPORT}`);
    assert.deepEqual(jobs.map((job) => [job.status, job.state]), [['processing', 'paused']]);
  } finally {
    await operator.request('DELETE', `/admin/pauses/${pause.id}?ramp=0s`);
  }
  await exportLink(page).waitFor({ timeout: 15_000 });
  assert.deepEqual(problems, []);
  await context.close();
});

test('a double-click, a lost answer and a reload while the export runs make one job; the next export a new one', { timeout: 30_000 }, async () => {
  const context = await harness.browser.newContext();
  const { page, problems } = await openSignedIn(harness, context, 'ben');
  const api = await harness.api('ben');
  // The first answer is lost on its way back (errand made the job): the client must retry with the same key.
  const keys = [];
  await page.route(`**/jobs/${EXPORT}`, async (route) => {
    keys.push(route.request().headers()['idempotency-key']);
    if (keys.length > 1) return route.continue();
    await route.fetch();
    return route.abort('connectionreset');
  });
  const gate = await harness.holdTable('sales');
  let job;
  try {
    await page.getByRole('button', { name: 'Export CSV' }).dblclick();
    await exportStatus(page).getByText('Processing…').waitFor();
    // Running, and held mid-export by the lock: the reload happens while it runs.
    job = await eventually('the export to run', async () => {
      const { jobs } = await api.get(`/jobs?type=${EXPORT}`);
      return jobs.length === 1 && jobs[0].state === 'running' && jobs[0];
    });
    await page.reload();
    await bellReady(page);
    await exportStatus(page).getByText('Processing…').waitFor();
    // A fresh client after the reload, submitting twice at once: one shared request, the intent's key, the same job.
    assert.deepEqual(await submitTwiceAtOnce(page, EXPORT, job.params, EXPORT_INTENT), [job.id, job.id]);
  } finally {
    await gate.release();
  }
  await exportLink(page).waitFor({ timeout: 15_000 });
  const { jobs } = await api.get(`/jobs?type=${EXPORT}`);
  assert.deepEqual(jobs.map((j) => j.id), [job.id], 'one job');
  assert.equal(keys.length, 3, 'the lost answer retried once, the two submits after the reload shared one request');
  assert.equal(new Set(keys).size, 1, 'every request sent the same Idempotency-Key');

  // The intent's job has ended: the next export is a new job, under a new key.
  await page.getByRole('button', { name: 'New export' }).click();
  await page.getByRole('button', { name: 'Export CSV' }).click();
  await exportLink(page).waitFor({ timeout: 15_000 });
  assert.equal(keys.length, 4);
  assert.notEqual(keys[3], keys[0]);
  assert.equal((await api.get(`/jobs?type=${EXPORT}`)).jobs.length, 2);
  assert.deepEqual(problems, []);
  await context.close();
});

test('over its quota the export button says busy, retries with the same key when there is room, and makes one job', { timeout: 45_000 }, async () => {
  const context = await harness.browser.newContext();
  // A user of its own: the other tests count their users' notifications.
  const { page, problems } = await openSignedIn(harness, context, 'dee');
  const api = await harness.api('dee');
  const keys = [];
  await page.route(`**/jobs/${EXPORT}`, (route) => {
    keys.push(route.request().headers()['idempotency-key']);
    return route.continue();
  });
  // The shipped sales export allows each person 5 unfinished at once: dee
  // fills them, held mid-run by the lock, so the button's is refused (429).
  const gate = await harness.holdTable('sales');
  let earlier;
  try {
    earlier = await Promise.all(
      Array.from({ length: 5 }, (_, i) => api.submit(EXPORT, { from: '2026-01-01', to: `2026-01-0${i + 2}` })),
    );
    await page.locator('#from').fill('2026-02-01');
    await page.locator('#to').fill('2026-02-28');
    await page.getByRole('button', { name: 'Export CSV' }).click();
    await exportStatus(page).getByText(/^Busy, retrying in \d+ s/).waitFor({ timeout: 10_000 });
  } finally {
    await gate.release();
  }
  // The held exports end, one frees room, and the button's next try makes its job.
  await exportLink(page).waitFor({ timeout: 30_000 });
  assert.ok(keys.length >= 2, `refused, then retried: ${keys.length} requests`);
  assert.equal(new Set(keys).size, 1, 'every try sent the same Idempotency-Key');
  const { jobs } = await api.get(`/jobs?type=${EXPORT}&limit=100`);
  const fromButton = jobs.filter((job) => job.params.from === '2026-02-01');
  assert.equal(fromButton.length, 1, 'one job for the click');
  assert.equal(jobs.length, earlier.length + 1);
  assert.deepEqual(problems, []);
  await context.close();
});

test('two tabs agree on the unread count within a second of a read-mark in either', { timeout: 30_000 }, async () => {
  const api = await harness.api('cat');
  for (let i = 0; i < 3; i++) await api.submit('noop');
  const context = await harness.browser.newContext();
  const first = await openSignedIn(harness, context, 'cat');
  const second = await openSignedIn(harness, context, 'cat');
  await waitForUnreadCount(first.page, 3);
  await waitForUnreadCount(second.page, 3);

  // A person works in the tab in front; the other, in the background, must follow.
  await first.page.bringToFront();
  // Keyboard: Enter opens the dropdown with the focus inside, Escape closes it and gives the focus back.
  const toggle = first.page.locator('errand-bell button.toggle');
  await toggle.focus();
  await first.page.keyboard.press('Enter');
  assert.equal(await toggle.getAttribute('aria-expanded'), 'true');
  assert.equal(await first.page.evaluate(() => document.querySelector('errand-bell').shadowRoot.activeElement?.id), 'heading');
  await first.page.keyboard.press('Escape');
  assert.equal(await toggle.getAttribute('aria-expanded'), 'false');
  assert.equal(await first.page.evaluate(() => document.querySelector('errand-bell').shadowRoot.activeElement?.className), 'toggle');

  await openBell(first.page);
  const markedOne = first.page.waitForResponse((r) => /\/notifications\/[^/]+\/read$/.test(r.url()));
  await first.page.locator('errand-bell li.unread button.mark-read').first().click();
  await markedOne;
  await waitForUnreadCount(second.page, 2, 1_000);

  await second.page.bringToFront();
  await openBell(second.page);
  const markedAll = second.page.waitForResponse((r) => r.url().endsWith('/notifications/read-all'));
  await second.page.getByRole('button', { name: 'Mark all read' }).click();
  await markedAll;
  await waitForUnreadCount(first.page, 0, 1_000);
  await waitForUnreadCount(second.page, 0, 1_000);
  // The open list reads the feed again on the count's change: its entries turn read too.
  await first.page.waitForFunction(() => document.querySelector('errand-bell').shadowRoot.querySelectorAll('li.unread').length === 0);

  assert.deepEqual([...first.problems, ...second.problems], []);
  await context.close();
});

test('the stream resumes after errand restarts, with what came while it was down, once each', { timeout: 45_000 }, async () => {
  const api = await harness.api('dan');
  const context = await harness.browser.newContext();
  const { page, problems } = await openSignedIn(harness, context, 'dan');
  // Clients of their own in the page, whose events show repeats the bell's list would hide.
  await recordEvents(page, 'early');
  await waitForRecord(page, 'early', { opened: 1 });
  // Two ends within errand's two-second look-back: resuming after the newer repeats the older.
  await Promise.all([api.submit('noop'), api.submit('noop')]);
  await waitForUnreadCount(page, 2);
  await waitForRecord(page, 'early', { heard: 2 });
  // This one has heard nothing when errand stops: it resumes from where it started.
  await recordEvents(page, 'late');
  await waitForRecord(page, 'late', { opened: 1 });

  await harness.errand.stop();
  // While it is down, another errand process on the same database ends a job.
  const other = await harness.startAnotherErrand();
  const whileDown = await api.submit('noop', {}, { baseUrl: other.url });
  await api.waitForEnd(whileDown.id, { baseUrl: other.url });
  await other.stop();
  await harness.errand.start();
  await waitForRecord(page, 'early', { opened: 2 }, 35_000);
  await waitForRecord(page, 'late', { opened: 2 }, 35_000);
  await api.submit('noop');

  await waitForUnreadCount(page, 4, 10_000);
  const ids = (await api.get('/notifications')).notifications.map((n) => n.id);
  assert.equal(ids.length, 4);
  await openBell(page);
  await page.waitForFunction(() => document.querySelector('errand-bell').shadowRoot.querySelectorAll('li').length === 4);
  assert.deepEqual(await bellEntryIds(page), ids, 'each notification once in the list, newest first');
  const early = await waitForRecord(page, 'early', { heard: 4 });
  assert.deepEqual([...early.heard].sort(), [...ids].sort(), 'every notification heard once, the one from the downtime too');
  const late = await waitForRecord(page, 'late', { heard: 2 });
  assert.deepEqual([...late.heard].sort(), ids.slice(0, 2).sort(), 'from where it started: the downtime one and the new one');
  assert.deepEqual(problems, []);
  await context.close();
});

test("the completion email's link downloads the file in a fresh browser without a token", { timeout: 30_000 }, async () => {
  const context = await harness.browser.newContext();
  const { page, problems } = await openSignedIn(harness, context, 'eve');
  const api = await harness.api('eve');
  await page.getByRole('button', { name: 'Export CSV' }).click();
  await exportLink(page).waitFor({ timeout: 15_000 });
  const { jobs: [job] } = await api.get(`/jobs?type=${EXPORT}`);
  const email = await harness.mail.waitFor('the completion email', (e) => e.to?.some((to) => to.address === 'eve@example.com'));

  const link = email.text.match(/https?:\/\/\S+/)?.[0];
  assert.ok(link?.startsWith(`${harness.baseUrl}/links/jobs/${job.id}?`), `a signed link to the job, not ${link}`);

  // The HTML part, rendered as a mail client would: what, how big, until when, and the same link.
  const preview = await harness.browser.newPage({ viewport: { width: 720, height: 420 } });
  await preview.setContent(email.html);
  assert.equal(await preview.getByRole('link', { name: 'Download' }).getAttribute('href'), link);
  const shown = await preview.locator('body').innerText();
  for (const expected of [`${job.result.row_count.toLocaleString('en-US')} rows`, job.result.file_name, 'the link works until']) {
    assert.ok(shown.includes(expected), `the email shows ${expected}: ${shown}`);
  }
  if (screenshots) await preview.screenshot({ path: path.join(screenshots, 'email.png'), fullPage: true });
  await preview.close();

  const stranger = await harness.browser.newContext();
  const fresh = await stranger.newPage();
  const [saved] = await Promise.all([fresh.waitForEvent('download'), fresh.goto(link).catch(() => {})]);
  const bytes = await readFile(await saved.path());
  assert.ok(bytes.equals(await api.resultBytes(job.id)), 'the same file as the API gives');
  assert.deepEqual(problems, []);
  await stranger.close();
  await context.close();
});

test('the preferences grid lists the categories; Email turned off is saved, read back by the API and kept across a reload', { timeout: 30_000 }, async () => {
  const context = await harness.browser.newContext();
  const { page, problems } = await openSignedIn(harness, context, 'fay');
  const api = await harness.api('fay');
  const before = (await api.get(PREFERENCES)).categories;
  assert.ok(before.some((entry) => entry.category === EXPORT), `the shipped config has ${EXPORT}: ${JSON.stringify(before)}`);
  assert.deepEqual(await preferenceCategories(page), before.map((entry) => entry.category), 'one row per category, in name order');
  for (const heading of ['Category', 'In app', 'Email']) {
    await page.locator('errand-preferences').getByRole('columnheader', { name: heading }).waitFor();
  }

  // errand's answer is held until the checkbox has been seen disabled: a gate, not a sleep.
  let release;
  const held = new Promise((resolve) => { release = resolve; });
  await page.route(`**${PREFERENCES}/*`, async (route) => {
    await held;
    await route.continue();
  });
  const email = preferenceToggle(page, EXPORT, 'Email');
  assert.equal(await email.isChecked(), true, 'on by default');
  const saved = page.waitForResponse((r) => r.url().endsWith(`${PREFERENCES}/${EXPORT}`) && r.request().method() === 'PUT');
  await email.uncheck();
  assert.equal(await email.isDisabled(), true, 'disabled while saving');
  await preferenceMessage(page, EXPORT).getByText('Saving…').waitFor();
  release();
  assert.equal((await saved).status(), 200);
  await preferenceMessage(page, EXPORT).getByText('Saved').waitFor();
  assert.equal(await email.isDisabled(), false);
  assert.equal(await email.isChecked(), false);
  await page.unroute(`**${PREFERENCES}/*`);

  // What errand stores, read by the same user outside the page: only that channel of that category changed.
  const after = (await api.get(PREFERENCES)).categories;
  const expected = before.map((entry) => (entry.category === EXPORT
    ? { ...entry, channels: { ...entry.channels, email: false }, sources: { ...entry.sources, email: 'user' } }
    : entry));
  assert.deepEqual(after, expected);

  await page.reload();
  await bellReady(page);
  await preferenceCategories(page);
  assert.equal(await preferenceToggle(page, EXPORT, 'Email').isChecked(), false, 'still off after a reload');
  assert.equal(await preferenceToggle(page, EXPORT, 'In app').isChecked(), true);
  assert.deepEqual(problems, []);
  await context.close();
});

test('a change errand refuses puts the checkbox back, and its row says why', { timeout: 30_000 }, async () => {
  const context = await harness.browser.newContext();
  const { page, problems } = await openSignedIn(harness, context, 'gus');
  const api = await harness.api('gus');
  await preferenceCategories(page);
  // The page cannot send a value errand refuses for a category it lets people change:
  // the request is rewritten on its way, so that errand's own 422 comes back.
  await page.route(`**${PREFERENCES}/noop`, (route) => route.continue({ postData: JSON.stringify({ in_app: 'sometimes' }) }));
  const refused = page.waitForResponse((r) => r.url().endsWith(`${PREFERENCES}/noop`));
  const inApp = preferenceToggle(page, 'noop', 'In app');
  await inApp.click();
  assert.equal((await refused).status(), 422);
  await preferenceMessage(page, 'noop').getByText('in_app must be true or false').waitFor();
  assert.equal(await inApp.isChecked(), true, 'back as errand has it');
  assert.equal(await inApp.isDisabled(), false);
  const noop = (await api.get(PREFERENCES)).categories.find((entry) => entry.category === 'noop');
  assert.deepEqual(noop.channels, { in_app: true, email: true });
  assert.deepEqual(problems, []);
  await context.close();
});

test('an email read as a digest shows as on, in digest; unchecking turns it off', { timeout: 30_000 }, async () => {
  const context = await harness.browser.newContext();
  const api = await harness.api('ivy');
  await api.request('PUT', '/me/notification-settings', { body: { timezone: 'UTC', digest: { every: 'hour' } } });
  await api.request('PUT', `${PREFERENCES}/${EXPORT}`, { body: { email: 'digest' } });
  const { page, problems } = await openSignedIn(harness, context, 'ivy');
  await preferenceCategories(page);
  const email = preferenceToggle(page, EXPORT, 'Email');
  const note = page.locator(`errand-preferences tr[data-category="${EXPORT}"] [data-digest="email"]`);
  assert.equal(await email.isChecked(), true, 'a digest is on');
  await note.getByText('in digest').waitFor();
  assert.equal(await page.locator('errand-preferences [data-digest="email"]:not([hidden])').count(), 1, 'that category only');
  await email.uncheck();
  await preferenceMessage(page, EXPORT).getByText('Saved').waitFor();
  await note.waitFor({ state: 'hidden' });
  const exports = (await api.get(PREFERENCES)).categories.find((entry) => entry.category === EXPORT);
  assert.equal(exports.channels.email, false);
  assert.deepEqual(problems, []);
  await context.close();
});

// The harness makes `sleep` a required category (ERRAND_NOTIFICATIONS__PREFERENCES__REQUIRED).
test("a required category's checkboxes are checked and disabled, with a note", { timeout: 30_000 }, async () => {
  const context = await harness.browser.newContext();
  const { page, problems } = await openSignedIn(harness, context, 'hal');
  const api = await harness.api('hal');
  const sleep = (await api.get(PREFERENCES)).categories.find((entry) => entry.category === 'sleep');
  assert.equal(sleep.required, true, 'errand says sleep is required');
  await preferenceCategories(page);
  for (const channel of ['In app', 'Email']) {
    const toggle = preferenceToggle(page, 'sleep', channel);
    assert.equal(await toggle.isChecked(), true, `${channel} checked`);
    assert.equal(await toggle.isDisabled(), true, `${channel} disabled`);
    assert.equal(await preferenceToggle(page, EXPORT, channel).isDisabled(), false, 'other categories stay free');
  }
  await page.locator('errand-preferences tr[data-category="sleep"] th').getByText('required', { exact: true }).waitFor();
  assert.equal(await page.locator('errand-preferences tr[data-category="sleep"]').getByRole('checkbox', { name: '(required)' }).count(), 2);
  assert.deepEqual(problems, []);
  await context.close();
});

test("the elements take the tenant's colour, below the page's own --errand-accent", { timeout: 30_000 }, async () => {
  const admin = await harness.adminApi('ada');
  await admin.request('PUT', '/tenant/branding', { body: { name: 'Acme', primary_color: '#AA0000' } });
  const context = await harness.browser.newContext();
  try {
    const { page, problems } = await openSignedIn(harness, context, 'kim');
    await preferenceCategories(page);
    const accent = () => page.evaluate(() => {
      const box = document.querySelector('errand-preferences').shadowRoot.querySelector('input[type="checkbox"]');
      return getComputedStyle(box).accentColor;
    });
    await eventually('the tenant colour on the elements', async () => (await accent()) === 'rgb(170, 0, 0)');
    await page.evaluate(() => document.body.style.setProperty('--errand-accent', '#00aa00'));
    assert.equal(await accent(), 'rgb(0, 170, 0)', "the page's own accent wins");
    assert.deepEqual(problems, []);
  } finally {
    await admin.request('PUT', '/tenant/branding', { body: {} });
    await context.close();
  }
});
