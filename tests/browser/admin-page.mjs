// The operators' console (`/admin`) as the tests drive it: sign in through
// a link or a pasted token, move between views by the hash (never a
// reload), and read the list's rows and the overview's counts.

import { watchProblems } from './demo-page.mjs';

/**
 * Opens the console in a new tab of `context`, signed in as operator `name`
 * through an `errand token --operator --link` link, once the overview shows
 * its counts. Returns the page and the list its problems are collected into.
 */
export async function openConsole(harness, context, name, { readOnly = false } = {}) {
  const page = await context.newPage();
  const problems = watchProblems(page);
  await page.goto(await harness.operatorSignInLink(name, { readOnly }));
  await page.locator('#who').getByText(name, { exact: true }).waitFor();
  await overviewCount(page, 'completed');
  return { page, problems };
}

/** Goes to `hash` (`#/jobs?…`) in the page, as a link would: no reload. */
export function goTo(page, hash) {
  return page.evaluate((target) => { location.hash = target; }, hash);
}

/** The ids of the jobs list's rows, top to bottom. */
export function rowIds(page) {
  return page.locator('table[aria-label="Jobs"] tr[data-job-id]').evaluateAll((rows) => rows.map((row) => row.dataset.jobId));
}

/** Waits until the jobs list shows exactly `ids` (in any order); returns them in the page's order. */
export async function waitForRows(page, ids, timeout = 10_000) {
  await page.waitForFunction((expected) => {
    const shown = [...document.querySelectorAll('table[aria-label="Jobs"] tr[data-job-id]')].map((row) => row.dataset.jobId);
    return shown.length === expected.length && expected.every((id) => shown.includes(id));
  }, ids, { timeout });
  return rowIds(page);
}

/** The text of each cell of job `id`'s row in the jobs list, by its column's heading (`Priority`, `Attempts`…). */
export function rowCells(page, id) {
  return page.locator('table[aria-label="Jobs"]').evaluate((table, jobId) => {
    const headings = [...table.tHead.rows[0].cells].map((cell) => cell.textContent);
    const row = table.querySelector(`tr[data-job-id="${jobId}"]`);
    return Object.fromEntries(headings.map((heading, i) => [heading, row.cells[i].textContent]));
  }, id);
}

/** The job view's fact labelled `label` (`Priority`, `Format`…) as its text, once the view shows its facts; null when it has none so labelled. */
export async function jobFact(page, label) {
  const facts = page.locator('.job-head dl.facts');
  await facts.waitFor();
  return facts.evaluate((list, name) => {
    const term = [...list.querySelectorAll('dt')].find((dt) => dt.textContent === name);
    return term ? term.nextElementSibling.textContent : null;
  }, label);
}

/** The number an overview tile shows for `key` (`failed`, `running`…), once it shows one. */
export async function overviewCount(page, key, timeout = 10_000) {
  const handle = await page.waitForFunction((name) => {
    const text = document.querySelector(`[data-count="${name}"]`)?.textContent ?? '';
    return /^[\d,]+\+?$/.test(text) && text;
  }, key, { timeout });
  return Number((await handle.jsonValue()).replace(/[,+]/g, ''));
}

/** Waits until the overview's count for `key` is `below` or `equal` to `value`, without a reload. */
export function waitForOverviewCount(page, key, relation, value, timeout = 20_000) {
  return page.waitForFunction(([name, how, expected]) => {
    const text = document.querySelector(`[data-count="${name}"]`)?.textContent ?? '';
    if (!/^[\d,]+\+?$/.test(text)) return false;
    const count = Number(text.replace(/[,+]/g, ''));
    return how === 'below' ? count < expected : count === expected;
  }, [key, relation, value], { timeout });
}

/** The id of the element with the focus' row (`data-job-id`), if any. */
export function focusedJobId(page) {
  return page.evaluate(() => document.activeElement?.dataset?.jobId ?? null);
}
