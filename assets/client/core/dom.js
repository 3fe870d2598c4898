/**
 * @file The one way both apps build DOM (`/client/core/dom.js`): an element
 * builder that only ever sets text and attributes, never HTML (job params,
 * errors, names and notifications are other people's data, and may hold
 * markup), and the pages' lookup by id. The web components, the demo page
 * and the operators' console all build with `el`.
 */

/**
 * An element with attributes, text and children.
 *
 * `props` are attributes by their HTML names, as in markup (`class`, `for`,
 * `tabindex`, `aria-label`, `data-job-id`): `false`, `null` and `undefined`
 * leave one out, `true` sets it empty, anything else is set as its text.
 * Two keys are not attributes: `text`, the element's text (set before the
 * children are appended), and `on`, event listeners by type
 * (`{ click: () => … }`).
 *
 * Children are nodes or strings (strings become text nodes); arrays are
 * flattened one level, and `null`, `undefined` and `false` are skipped.
 *
 * @param {string} tag
 * @param {Record<string, unknown>} [props]
 * @param {...(Node|string|null|undefined|false|Array<Node|string|null|undefined|false>)} children
 * @returns {HTMLElement}
 */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  const { text, on, ...attributes } = props;
  for (const [name, value] of Object.entries(attributes)) {
    if (value === false || value == null) continue;
    node.setAttribute(name, value === true ? '' : value);
  }
  if (text !== undefined && text !== null) node.textContent = String(text);
  for (const [type, listener] of Object.entries(on ?? {})) node.addEventListener(type, listener);
  node.append(...children.flat().filter((child) => child != null && child !== false));
  return node;
}

/** The page's element with this id (the pages' own markup: `index.html`, `admin.html`). */
export function byId(id) {
  return document.getElementById(id);
}
