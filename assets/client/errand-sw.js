/**
 * @file errand's service worker (`/client/errand-sw.js`): shows the Web Push
 * notices errand sends (`{title, body, url, tag}`) and opens a notice's link
 * when it is clicked. Registered by `errand.enablePush()`. A page on another
 * origin than errand's serves a copy from its own origin and passes its URL
 * (`enablePush({serviceWorker})`): browsers run only same-origin workers.
 *
 * `tag` is the in-app notification's id: a notice shown again (a resend, a
 * second device's echo) replaces the one shown, never stacks beside it.
 */

self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

self.addEventListener('push', (event) => {
  let notice = {};
  try {
    notice = event.data ? event.data.json() : {};
  } catch {
    notice = { body: event.data?.text() ?? '' };
  }
  const title = notice.title || 'A job ended';
  event.waitUntil(self.registration.showNotification(title, {
    body: notice.body ?? '',
    tag: notice.tag,
    data: { url: notice.url, jobId: notice.job_id },
  }));
});

self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  const url = event.notification.data?.url;
  if (url) event.waitUntil(self.clients.openWindow(url));
});
