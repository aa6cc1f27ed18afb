// Runs the project's wrangler CLI with the Node binary running this script (Node 22+, from the `node` devDependency
// when the system Node is older), so `npm run dev` works whatever the system Node is.
import { spawn, spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const wranglerBin = join(dirname(require.resolve('wrangler/package.json')), 'bin', 'wrangler.js');

// No network at start: no usage metrics, and no download of Cloudflare's `cf.json` for `request.cf` (the worker never
// reads `request.cf`; offline, that download printed `getaddrinfo ENOTFOUND workers.cloudflare.com` twice).
export const wranglerEnv = { CLOUDFLARE_CF_FETCH_ENABLED: 'false', ...process.env, WRANGLER_SEND_METRICS: 'false' };

export function assertNodeVersion() {
  const major = Number(process.versions.node.split('.')[0]);
  if (major < 22) {
    console.error(`Node ${process.versions.node} is too old for wrangler: Node 22 or newer is required (run through npm scripts, which use the bundled Node 22).`);
    process.exit(1);
  }
}

/** Run wrangler to completion; returns stdout (stderr is shown). Throws on failure. */
export function wrangler(args, { capture = false } = {}) {
  const result = spawnSync(process.execPath, [wranglerBin, ...args], {
    env: { ...wranglerEnv, CI: 'true' },
    stdio: ['ignore', capture ? 'pipe' : 'inherit', 'inherit'],
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024, // JSON answers (an audit's violations) may exceed the 1 MB default
  });
  if (result.status !== 0 && capture) process.stdout.write(result.stdout ?? '');
  if (result.status !== 0) throw new Error(`wrangler ${args.join(' ')} failed (exit ${result.status})`);
  return result.stdout ?? '';
}

/** Start a long-running wrangler command; its stdout is piped to the caller, the rest attached to the terminal. */
export function spawnWrangler(args) {
  return spawn(process.execPath, [wranglerBin, ...args], { env: wranglerEnv, stdio: ['inherit', 'pipe', 'inherit'] });
}
