/**
 * A backend with a service token acts for a tenant's user
 * (`Errand-On-Behalf-Of`): the job it submits is that user's, who sees it
 * with their own token, and nobody else's.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import { ErrandClient, ErrandError } from "../src/index.js";
import { Errand, JOB_TYPE, mintToken, TENANT, USER, userToken } from "./harness.js";

const alice = { tenant: TENANT, user: USER };

test("a service token submits for a user, who then sees the job with their own token", async (t) => {
  const errand = await Errand.forTest(t);
  const service = mintToken("--service", "--name", "billing-backend", "--tenants", TENANT);
  const backend = new ErrandClient({ baseUrl: errand.url, token: service });

  const submitted = await backend.submit(JOB_TYPE, { invoice: 12 }, { onBehalfOf: alice });
  assert.equal(submitted.created, true);
  // alice's own token reads it: the job is hers.
  const seen = await errand.job(submitted.job.id, userToken());
  assert.deepEqual(seen.params, { invoice: 12 });
  const own = new ErrandClient({ baseUrl: errand.url, token: userToken() });
  assert.deepEqual(
    (await own.listJobs()).jobs.map((job) => job.id),
    [submitted.job.id],
  );
  // The service reads and cancels it for her, as her.
  assert.equal((await backend.getJob(submitted.job.id, { onBehalfOf: alice })).id, submitted.job.id);
  const cancelled = await backend.cancel(submitted.job.id, { onBehalfOf: alice });
  assert.equal(cancelled.status, "cancelled");

  // Another user of the tenant does not see it, directly or through the service.
  const bob = { tenant: TENANT, user: "bob" };
  const hidden = await backend.getJob(submitted.job.id, { onBehalfOf: bob }).catch((error: unknown) => error);
  assert.ok(hidden instanceof ErrandError && hidden.status === 404, String(hidden));
  const bobs = new ErrandClient({ baseUrl: errand.url, token: userToken("bob") });
  assert.deepEqual((await bobs.listJobs()).jobs, []);
});

test("a service token refuses a tenant it was not granted, and acting for nobody", async (t) => {
  const errand = await Errand.forTest(t);
  const service = mintToken("--service", "--name", "billing-backend", "--tenants", TENANT);
  const backend = new ErrandClient({ baseUrl: errand.url, token: service });

  const elsewhere = await backend
    .submit(JOB_TYPE, {}, { onBehalfOf: { tenant: "globex", user: "gus" } })
    .catch((error: unknown) => error);
  assert.ok(elsewhere instanceof ErrandError && elsewhere.status === 403, String(elsewhere));
  const nobody = await backend.submit(JOB_TYPE, {}).catch((error: unknown) => error);
  assert.ok(nobody instanceof ErrandError && nobody.status >= 400 && nobody.status < 500, String(nobody));
});

test("a tenant or user holding a slash is percent-encoded, not misread", async (t) => {
  const errand = await Errand.forTest(t);
  const service = mintToken("--service", "--name", "billing-backend");
  const backend = new ErrandClient({ baseUrl: errand.url, token: service });
  const odd = { tenant: "org/7", user: "auth0|42/b" };

  const submitted = await backend.submit(JOB_TYPE, { invoice: 13 }, { onBehalfOf: odd });
  const theirs = mintToken("--tenant", odd.tenant, "--user", odd.user);
  assert.equal((await errand.job(submitted.job.id, theirs)).id, submitted.job.id);
});
