/**
 * The client's types follow the generated API: a configured job type's
 * params are checked at compile time, an unknown type name takes any JSON
 * object. This file's checks are the compiler's (`tsc` fails on a line
 * marked @ts-expect-error that compiles); the test only runs them.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import type { BundledJobTypes, ErrandClient, JobTypesOf } from "../src/index.js";

/** Never called: only compiled. */
function submissions(client: ErrandClient) {
  client.submit("sleep", { ms: 5 });
  client.submit("export_sales_report", { from: "2026-01-01", to: "2026-03-31", status: "paid" });
  // @ts-expect-error: `to` is required by the type's schema
  client.submit("export_sales_report", { from: "2026-01-01" });
  // @ts-expect-error: ms is a number
  client.submit("sleep", { ms: "5" });
  // @ts-expect-error: the schema allows no other field
  client.submit("sleep", { seconds: 5 });
  // A type the generated API does not know (an external one configured elsewhere): any JSON object.
  client.submit("render_invoice", { invoice: 42, anything: ["goes"] });
}

/** An application's own errand, generated into its own `paths`. */
interface OwnPaths {
  "/jobs/render_invoice": { post: { requestBody: { content: { "application/json": { invoice: number } } } } };
  "/jobs/{id}": { get: unknown };
  "/jobs/{id}/cancel": { post: unknown };
}

function ownTypes(client: ErrandClient<JobTypesOf<OwnPaths>>) {
  client.submit("render_invoice", { invoice: 1 });
  // @ts-expect-error: invoice is a number in this errand
  client.submit("render_invoice", { invoice: "1" });
}

test("the bundled job types are config.toml's", () => {
  const names: (keyof BundledJobTypes)[] = ["export_creator_earnings", "export_sales_report", "noop", "sleep"];
  const own: (keyof JobTypesOf<OwnPaths>)[] = ["render_invoice"];
  assert.equal(typeof submissions, "function");
  assert.equal(typeof ownTypes, "function");
  assert.equal(names.length + own.length, 5);
});
