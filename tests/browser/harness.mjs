// What the browser tests start and stop: errand (from ERRAND_BIN, on a
// database the caller made for the run, DATABASE_URL), maildev (from
// ERRAND_TEST_MAILDEV), Chromium (through playwright-core from
// ERRAND_TEST_PLAYWRIGHT) and, for a test that must hold an export mid-run,
// a psql session holding a lock. Every process started here is stopped by
// its PID in `stop()`, and killed on exit if a failure skipped that.

import { spawn, execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const configPath = path.join(repoRoot, 'config.toml');
/** Signs the test tokens (and stream tickets); 40 characters, like a real secret. */
const JWT_SECRET = 'browser-tests-secret-0123456789abcdefghi';
export const TENANT = 'demo-1';

/** Processes still running, by PID: killed if the run ends without `stop()`. */
const running = new Map();
process.on('exit', () => {
  for (const pid of running.keys()) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

function requireEnv(name, why) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: ${why}`);
  return value;
}

/** A TCP port free on loopback when asked. */
export async function freePort() {
  const server = net.createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address();
  server.close();
  await once(server, 'close');
  return port;
}

/** Polls `check` until it returns something truthy (returned), or fails after `timeoutMs`. */
export async function eventually(what, check, { timeoutMs = 10_000, intervalMs = 50 } = {}) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const result = await check().catch(() => null);
    if (result) return result;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

function track(child) {
  running.set(child.pid, child);
  child.once('exit', () => running.delete(child.pid));
  return child;
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone. */
async function terminate(child, graceMs = 15_000) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** One `errand serve` process; `restart()` starts it again on the same port. */
class ErrandProcess {
  constructor(bin, env, port) {
    this.bin = bin;
    this.env = env;
    this.port = port;
    this.url = `http://127.0.0.1:${port}`;
    this.child = null;
  }

  async start() {
    const env = { ...this.env, ERRAND_HTTP__BIND: `127.0.0.1:${this.port}` };
    const child = track(spawn(this.bin, ['serve', '--config', configPath], { env, stdio: ['ignore', 'pipe', 'inherit'] }));
    const lines = createInterface({ input: child.stdout });
    const [line] = await Promise.race([
      once(lines, 'line'),
      once(child, 'exit').then(([code]) => { throw new Error(`errand exited with ${code} before listening`); }),
    ]);
    if (!line.startsWith('errand listening on ')) throw new Error(`errand did not start: ${line}`);
    lines.on('line', () => {}); // keep draining stdout
    this.child = child;
    return this;
  }

  /** SIGTERM, as a deployment stops it, and wait for it to exit. */
  async stop() {
    if (this.child) await terminate(this.child);
    this.child = null;
  }

  async restart() {
    await this.stop();
    return this.start();
  }
}

/** maildev, read back over its REST API. */
class MailServer {
  static async start(bin) {
    const smtpPort = await freePort();
    const webPort = await freePort();
    const args = ['--smtp', String(smtpPort), '--web', String(webPort), '--ip', '127.0.0.1', '--web-ip', '127.0.0.1', '--silent'];
    const server = new MailServer();
    server.smtpPort = smtpPort;
    server.api = `http://127.0.0.1:${webPort}/api`;
    server.child = track(spawn(bin, args, { stdio: 'ignore' }));
    await eventually('maildev to answer', async () => (await fetch(`${server.api}/healthz`)).ok, { timeoutMs: 20_000 });
    return server;
  }

  async emails() {
    return (await fetch(`${this.api}/email`)).json();
  }

  /** Waits for the first email `matching`, and returns it. */
  waitFor(what, matching, timeoutMs = 15_000) {
    return eventually(what, async () => (await this.emails()).find(matching), { timeoutMs, intervalMs: 100 });
  }

  async stop() {
    await terminate(this.child);
  }
}

/**
 * The Web Push tests' push service (tools/pushstub/stub.py, run by
 * ERRAND_TEST_PUSH_PYTHON): it hands out devices' subscriptions, and checks
 * and decrypts what errand sends them.
 */
class PushService {
  static async start(python) {
    const service = new PushService();
    service.child = track(spawn(python, [path.join(repoRoot, 'tools/pushstub/stub.py')], { stdio: ['ignore', 'pipe', 'inherit'] }));
    const [port] = await once(createInterface({ input: service.child.stdout }), 'line');
    service.url = `http://127.0.0.1:${port.trim()}`;
    return service;
  }

  /** A browser's `PushSubscription.toJSON()` for `device`. */
  async subscription(device) {
    return (await fetch(`${this.url}/subscription/${device}`)).json();
  }

  /** Waits until `n` messages were taken (checked and decrypted); returns them. */
  waitFor(n, timeoutMs = 15_000) {
    return eventually(`${n} push messages`, async () => {
      const messages = await (await fetch(`${this.url}/messages`)).json();
      return messages.length >= n && messages;
    }, { timeoutMs, intervalMs: 100 });
  }

  async refused() {
    return (await fetch(`${this.url}/refused`)).json();
  }

  async stop() {
    await terminate(this.child, 2_000);
  }
}

/** Calls errand's API as one user, with a token from `errand token`. */
export class ApiUser {
  constructor(baseUrl, token) {
    this.baseUrl = baseUrl;
    this.token = token;
  }

  async request(method, route, { body, headers = {}, baseUrl = this.baseUrl } = {}) {
    const response = await fetch(baseUrl + route, {
      method,
      headers: { Authorization: `Bearer ${this.token}`, 'Content-Type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`${method} ${route}: ${response.status} ${await response.text()}`);
    return response.status === 204 ? null : response.json();
  }

  get(route, options) {
    return this.request('GET', route, options);
  }

  /** Submits a job with a fresh idempotency key. */
  submit(type, params = {}, options = {}) {
    return this.request('POST', `/jobs/${type}`, { ...options, body: params, headers: { 'Idempotency-Key': crypto.randomUUID() } });
  }

  /** Waits until the job has ended, and returns it. */
  waitForEnd(id, options) {
    return eventually(`job ${id} to end`, async () => {
      const job = await this.get(`/jobs/${id}`, options);
      return ['completed', 'failed'].includes(job.status) && job;
    });
  }

  /** The bytes of a completed job's file, through a fresh signed URL. */
  async resultBytes(id) {
    const job = await this.get(`/jobs/${id}`);
    const response = await fetch(job.result_url, { headers: { Authorization: `Bearer ${this.token}` } });
    if (!response.ok) throw new Error(`downloading ${job.result_url}: ${response.status}`);
    return Buffer.from(await response.arrayBuffer());
  }
}

/** Everything a run of the browser tests needs, started once. */
export class Harness {
  /**
   * `seed: false` skips `errand demo seed` (which adds its rows again on
   * every run): for a test file that needs no demo data and shares the
   * database with one that does.
   */
  static async start({ seed = true, push = false } = {}) {
    const harness = new Harness();
    try {
      await harness.#start({ seed, push });
    } catch (error) {
      await harness.stop();
      throw error;
    }
    return harness;
  }

  async #start({ seed, push }) {
    this.bin = requireEnv('ERRAND_BIN', 'the errand binary to test');
    const databaseUrl = requireEnv('DATABASE_URL', 'a fresh empty database for this run');
    const maildev = requireEnv('ERRAND_TEST_MAILDEV', 'maildev, installed by scripts/test');
    const playwrightDir = requireEnv('ERRAND_TEST_PLAYWRIGHT', 'where scripts/test installed tests/browser/package.json');
    this.databaseUrl = databaseUrl;
    this.resultsDir = await mkdtemp(path.join(os.tmpdir(), 'errand-browser-results-'));
    this.mail = await MailServer.start(maildev);
    const port = await freePort();
    this.baseUrl = `http://127.0.0.1:${port}`;
    const { DATABASE_URL: _ignored, ...inherited } = process.env;
    this.env = {
      ...inherited,
      ERRAND_DATABASE__URL: databaseUrl,
      ERRAND_HTTP__PUBLIC_BASE_URL: this.baseUrl,
      ERRAND_AUTH__JWT_SECRET: JWT_SECRET,
      ERRAND_STORAGE__LOCAL_DIR: this.resultsDir,
      ERRAND_EMAIL__ENABLED: 'true',
      ERRAND_EMAIL__SMTP_PORT: String(this.mail.smtpPort),
      ERRAND_WORKERS__POLL_INTERVAL: '200ms',
      // The console links each job to the trace of the request that recorded it.
      ERRAND_TELEMETRY__TRACE_URL: 'https://traces.example.com/trace/{trace_id}',
      // errand waits this long on SIGTERM for open connections, and a live
      // stream stays open: the restart test would wait the default 10 s.
      ERRAND_WORKERS__SHUTDOWN_GRACE: '2s',
      // A refusal over a quota is retried after this: the quota test need not wait the default 30 s.
      ERRAND_QUOTAS__RETRY_AFTER: '1s',
      // A category no one can turn off, for the preferences grid (the demo page starts no sleep jobs).
      ERRAND_NOTIFICATIONS__PREFERENCES__REQUIRED: 'sleep',
      // A `sleep` job that keeps failing fails for good within a second (the
      // operators' console tests retry such jobs; the demo page starts none).
      ERRAND_JOB_TYPES__SLEEP__MAX_ATTEMPTS: '2',
      ERRAND_JOB_TYPES__SLEEP__BACKOFF_BASE: '50ms',
      ERRAND_JOB_TYPES__SLEEP__BACKOFF_MAX: '100ms',
      RUST_LOG: 'warn',
    };
    if (push) await this.#startPush();
    if (seed) await this.#errandCommand(['demo', 'seed', '--config', configPath, '--tenants', '2', '--rows', '2000']);
    this.errand = await new ErrandProcess(this.bin, this.env, port).start();
    const { chromium } = await import(path.join(playwrightDir, 'node_modules/playwright-core/index.mjs'));
    this.browser = await chromium.launch({
      executablePath: process.env.ERRAND_TEST_CHROMIUM || '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
    });
  }

  /** Web Push on, to a push service of the test's own (`this.push`), under a fresh VAPID pair. */
  async #startPush() {
    this.push = await PushService.start(requireEnv('ERRAND_TEST_PUSH_PYTHON', 'the push stub\'s python, installed by scripts/test'));
    const keys = await this.#errandCommand(['push', 'keys']);
    const value = (name) => keys.match(new RegExp(`^${name} = "([^"]+)"$`, 'm'))[1];
    Object.assign(this.env, {
      ERRAND_PUSH__ENABLED: 'true',
      ERRAND_PUSH__VAPID_PUBLIC_KEY: value('vapid_public_key'),
      ERRAND_PUSH__VAPID_PRIVATE_KEY: value('vapid_private_key'),
      ERRAND_PUSH__SUBJECT: 'mailto:ops@example.com',
      ERRAND_PUSH__ALLOW_HOSTS: '127.0.0.1',
      ERRAND_PUSH__PRIVATE_HOSTS: '127.0.0.1',
      ERRAND_PUSH__POLL_INTERVAL: '200ms',
    });
  }

  async #errandCommand(args) {
    const { stdout } = await promisify(execFile)(this.bin, args, { env: this.env });
    return stdout.trim();
  }

  /** A token for `user` of the demo tenant (email `<user>@example.com`). */
  token(user) {
    return this.#errandCommand(['token', '--tenant', TENANT, '--user', user, '--email', `${user}@example.com`]);
  }

  /** The demo page's sign-in link for `user`, as `errand token --link` prints it. */
  signInLink(user) {
    return this.#errandCommand(['token', '--link', '--config', configPath, '--tenant', TENANT, '--user', user, '--email', `${user}@example.com`]);
  }

  async api(user) {
    return new ApiUser(this.baseUrl, await this.token(user));
  }

  /** An API caller as a tenant admin (`scope: tenant_admin`) of the demo tenant. */
  async adminApi(user) {
    return new ApiUser(this.baseUrl, await this.#errandCommand(['token', '--tenant', TENANT, '--user', user, '--tenant-admin']));
  }

  /** An API caller as `user` of `tenant` (another tenant than the demo's, say). */
  async tenantApi(tenant, user) {
    return new ApiUser(this.baseUrl, await this.#errandCommand(['token', '--tenant', tenant, '--user', user]));
  }

  /** An operator's token (`scope: operator`, or `operator:read` when `readOnly`). */
  operatorToken(name, { readOnly = false } = {}) {
    return this.#errandCommand(['token', '--operator', '--user', name, ...(readOnly ? ['--read-only'] : [])]);
  }

  /** The operators' console's sign-in link for `name`, as `errand token --operator --link` prints it. */
  operatorSignInLink(name, { readOnly = false } = {}) {
    return this.#errandCommand(['token', '--operator', '--link', '--config', configPath, '--user', name, ...(readOnly ? ['--read-only'] : [])]);
  }

  /** Another errand process on the same database (and another port). */
  async startAnotherErrand() {
    return new ErrandProcess(this.bin, this.env, await freePort()).start();
  }

  /**
   * Holds `table` locked (a psql session in a transaction), so that an
   * export reading it waits mid-run until `release()`: a gate, not a sleep.
   */
  async holdTable(table) {
    const psql = track(spawn(process.env.ERRAND_TEST_PSQL || 'psql', [this.databaseUrl, '-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1'],
      { stdio: ['pipe', 'pipe', 'inherit'] }));
    const lines = createInterface({ input: psql.stdout });
    psql.stdin.write(`BEGIN;\nLOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE;\nSELECT 'locked';\n`);
    const [line] = await once(lines, 'line');
    if (line !== 'locked') throw new Error(`psql could not lock ${table}: ${line}`);
    return {
      release: async () => {
        if (psql.exitCode !== null) return;
        const exited = once(psql, 'exit');
        psql.stdin.end('COMMIT;\n');
        await exited;
      },
    };
  }

  async stop() {
    await this.browser?.close().catch(() => {});
    await this.errand?.stop();
    await this.mail?.stop();
    await this.push?.stop();
    for (const child of running.values()) await terminate(child, 2_000);
    if (this.resultsDir) await rm(this.resultsDir, { recursive: true, force: true });
  }
}
