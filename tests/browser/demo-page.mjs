// The demo page as the tests drive it: sign in through a link, read the
// bell and the preferences grid, and collect what must never happen on the
// page (uncaught errors, content security policy violations).

/**
 * Opens the demo page in a new tab of `context`, signed in as `user` through
 * an `errand token --link` link, once the bell knows the unread count.
 * `query` is the page's own, e.g. `?locale=fr` (the components' language).
 * Returns the page and the list its problems are collected into.
 */
export async function openSignedIn(harness, context, user, { query = '' } = {}) {
  const page = await context.newPage();
  const problems = watchProblems(page);
  const link = new URL(await harness.signInLink(user));
  link.search = query;
  await page.goto(link.href);
  await bellReady(page);
  return { page, problems };
}

/** Waits until the bell shows a count from the server (after a load or a reload). */
export function bellReady(page) {
  return page.waitForFunction(() => document.querySelector('errand-bell')?.hasAttribute('unread-count'), null, { timeout: 10_000 });
}

/** Uncaught errors and CSP violations on `page`, as they happen. */
export function watchProblems(page) {
  const problems = [];
  page.on('pageerror', (error) => problems.push(`uncaught: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' && /Content Security Policy|Uncaught/.test(message.text())) problems.push(message.text());
  });
  return problems;
}

/** Waits until the bell shows `count` (the server's count, reflected in `unread-count`). */
export function waitForUnreadCount(page, count, timeout = 10_000) {
  return page.waitForFunction(
    (expected) => document.querySelector('errand-bell')?.getAttribute('unread-count') === String(expected),
    count,
    { timeout },
  );
}

/** Opens the bell's dropdown (if closed). */
export async function openBell(page) {
  const toggle = page.locator('errand-bell button.toggle');
  if ((await toggle.getAttribute('aria-expanded')) !== 'true') await toggle.click();
  await page.locator('errand-bell [role="dialog"]').waitFor();
}

/** The notification ids the bell's list shows, top to bottom. */
export function bellEntryIds(page) {
  return page.locator('errand-bell li[data-id]').evaluateAll((items) => items.map((item) => item.dataset.id));
}

/** The export button's status text (its `role="status"` region). */
export function exportStatus(page) {
  return page.locator('errand-export-button [role="status"]');
}

/** The export button's download link, once the job completed. */
export function exportLink(page) {
  return page.locator('errand-export-button a.download');
}

/**
 * Starts a client of its own in the page (`name`), recording what it passes
 * on: how often its stream opened, and every `job_completed` id in order.
 * Shows the client's own behaviour where the components would hide it
 * (the bell's list would hide a repeated event).
 */
export async function recordEvents(page, name) {
  await page.evaluate(async (recorder) => {
    const { Errand } = await import('/client/errand.js');
    const token = sessionStorage.getItem('errand-demo:token');
    const record = { opened: 0, heard: [] };
    (window.recorded ??= {})[recorder] = record;
    new Errand({ token: async () => token }).subscribe((event) => {
      if (event.type === 'open') record.opened++;
      if (event.type === 'job_completed') record.heard.push(event.notification.id);
    });
  }, name);
}

/** Waits until recorder `name` opened at least `opened` times and heard at least `heard` ids; returns its record. */
export async function waitForRecord(page, name, { opened = 0, heard = 0 }, timeout = 10_000) {
  await page.waitForFunction(
    ([recorder, least]) => {
      const record = window.recorded?.[recorder];
      return record && record.opened >= least.opened && record.heard.length >= least.heard;
    },
    [name, { opened, heard }],
    { timeout },
  );
  return page.evaluate((recorder) => window.recorded[recorder], name);
}

/** Submits from the page through a fresh client (as after a reload), twice at once; returns both jobs' ids. */
export function submitTwiceAtOnce(page, type, params, intent) {
  return page.evaluate(async ([jobType, jobParams, jobIntent]) => {
    const { Errand } = await import('/client/errand.js');
    const token = sessionStorage.getItem('errand-demo:token');
    const client = new Errand({ token: async () => token });
    const submit = () => client.createJob(jobType, jobParams, { intent: jobIntent });
    return (await Promise.all([submit(), submit()])).map((job) => job.id);
  }, [type, params, intent]);
}

/** The categories the preferences grid shows, top to bottom, once it has drawn them. */
export async function preferenceCategories(page) {
  const rows = page.locator('errand-preferences tbody tr');
  await rows.first().waitFor();
  return rows.evaluateAll((items) => items.map((item) => item.dataset.category));
}

/** The preferences grid's checkbox of `category` for `channel` (its column heading: `In app`, `Email`), by its label. */
export function preferenceToggle(page, category, channel) {
  return page.locator('errand-preferences').getByRole('checkbox', { name: `${channel} for ${category}` });
}

/** The status cell of `category`'s row ("Saving…", "Saved", or why errand refused). */
export function preferenceMessage(page, category) {
  return page.locator(`errand-preferences tr[data-category="${category}"] .message`);
}
