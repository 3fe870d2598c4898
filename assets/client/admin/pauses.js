/**
 * @file Pauses (`/client/admin/pauses.js`), on the overview: the job types
 * and tenants the operators paused, or a type's breaker did, each with why,
 * by whom and since when, and a Resume button; once resumed, a scope ramps
 * (its concurrency rises from 1 to its limit) and its row says until when,
 * with a button that ends the ramp. A form pauses another. Read from
 * `GET /admin/pauses` with the overview's poll. A breaker's pause that holds
 * also raises a banner at the top of the overview: it needs someone to act.
 */

import { el } from '../core/dom.js';
import { statusLine, table, timeAgo, timeAt } from './widgets.js';

/** Who a breaker's pause names as having paused (`paused_by`). */
const BREAKER = 'errand:breaker';

/** When a pause's ramp would end if it were resumed now (it holds). */
function rampEnd(pause) {
  return new Date(Date.now() + pause.ramp_seconds * 1000).toISOString();
}

/** What a pause holds back, in words. */
function scope(pause) {
  if (pause.type && pause.tenant) return `${pause.type} of tenant ${pause.tenant}`;
  return pause.type ? `${pause.type}, every tenant` : `tenant ${pause.tenant}, every type`;
}

/**
 * The section (`node`), the breaker's banner (`banner`, placed by the
 * overview at its top) and `draw(pauses)`, called with each poll's list.
 * `onChange` runs after a pause or a resume, so the poll reads again.
 */
export function pausesSection({ api, canAct, onChange }) {
  const status = statusLine();
  const banner = el('p', { class: 'status-line error', role: 'alert', hidden: true });
  const body = el('div');
  let drawn = null;

  async function act(work, done) {
    status.textContent = '';
    try {
      await work();
      status.textContent = done;
      onChange();
      return true;
    } catch (error) {
      if (!error.signedOut) status.textContent = `Not done: ${error.message}`;
      return false;
    }
  }

  /** Resume (a pause that holds) or End ramp (a resumed scope ramping). */
  function resumeButton(pause) {
    const path = `/admin/pauses/${encodeURIComponent(pause.id)}`;
    const [text, label, done] = pause.state === 'ramping'
      ? ['End ramp', `End the ramp of ${scope(pause)}`, `${scope(pause)} runs as room allows.`]
      : ['Resume', `Resume ${scope(pause)}`, `Resumed ${scope(pause)}: it ramps up until ${timeAt(rampEnd(pause))}.`];
    return el('button', { type: 'button', text, 'aria-label': label, on: { click: () => act(() => api.delete(path), done) } });
  }

  function draw(pauses) {
    const key = JSON.stringify(pauses);
    if (key === drawn) return;
    drawn = key;
    const tripped = pauses.filter((pause) => pause.paused_by === BREAKER && pause.state === 'holding');
    banner.hidden = tripped.length === 0;
    banner.textContent = tripped.length
      ? `A breaker paused ${tripped.map((pause) => pause.type).join(', ')}: its attempts kept failing. Resume it under Pauses once the cause is mended.`
      : '';
    body.replaceChildren(pauses.length
      ? table('Pauses', [
        ['Paused', (pause) => scope(pause)],
        ['Why', (pause) => pause.reason],
        ['By', (pause) => (pause.paused_by === BREAKER ? 'its breaker' : pause.paused_by)],
        ['Since', (pause) => timeAgo(pause.paused_at)],
        ['Until', (pause) => (pause.until ? timeAt(pause.until) : 'resumed')],
        ['Now', (pause) => (pause.state === 'ramping' ? `ramping up until ${timeAt(pause.ramp_ends_at)}` : 'paused')],
        ...(canAct ? [['', (pause) => resumeButton(pause)]] : []),
      ], pauses)
      : el('p', { class: 'muted', text: 'Nothing is paused.' }));
  }

  const form = canAct ? pauseForm(act, api) : null;
  const node = el('section', { class: 'card', 'aria-label': 'Pauses' }, el('h2', { text: 'Pauses' }), body, form, status);
  return { node, banner, draw };
}

/** Pauses a job type, a tenant, or a type of one tenant: the claims stop; submissions go on. */
function pauseForm(act, api) {
  const type = el('input', { name: 'type', 'aria-label': 'Job type to pause (empty: every type)', placeholder: 'job type, or empty: all' });
  const tenant = el('input', { name: 'tenant', 'aria-label': 'Tenant to pause (empty: every tenant)', placeholder: 'tenant, or empty: all' });
  const reason = el('input', { name: 'reason', required: true, maxlength: '500', 'aria-label': 'Why (operators read it; users do not)', placeholder: 'why: operators read it' });
  const ramp = el('input', { name: 'ramp', size: '6', 'aria-label': 'Ramp on resume (e.g. 5m; empty: 2m)', placeholder: 'ramp: 2m' });
  return el('form', {
    class: 'pause-form',
    on: {
      submit: async (event) => {
        event.preventDefault();
        const body = { reason: reason.value };
        if (type.value.trim()) body.type = type.value.trim();
        if (tenant.value.trim()) body.tenant = tenant.value.trim();
        if (ramp.value.trim()) body.ramp = ramp.value.trim();
        if (await act(() => api.post('/admin/pauses', body), 'Paused.')) reason.value = '';
      },
    },
  }, type, tenant, reason, ramp, el('button', { type: 'submit', class: 'danger', text: 'Pause' }));
}
