// The bell's counts and marks in Chromium: its badge counts what was not
// seen, opening it sees everything (read marks stay as they were), and
// "Archive" takes an entry out of the feed, in every open tab.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';

import { Harness, eventually } from './harness.mjs';
import { bellEntryIds, openBell, openSignedIn, waitForUnreadCount } from './demo-page.mjs';

/** @type {Harness} */
let harness;

before(async () => {
  harness = await Harness.start({ seed: false });
});

after(async () => {
  await harness?.stop();
});

/** The bell's badge as the page shows it ('' when hidden). */
function badge(page) {
  return page.locator('errand-bell .badge').evaluate((b) => (b.hidden ? '' : b.textContent));
}

test('the badge counts what is new, opening the bell sees it, and Archive takes an entry out everywhere', { timeout: 60_000 }, async () => {
  const context = await harness.browser.newContext();
  const { page, problems } = await openSignedIn(harness, context, 'bea');
  const { page: otherTab } = await openSignedIn(harness, context, 'bea');
  const api = await harness.api('bea');
  for (let i = 0; i < 2; i++) await api.submit('noop', {});
  await waitForUnreadCount(page, 2, 15_000);
  await eventually('the badge to count two new', async () => (await badge(page)) === '2');

  await openBell(page);
  await eventually('opening the bell to see them', async () => (await badge(page)) === '' && (await badge(otherTab)) === '');
  assert.equal(await page.locator('errand-bell').getAttribute('unread-count'), '2', 'seen, still unread');
  assert.equal((await api.get('/notifications')).unseen_count, 0);

  const [newest] = await bellEntryIds(page);
  await page.locator(`errand-bell li[data-id="${newest}"] button.archive`).click();
  await eventually('the entry to leave both tabs', async () => {
    const [here, there] = [await bellEntryIds(page), await openBell(otherTab).then(() => bellEntryIds(otherTab))];
    return here.length === 1 && there.length === 1 && !here.includes(newest) && !there.includes(newest);
  });
  await waitForUnreadCount(otherTab, 1);
  const { notifications } = await api.get('/notifications?status=archived');
  assert.deepEqual(notifications.map((n) => n.id), [newest]);
  assert.deepEqual(problems, []);
  await context.close();
});
