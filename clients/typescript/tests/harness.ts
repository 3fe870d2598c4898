/**
 * A real errand for the tests: a fresh database, an `errand serve` process,
 * tokens from `errand token`, and the user's side of the API through plain
 * `fetch` (not the package under test), to read back what a test did.
 *
 * Nothing here imitates errand: every test talks to the binary named by
 * `$ERRAND_BIN`, on a database of its own on `$DATABASE_URL`'s server, a
 * copy of a template migrated once per run (`run-tests.sh` makes it and
 * names it in `$ERRAND_TEST_TEMPLATE_DB`; without it, once per test file).
 * The same conventions as the Python package's tests/harness.py; what the
 * tests wait and watch with is support.ts, their workers workers.ts.
 */

import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import type { TestContext } from "node:test";
import { fileURLToPath } from "node:url";
import type { components } from "../src/generated/openapi.js";
import { onTeardown, waitUntil } from "./support.js";

export type JobView = components["schemas"]["JobView"];

/** The repository root: this file is compiled to clients/typescript/dist/tests/. */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../../..");
export const CONFIG = join(REPO_ROOT, "config.toml");

/** Signs every token of the run (errand wants 32 bytes or more). */
const JWT_SECRET = "typescript-client-tests-secret-0123456789";

export const JOB_TYPE = "render_invoice";
export const TENANT = "acme";
export const USER = "alice";
/** acme's tenant admin, who registers its webhook endpoints. */
export const ADMIN = "ada";

/** What a test of webhooks adds to errand's environment: endpoints on this machine allowed, due deliveries looked for often. */
export const WEBHOOKS_ENV = {
  ERRAND_WEBHOOKS__ALLOW_HOSTS: "127.0.0.1",
  ERRAND_WEBHOOKS__POLL_INTERVAL: "100ms",
};

export function errandBin(): string {
  const binary = process.env.ERRAND_BIN;
  if (!binary) throw new Error("set ERRAND_BIN to the errand binary, e.g. ~/.cache/errand-target/debug/errand");
  return binary;
}

/** `$DATABASE_URL` with its database replaced by `name`. */
export function databaseUrl(name: string): string {
  const url = new URL(process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres");
  url.pathname = `/${name}`;
  return url.toString();
}

/** Run `sql` on the server, through its `postgres` database. */
export function psql(sql: string): void {
  execFileSync("psql", [databaseUrl("postgres"), "-v", "ON_ERROR_STOP=1", "-q", "-c", sql], { stdio: "pipe" });
}

/**
 * The environment errand runs with. `test`: one external job type
 * (render_invoice, 3 attempts, a 50 ms backoff), a 3 s lease, no rate limits.
 * `plain`: the repository's config.toml as it is (the generator's).
 */
export function errandEnv(dbUrl: string, extra: Record<string, string> = {}, kind: "test" | "plain" = "test") {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    // DATABASE_URL would override ERRAND_DATABASE__URL (errand reads it last).
    if (value !== undefined && !name.startsWith("ERRAND_") && name !== "DATABASE_URL") env[name] = value;
  }
  Object.assign(env, { ERRAND_DATABASE__URL: dbUrl, ERRAND_AUTH__JWT_SECRET: JWT_SECRET, RUST_LOG: "warn" });
  if (kind === "test") {
    Object.assign(env, {
      ERRAND_WORKERS__LEASE: "3s",
      ERRAND_RATE_LIMITS__PER_USER: "unlimited",
      ERRAND_RATE_LIMITS__CREATES_PER_USER: "unlimited",
      ERRAND_RATE_LIMITS__PER_TENANT: "unlimited",
      ERRAND_JOB_TYPES__RENDER_INVOICE__HANDLER: "external",
      ERRAND_JOB_TYPES__RENDER_INVOICE__MAX_ATTEMPTS: "3",
      ERRAND_JOB_TYPES__RENDER_INVOICE__BACKOFF_BASE: "50ms",
    });
  }
  return Object.assign(env, extra);
}

const tokens = new Map<string, string>();

/** `errand token ARGS` for this run's secret, minted once per process. */
export function mintToken(...args: string[]): string {
  const key = args.join(" ");
  let token = tokens.get(key);
  if (token === undefined) {
    const env = errandEnv(databaseUrl("postgres"));
    token = execFileSync(errandBin(), ["token", "--config", CONFIG, ...args], { env, encoding: "utf8" }).trim();
    tokens.set(key, token);
  }
  return token;
}

export const workerToken = () => mintToken("--worker", "--types", JOB_TYPE, "--user", "ts-worker-tests");
export const userToken = (user = USER) => mintToken("--tenant", TENANT, "--user", user);
export const adminToken = () => mintToken("--tenant", TENANT, "--user", ADMIN, "--tenant-admin");
export const operatorToken = () => mintToken("--operator", "--user", "olga");

/** A port nothing listens on now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const address = server.address();
  await new Promise((done) => server.close(done));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

let ownTemplate: string | undefined;

/** The migrated template each test's database copies. */
export function templateDatabase(): string {
  const given = process.env.ERRAND_TEST_TEMPLATE_DB;
  if (given) return given;
  if (ownTemplate === undefined) {
    const name = `errand_tsc_tpl_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
    psql(`CREATE DATABASE "${name}"`);
    process.on("exit", () => psql(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
    execFileSync(errandBin(), ["migrate", "--config", CONFIG], { env: errandEnv(databaseUrl(name)), stdio: "pipe" });
    ownTemplate = name;
  }
  return ownTemplate;
}

export interface StartOptions {
  env?: Record<string, string>;
  /** Listen here (a test that reaches for errand before it is up); a free port by default. */
  port?: number;
  kind?: "test" | "plain";
}

/** One `errand serve` process on a database of its own. */
export class Errand {
  private constructor(
    readonly url: string,
    readonly dbName: string,
    readonly workDir: string,
    private readonly process: ChildProcess,
  ) {}

  /** An errand for the rest of the test: stopped (and its database dropped) when the test ends. */
  static async forTest(t: TestContext, options: StartOptions = {}): Promise<Errand> {
    const errand = await Errand.start(options);
    onTeardown(t, () => errand.stop());
    return errand;
  }

  static async start(options: StartOptions = {}): Promise<Errand> {
    const dbName = `errand_tsc_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
    psql(`CREATE DATABASE "${dbName}" TEMPLATE "${templateDatabase()}"`);
    const port = options.port ?? (await freePort());
    const url = `http://127.0.0.1:${port}`;
    const workDir = mkdtempSync(join(tmpdir(), "errand-tsc-"));
    const extra = {
      ERRAND_HTTP__BIND: `127.0.0.1:${port}`,
      ERRAND_HTTP__PUBLIC_BASE_URL: url,
      ERRAND_STORAGE__LOCAL_DIR: join(workDir, "results"),
      ...options.env,
    };
    const child = spawn(errandBin(), ["serve", "--config", CONFIG], {
      env: errandEnv(databaseUrl(dbName), extra, options.kind),
      cwd: workDir,
      stdio: ["ignore", "pipe", openSync(join(workDir, "errand.log"), "w")],
    });
    const errand = new Errand(url, dbName, workDir, child);
    try {
      await waitForLine(child, "errand listening on", 60_000);
    } catch (error) {
      const log = errand.log();
      await errand.stop();
      throw new Error(`errand did not start: ${String(error)}\n${log}`);
    }
    return errand;
  }

  /** What errand wrote on stderr so far (its end). */
  log(): string {
    return readFileSync(join(this.workDir, "errand.log"), "utf8").slice(-5000);
  }

  /** Stop errand (SIGTERM to this test's own child) and drop its database. */
  async stop(): Promise<void> {
    // (No pid: it never started, and no exit will come.)
    if (this.process.pid !== undefined && this.process.exitCode === null && this.process.signalCode === null) {
      const exited = new Promise((done) => this.process.once("exit", done));
      this.process.kill("SIGTERM");
      const timer = setTimeout(() => this.process.kill("SIGKILL"), 20_000);
      await exited;
      clearTimeout(timer);
    }
    psql(`DROP DATABASE IF EXISTS "${this.dbName}" WITH (FORCE)`);
    rmSync(this.workDir, { recursive: true, force: true });
  }

  /** A request as `token`'s holder (alice of acme by default). */
  request(path: string, init: RequestInit = {}, token = userToken()): Promise<Response> {
    const headers = new Headers(init.headers);
    headers.set("Authorization", `Bearer ${token}`);
    if (init.body !== undefined) headers.set("Content-Type", "application/json");
    return fetch(this.url + path, { ...init, headers, signal: AbortSignal.timeout(10_000) });
  }

  /** `POST /jobs/{type}` as alice; answers the new job's id. */
  async submit(params: Record<string, unknown>, type = JOB_TYPE): Promise<string> {
    const response = await this.request(`/jobs/${type}`, {
      method: "POST",
      body: JSON.stringify(params),
      headers: { "Idempotency-Key": randomUUID() },
    });
    const body = (await response.json()) as JobView;
    if (response.status !== 202) throw new Error(`submit: ${response.status} ${JSON.stringify(body)}`);
    return body.id;
  }

  /** `GET /jobs/{id}` as `token`'s holder (its owner, alice, by default). */
  async job(id: string, token = userToken()): Promise<JobView> {
    const response = await this.request(`/jobs/${id}`, {}, token);
    const body = await response.json();
    if (response.status !== 200) throw new Error(`GET /jobs/${id}: ${response.status} ${JSON.stringify(body)}`);
    return body as JobView;
  }

  /** `GET /admin/jobs/{id}` as an operator: the job with its `history` (each attempt's `logs`). */
  async adminJob(id: string): Promise<AdminJob> {
    const response = await this.request(`/admin/jobs/${id}`, {}, operatorToken());
    if (response.status !== 200) throw new Error(`GET /admin/jobs/${id}: ${response.status}`);
    return (await response.json()) as AdminJob;
  }

  /** Poll the job until `condition(job)`; answer it. */
  async waitForJob(id: string, condition: (job: JobView) => boolean, timeoutMs = 15_000, what = "the job") {
    let last: JobView | undefined;
    try {
      return await waitUntil(
        async () => {
          last = await this.job(id);
          return condition(last) ? last : undefined;
        },
        timeoutMs,
        what,
      );
    } catch (error) {
      throw new Error(
        `${String(error)}; the job last read: ${JSON.stringify(last)}\n--- errand's log ---\n${this.log()}`,
      );
    }
  }

  /** Poll the job until errand rescued its first attempt, whose lease ran out: attempt 1 no longer runs. */
  waitForRescue(id: string): Promise<JobView> {
    const rescued = (job: JobView) => !(job.state === "running" && job.attempts === 1);
    return this.waitForJob(id, rescued, 20_000, "errand to rescue the expired lease");
  }

  /** Poll the job until it ended (completed, failed or cancelled). */
  waitForEnd(id: string, timeoutMs = 15_000): Promise<JobView> {
    const ended = (job: JobView) => ["completed", "failed", "cancelled"].includes(job.status);
    return this.waitForJob(id, ended, timeoutMs, `job ${id} to end`);
  }

  /** `POST /webhooks` as acme's tenant admin; answers the endpoint with its `secret` (shown this once). */
  async registerWebhook(url: string, events: string[]): Promise<{ id: string; secret: string }> {
    const response = await this.request(
      "/webhooks",
      { method: "POST", body: JSON.stringify({ url, events }) },
      adminToken(),
    );
    const body = await response.json();
    if (response.status !== 201) throw new Error(`register: ${response.status} ${JSON.stringify(body)}`);
    return body as { id: string; secret: string };
  }
}

export interface AdminJob {
  history: {
    attempts: { run: number; attempt: number; log_truncated: boolean; logs: AttemptLogLine[] }[];
  };
}

export interface AttemptLogLine {
  at: string;
  level: string;
  message: string;
  fields?: Record<string, unknown> | null;
}

/** Resolve once the child's stdout has a line holding `fragment`; reject on timeout or its end. */
function waitForLine(child: ChildProcess, fragment: string, timeoutMs: number): Promise<void> {
  const stdout = child.stdout;
  if (!stdout) return Promise.reject(new Error("no stdout"));
  return new Promise((resolvePromise, reject) => {
    // A binary that cannot be started (missing, being rebuilt) is an `error` event, not an exit.
    child.once("error", reject);
    const lines = createInterface({ input: stdout });
    const timer = setTimeout(() => reject(new Error(`no line with ${fragment} within ${timeoutMs} ms`)), timeoutMs);
    lines.on("line", (line) => {
      if (!line.includes(fragment)) return;
      clearTimeout(timer);
      resolvePromise();
    });
    lines.on("close", () => {
      clearTimeout(timer);
      reject(new Error("errand's output ended"));
    });
  });
}
