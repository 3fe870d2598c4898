/**
 * The committed src/generated/openapi.ts is what errand's OpenAPI document
 * generates today: a change of the API that the package has not taken in
 * fails here, in CI, rather than in an application.
 */

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { GENERATED_FILE, generateTypes } from "../scripts/openapi-types.js";

test("the generated types match errand's OpenAPI document", async () => {
  const fresh = await generateTypes();
  const committed = readFileSync(GENERATED_FILE, "utf8");
  assert.ok(
    fresh === committed,
    "src/generated/openapi.ts differs from a fresh generation: run clients/typescript/run-tests.sh --generate, review the diff, and commit it",
  );
});
