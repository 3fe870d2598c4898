/**
 * Checking errand's webhooks, signed as Standard Webhooks specifies
 * (https://www.standardwebhooks.com): `webhook-id` (the delivery, the same on
 * every retry: deduplicate on it), `webhook-timestamp` (unix seconds) and
 * `webhook-signature`, space-separated `v1,<base64>` signatures of
 * HMAC-SHA256 over `"<id>.<timestamp>.<body>"` under the endpoint's key
 * (`whsec_` and its base64, as `POST /webhooks` showed it once).
 *
 * Check the raw body as received: JSON parsed and written again is not the
 * body that was signed.
 */

import { createHmac, timingSafeEqual } from "node:crypto";
import { WebhookVerificationError } from "./errors.js";

/** Deliveries older (or newer) than this are refused: a replayed one carries its old, signed, timestamp. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

const SECRET_PREFIX = "whsec_";
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Headers as Node's `IncomingMessage.headers`, a plain object, or fetch's `Headers`. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  toleranceSeconds?: number;
  /** The time to check against, in unix seconds (the clock by default). */
  nowSeconds?: number;
}

/** The body errand POSTs: `data` is the job as `GET /jobs/{id}` shows it (the paused type's facts for `type.paused`). */
export interface WebhookEvent {
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
}

/**
 * The parsed event, once `headers` prove that errand signed the raw `body`
 * with the endpoint's `secret` within `toleranceSeconds`. Any one `v1`
 * signature may match (a rotated secret's old and new); every candidate is
 * compared in constant time. Throws `WebhookVerificationError` for a
 * delivery that is not proven errand's, `TypeError` for a secret that is not one.
 */
export function verifyWebhook(
  secret: string | Uint8Array,
  headers: WebhookHeaders,
  body: string | Uint8Array,
  options: VerifyOptions = {},
): WebhookEvent {
  const key = secretKey(secret);
  const raw = typeof body === "string" ? Buffer.from(body, "utf8") : Buffer.from(body);
  const id = header(headers, "webhook-id");
  const stamp = header(headers, "webhook-timestamp");
  const signatures = header(headers, "webhook-signature");
  const missing = Object.entries({ "webhook-id": id, "webhook-timestamp": stamp, "webhook-signature": signatures })
    .filter(([, value]) => !value)
    .map(([name]) => name);
  if (!id || !stamp || !signatures) throw new WebhookVerificationError(`missing header(s): ${missing.join(", ")}`);

  if (!/^\d+$/.test(stamp.trim())) {
    throw new WebhookVerificationError(`webhook-timestamp is not a whole number of seconds: ${JSON.stringify(stamp)}`);
  }
  const timestamp = Number(stamp.trim());
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const age = (options.nowSeconds ?? Date.now() / 1000) - timestamp;
  if (age > tolerance)
    throw new WebhookVerificationError(`the delivery is too old (${Math.floor(age)} s; ${tolerance} s allowed)`);
  if (-age > tolerance)
    throw new WebhookVerificationError(`the delivery's timestamp is ${Math.floor(-age)} s in the future`);

  const expected = digest(key, id, timestamp, raw);
  let matched = false;
  for (const candidate of signatures.split(" ")) {
    const comma = candidate.indexOf(",");
    if (comma < 0 || candidate.slice(0, comma) !== "v1") continue;
    const encoded = candidate.slice(comma + 1);
    if (!encoded || !BASE64.test(encoded)) continue;
    const given = Buffer.from(encoded, "base64");
    // Every candidate is compared, so the time taken says nothing of which one matched.
    matched = (given.length === expected.length && timingSafeEqual(given, expected)) || matched;
  }
  if (!matched) throw new WebhookVerificationError("no v1 signature in webhook-signature matches the body");

  let event: unknown;
  try {
    event = JSON.parse(raw.toString("utf8"));
  } catch {
    throw new WebhookVerificationError("the signed body is not JSON");
  }
  if (event === null || typeof event !== "object" || Array.isArray(event)) {
    throw new WebhookVerificationError("the signed body is not a JSON object");
  }
  return event as WebhookEvent;
}

/** The `webhook-signature` value errand sends for `body` as delivery `id` at `timestamp` (for tests of a receiver). */
export function signWebhook(
  secret: string | Uint8Array,
  id: string,
  timestamp: number,
  body: string | Uint8Array,
): string {
  const raw = typeof body === "string" ? Buffer.from(body, "utf8") : Buffer.from(body);
  return `v1,${digest(secretKey(secret), id, timestamp, raw).toString("base64")}`;
}

function digest(key: Buffer, id: string, timestamp: number, body: Buffer): Buffer {
  return createHmac("sha256", key).update(`${id}.${timestamp}.`).update(body).digest();
}

/** The HMAC key of a secret: `whsec_` and base64 (the prefix may be left off), or the raw key's bytes. */
function secretKey(secret: string | Uint8Array): Buffer {
  let key: Buffer;
  if (typeof secret === "string") {
    const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
    // A wrong secret is the receiver's configuration, not a bad delivery.
    if (!BASE64.test(encoded)) throw new TypeError("a webhook secret is whsec_ and the base64 of its key");
    key = Buffer.from(encoded, "base64");
  } else {
    key = Buffer.from(secret);
  }
  if (key.length === 0) throw new TypeError("the webhook secret is empty");
  return key;
}

/** A header's value, whatever the case of its name and the shape of `headers`. */
function header(headers: WebhookHeaders, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === name) return Array.isArray(value) ? value.join(" ") : value;
  }
  return undefined;
}
