/**
 * @file The web components' words (`/client/core/messages.js`): one
 * language's catalogue as errand serves it (`GET /i18n/elements`, from
 * `templates/locales/<tag>/elements.ftl`), with its placeables written
 * `{name}`, and the locale that `Intl` formats numbers, dates and plural
 * categories in. `Errand#messages()` loads it once per client; the
 * elements write every text through it. There is no second copy of the
 * words here: an id the catalogue lacks shows as itself, visibly, and
 * never throws.
 */

/** `{name}` in a pattern as errand serves it (a Fluent `{ $name }`). */
const PLACEABLE = /\{([A-Za-z][A-Za-z0-9_-]*)\}/g;

/** `locale` as `Intl` takes it, or undefined (the browser's own) for none or one `Intl` does not know. */
function canonicalLocale(locale) {
  if (typeof locale !== 'string' || locale === '') return undefined;
  try {
    return Intl.getCanonicalLocales(locale)[0];
  } catch {
    return undefined;
  }
}

/** One language's words for the web components. */
export class Messages {
  /** @type {Map<string, string>} patterns by id */
  #patterns;
  /** @type {Intl.PluralRules} */
  #plurals;
  /** @type {Intl.NumberFormat} numbers given as placeables' values */
  #numbers;

  /**
   * @param {string|undefined} locale a BCP 47 tag, e.g. `fr` (undefined: the browser's)
   * @param {Record<string, string>} [patterns] by id, e.g. `{"ui-bell-label": "Notifications"}`
   */
  constructor(locale, patterns = {}) {
    /** @type {string|undefined} the locale numbers, dates and plurals are written in (undefined: the browser's) */
    this.locale = canonicalLocale(locale);
    this.#patterns = new Map(Object.entries(patterns ?? {}).filter(([, pattern]) => typeof pattern === 'string'));
    this.#plurals = new Intl.PluralRules(this.locale);
    this.#numbers = new Intl.NumberFormat(this.locale);
  }

  /** Whether the catalogue has `id`. */
  has(id) {
    return this.#patterns.has(id);
  }

  /**
   * The text of message `id` with `vars` in its placeables (numbers written
   * in the locale); the id itself when the catalogue lacks it, and a
   * placeable without a value as it is (`{name}`).
   * @param {string} id e.g. `ui-bell-label`
   * @param {Record<string, unknown>} [vars]
   * @returns {string}
   */
  t(id, vars = {}) {
    return this.parts(id, vars).map((part) => (typeof part === 'string' ? part : part?.textContent ?? String(part))).join('');
  }

  /**
   * Message `id` as parts for `el()`: its text, with each placeable's value
   * as given when it is a node (a `<time>`, say) or a list of parts, else
   * as text. The id itself when the catalogue lacks it.
   * @param {string} id
   * @param {Record<string, unknown>} [vars]
   * @returns {Array<string|Node>}
   */
  parts(id, vars = {}) {
    const pattern = this.#patterns.get(id);
    if (pattern === undefined) return [id];
    const parts = [];
    let last = 0;
    for (const match of pattern.matchAll(PLACEABLE)) {
      parts.push(pattern.slice(last, match.index));
      last = match.index + match[0].length;
      const name = match[1];
      const value = Object.hasOwn(vars, name) ? vars[name] : undefined;
      if (value === undefined || value === null) parts.push(match[0]);
      else if (Array.isArray(value)) parts.push(...value);
      else if (typeof value === 'object') parts.push(value);
      else parts.push(this.#text(value));
    }
    parts.push(pattern.slice(last));
    return parts.filter((part) => part !== '');
  }

  /**
   * The plural form of `id` for `n`: `${id}-${category}` by the locale's
   * plural rules (`one`, `few`, `other`…), else `${id}-other`, with `n` as
   * the placeable `count` (and `vars`).
   * @param {string} id e.g. `ui-bell-unread`
   * @param {number} n
   * @param {Record<string, unknown>} [vars]
   * @returns {string}
   */
  plural(id, n, vars = {}) {
    const exact = `${id}-${this.#plurals.select(n)}`;
    return this.t(this.has(exact) ? exact : `${id}-other`, { count: n, ...vars });
  }

  /** `1234` → `1,234` in English, `1 234` in French. */
  number(n) {
    return this.#numbers.format(n);
  }

  #text(value) {
    return typeof value === 'number' ? this.#numbers.format(value) : String(value);
  }
}

/** No catalogue at all (errand could not be asked): every text shows its id. */
export const NO_MESSAGES = new Messages(undefined, {});
