// A run's results: every case shaped with its ceiling and ratio, the scaling points, the targets, written to
// bench/results/<out>.{json,md,svg} (and the profiles with --profile) and printed as tables.
import { cpus, loadavg, release, totalmem, type } from 'node:os';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ROOT } from './harness.mjs';
import { log, secondsSince, session } from './measure.mjs';
import {
  BENCH_RATE_LIMIT,
  CASE_LABELS,
  CEILING_LABELS,
  CEILING_OF,
  CONNECTIONS,
  DURATION,
  EXTRA_VARS,
  LATENCY_MODEL,
  ONLY,
  opts,
  OUT,
  PROFILE,
  PROFILING,
  QUICK,
  RESULTS_DIR,
  WARMUP,
} from './options.mjs';
import { profileMarkdown } from './profile.mjs';
import { caseHeaders, markdownReport, scalingChart, scalingRows, SCALING_HEADERS, tableRows, targetRows, TARGET_HEADERS, textTable } from './report.mjs';
import { computeTargets } from './targets.mjs';

export function buildResults({ startedAt, loadavgStart, loadSeconds, STATE_ROOT, v, config, levels, ceilings, cases, scaling, failed }) {
  const average = (values) => (values.length ? values.reduce((a, b) => a + b, 0) / values.length : null);
  const mean = (runs) => average(runs.map((r) => r.rps));
  const ceilingRps = Object.fromEntries(Object.entries(ceilings).map(([key, runs]) => [key, mean(runs)]));
  // A case compared with another case of the run (the drop with storefronts with the flash sale) uses its req/s.
  const caseRps = Object.fromEntries(cases.map((c) => [c.key, c.rps]));
  const baseRps = (key) => ceilingRps[key] ?? (key in CASE_LABELS ? caseRps[key] : undefined);
  const baseLabel = (key) => CEILING_LABELS[key] ?? CASE_LABELS[key];
  // Before/after disagreement of a ceiling: how much the machine itself moved during the run (a shared VM does).
  const drift = (runs) => (runs.length === 2 ? Math.abs(runs[0].rps - runs[1].rps) / ((runs[0].rps + runs[1].rps) / 2) : null);
  const ceilingDrift = Object.fromEntries(Object.entries(ceilings).map(([key, runs]) => [key, drift(runs)]));
  const shape = (r, key, ceiling) => ({
    key,
    name: r.name,
    rps: r.rps,
    requests: r.requests,
    duration_s: r.duration_s,
    latency_ms: r.latency_ms,
    errors: r.errors,
    statuses: r.statuses,
    error_samples: r.error_samples,
    stopped_early: r.stopped_early,
    worker: r.worker,
    round_trips: r.round_trips ?? null,
    cpu: r.cpu,
    ...(r.drop ? { drop: r.drop } : {}),
    ...(r.storefront_drop ? { storefront_drop: r.storefront_drop } : {}),
    ...(r.without_coupon_after_rps ? { without_coupon_after_rps: r.without_coupon_after_rps } : {}),
    ceiling: ceiling && baseRps(ceiling) ? baseLabel(ceiling) : null,
    ratio: ceiling && baseRps(ceiling) ? r.rps / baseRps(ceiling) : null,
  });
  const allCases = [
    ...Object.entries(ceilings).flatMap(([key, runs]) => runs.map((r) => shape(r, key, key))),
    ...cases.map((r) => shape(r, r.key, CEILING_OF[r.key])),
  ];
  const order = [...Object.keys(CEILING_LABELS), ...Object.keys(CEILING_OF)];
  const rank = (key) => (order.includes(key) ? order.indexOf(key) : order.length); // cases without a ceiling last
  allCases.sort((a, b) => rank(a.key) - rank(b.key));
  const byKey = Object.fromEntries(allCases.map((c) => [c.key, c]));

  // Each scaling point is the best (lowest p50) of its rounds: interference from a shared machine only ever adds
  // latency, so the best round is the one closest to what the code itself costs.
  const best = (runs) => runs.reduce((a, b) => (b.latency_ms.p50 < a.latency_ms.p50 ? b : a));
  for (const point of scaling) {
    point.rounds = { stock_p50: point.stock.map((r) => r.latency_ms.p50), purchase_p50: point.purchase.map((r) => r.latency_ms.p50) };
    point.stock = best(point.stock);
    point.purchase = best(point.purchase);
  }
  const targets = computeTargets({ byKey, ceilings, ceilingRps, allCases, scaling, failed });

  const files = { json: `${OUT}.json`, markdown: `${OUT}.md`, ...(scaling.length > 1 ? { chart: `${OUT}.svg` } : {}) };
  const cpuModel = (readFileSync('/proc/cpuinfo', 'utf8').match(/^model name\s*:\s*(.*)$/m) ?? [])[1] ?? cpus()[0]?.model ?? 'unknown';
  return {
    mode: QUICK ? 'quick' : 'full',
    started_at: new Date(startedAt).toISOString(),
    finished_at: new Date().toISOString(),
    elapsed_s: secondsSince(startedAt),
    load_s: loadSeconds,
    harness:
      `production bundle (wrangler deploy --dry-run) behind bench/instrumented-entry.ts (D1 round trips counted${LATENCY_MODEL ? ' and delayed by the latency model' : ''}) on workerd via wrangler's Miniflare; API, API without Cache API and ceiling worker on direct workerd sockets (no proxy); one local D1, cache and rate-limiter state in ${STATE_ROOT}`,
    machine: {
      cpu_model: cpuModel,
      cpus: cpus().length,
      memory_gib: Math.round(totalmem() / 2 ** 30),
      os: `${type()} ${release()}`,
      loadavg_start: loadavgStart,
      loadavg_end: loadavg().map((n) => Number(n.toFixed(2))),
    },
    versions: { node: v.node, wrangler: v.wrangler, miniflare: v.miniflare, workerd: v.workerd },
    config: {
      latency_model: LATENCY_MODEL,
      products: PROFILE.products,
      users: PROFILE.users,
      levels,
      connections: CONNECTIONS,
      warmup_s: WARMUP,
      duration_s: DURATION,
      bench_rate_limit: BENCH_RATE_LIMIT,
      production_rate_limits: config.productionRatelimits,
      vars: { ...config.vars, ...EXTRA_VARS },
      ratelimit_bindings: !opts['without-ratelimits'],
      only_cases: ONLY ? [...ONLY] : null,
    },
    ceilings: Object.fromEntries(
      Object.entries(ceilings).map(([key, runs]) => [key, { name: CEILING_LABELS[key], runs: runs.map((r) => r.rps), mean_rps: ceilingRps[key], drift: ceilingDrift[key] }]),
    ),
    cases: allCases,
    scaling: scaling.map((s) => ({
      stock_items: s.stock_items,
      rounds_p50_ms: s.rounds,
      purchase: { rps: s.purchase.rps, latency_ms: s.purchase.latency_ms, errors: s.purchase.errors },
      stock: { rps: s.stock.rps, latency_ms: s.stock.latency_ms, errors: s.stock.errors },
    })),
    targets,
    rows_by_history: session.rowsByHistory ?? null,
    audit: { ok: failed.length === 0, failed },
    unexpected_worker_logs: session.unexpectedLogs,
    files,
  };
}

/** Write the result files, print the tables; answers the harness problems (an empty list when the run was sound). */
export function writeResults(results) {
  const { files } = results;
  mkdirSync(RESULTS_DIR, { recursive: true });
  writeFileSync(join(RESULTS_DIR, files.json), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(join(RESULTS_DIR, files.markdown), markdownReport(results));
  if (files.chart) writeFileSync(join(RESULTS_DIR, files.chart), scalingChart(results));
  if (PROFILING) {
    files.profile = `${OUT}.profile.md`;
    const header = `# CPU profiles (${results.mode} data, ${CONNECTIONS} connections, ${results.finished_at})\n\nSampled with the V8 profiler of each workerd isolate during the measured run of each case (the profiler slows the\nrun down: throughput figures of a profiling run are not benchmark figures). Time per request = busy time / requests.\n\n`;
    writeFileSync(join(RESULTS_DIR, files.profile), header + session.profiles.map((p) => profileMarkdown(p.name, p.summary, p.wall_s)).join('\n'));
    writeFileSync(join(RESULTS_DIR, `${OUT}.profile.json`), `${JSON.stringify(session.profiles, null, 2)}\n`);
  }

  log(`\n${textTable(tableRows(results), caseHeaders(results))}\n`);
  log(textTable(targetRows(results), TARGET_HEADERS));
  if (results.scaling.length) log(`\n${textTable(scalingRows(results), SCALING_HEADERS)}`);
  log('');
  log(`wrote ${Object.values(files).map((f) => relative(ROOT, join(RESULTS_DIR, f))).join(', ')} (${Math.round(results.elapsed_s)} s in all, loading ${Math.round(results.load_s)} s)`);
  for (const c of Object.values(results.ceilings)) {
    if (c.drift !== null && c.drift > 0.15) log(`note: the ${c.name} ceiling moved ${(c.drift * 100).toFixed(0)}% between the start and the end of the cases: the machine was not steady; read ratios with that margin`);
  }
  const unexpectedLogs = results.unexpected_worker_logs;
  if (unexpectedLogs.length) log(`worker logged ${unexpectedLogs.length} unexpected line(s); first: ${JSON.stringify(unexpectedLogs[0]).slice(0, 300)}`);

  // The bench asserts nothing about speed; it fails only when the harness itself is broken: a case that got no
  // successful response, a server error, or a ledger that no longer adds up.
  const broken = results.cases.filter((c) => c.requests > 0 && c.requests === c.errors).map((c) => `${c.name}: no successful response`);
  for (const c of results.cases) if (Object.keys(c.statuses).some((s) => Number(s) >= 500)) broken.push(`${c.name}: server errors ${JSON.stringify(c.statuses)}`);
  if (results.audit.failed.length) broken.push(`ledger audit failed: ${results.audit.failed.join('; ')}`);
  return broken;
}
