// The bench's command line and the settings derived from it (see the options in bench/run.mjs and bench/README.md).
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT } from './harness.mjs';

export const { values: opts } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    rtt: { type: 'string' },
    connections: { type: 'string' },
    duration: { type: 'string' },
    warmup: { type: 'string' },
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string', default: '8810' },
    cases: { type: 'string' },
    var: { type: 'string', multiple: true, default: [] },
    out: { type: 'string' },
    keep: { type: 'boolean', default: false },
    'state-dir': { type: 'string' },
    profile: { type: 'boolean', default: false },
    serve: { type: 'boolean', default: false },
    'without-ratelimits': { type: 'boolean', default: false },
  },
});

/** `primary=80,replica=10` → { primary_ms: 80, replica_ms: 10 } */
function parseRtt(text) {
  const model = { primary_ms: null, replica_ms: null };
  for (const part of text.split(',')) {
    const [name, value] = part.split('=');
    const ms = Number(value);
    if (!(`${name}_ms` in model) || value === undefined || !Number.isFinite(ms) || ms < 0) throw new Error(`--rtt ${text}: expected primary=MS,replica=MS`);
    model[`${name}_ms`] = ms;
  }
  if (model.primary_ms === null || model.replica_ms === null) throw new Error(`--rtt ${text}: expected primary=MS,replica=MS`);
  return model;
}

export const QUICK = opts.quick;
export const LATENCY_MODEL = opts.rtt ? parseRtt(opts.rtt) : null;
export const PROFILE = QUICK
  ? { products: 200, users: 50, levels: [1_000, 5_000, 20_000], connections: 10, warmup: 1, duration: 2, drop: { items: 500, buyers: 50 } }
  : { products: 10_000, users: 1_000, levels: [10_000, 100_000, 1_000_000], connections: 20, warmup: 3, duration: 15, drop: { items: 5_000, buyers: 200 } };
// The flash sale runs until the drop is sold out, up to this long (its req/s: ~100 and more on this machine).
export const DROP_MAX_SECONDS = 300;
// A far client's latency is measured one request at a time: with many connections the one workerd thread would add
// its queue to every request and measure this machine's capacity, which the throughput cases already do.
const RTT_CONNECTIONS = 1;
export const CONNECTIONS = Number(opts.connections ?? (LATENCY_MODEL ? RTT_CONNECTIONS : PROFILE.connections));
// Runs of each scaling point (the best p50 counts); one in quick runs, which only keep the harness from rotting.
export const SCALING_ROUNDS = QUICK ? 1 : 2;
export const WARMUP = Number(opts.warmup ?? PROFILE.warmup);
export const DURATION = Number(opts.duration ?? PROFILE.duration);
export const HOST = opts.host;
export const API_PORT = Number(opts.port);
export const NOCACHE_PORT = API_PORT + 1;
export const CEILING_PORT = API_PORT + 2;
export const BENCH_RATE_LIMIT = 1_000_000_000; // per 60 s: far above anything this machine can send
export const PROFILING = opts.profile;
export const OUT = opts.out ?? (PROFILING ? 'profile' : `${QUICK ? 'quick' : 'latest'}${LATENCY_MODEL ? '-rtt' : ''}`);
export const INSPECTOR_PORT = API_PORT + 9;
export const SERVE = opts.serve;
export const ONLY = opts.cases ? new Set(opts.cases.split(',')) : null;
export const EXTRA_VARS = Object.fromEntries(opts.var.map((v) => v.split(/=(.*)/s).slice(0, 2)));
// The API's edge cache lifetime (wrangler.toml's, unless --var sets another): the drop with storefronts' target.
export const STOCK_CACHE_SECONDS = Number(EXTRA_VARS.STOCK_CACHE_SECONDS ?? 10);
// Upper bound on requests one case can send (warm-up + measured): sizes the lists of distinct users, items, orders.
export const MAX_CASE_REQUESTS = Math.ceil(3_000 * (WARMUP + DURATION));
export const RESULTS_DIR = join(ROOT, 'bench', 'results');
export const LOAD_SCRIPT = join(ROOT, 'bench', 'load.mjs');
export const CEILING_SCRIPT = join(ROOT, 'bench', 'ceiling-worker.mjs');
export const INSTRUMENTED_ENTRY = join(ROOT, 'bench', 'instrumented-entry.ts');
// What the instrumented entry reads from its vars: the latency model, and statement counts when profiling.
export const BENCH_VARS = {
  ...(LATENCY_MODEL ? { BENCH_RTT_PRIMARY_MS: String(LATENCY_MODEL.primary_ms), BENCH_RTT_REPLICA_MS: String(LATENCY_MODEL.replica_ms) } : {}),
  ...(PROFILING ? { BENCH_STATEMENTS: 'true' } : {}),
};
export const API = '/api/v2';
// The ceilings (bench/ceiling-worker.mjs): what a route must do at least, alone on the same runtime and database.
export const CEILING_LABELS = {
  empty: 'empty worker',
  d1_write: 'bare D1 write',
  d1_read: 'one D1 read',
  keyed_read: 'keyed read (SHA-256, rate limit, one D1 read, a log line)',
  cache_hit_stock_size: 'bare cache hit as big as /stock',
  purchase_batch: 'purchase batch qty 1, bare',
  purchase_batch_q100: 'purchase batch qty 100, bare',
};
// A case measured against another case of the same run rather than a ceiling (its label in the table).
export const CASE_LABELS = { flash_sale: 'flash sale of this run' };
// Each case's ratio is to the least that route must do: its ceiling (or, for the drop with storefronts, the case
// it is the same workload as).
export const CEILING_OF = {
  app_root: 'empty',
  ratelimit: 'empty',
  cache_hit: 'empty',
  empty_stock_size: 'empty',
  stock_hit: 'cache_hit_stock_size',
  stock_miss: 'd1_read',
  stock_id: 'd1_read',
  stock_check: 'd1_read',
  // What every keyed request must do (issue #50's fair ceiling); the bare read runs beside it for reference.
  wallet_balance: 'keyed_read',
  orders_q1: 'purchase_batch',
  orders_q1_coupon: 'purchase_batch',
  orders_q100: 'purchase_batch_q100',
  cancel: 'd1_write',
  orders_list: 'd1_read',
  flash_sale: null, // no ceiling: judged on what it sold
  drop_storefronts: 'flash_sale', // judged on /stock reads and against the flash sale of the same run
};
