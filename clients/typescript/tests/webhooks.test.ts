/**
 * verifyWebhook agrees with errand's signer and with the Standard Webhooks
 * reference library (the npm `standardwebhooks`), and refuses the rest.
 *
 * The end-to-end test registers an endpoint of its own (an http server on
 * 127.0.0.1, allowed through `webhooks.allow_hosts`) as acme's tenant admin,
 * ends a job, and checks the delivery errand makes with both verifiers.
 */

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { type TestContext, test } from "node:test";
import { WebhookVerificationError as ReferenceVerificationError, Webhook } from "standardwebhooks";
import { signWebhook, verifyWebhook, WebhookVerificationError } from "../src/index.js";
import { Errand, WEBHOOKS_ENV } from "./harness.js";
import { onTeardown, waitUntil } from "./support.js";

// The example of the Standard Webhooks reference libraries' tests (errand's signer has it as a unit test too).
const REF_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const REF_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek";
const REF_AT = 1614265330;
const REF_BODY = '{"test": 2432232314}';
const REF_SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";
const REF_HEADERS = { "webhook-id": REF_ID, "webhook-timestamp": String(REF_AT), "webhook-signature": REF_SIGNATURE };

/** The message verifyWebhook refuses with; fails the test if it accepts. */
function refused(...args: Parameters<typeof verifyWebhook>): string {
  try {
    verifyWebhook(...args);
  } catch (error) {
    assert.ok(error instanceof WebhookVerificationError, String(error));
    return error.message;
  }
  assert.fail("accepted");
}

test("the reference example is accepted, in every shape of headers and body", () => {
  assert.equal(signWebhook(REF_SECRET, REF_ID, REF_AT, REF_BODY), REF_SIGNATURE);
  const at = { nowSeconds: REF_AT };
  assert.deepEqual(verifyWebhook(REF_SECRET, REF_HEADERS, REF_BODY, at), { test: 2432232314 });
  const shouted = Object.fromEntries(Object.entries(REF_HEADERS).map(([name, value]) => [name.toUpperCase(), value]));
  assert.deepEqual(verifyWebhook(REF_SECRET, shouted, Buffer.from(REF_BODY), at), { test: 2432232314 });
  assert.deepEqual(verifyWebhook(REF_SECRET, new Headers(REF_HEADERS), new TextEncoder().encode(REF_BODY), at), {
    test: 2432232314,
  });
  // Any one v1 signature of several may match (a secret being rotated); other versions are skipped.
  const several = { ...REF_HEADERS, "webhook-signature": `v1,Zm9v v1a,abc ${REF_SIGNATURE} v2,bm90` };
  assert.ok(verifyWebhook(REF_SECRET, several, REF_BODY, at));
  // Within the tolerance either way.
  assert.ok(verifyWebhook(REF_SECRET, REF_HEADERS, REF_BODY, { nowSeconds: REF_AT + 300 }));
  assert.ok(verifyWebhook(REF_SECRET, REF_HEADERS, REF_BODY, { nowSeconds: REF_AT - 300 }));
});

test("the reference example altered is refused", () => {
  const at = { nowSeconds: REF_AT };
  assert.match(refused(`whsec_${"A".repeat(43)}=`, REF_HEADERS, REF_BODY, at), /signature/);
  assert.match(refused(REF_SECRET, REF_HEADERS, '{"test": 2432232315}', at), /signature/);
  assert.match(refused(REF_SECRET, { ...REF_HEADERS, "webhook-id": "msg_other" }, REF_BODY, at), /signature/);
  // The timestamp is signed: a fresh one on an old signature does not pass.
  assert.match(
    refused(REF_SECRET, { ...REF_HEADERS, "webhook-timestamp": String(REF_AT + 1) }, REF_BODY, at),
    /signature/,
  );
  for (const junk of ["", "v1,", "v1", REF_SIGNATURE.slice(3), `v2,${REF_SIGNATURE.slice(3)}`, "v1,not base64!"]) {
    assert.ok(refused(REF_SECRET, { ...REF_HEADERS, "webhook-signature": junk }, REF_BODY, at), junk);
  }
});

test("an old or future delivery is refused", () => {
  assert.match(refused(REF_SECRET, REF_HEADERS, REF_BODY, { nowSeconds: REF_AT + 301 }), /too old/);
  assert.match(refused(REF_SECRET, REF_HEADERS, REF_BODY, { nowSeconds: REF_AT - 301 }), /future/);
  assert.ok(verifyWebhook(REF_SECRET, REF_HEADERS, REF_BODY, { nowSeconds: REF_AT + 301, toleranceSeconds: 600 }));
  // Without `nowSeconds`, the clock: the reference example is years old.
  assert.match(refused(REF_SECRET, REF_HEADERS, REF_BODY), /too old/);
  const notANumber = { ...REF_HEADERS, "webhook-timestamp": "soon" };
  assert.match(refused(REF_SECRET, notANumber, REF_BODY, { nowSeconds: REF_AT }), /webhook-timestamp/);
});

test("missing headers, a body that is not a JSON object, and a secret that is not one are refused", () => {
  for (const name of Object.keys(REF_HEADERS)) {
    const without = Object.fromEntries(Object.entries(REF_HEADERS).filter(([other]) => other !== name));
    assert.match(refused(REF_SECRET, without, REF_BODY, { nowSeconds: REF_AT }), new RegExp(name));
  }
  for (const body of ["not json", "[1, 2]"]) {
    const headers = { ...REF_HEADERS, "webhook-signature": signWebhook(REF_SECRET, REF_ID, REF_AT, body) };
    assert.match(refused(REF_SECRET, headers, body, { nowSeconds: REF_AT }), /JSON/);
  }
  assert.throws(() => verifyWebhook("whsec_!!not base64!!", REF_HEADERS, REF_BODY), TypeError);
  assert.throws(() => verifyWebhook("whsec_", REF_HEADERS, REF_BODY), /secret is empty/);
});

test("the reference library and verifyWebhook accept each other's signatures", () => {
  const secret = `whsec_${randomBytes(32).toString("base64")}`;
  const reference = new Webhook(secret);
  const now = new Date();
  const stamp = Math.floor(now.getTime() / 1000);
  const body = JSON.stringify({ type: "job.completed", data: { id: "x", note: "é €" } });
  const theirs = reference.sign("msg_1", now, body);
  assert.equal(theirs, signWebhook(secret, "msg_1", stamp, body));
  const headers = { "webhook-id": "msg_1", "webhook-timestamp": String(stamp), "webhook-signature": theirs };
  assert.deepEqual(verifyWebhook(secret, headers, body), JSON.parse(body));
  assert.deepEqual(reference.verify(body, headers), JSON.parse(body));
});

interface Delivery {
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** A webhook endpoint on 127.0.0.1 that answers 204 and keeps every delivery, for the rest of the test. */
async function endpoint(t: TestContext): Promise<{ url: string; deliveries: Delivery[] }> {
  const deliveries: Delivery[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      deliveries.push({ path: request.url ?? "", headers: request.headers, body: Buffer.concat(chunks) });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  onTeardown(t, () => new Promise((done) => server.close(done)));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/errand`, deliveries };
}

test("errand's delivery verifies with both libraries", async (t) => {
  const errand = await Errand.forTest(t, { env: WEBHOOKS_ENV });
  const receiver = await endpoint(t);
  const { secret } = await errand.registerWebhook(receiver.url, ["job.completed", "job.failed", "job.cancelled"]);
  assert.match(secret, /^whsec_/);

  const id = await errand.submit({}, "noop");
  assert.equal((await errand.waitForEnd(id)).status, "completed");
  await waitUntil(() => receiver.deliveries.length > 0, 15_000, "errand's webhook delivery");
  const receivedAt = Date.now() / 1000;
  assert.equal(receiver.deliveries.length, 1);
  const [delivery] = receiver.deliveries as [Delivery];
  assert.equal(delivery.path, "/hooks/errand");
  assert.equal(delivery.headers["content-type"], "application/json");
  const stamp = Number(delivery.headers["webhook-timestamp"]);
  assert.ok(Math.abs(stamp - receivedAt) < 60);

  // The package's helper, with the headers as Node's http server received them.
  const event = verifyWebhook(secret, delivery.headers, delivery.body);
  assert.equal(event.type, "job.completed");
  assert.deepEqual(event.data, await errand.job(id));
  // The reference library, independently.
  const flat = Object.fromEntries(Object.entries(delivery.headers).map(([name, value]) => [name, String(value)]));
  assert.deepEqual(new Webhook(secret).verify(delivery.body, flat), event);

  // A tampered body, another endpoint's secret, a timestamp made fresh by hand: refused by both.
  const tampered = Buffer.from(delivery.body.toString().replace('"completed"', '"failed"'));
  assert.ok(!tampered.equals(delivery.body));
  const another = (await errand.registerWebhook(receiver.url, ["job.completed"])).secret;
  const restamped = { ...flat, "webhook-timestamp": String(stamp + 400) };
  assert.match(refused(secret, delivery.headers, tampered), /signature/);
  assert.match(refused(another, delivery.headers, delivery.body), /signature/);
  assert.match(refused(secret, delivery.headers, delivery.body, { nowSeconds: stamp + 301 }), /too old/);
  assert.match(refused(secret, restamped, delivery.body, { nowSeconds: stamp + 400 }), /signature/);
  for (const [badSecret, badHeaders, badBody] of [
    [secret, flat, tampered],
    [another, flat, delivery.body],
    [secret, restamped, delivery.body],
  ] as const) {
    assert.throws(() => new Webhook(badSecret).verify(badBody, badHeaders), ReferenceVerificationError);
  }
});
