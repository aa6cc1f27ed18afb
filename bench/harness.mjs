// How `npm run bench` runs the worker: the production bundle (`wrangler deploy --dry-run`), served by workerd
// through wrangler's own Miniflare (same package and workerd binary as `wrangler dev`), with each worker on a direct
// workerd socket: no Node proxy and no Miniflare entry worker between the load generator and the worker.
// See bench/README.md ("Harness") for the measurements behind that choice.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(ROOT, 'package.json'));
export const WRANGLER_DIR = dirname(require.resolve('wrangler/package.json'));
// Wrangler's own miniflare (and through it, its workerd), whatever version the top-level node_modules holds.
const wranglerRequire = createRequire(join(WRANGLER_DIR, 'package.json'));
const MINIFLARE_ENTRY = wranglerRequire.resolve('miniflare');
const MINIFLARE_DIR = resolve(dirname(MINIFLARE_ENTRY), '..', '..');
const miniflareRequire = createRequire(join(MINIFLARE_DIR, 'package.json'));

export const wranglerBin = join(WRANGLER_DIR, 'bin', 'wrangler.js');
export const childEnv = { ...process.env, WRANGLER_SEND_METRICS: 'false', CI: 'true' };

export async function loadMiniflare() {
  return import(MINIFLARE_ENTRY);
}

export async function loadWrangler() {
  return import(join(WRANGLER_DIR, 'wrangler-dist', 'cli.js'));
}

export function versions() {
  const pkg = (dir) => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).version;
  const workerd = miniflareRequire('workerd');
  return {
    node: process.version,
    wrangler: pkg(WRANGLER_DIR),
    miniflare: pkg(MINIFLARE_DIR),
    workerd: workerd.version,
    workerd_binary: workerd.default,
  };
}

/** Run a command to completion, output captured; rejects with the output on failure. */
export function runCommand(args, { cwd = ROOT, children } = {}) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, args, { cwd, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    children?.add(child);
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      children?.delete(child);
      if (code === 0) resolvePromise(output);
      else reject(new Error(`${args.join(' ')} failed (${signal ?? `exit ${code}`}):\n${output.slice(-4000)}`));
    });
  });
}

/**
 * The production bundle, exactly as `wrangler deploy` would upload it. Returns the entry module's path. With `entry`,
 * the same build with that file as the entry point (the instrumented bench entry). `unminified` for profiling:
 * bench/profile.mjs attributes samples to modules by the path comments esbuild writes between them.
 */
export async function buildWorker(outDir, children, entry, unminified = false) {
  const variant = [...(entry ? [entry] : []), ...(unminified ? ['--no-minify'] : [])];
  await runCommand([wranglerBin, 'deploy', ...variant, '--dry-run', '--outdir', outDir, '--config', join(ROOT, 'wrangler.toml')], { children });
  const [script] = readdirSync(outDir).filter((f) => f.endsWith('.js'));
  if (!script) throw new Error(`wrangler produced no bundle in ${outDir}`);
  return join(outDir, script);
}

/**
 * The worker's production configuration from wrangler.toml (vars, D1, rate limits, compatibility), never .dev.vars.
 * The rate limits are raised for the bench: one client hammering from one IP with a few keys would otherwise be
 * refused after 300 or 600 requests a minute, and the bench would measure 429s. So is MAX_CANCELS_PER_DAY: the cancel
 * case cancels thousands of orders of 1,000 users, which the production cap would refuse after 5 each (the cap is
 * still counted inside every cancel's batch, as in production).
 */
export async function productionConfig(rateLimit) {
  const wrangler = await loadWrangler();
  const config = wrangler.unstable_readConfig({ config: join(ROOT, 'wrangler.toml') });
  const [d1] = config.d1_databases;
  return {
    compatibilityDate: config.compatibility_date,
    compatibilityFlags: [...config.compatibility_flags],
    vars: { ...config.vars, MAX_CANCELS_PER_DAY: String(rateLimit) },
    d1Binding: d1.binding,
    d1Id: d1.database_id,
    migrationsDir: join(ROOT, d1.migrations_dir ?? 'migrations'),
    ratelimits: Object.fromEntries(
      config.ratelimits.map((r) => [r.name, { namespace_id: r.namespace_id, simple: { limit: rateLimit, period: r.simple.period } }]),
    ),
    benchRateLimit: rateLimit,
    productionRatelimits: config.ratelimits.map((r) => ({ name: r.name, limit: r.simple.limit, period: r.simple.period })),
  };
}

/**
 * Start workerd with the API (twice: with and without the Cache API) and the ceiling worker, all bound to the same
 * local D1 database, each listening on its own direct socket. `onLog` receives every structured log line of the runtime (the worker's console output).
 */
export async function startWorkers({ apiScript, ceilingScript, config, host, apiPort, noCachePort, ceilingPort, persistDir, onLog, extraVars = {}, ratelimits = true, inspectorPort }) {
  const { Miniflare, Log, LogLevel, convertV4MiniflareOptions } = await loadMiniflare();
  const common = {
    modules: true,
    compatibilityDate: config.compatibilityDate,
    compatibilityFlags: config.compatibilityFlags,
    d1Databases: { [config.d1Binding]: config.d1Id },
  };
  const api = {
    ...common,
    rootPath: dirname(apiScript),
    scriptPath: apiScript,
    bindings: { ...config.vars, ...extraVars },
    ...(ratelimits ? { ratelimits: config.ratelimits } : {}),
  };
  const mf = new Miniflare(
    convertV4MiniflareOptions({
      host,
      port: 0, // Miniflare's own entry socket: unused by the bench (requests go to the direct sockets below)
      log: new Log(LogLevel.WARN),
      logRequests: false,
      enableDevRegistry: false,
      cf: { country: 'XX', colo: 'BENCH' }, // a fixed request.cf: no lookup of the real one over the network
      resourcePersistencePath: persistDir,
      handleStructuredLogs: onLog,
      ...(inspectorPort ? { inspectorPort } : {}),
      workers: [
        { ...api, name: 'api', unsafeDirectSockets: [{ host, port: apiPort }] },
        // The same bundle and bindings with the Cache API switched off: every lookup misses and nothing is stored,
        // which is how the bench measures the cache-miss path without filling the local cache with junk entries.
        { ...api, name: 'api-nocache', cacheAPI: false, unsafeDirectSockets: [{ host, port: noCachePort }] },
        {
          ...common,
          name: 'ceiling',
          ...(await bundledModule(ceilingScript)),
          ratelimits: { RATE_LIMITER: { namespace_id: '9001', simple: { limit: config.benchRateLimit, period: 60 } } },
          unsafeDirectSockets: [{ host, port: ceilingPort }],
        },
      ],
    }),
  );
  try {
    await mf.ready;
  } catch (err) {
    await mf.dispose().catch(() => {}); // a half-started instance would otherwise keep the process alive
    throw err;
  }
  return mf;
}

/**
 * A worker's source as one ES module for Miniflare, bundled in memory by wrangler's own esbuild for workerd: the
 * ceiling worker imports the purchase's statements from src (TypeScript), which workerd cannot load as they are.
 */
export async function bundledModule(source) {
  const esbuild = wranglerRequire('esbuild');
  const { outputFiles } = await esbuild.build({
    entryPoints: [source],
    outfile: source.replace(/\.m?js$/, '.bundle.mjs'), // named only: nothing is written
    write: false,
    bundle: true,
    format: 'esm',
    target: 'es2022',
    platform: 'neutral',
    conditions: ['workerd', 'worker', 'browser'],
    mainFields: ['module', 'main'],
    logLevel: 'error',
  });
  return { modules: [{ type: 'ESModule', path: outputFiles[0].path, contents: outputFiles[0].text }] };
}
