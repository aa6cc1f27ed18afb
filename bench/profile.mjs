// `npm run bench -- --profile`: V8 CPU profiles of every isolate in the workerd process (the API, the local D1, the
// Cache API and the rate limiter are each an isolate, all on workerd's one thread) while a case runs, through
// workerd's inspector. It answers "where does the thread's time go": per isolate, and within the API per part
// (each middleware, routing, validation, the handler, D1, rendering, logging), per source module and per function.
import { readFileSync } from 'node:fs';

const ISOLATES = {
  'core:user:api': 'API worker',
  'core:user:api-nocache': 'API worker (no cache)',
  'core:user:ceiling': 'ceiling worker',
  'd1:db': 'local D1 (Durable Object + SQLite)',
  'd1:db:entry': 'local D1 entry worker',
  'ratelimit:ns': 'local rate limiter (Durable Object + SQLite)',
  'ratelimit:ns:entry': 'local rate limiter entry worker',
  'cache:cache': 'local Cache API (Durable Object)',
};
// The per-request CPU breakdown: each isolate other than the API is one part (all of them exist only in the local
// emulator: in production D1, the Cache API and the rate limiter run on Cloudflare's machines, not on the Worker's
// CPU). Within the API isolate, a sample goes to the part of the nearest frame on its stack (leaf first) whose module
// names one, so a native call (JSON.stringify, fetch) counts for the code that made it.
const ISOLATE_PART = {
  'd1:db': 'D1: SQLite and the local D1 object (emulator only)',
  'd1:db:entry': 'D1: the local D1 entry worker (emulator only)',
  'ratelimit:ns': 'rate limiter: the local binding (emulator only)',
  'ratelimit:ns:entry': 'rate limiter: the local binding (emulator only)',
  'cache:cache': 'Cache API: local implementation (emulator only)',
};
const isolatePart = (id) => ISOLATE_PART[id] ?? (id.startsWith('cache:') ? ISOLATE_PART['cache:cache'] : null);
// Within the API isolate, one part per middleware (each file of src/middleware, each of Hono's own middlewares, the
// app's inline ones being files too: src/middleware/response-headers.ts, body-limits.ts), plus routing, validation,
// the handler, the D1 wrapper and client, JSON rendering and logging. A sample goes to the nearest frame of its stack
// (leaf first) that names a part; frames of Hono's helpers (`c.header`, `c.req.header`, `matchedRoutes`...) and of
// src/lib (pure helpers: `sha256Hex`, regexes) name none, so they count for the middleware or handler that called
// them, while Hono's dispatch (compose, the router) counts as routing: it is what calls every middleware's `next()`.
const MIDDLEWARE_LABELS = {
  'request-log': 'logging: request-log (one JSON line, console.log)',
  'rate-limit': 'middleware: rate-limit (the binding call)',
  auth: 'middleware: auth (API key: shape, SHA-256, caller)',
  'stock-cache': 'middleware: stock-cache (Cache API binding call)',
};
const middlewarePart = (name) => MIDDLEWARE_LABELS[name] ?? `middleware: ${name}`;
const MODULE_PARTS = [
  [/^console\b/, 'logging: request-log (one JSON line, console.log)'],
  [/^cloudflare-internal:ratelimit/, middlewarePart('rate-limit')],
  [/^src\/services\/(caller|accounts\/keys)\.ts$/, middlewarePart('auth')],
  [/^test\/production-d1\.ts$|^bench\//, 'bench instrumentation (bench only)'],
  [/^cloudflare-internal:d1-api|^node_modules\/drizzle-orm\/|^src\/db\//, 'D1: the wrapper (src/db), drizzle, the binding client'],
  [/^node_modules\/(zod|@hono\/zod-openapi|@hono\/zod-validator|@asteasolutions)\/|^src\/lib\/validation\.ts$|^src\/schemas\//, 'validation (zod)'],
  [/^src\/lib\/(envelope|money)\.ts$/, 'rendering: the body (envelope, c.json, Response)'],
  [/^src\/routes\//, 'handler (src/routes)'],
  [/^src\/services\//, 'business rules (src/services)'],
  [/^src\/dashboard\//, 'dashboard and storefront pages'],
];
const HONO_DISPATCH = /^node_modules\/hono\/dist\/(compose|hono-base|hono|router|router\/.*)\.js$|^node_modules\/hono\/dist\/router\//;
const HONO_RENDER = new Set(['json', 'body', 'text', 'html', 'newResponse', '#newResponse', 'get res', 'set res']);

/** The part of one sample of the API isolate: its frames leaf first, each { module, name }. */
export function partOfStack(frames) {
  let sawHono = false;
  for (const { module, name } of frames) {
    if (HONO_DISPATCH.test(module)) return 'routing and framework (hono: router, compose, context)';
    const honoMiddleware = /^node_modules\/hono\/dist\/middleware\/([^/]+)\//.exec(module);
    if (honoMiddleware) return `middleware: ${honoMiddleware[1]} (hono)`;
    if (module === 'node_modules/hono/dist/context.js' && HONO_RENDER.has(name)) return 'rendering: the body (envelope, c.json, Response)';
    if (module.startsWith('node_modules/hono/')) {
      sawHono = true;
      continue;
    }
    const mw = /^src\/middleware\/([^/]+)\.ts$/.exec(module);
    if (mw) return middlewarePart(mw[1]);
    const known = MODULE_PARTS.find(([re]) => re.test(module));
    if (known) return known[1];
    if (module.startsWith('src/lib/')) continue;
    if (module.startsWith('src/')) return 'other app code';
  }
  return sawHono ? 'routing and framework (hono: router, compose, context)' : null;
}

const isolateName = (id) => ISOLATES[id] ?? (id.startsWith('cache:') ? `local Cache API entry (${id})` : id);
const PROFILED = (id) => !/^(outbound:|core:entry$|MINIFLARE_|email:)/.test(id);

/** Module of each line of an esbuild bundle, from the `// path` comments it puts before every module. */
export function bundleModules(bundlePath) {
  const lines = readFileSync(bundlePath, 'utf8').split('\n');
  const starts = [];
  lines.forEach((line, i) => {
    // esbuild names modules relative to the config's directory: keep the part from src/, bench/, test/ (the D1
    // wrapper of bench/instrumented-entry.ts) or node_modules/ on.
    const m = /^\/\/ (?:\S*?\/)?((?:src|bench|test|node_modules)\/\S+)$/.exec(line);
    if (m) starts.push([i, m[1]]);
  });
  return (line) => {
    let lo = 0;
    let hi = starts.length - 1;
    let found = '(bundle prelude)';
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (starts[mid][0] <= line) {
        found = starts[mid][1];
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  };
}

/** The component a bundle module belongs to: a src file, or an npm package. */
function component(module) {
  if (module.startsWith('src/')) return module;
  const m = /^node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(module);
  return m ? m[1] : module;
}

class Session {
  constructor(url) {
    this.ws = new WebSocket(url);
    this.id = 0;
    this.pending = new Map();
    this.ws.addEventListener('message', (event) => {
      const msg = JSON.parse(event.data);
      const p = this.pending.get(msg.id);
      if (!p) return;
      this.pending.delete(msg.id);
      if (msg.error) p.reject(new Error(msg.error.message));
      else p.resolve(msg.result);
    });
  }
  open() {
    return new Promise((resolve, reject) => {
      this.ws.addEventListener('open', resolve, { once: true });
      this.ws.addEventListener('error', reject, { once: true });
    });
  }
  send(method, params = {}) {
    const id = ++this.id;
    this.ws.send(JSON.stringify({ id, method, params }));
    return new Promise((resolve, reject) => this.pending.set(id, { resolve, reject }));
  }
  close() {
    this.ws.close();
  }
}

export async function startProfiling(inspectorPort) {
  const targets = await (await fetch(`http://127.0.0.1:${inspectorPort}/json`)).json();
  const sessions = [];
  for (const t of targets) {
    if (!PROFILED(t.id)) continue;
    const s = new Session(t.webSocketDebuggerUrl);
    await s.open();
    await s.send('Profiler.enable');
    await s.send('Profiler.setSamplingInterval', { interval: 200 });
    await s.send('Profiler.start');
    sessions.push({ id: t.id, s });
  }
  return async function stop() {
    const profiles = {};
    for (const { id, s } of sessions) {
      const { profile } = await s.send('Profiler.stop');
      await s.send('Profiler.disable');
      s.close();
      profiles[id] = profile;
    }
    return profiles;
  };
}

const IDLE = '(idle)';

/**
 * Summary of the profiles of one case. The isolates' samplers take turns on workerd's one thread, so what a profile
 * measures reliably is the share of samples: per isolate (of all busy samples), and within the API isolate per
 * source component and per function. `workerdUsPerRequest` (CPU of the workerd process per request, from /proc)
 * turns shares into estimated microseconds per request.
 */
export function summarise(profiles, requests, moduleOfLine, apiTarget, workerdUsPerRequest) {
  const perIsolate = [];
  const parts = new Map();
  let apiCounts = null;
  for (const [id, profile] of Object.entries(profiles)) {
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    let busy = 0;
    const byComponent = new Map();
    const byFunction = new Map();
    const parentOf = new Map();
    for (const n of profile.nodes) for (const child of n.children ?? []) parentOf.set(child, n);
    const moduleOf = (node) => {
      const url = node.callFrame.url;
      return url.endsWith('.js') && !url.includes(':') ? moduleOfLine(node.callFrame.lineNumber) : url;
    };
    for (const nodeId of profile.samples) {
      const node = byId.get(nodeId);
      const name = node.callFrame.functionName || '(anonymous)';
      if (name === IDLE) continue;
      busy++;
      const ownPart = isolatePart(id);
      if (ownPart) parts.set(ownPart, (parts.get(ownPart) ?? 0) + 1);
      if (id !== apiTarget) {
        if (!ownPart) parts.set(`other isolate: ${isolateName(id)}`, (parts.get(`other isolate: ${isolateName(id)}`) ?? 0) + 1);
        continue;
      }
      let part = name === '(garbage collector)' ? 'runtime: garbage collector' : name === '(program)' ? 'runtime: workerd and V8 (program)' : null;
      if (!part) {
        const frames = [];
        for (let frame = node; frame; frame = parentOf.get(frame.id)) frames.push({ module: moduleOf(frame) || '', name: frame.callFrame.functionName });
        part = partOfStack(frames);
      }
      part ??= 'runtime: natives outside app code (Request, Response, fetch)';
      parts.set(part, (parts.get(part) ?? 0) + 1);
      const url = node.callFrame.url;
      const module = url.endsWith('.js') && !url.includes(':') ? moduleOfLine(node.callFrame.lineNumber) : url || (name.startsWith('(') ? name : '(native)');
      const comp = component(module);
      byComponent.set(comp, (byComponent.get(comp) ?? 0) + 1);
      const key = url ? `${name} (${module}:${node.callFrame.lineNumber + 1})` : name;
      byFunction.set(key, (byFunction.get(key) ?? 0) + 1);
    }
    perIsolate.push({ id, isolate: isolateName(id), samples: busy });
    if (id === apiTarget) apiCounts = { busy, byComponent, byFunction };
  }
  const total = perIsolate.reduce((s, i) => s + i.samples, 0);
  const us = (share) => (workerdUsPerRequest === null ? null : share * workerdUsPerRequest);
  const isolates = perIsolate
    .filter((i) => i.samples > 0)
    .map((i) => ({ ...i, share: i.samples / total, us_per_request: us(i.samples / total) }))
    .sort((a, b) => b.samples - a.samples);
  let api = null;
  if (apiCounts && apiCounts.busy > 0) {
    const apiShare = apiCounts.busy / total;
    const top = (map, n) =>
      [...map.entries()]
        .sort((a, b) => b[1] - a[1])
        .slice(0, n)
        .map(([name, count]) => ({ name, share: count / apiCounts.busy, us_per_request: us((count / apiCounts.busy) * apiShare) }));
    api = { components: top(apiCounts.byComponent, 15), functions: top(apiCounts.byFunction, 25) };
  }
  const breakdown = [...parts.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([part, count]) => ({ part, share: count / total, us_per_request: us(count / total), emulator_only: /emulator only|bench only/.test(part) }));
  return { requests, workerd_us_per_request: workerdUsPerRequest, total_samples: total, isolates, breakdown, api };
}

export function profileMarkdown(caseName, summary, wallSeconds) {
  const us = (n) => (n === null || n === undefined ? '–' : Math.round(n).toLocaleString('en-US'));
  const lines = [
    `### ${caseName}`,
    '',
    `${summary.requests.toLocaleString('en-US')} requests in ${wallSeconds.toFixed(1)} s; workerd CPU ${us(summary.workerd_us_per_request)} µs per request; ${summary.total_samples.toLocaleString('en-US')} busy samples.`,
    '',
  ];
  if (summary.breakdown?.length) {
    const production = summary.breakdown.filter((b) => !b.emulator_only).reduce((n, b) => n + b.share, 0);
    lines.push('| where the request\'s CPU goes | share of samples | ≈ µs per request |', '|---|---:|---:|');
    for (const b of summary.breakdown) lines.push(`| ${b.part} | ${(b.share * 100).toFixed(1)}% | ${us(b.us_per_request)} |`);
    lines.push(`| **what a Worker in production would run** (all but emulator-only and bench-only) | ${(production * 100).toFixed(1)}% | ${us(summary.workerd_us_per_request === null ? null : production * summary.workerd_us_per_request)} |`, '');
  }
  lines.push("| isolate (all on workerd's one thread) | share of samples | ≈ µs per request |", '|---|---:|---:|');
  for (const i of summary.isolates) lines.push(`| ${i.isolate} | ${(i.share * 100).toFixed(1)}% | ${us(i.us_per_request)} |`);
  if (summary.api) {
    lines.push('', '| API isolate: self time by source | share of the isolate | ≈ µs per request |', '|---|---:|---:|');
    for (const c of summary.api.components) lines.push(`| ${c.name} | ${(c.share * 100).toFixed(1)}% | ${us(c.us_per_request)} |`);
    lines.push('', '| API isolate: top functions (self time) | share of the isolate | ≈ µs per request |', '|---|---:|---:|');
    for (const f of summary.api.functions.slice(0, 15)) lines.push(`| \`${f.name.replaceAll('|', '\\|')}\` | ${(f.share * 100).toFixed(1)}% | ${us(f.us_per_request)} |`);
  }
  if (summary.d1?.requests) {
    const per = (n) => (n / summary.d1.requests).toFixed(2);
    lines.push('', `| D1 statements (${summary.d1.requests.toLocaleString('en-US')} requests) | per request | rows read per call | rows written per call |`, '|---|---:|---:|---:|');
    for (const st of summary.d1.statements) {
      const sql = st.sql.length > 160 ? `${st.sql.slice(0, 157)}...` : st.sql;
      lines.push(`| \`${sql.replaceAll('|', '\\|')}\` | ${per(st.calls)} | ${(st.rows_read / st.calls).toFixed(1)} | ${(st.rows_written / st.calls).toFixed(1)} |`);
    }
  }
  return `${lines.join('\n')}\n`;
}
