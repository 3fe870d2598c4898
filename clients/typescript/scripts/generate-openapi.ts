/**
 * Writes src/generated/openapi.ts afresh (needs ERRAND_BIN and DATABASE_URL,
 * like the tests): `clients/typescript/run-tests.sh --generate`.
 */

import { writeFileSync } from "node:fs";
import { GENERATED_FILE, generateTypes } from "./openapi-types.js";

writeFileSync(GENERATED_FILE, await generateTypes());
console.log(`wrote ${GENERATED_FILE}`);
