/**
 * @file Four web components on top of `./errand.js`, served by errand at
 * `/client/errand-elements.js`; importing the module defines them. This is
 * their entry: each lives in a module of its own under `./elements/`
 * (`bell.js`, `export-button.js`, `schedule.js`, `preferences.js`, on
 * `base.js`), built with the helpers both apps share (`./core/`).
 *
 * - `<errand-bell>`: the unread count (always the server's) and a dropdown
 *   feed with "Mark read" per entry and "Mark all read"; and "Notify me on
 *   this device" (Web Push), where the browser can and errand offers it.
 * - `<errand-export-button type="export_sales_report">`: submits its closest
 *   `<form>`'s fields once per intent, shows progress, then a download link
 *   or the error. Its light DOM is the button's label.
 * - `<errand-schedule type="export_sales_report">`: "Repeat every…" for the
 *   same fields: every day, every week on a weekday or every month on a day,
 *   at a time in a time zone (the browser's unless changed), made once per
 *   open of its form. "Dates" sends the form's range as it is, or one that
 *   moves with each run (last 7 days, previous week, previous month) as
 *   `{"$date": …}` params named by `from-field` and `to-field` (default
 *   `from`, `to`). Then the next run with Pause and Delete, and the
 *   user's schedules of the type below, each with Pause (or Resume) and
 *   Delete. errand's refusal of a field is shown beside the form.
 * - `<errand-preferences>`: the user's notification preferences, a table
 *   with a row per category of job and a checkbox per channel (in app,
 *   email, and push where errand offers it), saved on change; a required category's are checked and disabled.
 *
 * Each needs a client: `element.client = new Errand({ token })`. It starts
 * once it is both in the document and given a client, and stops (closing its
 * share of the live stream, if it listens to it) when removed.
 *
 * Words: every text is a message of errand's catalogue for the client's
 * language (`new Errand({ token, locale: 'fr' })`, else the browser's
 * `Accept-Language`), read once per client (`client.messages()`); an
 * element stays hidden until its client's messages are here, and writes
 * numbers and dates in their `locale`. The catalogues are
 * `templates/locales/<tag>/elements.ftl` (docs/browser.md, "Languages").
 *
 * Styling: shadow DOM, with these custom properties (inherited, so set them
 * on the elements or any ancestor):
 *   --errand-font          font family (default: inherit)
 *   --errand-text          text colour (#1f2937)
 *   --errand-muted         secondary text (#6b7280)
 *   --errand-accent        buttons, links and checkboxes (#2563eb)
 *   --errand-accent-text   text on the accent (#fff)
 *   --errand-surface       panel background (#fff)
 *   --errand-border        borders and dividers (#e5e7eb)
 *   --errand-badge         unread badge background (#dc2626)
 *   --errand-danger        error text (#b91c1c)
 *   --errand-radius        corner radius (8px)
 *   --errand-panel-width   width of the bell's dropdown (24rem)
 * and the parts `button` (bell, export button, "Repeat every…"), `panel`
 * (bell), `link` (export button), `table` and `toggle` (each checkbox;
 * preferences).
 *
 * The page's content security policy forbids `<style>` elements and style
 * attributes, so styles are constructable stylesheets (`adoptedStyleSheets`).
 */

/** The client, for pages that import only this module. */
export { Errand, ErrandError } from './errand.js';
/** The elements, defined when imported. */
export { ErrandBell } from './elements/bell.js';
export { ErrandExportButton } from './elements/export-button.js';
export { ErrandSchedule } from './elements/schedule.js';
export { ErrandPreferences } from './elements/preferences.js';
