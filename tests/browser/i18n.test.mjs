// The web components' languages. First, without errand: the catalogue
// (templates/locales/en/elements.ftl) has simple patterns only, both forms
// of each plural, and exactly the ids the elements use.
// Then in Chromium against a real errand (the environment of demo.test.mjs):
// errand serves each catalogue at /i18n/elements as the files hold it, and
// the demo page with `?locale=fr` shows the bell, the export button, the
// schedule and the preferences in French, its numbers and times too.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

import { Harness, repoRoot } from './harness.mjs';
import { exportLink, exportStatus, openBell, openSignedIn, preferenceCategories, waitForUnreadCount } from './demo-page.mjs';

/** The shipped languages (`SHIPPED` in src/domain/notifications/locale.rs). */
const LOCALES = ['en', 'fr'];
const EXPORT = 'export_sales_report';
/** CLDR's plural categories: `ui-x-one`, `ui-x-other`… are the forms of `ui-x`. */
const PLURAL = /-(zero|one|two|few|many|other)$/;
/** A Fluent placeable as the catalogues may write it: a variable, nothing else. */
const PLACEABLE = /\{\s*\$([A-Za-z][A-Za-z0-9_-]*)\s*\}/g;

/**
 * The messages of `templates/locales/<locale>/elements.ftl`, by id, as
 * errand serves them (`{ $name }` written `{name}`), with their variables.
 * Fails on anything but comments and one-line `id = text { $var } text`.
 */
async function catalogue(locale) {
  const file = path.join(repoRoot, 'templates/locales', locale, 'elements.ftl');
  const source = await readFile(file, 'utf8');
  assert.match(source, /^###? /, `${file} starts with a comment saying what it is for`);
  const messages = new Map();
  source.split('\n').forEach((line, index) => {
    if (line.trim() === '' || line.startsWith('#')) return;
    const where = `${file}:${index + 1}`;
    const [, id, pattern] = /^([A-Za-z][A-Za-z0-9_-]*) = (\S.*)$/.exec(line) ?? [];
    assert.ok(id, `${where}: one message per line, \`id = text\`: ${line}`);
    assert.ok(id.startsWith('ui-'), `${where}: ${id} starts with ui-`);
    assert.ok(!messages.has(id), `${where}: ${id} once`);
    const text = pattern.replace(PLACEABLE, '');
    assert.doesNotMatch(text, /[{}]/, `${where}: only { $variable } placeables (no selectors, terms or functions)`);
    assert.equal(pattern, pattern.trim(), `${where}: no space at either end (Fluent drops it)`);
    messages.set(id, {
      text: pattern.replace(PLACEABLE, (_, name) => `{${name}}`),
      vars: new Set([...pattern.matchAll(PLACEABLE)].map((match) => match[1])),
    });
  });
  return messages;
}

/** Every `'ui-…'` id the client's modules name (the operators' console has no catalogue). */
async function idsInTheClient() {
  const root = path.join(repoRoot, 'assets/client');
  const files = (await readdir(root, { recursive: true }))
    .filter((name) => name.endsWith('.js') && !name.startsWith('admin'));
  const ids = new Map();
  for (const name of files) {
    const source = await readFile(path.join(root, name), 'utf8');
    for (const [, id] of source.matchAll(/['"`](ui-[a-z0-9-]+)['"`]/g)) ids.set(id, name);
  }
  return ids;
}

// That every language has English's ids and no variable English lacks is
// `cargo test`'s to check (domain/notifications/words.rs), for both files.
test('a plural has its one and other forms', async () => {
  const english = await catalogue('en');
  assert.ok(english.size > 0);
  // More forms where a language has them; `other` is the fallback.
  const plurals = new Set([...english.keys()].filter((id) => PLURAL.test(id)).map((id) => id.replace(PLURAL, '')));
  assert.ok(plurals.size > 0);
  for (const base of plurals) {
    for (const form of ['one', 'other']) assert.ok(english.has(`${base}-${form}`), `${base}-${form}`);
  }
});

test('the elements use exactly the ids the catalogue has', async () => {
  const english = await catalogue('en');
  const used = await idsInTheClient();
  for (const [id, file] of used) {
    assert.ok(english.has(id) || english.has(`${id}-other`), `${file} uses ${id}, which elements.ftl lacks`);
  }
  for (const id of english.keys()) {
    assert.ok(used.has(id) || used.has(id.replace(PLURAL, '')), `${id} is used by no element`);
  }
});

describe('in Chromium', () => {
  /** @type {Harness} */
  let harness;

  before(async () => {
    harness = await Harness.start();
  });

  after(async () => {
    await harness?.stop();
  });

  test('errand serves each catalogue as its file holds it, by ?locale=, else Accept-Language', async () => {
    const read = async (query, headers = {}) => {
      const response = await fetch(`${harness.baseUrl}/i18n/elements${query}`, { headers });
      assert.equal(response.status, 200, `/i18n/elements${query}`);
      return response.json();
    };
    for (const locale of LOCALES) {
      const served = await read(`?locale=${locale}`);
      assert.equal(served.locale, locale);
      const expected = Object.fromEntries([...(await catalogue(locale))].map(([id, { text }]) => [id, text]));
      assert.deepEqual(served.messages, expected, `${locale}: the file's messages, { $var } written {var}`);
    }
    assert.equal((await read('?locale=fr', { 'Accept-Language': 'en' })).locale, 'fr', '?locale= comes first');
    assert.equal((await read('', { 'Accept-Language': 'fr' })).locale, 'fr', 'else the Accept-Language');
    assert.equal((await read('?locale=tlh', { 'Accept-Language': 'fr' })).locale, 'fr', 'a locale errand lacks falls back');
  });

  test('with ?locale=fr the bell, the export button, the schedule and the preferences speak French', { timeout: 45_000 }, async () => {
    const api = await harness.api('lea');
    for (let i = 0; i < 2; i++) await api.submit('noop');
    // The browser asks for English: the page's `locale` wins.
    const context = await harness.browser.newContext({ locale: 'en-US' });
    const { page, problems } = await openSignedIn(harness, context, 'lea', { query: '?locale=fr' });
    await waitForUnreadCount(page, 2, 15_000);

    // The bell: its name with the counts in French plurals, the dropdown's buttons, times in French.
    const toggle = page.locator('errand-bell button.toggle');
    await page.waitForFunction(() => /nouvelles/.test(document.querySelector('errand-bell').shadowRoot
      .querySelector('button.toggle').getAttribute('aria-label')));
    assert.equal(await toggle.getAttribute('aria-label'), 'Notifications, 2 nouvelles, 2 non lues');
    await openBell(page);
    const bell = page.locator('errand-bell');
    await bell.getByRole('button', { name: 'Tout marquer comme lu' }).waitFor();
    await bell.getByRole('button', { name: 'Archiver les lues' }).waitFor();
    await page.waitForFunction(() => document.querySelector('errand-bell').shadowRoot.querySelectorAll('li').length === 2);
    assert.deepEqual(await bell.locator('li button.mark-read').allTextContents(), ['Marquer comme lue', 'Marquer comme lue']);
    for (const when of await bell.locator('li time').allTextContents()) {
      assert.match(when, /^(il y a |maintenant|dans )/, `a French relative time: ${when}`);
    }
    await page.keyboard.press('Escape');

    // The preferences: headings, the checkboxes' names, a required category's note.
    await preferenceCategories(page);
    const preferences = page.locator('errand-preferences');
    for (const heading of ['Catégorie', 'Dans l’application', 'E-mail']) {
      await preferences.getByRole('columnheader', { name: heading }).waitFor();
    }
    assert.equal(await preferences.getByRole('checkbox', { name: `E-mail pour ${EXPORT}`, exact: true }).isChecked(), true);
    await preferences.locator('tr[data-category="sleep"] th').getByText('obligatoire', { exact: true }).waitFor();

    // The schedule's button.
    await page.locator('errand-schedule').getByRole('button', { name: 'Répéter…' }).waitFor();

    // The export button: its label is the page's own (English); what it says after a click is French.
    await page.getByRole('button', { name: 'Export CSV' }).click();
    const link = exportLink(page);
    await link.waitFor({ timeout: 15_000 });
    assert.match(await link.textContent(), /^Télécharger \S+\.csv$/);
    assert.equal(await exportStatus(page).textContent(), 'Prêt.');
    await page.locator('errand-export-button').getByRole('button', { name: 'Nouvel export' }).waitFor();
    assert.deepEqual(problems, []);
    await context.close();
  });

  test('without ?locale= the elements speak the browser\'s language', { timeout: 30_000 }, async () => {
    const context = await harness.browser.newContext({ locale: 'fr' });
    const { page, problems } = await openSignedIn(harness, context, 'max');
    await page.locator('errand-schedule').getByRole('button', { name: 'Répéter…' }).waitFor();
    await preferenceCategories(page);
    await page.locator('errand-preferences').getByRole('columnheader', { name: 'Catégorie' }).waitFor();
    assert.deepEqual(problems, []);
    await context.close();
  });
});
