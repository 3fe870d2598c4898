/**
 * The generated types (src/generated/openapi.ts): errand's OpenAPI document,
 * as an errand started with the repository's config.toml serves it, turned
 * into TypeScript by openapi-typescript (pinned). One function makes the
 * text, so that the generator writes exactly what the drift test compares.
 */

import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import openapiTS, { astToString, type OpenAPI3 } from "openapi-typescript";
import { Errand } from "../tests/harness.js";

/** src/generated/openapi.ts in the package (this file is compiled to dist/scripts/). */
export const GENERATED_FILE = resolve(dirname(fileURLToPath(import.meta.url)), "../../src/generated/openapi.ts");

const HEADER = `/**
 * Generated from errand's GET /openapi.json (an errand started with the
 * repository's config.toml) by openapi-typescript: do not edit.
 * Regenerate with \`clients/typescript/run-tests.sh --generate\`
 * (or \`npm run generate\`); the tests fail while this file differs from a
 * fresh generation.
 */

`;

/** The types of the OpenAPI document an errand with the repository's config.toml serves. */
export async function generateTypes(): Promise<string> {
  const errand = await Errand.start({ kind: "plain" });
  try {
    const response = await fetch(`${errand.url}/openapi.json`);
    if (response.status !== 200) throw new Error(`GET /openapi.json: ${response.status}`);
    const document = (await response.json()) as OpenAPI3;
    return HEADER + astToString(await openapiTS(document, { alphabetize: true, emptyObjectsUnknown: true }));
  } finally {
    await errand.stop();
  }
}
