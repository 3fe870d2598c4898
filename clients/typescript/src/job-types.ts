/**
 * Types read off errand's OpenAPI document (generated/openapi.ts), so that
 * what the client sends and reads follows the API, and drifts with it
 * visibly: the tests fail while the generated file is stale.
 *
 * Each configured job type has an operation `POST /jobs/{name}` whose
 * request body is that type's params schema; `JobTypesOf<paths>` maps the
 * names to those params. `BundledJobTypes` is that map for the
 * repository's own config.toml; an application generates its own errand's
 * `paths` with openapi-typescript and writes `ErrandClient<JobTypesOf<paths>>`.
 */

import type { components, paths } from "./generated/openapi.js";

type Schemas = components["schemas"];

/** A job as `GET /jobs/{id}` shows it. */
export type JobView = Schemas["JobView"];
/** A page of `GET /jobs`. */
export type JobList = Schemas["JobList"];
/** A job as `POST /worker/v1/claim` hands it out. */
export type LeasedJob = Schemas["LeasedJob"];
/** A heartbeat's answer. */
export type LeaseRenewed = Schemas["LeaseRenewed"];
/** Where a job is after `/complete` or `/fail`. */
export type Ended = Schemas["Ended"];

/** `status`, the coarse state. */
export type JobStatus = "pending" | "processing" | "completed" | "failed" | "cancelled";

/** A path's job type name, for `/jobs/{name}` of a configured type, and nothing for the API's other paths. */
type JobTypeName<Path> = Path extends `/jobs/${infer Name}`
  ? Name extends `${string}/${string}` | `{${string}}`
    ? never
    : Name
  : never;

/** Each `POST /jobs/{name}` of an errand's generated `paths`, mapped to its params (the request body). */
export type JobTypesOf<Paths> = {
  [Path in keyof Paths as JobTypeName<Path>]: Paths[Path] extends {
    post: { requestBody?: { content: { "application/json": infer Params } } };
  }
    ? Params
    : never;
};

/** The job types of the config.toml this package's types were generated from. */
export type BundledJobTypes = JobTypesOf<paths>;
