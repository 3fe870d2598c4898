// Web Push in Chromium: the bell's "Notify me on this device" registers
// errand's service worker and gives errand the browser's subscription; a
// job's end goes from errand to the push service (tools/pushstub/stub.py,
// which checks errand's VAPID token and decrypts the message with the
// device's keys), and the worker shows what arrived, under the tag of the
// in-app notification.
//
// One part is a stand-in: Chromium's push service is Google's (FCM), and no
// test can point it at a local one, so `PushManager.subscribe` answers the
// stub's device (its endpoint and keys), and the decrypted message reaches
// the worker through DevTools' `ServiceWorker.deliverPushMessage`, as a push
// service's delivery would. Everything between is real.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';

import { Harness, eventually } from './harness.mjs';
import { openBell, openSignedIn } from './demo-page.mjs';

/** @type {Harness} */
let harness;

before(async () => {
  harness = await Harness.start({ seed: false, push: true });
});

after(async () => {
  await harness?.stop();
});

/** Makes the page's `PushManager` subscribe `device` (the stub's) instead of asking Google's push service. */
async function subscribeTo(context, device) {
  await context.addInitScript((device) => {
    let current = null;
    const subscription = {
      endpoint: device.endpoint,
      expirationTime: null,
      toJSON: () => ({ endpoint: device.endpoint, expirationTime: null, keys: device.keys }),
      unsubscribe: async () => { current = null; return true; },
    };
    PushManager.prototype.subscribe = async function subscribe(options) {
      if (!(options?.applicationServerKey instanceof Uint8Array) || options.applicationServerKey.length !== 65) {
        throw new Error('subscribe needs errand\'s VAPID public key (65 bytes)');
      }
      current = subscription;
      return subscription;
    };
    PushManager.prototype.getSubscription = async function getSubscription() {
      return current;
    };
  }, device);
}

/** The notices errand's worker shows, as the page's registration lists them. */
function shownNotices(page) {
  return page.evaluate(async () => {
    const registration = await navigator.serviceWorker.getRegistration('/client/');
    const notices = registration ? await registration.getNotifications() : [];
    return notices.map((n) => ({ title: n.title, body: n.body, tag: n.tag, url: n.data?.url }));
  });
}

test('"Notify me on this device" subscribes it, and a job\'s end is shown by the worker under its notification\'s tag', { timeout: 60_000 }, async () => {
  const context = await harness.browser.newContext();
  await context.grantPermissions(['notifications'], { origin: harness.baseUrl });
  await subscribeTo(context, await harness.push.subscription('chromium'));
  const { page, problems } = await openSignedIn(harness, context, 'pat');
  const api = await harness.api('pat');

  await openBell(page);
  const toggle = page.getByRole('checkbox', { name: 'Notify me on this device' });
  await toggle.waitFor();
  assert.equal(await toggle.isChecked(), false);
  await toggle.check();
  const devices = await eventually('errand to have the device', async () => {
    const { subscriptions } = await api.get('/me/push-subscriptions');
    return subscriptions.length === 1 && subscriptions;
  });
  assert.ok(devices[0].endpoint.endsWith('/push/chromium'), devices[0].endpoint);

  await api.submit('sleep', { ms: 1 });
  const [message] = await harness.push.waitFor(1);
  assert.deepEqual(await harness.push.refused(), [], 'the message passed the push service\'s checks');
  const { notifications } = await api.get('/notifications');
  assert.equal(message.payload.tag, notifications[0].id);

  const cdp = await context.newCDPSession(page);
  const registration = new Promise((resolve) => {
    cdp.on('ServiceWorker.workerRegistrationUpdated', ({ registrations }) => {
      const ours = registrations.find((r) => r.scopeURL === `${harness.baseUrl}/client/` && !r.isDeleted);
      if (ours) resolve(ours);
    });
  });
  await cdp.send('ServiceWorker.enable');
  const { registrationId } = await registration;
  await cdp.send('ServiceWorker.deliverPushMessage', {
    origin: harness.baseUrl, registrationId, data: JSON.stringify(message.payload),
  });
  const shown = await eventually('the worker to show the notice', async () => {
    const notices = await shownNotices(page);
    return notices.length > 0 && notices;
  });
  assert.deepEqual(shown, [{ title: message.payload.title, body: message.payload.body, tag: notifications[0].id, url: message.payload.url }]);

  await toggle.uncheck();
  await eventually('errand to forget the device', async () => (await api.get('/me/push-subscriptions')).subscriptions.length === 0);
  assert.deepEqual(problems, []);
  await context.close();
});
