/**
 * errand-client: errand from Node (>= 20, ESM, no runtime dependencies).
 *
 * - `ErrandClient` (client.ts): a backend's side of the user API: submit a
 *   job with one idempotency key per intent, for a user through a service
 *   token, wait for it, cancel it, fetch its result's URL.
 * - `verifyWebhook` (webhooks.ts): check a delivery's Standard Webhooks signature.
 * - `Worker` (worker/): run `handler = "external"` job types: worker.ts
 *   the claim loop and a job's end, job.ts what a handler gets, lease.ts
 *   whether an attempt must stop, heartbeat.ts lease renewal, logs.ts the
 *   log lines' batches, api.ts the `/worker/v1` calls.
 * - http.ts: the one transport (token, timeouts, retries with `Retry-After`);
 *   errors.ts: every error the package throws; job-types.ts: the API's
 *   types, read off generated/openapi.ts (generated from errand's OpenAPI).
 */

export {
  type CallOptions,
  ErrandClient,
  type ErrandClientOptions,
  type ListOptions,
  type OnBehalfOf,
  type SubmitOptions,
  type Submitted,
  type WaitOptions,
} from "./client.js";
export {
  Cancelled,
  ErrandError,
  ErrandUnreachable,
  JobFailure,
  JobInterrupted,
  LeaseLost,
  Permanent,
  type Problem,
  Retryable,
  WaitTimeout,
  WebhookVerificationError,
} from "./errors.js";
export type { RetryPolicy, TokenSource } from "./http.js";
export type { BundledJobTypes, JobList, JobStatus, JobTypesOf, JobView } from "./job-types.js";
export {
  DEFAULT_TOLERANCE_SECONDS,
  signWebhook,
  type VerifyOptions,
  verifyWebhook,
  type WebhookEvent,
  type WebhookHeaders,
} from "./webhooks.js";
export type { LogLevel, StoredFile, UploadSource } from "./worker/api.js";
export type { Job, UploadOptions } from "./worker/job.js";
export type { Logger } from "./worker/logger.js";
export { GENERIC_ERROR, type Handler, type JobResult, Worker, type WorkerOptions } from "./worker/worker.js";
