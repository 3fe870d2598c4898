// The operators' console (`/admin`) in a real Chromium against a real
// errand: `node --test tests/browser/admin.test.mjs`, with the environment
// of the demo page's tests (see demo.test.mjs). ERRAND_SCREENSHOTS=1 also
// writes docs/screenshots/admin-jobs.png and admin-job.png.
//
// Every test submits jobs as users of its own (`ops-…`), and filters on
// them, so one test's jobs never show in another's list; the overview's
// counts are global, so the test that watches them compares with where they
// started. No demo data is seeded: the console needs none, and the demo
// page's tests (which may share the database) seed theirs.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';

import { ApiUser, Harness, repoRoot } from './harness.mjs';
import { watchProblems } from './demo-page.mjs';
import {
  focusedJobId, goTo, jobFact, openConsole, overviewCount, rowCells, rowIds, waitForOverviewCount, waitForRows,
} from './admin-page.mjs';

const screenshots = process.env.ERRAND_SCREENSHOTS === '1' ? path.join(repoRoot, 'docs/screenshots') : null;
/** Fails both of its attempts (the harness allows `sleep` two), every run. */
const FAILING = { ms: 0, fail_times: 5 };

/** @type {Harness} */
let harness;

before(async () => {
  harness = await Harness.start({ seed: false });
  if (screenshots) await mkdir(screenshots, { recursive: true });
});

after(async () => {
  await harness?.stop();
});

/** Submits `count` jobs of `type` as `api`, waits until every one has ended, and returns them. */
async function ended(api, count, type, params) {
  const jobs = await Promise.all(Array.from({ length: count }, () => api.submit(type, params)));
  return Promise.all(jobs.map((job) => api.waitForEnd(job.id)));
}

/** An operator calling the `/admin` API directly (to set up or tidy up). */
async function operatorApi(name) {
  return new ApiUser(harness.baseUrl, await harness.operatorToken(name));
}

test('an operator signs in with a link, filters to one tenant\'s failed jobs of one type, and reads a job\'s attempts', { timeout: 60_000 }, async () => {
  const mine = await harness.api('ops-filter');
  const failed = await ended(mine, 3, 'sleep', FAILING);
  // Near misses: the same type failing in another tenant, and other jobs of this user that completed.
  await ended(await harness.tenantApi('demo-2', 'ops-filter'), 2, 'sleep', FAILING);
  await ended(mine, 2, 'noop', {});
  assert.ok(failed.every((job) => job.status === 'failed' && job.attempts === 2));

  const context = await harness.browser.newContext({ viewport: { width: 1280, height: 800 } });
  const { page, problems } = await openConsole(harness, context, 'olga');
  assert.ok(!page.url().includes('token'), `the token left the address: ${page.url()}`);
  assert.ok(await overviewCount(page, 'failed') >= 5, 'the overview counts every tenant\'s failed jobs');

  await page.getByRole('link', { name: 'Jobs', exact: true }).click();
  const form = page.getByRole('form', { name: 'Job filters' });
  await form.getByLabel('Status').selectOption('failed');
  await form.getByLabel('Type', { exact: true }).fill('sleep');
  await form.getByLabel('Tenant').fill('demo-1');
  await form.getByLabel('User', { exact: true }).fill('ops-filter');
  await form.getByRole('button', { name: 'Apply' }).click();
  const ids = failed.map((job) => job.id);
  await waitForRows(page, ids);
  const hash = await page.evaluate(() => location.hash);
  for (const part of ['status=failed', 'type=sleep', 'tenant=demo-1', 'user=ops-filter']) assert.ok(hash.includes(part), hash);

  // The filter lives in the address: a reload (the token stays in the tab) shows the same rows.
  await page.reload();
  await waitForRows(page, ids);
  assert.equal(await page.getByLabel('Status').inputValue(), 'failed', 'the form shows the filter again');

  const [first] = await rowIds(page);
  await page.locator(`tr[data-job-id="${first}"] a`).click();
  const attempts = page.locator('ol[aria-label="Attempts"] li[data-outcome="failed"]');
  await attempts.nth(1).waitFor();
  const job = failed.find((j) => j.id === first);
  assert.equal(await attempts.count(), job.attempts);
  assert.match(await attempts.nth(1).textContent(), /Run 1 · attempt 2/);
  assert.match(await attempts.nth(1).textContent(), /planned failure 2 of 5/);
  assert.equal(await page.locator('[data-field="error"]').textContent(), 'planned failure 2 of 5');
  assert.equal(await jobFact(page, 'Priority'), String(job.priority), 'the priority errand gave it');
  assert.equal(await jobFact(page, 'Format'), null, 'no format for a job that is no export');
  assert.deepEqual(problems, []);
  await context.close();
});

test('an export\'s detail and row show its priority and format', { timeout: 60_000 }, async () => {
  const mine = await harness.api('ops-format');
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const submitted = await mine.request('POST', '/jobs/export_sales_report?format=xlsx&priority=2', {
    body: { from: '2026-01-01', to: '2026-01-31' },
    headers: { 'Idempotency-Key': crypto.randomUUID(), traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
  });
  // Waited for, so that no later test's overview counts see it end. With no demo data seeded it fails (errand's log
  // warns that the sales table is missing, three times): its priority and format show all the same.
  const job = await mine.waitForEnd(submitted.id);
  assert.deepEqual([job.priority, job.format], [2, 'xlsx'], 'an interactive job moved by its request, in the format asked');
  const context = await harness.browser.newContext();
  const { page, problems } = await openConsole(harness, context, 'olga');

  await goTo(page, '#/jobs?tenant=demo-1&user=ops-format');
  await waitForRows(page, [job.id]);
  assert.equal((await rowCells(page, job.id)).Priority, '2');

  // Each attempt's log: the export says what it did and why it stopped.
  const operator = await operatorApi('olga');
  const logged = async () => (await operator.get(`/admin/jobs/${job.id}`)).history.attempts.every((a) => a.logs.length >= 2);
  for (let tries = 0; !(await logged()); tries += 1) {
    assert.ok(tries < 100, 'every attempt\'s lines are written within 10 s');
    await new Promise((resolve) => { setTimeout(resolve, 100); });
  }
  await page.locator(`tr[data-job-id="${job.id}"] a`).click();
  await page.locator('.job-head').getByText(job.id).waitFor();
  assert.equal(await jobFact(page, 'Priority'), '2');
  assert.equal(await jobFact(page, 'Format'), 'xlsx');
  // The click's trace (its traceparent, passed on as it came: this errand exports no spans), one click away.
  const trace = page.locator('[data-field="trace"] a');
  assert.equal(await trace.getAttribute('href'), `https://traces.example.com/trace/${traceId}`);
  const log = page.locator('details.attempt-log').first();
  await log.locator('summary').click();
  const lines = log.getByRole('list', { name: 'Log of run 1, attempt 1' }).getByRole('listitem');
  assert.match(await lines.nth(0).innerText(), /info running the query \{"format":"xlsx"\}$/);
  assert.match(await lines.nth(1).innerText(), /error stopped: /);
  assert.deepEqual(problems, []);
  await context.close();
});

test('"Retry all matching…" counts, confirms and retries in batches; the overview follows without a reload, and the audit shows it', { timeout: 90_000 }, async () => {
  const mine = await harness.api('ops-bulk');
  // Slow enough that the retried run is seen unfinished by the overview's two-second poll.
  const failed = await ended(mine, 7, 'sleep', { ms: 1000, fail_times: 5 });
  const context = await harness.browser.newContext({ viewport: { width: 1280, height: 800 } });
  const { page, problems } = await openConsole(harness, context, 'olga');
  const failedBefore = await overviewCount(page, 'failed');
  // A mark that a reload would wipe: everything below happens on this very page.
  await page.evaluate(() => { window.notReloaded = true; });

  await goTo(page, '#/jobs?status=failed&type=sleep&tenant=demo-1&user=ops-bulk');
  await waitForRows(page, failed.map((job) => job.id));
  // Batches of 3 instead of the page's 500, so that the run follows next_after across three requests.
  const batches = [];
  await page.route('**/admin/jobs/retry', (route) => {
    const body = JSON.parse(route.request().postData());
    if (body.dry_run) return route.continue();
    batches.push(body);
    return route.continue({ postData: JSON.stringify({ ...body, limit: 3 }) });
  });
  await page.getByRole('button', { name: 'Retry all matching…' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.waitFor();
  assert.match(await dialog.textContent(), /Retry 7 failed jobs matching .*type=sleep/);
  await dialog.getByRole('button', { name: 'Retry 7 jobs' }).click();
  await page.locator('[data-bulk-status]').getByText('Retried 7 jobs.', { exact: true }).waitFor({ timeout: 15_000 });
  assert.deepEqual(await page.locator('.bulk progress').evaluate((bar) => [bar.value, bar.max]), [7, 7]);
  assert.ok(batches.length >= 3, `three batches at least: ${JSON.stringify(batches)}`);
  assert.equal(batches[0].after, undefined, 'the first batch starts at the beginning');
  assert.ok(batches.slice(1).every((body) => body.after), 'each next batch starts after the last');
  assert.equal(batches[0].user, 'ops-bulk', 'the list\'s filter, without its status');
  assert.equal(batches[0].status, undefined);
  assert.equal(await dialog.count(), 0, 'the dialog closed');

  // Live: the retried jobs leave the failed count while they run again, and come back when they fail again.
  await goTo(page, '#/');
  await waitForOverviewCount(page, 'failed', 'below', failedBefore);
  await waitForOverviewCount(page, 'failed', 'equal', failedBefore, 30_000);
  assert.equal(await page.evaluate(() => window.notReloaded), true, 'no reload');

  const detail = await (await operatorApi('olga')).get(`/admin/jobs/${failed[0].id}`);
  assert.ok(detail.history.attempts.some((a) => a.run === 2), 'a second run was made');

  await goTo(page, '#/audit?action=bulk_retry&operator=olga');
  const row = page.locator('table[aria-label="Operator actions"] tr[data-action="bulk_retry"]').first();
  await row.waitFor();
  assert.match(await row.textContent(), /olga/);
  assert.match(await row.textContent(), /ops-bulk/, 'the filter it used');
  assert.equal(await page.evaluate(() => window.notReloaded), true, 'no reload');
  assert.deepEqual(problems, []);
  await context.close();
});

test('a read-only operator signs in with a pasted token, sees jobs and details but no action, and errand refuses one anyway', { timeout: 60_000 }, async () => {
  const mine = await harness.api('ops-read');
  const [failed] = await ended(mine, 1, 'sleep', FAILING);
  const running = await mine.submit('sleep', { ms: 30_000 });
  const context = await harness.browser.newContext();
  const page = await context.newPage();
  const problems = watchProblems(page);
  await page.goto(`${harness.baseUrl}/admin`);

  // A token errand does not accept: signed out still, saying why.
  const tokenBox = page.getByLabel('Operator token');
  await tokenBox.fill('not-a-token');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('#signed-out-reason').getByText(/did not accept|refused/).waitFor();
  assert.equal(await tokenBox.isVisible(), true);

  await tokenBox.fill(await harness.operatorToken('rita', { readOnly: true }));
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('#who').getByText('rita', { exact: true }).waitFor();
  assert.equal(await page.locator('#read-only').isVisible(), true, 'a read-only badge');

  await goTo(page, '#/jobs?status=failed&type=sleep&tenant=demo-1&user=ops-read');
  await waitForRows(page, [failed.id]);
  const noActions = async () => {
    for (const name of ['Retry', 'Cancel job', 'Retry all matching…', 'Cancel all matching…', 'Retry selected', 'Cancel selected']) {
      assert.equal(await page.getByRole('button', { name, exact: true }).count(), 0, `no ${name} button`);
    }
    assert.equal(await page.locator('input[type="checkbox"]').count(), 0, 'no selection checkboxes');
  };
  await noActions();

  await page.locator(`tr[data-job-id="${failed.id}"] a`).click();
  await page.locator('li[data-outcome="failed"]').first().waitFor();
  await noActions();
  await goTo(page, `#/jobs/${running.id}`);
  await page.locator('.job-head').getByText(running.id).waitFor();
  await noActions();

  const status = await page.evaluate(async (id) => {
    const token = sessionStorage.getItem('errand-admin:token');
    const response = await fetch(`/admin/jobs/${id}/retry`, { method: 'POST', headers: { Authorization: `Bearer ${token}` } });
    return response.status;
  }, failed.id);
  assert.equal(status, 403);
  assert.deepEqual(problems, []);
  await context.close();
  await (await operatorApi('olga')).request('POST', `/admin/jobs/${running.id}/cancel`);
});

test('the list is driven from the keyboard: arrows, j/k, Home/End move between rows, Space selects, Enter opens', { timeout: 60_000 }, async () => {
  await ended(await harness.api('ops-keys'), 4, 'noop', {});
  const context = await harness.browser.newContext();
  const { page, problems } = await openConsole(harness, context, 'olga');
  await goTo(page, '#/jobs?tenant=demo-1&user=ops-keys');
  await page.locator('table[aria-label="Jobs"] tr[data-job-id]').nth(3).waitFor();
  const ids = await rowIds(page);
  assert.equal(ids.length, 4);
  assert.equal(await page.locator('tr[data-job-id][tabindex="0"]').count(), 1, 'one row in the tab order');

  await page.locator(`tr[data-job-id="${ids[0]}"]`).focus();
  const steps = [['ArrowDown', 1], ['j', 2], ['k', 1], ['End', 3], ['ArrowUp', 2], ['Home', 0]];
  for (const [key, at] of steps) {
    await page.keyboard.press(key);
    assert.equal(await focusedJobId(page), ids[at], `${key} focuses row ${at}`);
  }
  assert.equal(await page.locator(`tr[data-job-id="${ids[0]}"]`).getAttribute('tabindex'), '0', 'the focused row is the one Tab comes back to');

  const box = page.getByRole('checkbox', { name: `Select job ${ids[0]}` });
  await page.keyboard.press(' ');
  assert.equal(await box.isChecked(), true, 'Space selects');
  assert.equal(await page.getByRole('button', { name: /^Retry selected/ }).isEnabled(), true);
  await page.keyboard.press(' ');
  assert.equal(await box.isChecked(), false, 'Space again unselects');
  assert.equal(await page.getByRole('button', { name: /^Retry selected/ }).isDisabled(), true);

  await page.keyboard.press('End');
  await page.keyboard.press('Enter');
  await page.waitForFunction((id) => location.hash === `#/jobs/${id}`, ids[3]);
  await page.locator('.job-head').getByText(ids[3]).waitFor();
  assert.deepEqual(problems, []);
  await context.close();
});

test('"Retry selected" goes job by job and says which were not retryable; a job\'s Retry starts a new run', { timeout: 60_000 }, async () => {
  const mine = await harness.api('ops-select');
  const failed = await ended(mine, 2, 'sleep', FAILING);
  const [completed] = await ended(mine, 1, 'noop', {});
  const context = await harness.browser.newContext();
  const { page, problems } = await openConsole(harness, context, 'olga');
  await goTo(page, '#/jobs?tenant=demo-1&user=ops-select');
  await waitForRows(page, [...failed, completed].map((job) => job.id));
  const retrySelected = page.getByRole('button', { name: /^Retry selected/ });
  assert.equal(await retrySelected.isDisabled(), true, 'nothing selected yet');
  for (const job of [...failed, completed]) await page.getByRole('checkbox', { name: `Select job ${job.id}` }).check();
  await retrySelected.click();
  await page.getByText('Retried 2, 1 not retryable.', { exact: true }).waitFor();

  await goTo(page, `#/jobs/${completed.id}`);
  await page.locator('.job-head').getByText(completed.id).waitFor();
  assert.equal(await page.getByRole('button', { name: 'Retry', exact: true }).count(), 0, 'a completed job has no Retry');
  // The retried job fails again at once (the same params): then its own Retry makes run 3.
  await mine.waitForEnd(failed[0].id);
  await goTo(page, `#/jobs/${failed[0].id}`);
  await page.locator('li[data-outcome="failed"]').nth(3).waitFor();
  await page.getByRole('button', { name: 'Retry', exact: true }).click();
  await page.getByText('Retried: the job is back in the queue as a new run.').waitFor();
  // Followed by the view's poll: run 3's attempts appear, and the action in its history.
  await page.locator('li[data-outcome="failed"]', { hasText: 'Run 3 · attempt 2' }).waitFor({ timeout: 15_000 });
  await page.locator('table[aria-label="Operator actions"]').getByText('retry', { exact: true }).first().waitFor();
  assert.deepEqual(problems, []);
  await context.close();
});

test('markup in params and names shows as text, in the detail and in the list', { timeout: 60_000 }, async () => {
  const markup = '<img src=x onerror=window.pwned=1><b>bold</b>';
  const api = await harness.tenantApi('demo-1', '<i>ops-markup</i>');
  const [job] = await ended(api, 1, 'noop', { note: markup });
  const context = await harness.browser.newContext();
  const { page, problems } = await openConsole(harness, context, 'olga');

  await goTo(page, '#/jobs');
  // A filter errand refuses: its reason shows beside the form.
  await page.getByLabel('Params field').fill('note');
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.locator('.form-problem').getByText(/param must be path=value/).waitFor();
  await page.getByLabel('Params field').fill(`note=${markup}`);
  await page.getByRole('button', { name: 'Apply' }).click();
  await waitForRows(page, [job.id]);
  const row = page.locator(`tr[data-job-id="${job.id}"]`);
  assert.match(await row.textContent(), /<i>ops-markup<\/i>/);
  assert.equal(await row.locator('i, img, b').count(), 0, 'no element made from the user name');

  await row.locator('a').click();
  const params = page.locator('pre[data-field="params"]');
  await params.waitFor();
  const shown = await params.textContent();
  assert.ok(shown.includes('<b>bold</b>') && shown.includes('<img src=x onerror=window.pwned=1>'), shown);
  assert.equal(await params.locator('b, img').count(), 0, 'no element made from the params');
  assert.equal(await page.locator('.job-head').getByText('<i>ops-markup</i>', { exact: true }).count(), 1);
  assert.equal(await page.evaluate(() => window.pwned), undefined);
  assert.deepEqual(problems, []);
  await context.close();
});

test("the overview lists pauses: an operator pauses a type of one tenant and resumes it, a breaker's pause raises a banner, a read-only operator only reads them", { timeout: 60_000 }, async () => {
  const operator = await operatorApi('olga');
  const context = await harness.browser.newContext();
  const { page, problems } = await openConsole(harness, context, 'olga');
  const pauses = page.getByRole('region', { name: 'Pauses' });
  try {
    await pauses.getByText('Nothing is paused.').waitFor();
    await pauses.getByLabel('Job type to pause (empty: every type)').fill('noop');
    await pauses.getByLabel('Tenant to pause (empty: every tenant)').fill('demo-2');
    await pauses.getByLabel('Why (operators read it; users do not)').fill('replica lag on the reports database');
    await pauses.getByRole('button', { name: 'Pause', exact: true }).click();
    await pauses.getByRole('cell', { name: 'noop of tenant demo-2', exact: true }).waitFor();
    const { pauses: held } = await operator.get('/admin/pauses');
    assert.deepEqual(held.map((p) => [p.type, p.tenant, p.reason, p.paused_by]), [['noop', 'demo-2', 'replica lag on the reports database', 'olga']]);

    // A breaker's pause, as the statement that ends attempts writes it.
    execFileSync('psql', [process.env.DATABASE_URL, '-Xqc',
      "INSERT INTO job_pauses (job_type, reason, paused_by) VALUES ('sleep', '20 attempts in a row failed; the last: down', 'errand:breaker')"]);
    await page.getByRole('alert').getByText('A breaker paused sleep').waitFor();
    await pauses.getByRole('cell', { name: 'its breaker', exact: true }).waitFor();

    const viewer = await openConsole(harness, await harness.browser.newContext(), 'rita', { readOnly: true });
    const seen = viewer.page.getByRole('region', { name: 'Pauses' });
    await seen.getByRole('cell', { name: 'sleep, every tenant', exact: true }).waitFor();
    await seen.getByRole('cell', { name: 'noop of tenant demo-2', exact: true }).waitFor();
    assert.equal(await viewer.page.getByRole('button', { name: /^(Resume|Pause)/ }).count(), 0, 'no Pause or Resume for a read-only operator');
    assert.deepEqual(viewer.problems, []);
    await viewer.page.context().close();

    // One at a time: each action redraws the list, and a click on a button
    // being replaced may land on the old one (it did under load).
    await pauses.getByRole('button', { name: 'Resume noop of tenant demo-2' }).click();
    await pauses.getByRole('button', { name: 'End the ramp of noop of tenant demo-2' }).waitFor();
    await pauses.getByRole('button', { name: 'Resume sleep, every tenant' }).click();
    // Resumed, each scope ramps, until its ramp ends or an operator ends it.
    await pauses.getByRole('cell', { name: /^ramping up until/ }).nth(1).waitFor();
    assert.equal(await page.getByText(/A breaker paused/).count(), 0, 'the banner is gone with the pause');
    assert.deepEqual((await operator.get('/admin/pauses')).pauses.map((p) => p.state), ['ramping', 'ramping']);
    await pauses.getByRole('button', { name: 'End the ramp of noop of tenant demo-2' }).click();
    await pauses.getByRole('button', { name: 'End the ramp of noop of tenant demo-2' }).waitFor({ state: 'detached' });
    await pauses.getByRole('button', { name: 'End the ramp of sleep, every tenant' }).click();
    await pauses.getByText('Nothing is paused.').waitFor();
    assert.deepEqual((await operator.get('/admin/pauses')).pauses, []);
  } finally {
    // Other tests share the database: nothing stays paused.
    for (const { id } of (await operator.get('/admin/pauses')).pauses) await operator.request('DELETE', `/admin/pauses/${id}?ramp=0s`);
  }
  assert.deepEqual(problems, []);
  await context.close();
});

test('an operator holds a waiting job from its page, and it stays waiting until released', { timeout: 60_000 }, async () => {
  const operator = await operatorApi('olga');
  // Paused first, so that it waits for the hold.
  const pause = await operator.request('POST', '/admin/pauses', { body: { type: 'noop', tenant: 'demo-1', reason: 'set-up' } });
  const waiting = await (await harness.api('ops-hold')).submit('noop', {});
  const context = await harness.browser.newContext();
  const { page, problems } = await openConsole(harness, context, 'olga');
  try {
    await goTo(page, `#/jobs/${waiting.id}`);
    await page.getByRole('button', { name: 'Hold', exact: true }).click();
    await page.locator('.job-head').getByText('Held by', { exact: true }).waitFor();
    assert.equal(await jobFact(page, 'Held by'), 'olga');
    await operator.request('DELETE', `/admin/pauses/${pause.id}?ramp=0s`);
    // Resumed, the type runs again, but the held job does not.
    const other = await (await harness.api('ops-hold')).submit('noop', {});
    await (await harness.api('ops-hold')).waitForEnd(other.id);
    const held = await operator.get(`/admin/jobs/${waiting.id}`);
    assert.deepEqual([held.status, held.state, held.attempts, held.held_by], ['processing', 'paused', 0, 'olga']);

    await page.getByRole('button', { name: 'Release', exact: true }).click();
    await page.locator('.job-head').getByText('completed', { exact: true }).waitFor({ timeout: 15_000 });
  } finally {
    for (const { id } of (await operator.get('/admin/pauses')).pauses) await operator.request('DELETE', `/admin/pauses/${id}?ramp=0s`);
  }
  assert.deepEqual(problems, []);
  await context.close();
});

test('screenshots of the console for docs/api.md', { skip: !screenshots, timeout: 60_000 }, async () => {
  const mine = await harness.api('ops-shots');
  const [failed] = await ended(mine, 2, 'sleep', FAILING);
  await ended(mine, 2, 'noop', {});
  const context = await harness.browser.newContext({ viewport: { width: 1280, height: 800 } });
  const { page, problems } = await openConsole(harness, context, 'olga');
  await goTo(page, '#/jobs?status=failed');
  await page.locator(`tr[data-job-id="${failed.id}"]`).waitFor();
  await page.screenshot({ path: path.join(screenshots, 'admin-jobs.png') });
  await goTo(page, `#/jobs/${failed.id}`);
  await page.locator('li[data-outcome="failed"]').nth(1).waitFor();
  await page.screenshot({ path: path.join(screenshots, 'admin-job.png'), fullPage: true });
  assert.deepEqual(problems, []);
  await context.close();
});
