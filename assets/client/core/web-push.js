/**
 * @file This browser's side of Web Push: errand's service worker registered,
 * the browser's push subscription made with errand's VAPID key (or found),
 * and taken back. What errand keeps of it is `errand.js`'s to ask.
 */

/** Whether this browser can receive Web Push at all (a secure page, service workers, the Push API). */
export function pushSupported() {
  return globalThis.isSecureContext === true && 'serviceWorker' in navigator && 'PushManager' in globalThis
    && 'Notification' in globalThis;
}

/** The bytes of base64url text (a VAPID public key), as `applicationServerKey` takes them. */
function bytesOf(base64url) {
  const base64 = base64url.replace(/-/g, '+').replace(/_/g, '/').padEnd(Math.ceil(base64url.length / 4) * 4, '=');
  return Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
}

/** The registration's worker once active: a push subscription needs one. */
async function activated(registration) {
  const worker = registration.installing ?? registration.waiting;
  if (registration.active || !worker) return registration;
  await new Promise((resolve) => {
    worker.addEventListener('statechange', () => worker.state === 'activated' && resolve());
  });
  return registration;
}

/**
 * errand's service worker (`scriptUrl`, served by errand at
 * `/client/errand-sw.js`; a page on another origin serves a copy of its own),
 * registered and active.
 * @param {string} scriptUrl
 * @returns {Promise<ServiceWorkerRegistration>}
 */
export async function registerWorker(scriptUrl) {
  return activated(await navigator.serviceWorker.register(scriptUrl));
}

/**
 * This browser's push subscription at `registration`, made with
 * `vapidPublicKey` if there is none yet (asking the person's permission).
 * @param {ServiceWorkerRegistration} registration
 * @param {string} vapidPublicKey errand's, base64url
 * @returns {Promise<PushSubscription>}
 * @throws {Error} `NotAllowedError` when the person refused notifications
 */
export async function subscribeBrowser(registration, vapidPublicKey) {
  if (Notification.permission !== 'granted' && (await Notification.requestPermission()) !== 'granted') {
    throw new DOMException('notifications are not allowed on this device', 'NotAllowedError');
  }
  const existing = await registration.pushManager.getSubscription();
  if (existing) return existing;
  return registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: bytesOf(vapidPublicKey) });
}

/**
 * This browser's push subscription, if it has one (at errand's worker's registration).
 * @param {string} scriptUrl
 * @returns {Promise<PushSubscription|null>}
 */
export async function browserSubscription(scriptUrl) {
  const registrations = await navigator.serviceWorker.getRegistrations();
  const ours = registrations.find((r) => [r.active, r.waiting, r.installing].some((w) => w?.scriptURL === scriptUrl));
  return ours ? ours.pushManager.getSubscription() : null;
}
