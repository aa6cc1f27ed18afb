import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A port the system says is free now (it may be taken again before use; the server then fails to start, loudly). */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/**
 * The shared server's port: E2E_PORT when set (to reach it from a browser while debugging), else a free one, so two
 * runs of `npm test` on one machine never collide ("Address already in use" when both took a fixed default).
 */
export const suitePort = async () => (process.env.E2E_PORT ? Number(process.env.E2E_PORT) : freePort());

export interface DevServer {
  origin: string;
  api: string;
  adminToken: string;
  stateDir: string;
  output: () => string;
  /** The server's output as a file too, for test files (another process) to read: simulated emails are printed there. */
  logFile: string;
  stop: () => Promise<void>;
}

/**
 * `npm run dev` as a user runs it (migrations, seed, wrangler dev), on its own port and a fresh local database.
 * Secrets are passed with `--var`, the way the contract says a client may start the service.
 *
 * Beside a developer's own `npm run dev` on the same checkout it touches nothing that one uses: its database and
 * wrangler's dev registry (where each `wrangler dev` announces its worker by name, and both are named
 * stock-wallet-api) live in a temporary directory outside the repository; the generated static files it writes at
 * start (public/, src/generated/) are written only when they differ, which they do not on the same checkout; and
 * its PAYMENT_BASE_URL is its own origin (the dev script makes it follow PORT: no `--var` sets it here, so the tests
 * of payment links check that), so the payment links it hands out never lead to the developer's server.
 */
export async function startDevServer(port: number, extra: { args?: string[]; env?: Record<string, string> } = {}): Promise<DevServer> {
  const state = mkdtempSync(join(tmpdir(), 'stock-wallet-e2e-'));
  const origin = `http://localhost:${port}`;
  const adminToken = 'e2e-admin-token';
  // The environment of a person's shell: without vitest's NODE_ENV=test, which among other things stops wrangler from
  // fetching `request.cf` data (the dev script must keep it from going to the network on its own).
  const { NODE_ENV: _vitest, ...shell } = process.env;
  const child: ChildProcess = spawn(
    'npm',
    [
      ...['run', 'dev', '--', '--var', `ADMIN_TOKEN:${adminToken}`, '--var', 'DEV_CHECKOUT:true', '--var', 'DASHBOARD_SIGNUP:open'],
      // Webhook receivers of the tests run on 127.0.0.1, and a failed delivery is retried after 1 s, 2 s...
      ...['--var', 'ALLOW_LOCAL_WEBHOOK_URLS:true', '--var', 'WEBHOOK_RETRY_BASE_SECONDS:1'],
      // Every slot is the generic adapter (its local checkout page), whatever provider block the developer's
      // .dev.vars turns on: `--var` wins over .dev.vars.
      ...['ONE', 'TWO', 'THREE'].flatMap((slot) => ['--var', `GATEWAY_${slot}_PROVIDER:generic`]),
      ...(extra.args ?? []),
    ],
    {
      env: { ...shell, PORT: String(port), DEV_STATE_DIR: state, WRANGLER_REGISTRY_PATH: join(state, 'registry'), WRANGLER_SEND_METRICS: 'false', ...extra.env },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let log = '';
  const logFile = join(state, 'dev-server.log');
  const keep = (chunk: Buffer) => {
    log += chunk;
    appendFileSync(logFile, chunk);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);

  const stop = async () => {
    if (child.pid && child.exitCode === null) {
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        // already gone
      }
      await new Promise((resolve) => setTimeout(resolve, 1000));
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    rmSync(state, { recursive: true, force: true });
  };

  const deadline = Date.now() + 120_000;
  // Ready, and the banner the dev script prints after it.
  while (!log.includes('Ready on') || !log.includes('Demo API key')) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`npm run dev did not come up:\n${log}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return { origin, api: `${origin}/api/v2`, adminToken, stateDir: state, output: () => log, logFile, stop };
}
