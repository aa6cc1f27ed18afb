// Rendering of bench results: the console/Markdown table, the targets, and a hand-written SVG chart.

const int = (n) => Math.round(n).toLocaleString('en-US');
const ms = (n) => (n === undefined || n === null ? '–' : n < 10 ? n.toFixed(1) : String(Math.round(n)));
const ratio = (n) => (n === undefined || n === null ? '–' : `${n.toFixed(2)}×`);
export const items = (n) => (n >= 1_000_000 ? `${n / 1_000_000}M` : n >= 1_000 ? `${n / 1_000}k` : String(n));
// A mean per request: exact when every request made the same number, else two decimals.
const perRequest = (n, requests) => (requests ? (Number.isInteger(n / requests) ? String(n / requests) : (n / requests).toFixed(2)) : '–');

// D1's rows per request (its billing unit): one decimal, since a mean over requests that read different pages.
const rowsPerRequest = (n, requests) => (requests ? (n / requests).toFixed(1).replace(/\.0$/, '') : '–');

/** D1 round trips per request before the response, from bench/instrumented-entry.ts: "1 trip/req (1 to primary)". */
export function roundTripsText(rt) {
  const trips = perRequest(rt.trips, rt.requests);
  const rows = rt.rows_read === undefined ? '' : `, ${rowsPerRequest(rt.rows_read, rt.requests)} rows read, ${rowsPerRequest(rt.rows_written, rt.requests)} written/req`;
  return `${trips} trip${trips === '1' ? '' : 's'}/req (${perRequest(rt.to_primary, rt.requests)} to primary)${rows}`;
}

/** Rows of the main table: one per case of the final level, with its ceiling ratio. */
export function tableRows(results) {
  return results.cases.map((c) => ({
    name: c.name,
    rps: int(c.rps),
    p50: ms(c.latency_ms.p50),
    p99: ms(c.latency_ms.p99),
    errors: String(c.errors),
    trips: c.round_trips ? perRequest(c.round_trips.trips, c.round_trips.requests) : '–',
    primary: c.round_trips ? perRequest(c.round_trips.to_primary, c.round_trips.requests) : '–',
    rows_read: c.round_trips?.rows_read !== undefined ? rowsPerRequest(c.round_trips.rows_read, c.round_trips.requests) : '–',
    rows_written: c.round_trips?.rows_written !== undefined ? rowsPerRequest(c.round_trips.rows_written, c.round_trips.requests) : '–',
    ceiling: c.ceiling ?? '–',
    ratio: ratio(c.ratio),
    cpu: c.cpu ? int(c.cpu.workerd_cpu_us_per_request) : '–',
    others: c.cpu ? c.cpu.other_cores.toFixed(2) : '–',
  }));
}

const HEADERS = {
  name: 'case',
  rps: 'req/s',
  p50: 'p50 ms',
  p99: 'p99 ms',
  errors: 'errors',
  trips: 'D1 trips/req',
  primary: 'to primary',
  rows_read: 'rows read/req',
  rows_written: 'rows written/req',
  ceiling: 'ceiling',
  ratio: 'ratio',
  cpu: 'workerd µs/req',
  others: 'other procs (cores)',
};
/** The main table's columns: a latency-model run measures no ceiling, so it has no ratio. */
export function caseHeaders(results) {
  if (!results.config.latency_model) return HEADERS;
  const { ceiling, ratio, ...headers } = HEADERS;
  return headers;
}
const RIGHT = new Set(['rps', 'p50', 'p99', 'errors', 'trips', 'primary', 'rows_read', 'rows_written', 'ratio', 'cpu', 'others', 'purchase_p50', 'purchase_p99', 'purchase_rps', 'stock_p50', 'stock_p99', 'stock_rps']);

export function textTable(rows, headers = HEADERS) {
  const keys = Object.keys(headers);
  const width = Object.fromEntries(keys.map((k) => [k, Math.max(headers[k].length, ...rows.map((r) => String(r[k]).length))]));
  const cell = (k, v) => (RIGHT.has(k) ? String(v).padStart(width[k]) : String(v).padEnd(width[k]));
  const line = (r) => keys.map((k) => cell(k, r[k])).join('  ');
  return [line(headers), keys.map((k) => '-'.repeat(width[k])).join('  '), ...rows.map(line)].join('\n');
}

export function markdownTable(rows, headers = HEADERS) {
  const keys = Object.keys(headers);
  const escape = (v) => String(v).replaceAll('|', '\\|');
  return [
    `| ${keys.map((k) => headers[k]).join(' | ')} |`,
    `|${keys.map((k) => (RIGHT.has(k) ? '---:' : '---')).join('|')}|`,
    ...rows.map((r) => `| ${keys.map((k) => escape(r[k])).join(' | ')} |`),
  ].join('\n');
}

export function scalingRows(results) {
  return results.scaling.map((s) => ({
    level: items(s.stock_items),
    purchase_p50: ms(s.purchase.latency_ms.p50),
    purchase_p99: ms(s.purchase.latency_ms.p99),
    purchase_rps: int(s.purchase.rps),
    stock_p50: ms(s.stock.latency_ms.p50),
    stock_p99: ms(s.stock.latency_ms.p99),
    stock_rps: int(s.stock.rps),
    rounds: `${s.rounds_p50_ms.purchase_p50.join(' / ')} · ${s.rounds_p50_ms.stock_p50.join(' / ')}`,
  }));
}

export const SCALING_HEADERS = {
  level: 'stock items',
  purchase_p50: 'POST /orders p50',
  purchase_p99: 'p99',
  purchase_rps: 'req/s',
  stock_p50: 'GET /stock (miss) p50',
  stock_p99: 'p99',
  stock_rps: 'req/s',
  rounds: 'p50 of each round (orders · stock)',
};

export function targetRows(results) {
  return results.targets.map((t) => ({ target: t.name, wanted: t.wanted, measured: t.measured, met: t.met ? 'met' : 'MISSED' }));
}

export const TARGET_HEADERS = { target: 'target', wanted: 'wanted', measured: 'measured', met: 'result' };

/** Markdown report: the same tables the console shows, plus the context needed to read them. */
export function markdownReport(results) {
  const m = results.machine;
  const cfg = results.config;
  const model = cfg.latency_model;
  return `# Bench results (${results.mode}${model ? ', latency model' : ''})

Measured ${results.finished_at} on ${m.cpu_model} (${m.cpus} cores), ${m.memory_gib} GiB RAM, ${m.os};
Node ${results.versions.node}, wrangler ${results.versions.wrangler}, miniflare ${results.versions.miniflare},
workerd ${results.versions.workerd}. Load average before the run: ${m.loadavg_start.join(' / ')}; after: ${m.loadavg_end.join(' / ')}.

Harness: ${results.harness}. Data: ${int(cfg.products)} products, ${int(cfg.users)} users, stock items at
${cfg.levels.map(items).join(', ')}. Load: autocannon, ${cfg.connections} connection${cfg.connections === 1 ? '' : 's'}, ${cfg.warmup_s} s warm-up then
${cfg.duration_s} s per case, from a separate process. Rate limits raised to ${int(cfg.bench_rate_limit)}/min for the run.

${model ? `**Latency model:** every D1 round trip of the API delayed by ${model.primary_ms} ms to the primary and ${model.replica_ms} ms to a
replica (a replica-eligible read), half each way, inside the worker; latencies are what a far client sees, one request
at a time (no queue in front of the one workerd thread). Ceilings and reference rows are not run in this mode.

` : ''}${markdownTable(tableRows(results), caseHeaders(results))}

${Object.values(results.ceilings)
  .filter((c) => c.drift !== null && c.drift > 0.15)
  .map((c) => `**Note:** the ceiling "${c.name}" moved ${(c.drift * 100).toFixed(0)}% between its two measurements: the machine was not steady during this run.\n\n`)
  .join('')}\`D1 trips/req\`: D1 round trips per request before the response (a batch is one), \`to primary\`: those on the
binding itself, on a \`first-primary\` session or after a write in that session (bench/instrumented-entry.ts, the
tests' test/production-d1.ts).${model ? '' : ` Ratios: each case against the least its route must do, its ceiling (measured in
this run, right before and after the case for the targets, before and after all cases for the empty worker and the D1
write; the mean is used).`} \`workerd µs/req\`: CPU time of the workerd process (all threads) per request during the
measured run; \`other procs\`: CPU (in cores) used by everything else on the machine meanwhile, the noise of the run.

## Targets

${markdownTable(targetRows(results), TARGET_HEADERS)}
${results.scaling.length ? scalingSection(results) : ''}${results.rows_by_history ? rowsByHistorySection(results.rows_by_history) : ''}${flashSaleSection(results)}
## Worker-side observations

${markdownTable(
  results.cases.map((c) => ({
    name: c.name,
    logged: int(c.worker.logged),
    cache: Object.entries(c.worker.cache).map(([k, v]) => `${k} ${int(v)}`).join(', ') || '–',
    statuses: Object.entries(c.statuses).map(([k, v]) => `${k}: ${int(v)}`).join(', '),
    distribution: c.round_trips ? Object.entries(c.round_trips.per_request).map(([k, v]) => `${k}: ${int(v)}`).join(', ') : '–',
    after: c.round_trips ? `${int(c.round_trips.after_response.trips)} (${int(c.round_trips.after_response.to_primary)} to primary)` : '–',
  })),
  {
    name: 'case',
    logged: 'request log lines',
    cache: 'cache (from the log)',
    statuses: 'statuses seen by the client',
    distribution: 'requests by D1 trips/to primary',
    after: 'D1 trips after responses',
  },
)}

D1 trips after responses: bookkeeping handed to \`waitUntil\` (an API key's \`last_used_at\`, at most once a minute per
key); no client waits for them.

Ledger audit after the run: ${results.audit.ok ? 'all checks passed' : `FAILED: ${results.audit.failed.join('; ')}`}.
Total run time: ${int(results.elapsed_s)} s (loading ${int(results.load_s)} s).
`;
}

function flashSaleSection(results) {
  const sale = results.cases.find((c) => c.drop);
  if (!sale) return '';
  const d = sale.drop;
  return `
## Flash sale

${d.buyers} connections buy quantity 1 of one product of ${int(d.items)} items, the ${int(results.config.users)} users in turn, until it is sold
out: ${int(d.items + d.buyers)} requests, the drop plus one per connection, so each meets the \`INSUFFICIENT_STOCK\` answer and every
purchase's answer is counted. ${int(sale.requests)} answers in ${sale.duration_s} s: ${int(sale.rps)} req/s, p50 ${ms(sale.latency_ms.p50)} ms, p99 ${ms(sale.latency_ms.p99)} ms, workerd ${sale.cpu ? int(sale.cpu.workerd_cpu_us_per_request) : '–'} µs per request.

| bought (201) | items sold | ordered (sum of quantities) | orders | items left | stock_count | sold-out answers (400) | oversold | 5xx | other errors |
|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|
| ${int(d.bought)} | ${int(d.items_sold)} | ${int(d.quantity_ordered)} | ${int(d.orders)} | ${int(d.items_available)} | ${int(d.stock_count)} | ${int(d.sold_out_responses)} | ${d.oversold} | ${d.server_errors} | ${sale.errors} |
`;
}

/** Issue #50: one request per route on a small history and after it grew; the rows must not grow with it. */
function rowsByHistorySection({ growth, rows }) {
  const table = markdownTable(
    rows.map((r) => ({ route: r.route, small: `${r.small.read} / ${r.small.written}`, grown: `${r.grown.read} / ${r.grown.written}` })),
    { route: 'request (one, alone)', small: 'rows read / written, small history', grown: `after ${growth}` },
  );
  return `## D1 rows per request, small and grown history

${table}

`;
}

function scalingSection(results) {
  return `
## Latency by stock size

${markdownTable(scalingRows(results), SCALING_HEADERS)}

Each point is the best (lowest p50) of ${results.scaling[0].rounds_p50_ms.purchase_p50.length} runs: interference from other work on a shared
machine only ever adds latency. Every run is listed in the last column.
${results.files.chart ? `\n![purchase and /stock latency by stock size](${results.files.chart})\n` : ''}`;
}

/**
 * Two line charts side by side, POST /orders (qty 1) and GET /stock (cache miss): p50 (solid) and p99 (dashed) latency
 * by stock size, log-scaled x axis, each panel with its own y scale.
 */
export function scalingChart(results) {
  const W = 900;
  const H = 400;
  const levels = results.scaling.map((s) => s.stock_items);
  const panels = [
    { title: 'POST /orders (qty 1)', color: '#d1495b', key: 'purchase' },
    { title: 'GET /stock (cache miss)', color: '#00798c', key: 'stock' },
  ];
  const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;');
  const out = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`);
  out.push(`<rect width="${W}" height="${H}" fill="#fff"/>`);
  out.push(`<text x="20" y="24" font-size="15" font-weight="bold">Latency by number of stock items (${esc(results.config.connections)} connections, ${esc(results.config.duration_s)} s per point)</text>`);
  out.push(`<text x="20" y="42" fill="#555">${esc(results.mode)} run ${esc(results.finished_at)}; solid: p50, dashed: p99</text>`);
  const panelW = W / 2;
  panels.forEach((panel, index) => {
    const pad = { left: 60 + index * panelW, right: (1 - index) * panelW + 30, top: 80, bottom: 60 };
    const x1Px = W - pad.right;
    const p50 = results.scaling.map((s) => s[panel.key].latency_ms.p50);
    const p99 = results.scaling.map((s) => s[panel.key].latency_ms.p99);
    const niceMax = niceCeil(Math.max(1, ...p99, ...p50));
    const lx = (v) => Math.log10(v);
    const [x0, x1] = [lx(levels[0]), lx(levels[levels.length - 1])];
    const px = (v) => pad.left + ((lx(v) - x0) / Math.max(1e-9, x1 - x0)) * (x1Px - pad.left);
    const py = (v) => H - pad.bottom - (v / niceMax) * (H - pad.top - pad.bottom);
    out.push(`<text x="${pad.left}" y="${pad.top - 14}" font-size="13" font-weight="bold" fill="${panel.color}">${esc(panel.title)}</text>`);
    for (let i = 0; i <= 5; i++) {
      const v = (niceMax * i) / 5;
      const y = py(v);
      out.push(`<line x1="${pad.left}" y1="${y}" x2="${x1Px}" y2="${y}" stroke="#e5e5e5"/>`);
      out.push(`<text x="${pad.left - 8}" y="${y + 4}" text-anchor="end">${Number(v.toFixed(1))}</text>`);
    }
    for (const level of levels) {
      const x = px(level);
      out.push(`<line x1="${x}" y1="${pad.top}" x2="${x}" y2="${H - pad.bottom}" stroke="#f0f0f0"/>`);
      out.push(`<text x="${x}" y="${H - pad.bottom + 18}" text-anchor="middle">${items(level)}</text>`);
    }
    out.push(`<text x="${(pad.left + x1Px) / 2}" y="${H - 20}" text-anchor="middle">stock items (log scale)</text>`);
    out.push(`<text transform="translate(${pad.left - 44} ${(pad.top + H - pad.bottom) / 2}) rotate(-90)" text-anchor="middle">latency (ms)</text>`);
    out.push(`<line x1="${pad.left}" y1="${H - pad.bottom}" x2="${x1Px}" y2="${H - pad.bottom}" stroke="#333"/>`);
    out.push(`<line x1="${pad.left}" y1="${pad.top}" x2="${pad.left}" y2="${H - pad.bottom}" stroke="#333"/>`);
    for (const [values, dash, label] of [[p50, '', 'p50'], [p99, '6 4', 'p99']]) {
      const points = values.map((v, j) => `${px(levels[j]).toFixed(1)},${py(v).toFixed(1)}`).join(' ');
      out.push(`<polyline points="${points}" fill="none" stroke="${panel.color}" stroke-width="2.5"${dash ? ` stroke-dasharray="${dash}"` : ''}/>`);
      values.forEach((v, j) => {
        const x = px(levels[j]);
        const y = py(v);
        out.push(`<circle cx="${x.toFixed(1)}" cy="${y.toFixed(1)}" r="3.5" fill="${panel.color}"><title>${esc(panel.title)} ${label} at ${items(levels[j])}: ${v} ms</title></circle>`);
        out.push(`<text x="${x.toFixed(1)}" y="${(y - 8).toFixed(1)}" text-anchor="middle" font-size="11" fill="#333">${v}</text>`);
      });
    }
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

function niceCeil(v) {
  const exp = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * exp >= v) return m * exp;
  return 10 * exp;
}
