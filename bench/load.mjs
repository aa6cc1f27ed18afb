// The load generator of `npm run bench`: a separate Node process (bench/run.mjs starts one per case), so the client
// never shares an event loop with the process hosting the worker. It reads a case from the JSON file named by
// argv[2], runs autocannon for the warm-up, then for the measured duration with the same connections, and prints
// one JSON line with the measured run's figures.
//
// Case:
//   { url, connections, warmupSeconds, durationSeconds, consume?, expectedStatus?,
//     requests: [{ method, path, headers?, body? }, ...] }
// A response is an error unless it is a 2xx, or exactly `expectedStatus` when the case names one (a form post's 303).
// `requests` is one sequence shared by all connections: request n (counted across warm-up and measured run) is
// requests[n % requests.length], so a list of distinct users is used in turn. With `consume: true` every entry is
// used at most once (orders to cancel, stock to buy): the runs stop before the list runs out.
// A path may hold `{n}` (the request counter: a URL never seen before, i.e. a cache miss) and `{ids:K:N}` (K distinct
// random ids in 1..N, comma-separated).
// `soldOutStatus` (a drop bought until it is gone): responses with that status whose body says INSUFFICIENT_STOCK are
// counted apart, not as errors. `maxRequests` ends the run after that many responses (the drop plus one request per
// connection, so it sells out; stopping at the first sold-out answer instead would drop the answers still in flight,
// purchases that committed).
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';

const spec = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const requests = spec.requests.map((r) => ({
  method: r.method,
  path: r.path,
  dynamic: /\{(n|ids:\d+:\d+)\}/.test(r.path),
  headers: { ...(r.body === undefined ? {} : { 'content-type': 'application/json' }), ...(r.headers ?? {}) },
  body: r.body === undefined ? undefined : typeof r.body === 'string' ? r.body : JSON.stringify(r.body),
}));

function randomIds(k, n) {
  const ids = new Set();
  while (ids.size < Math.min(k, n)) ids.add(1 + Math.floor(Math.random() * n));
  return [...ids].join(',');
}

const expand = (path, n) =>
  path.replace(/\{n\}/g, String(n)).replace(/\{ids:(\d+):(\d+)\}/g, (_, k, max) => randomIds(Number(k), Number(max)));

const succeeded = (status) => (spec.expectedStatus ? status === spec.expectedStatus : status >= 200 && status < 300);

let next = 0;
const samples = [];
const statuses = {};
let soldOutResponses = 0;
const isSoldOut = (status, body) => status === spec.soldOutStatus && String(body).includes('"INSUFFICIENT_STOCK"');

function run(durationSeconds, maxRequests) {
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: spec.url,
        connections: spec.connections,
        duration: durationSeconds,
        ...(maxRequests ? { maxOverallRequests: maxRequests } : {}),
        timeout: 30,
        requests: [
          {
            setupRequest: (req) => {
              const n = next++;
              const r = requests[n % requests.length];
              return { ...req, method: r.method, path: r.dynamic ? expand(r.path, n) : r.path, headers: r.headers, body: r.body };
            },
            onResponse: (status, body) => {
              statuses[status] = (statuses[status] ?? 0) + 1;
              if (isSoldOut(status, body)) {
                soldOutResponses++;
                return;
              }
              if (!succeeded(status) && samples.length < 3) samples.push({ status, body: String(body).slice(0, 300) });
            },
          },
        ],
      },
      (err, result) => (err ? reject(err) : resolve(result)),
    );
  });
}

// With a consumable list, each connection may build one request ahead that is never sent: keep that margin.
const remaining = () => requests.length - next - spec.connections;
if (spec.warmupSeconds > 0) {
  const cap = spec.consume ? Math.floor(remaining() / 4) : 0;
  if (!spec.consume || cap >= spec.connections) await run(spec.warmupSeconds, cap);
}
process.stderr.write('warmup done\n');
for (const key of Object.keys(statuses)) delete statuses[key];
samples.length = 0;
soldOutResponses = 0;
const cap = spec.consume ? remaining() : (spec.maxRequests ?? 0);
if (spec.consume && cap < spec.connections) throw new Error(`only ${requests.length} requests to consume: too few for a run`);
const started = next;
const cpuBefore = process.cpuUsage();
const result = await run(spec.durationSeconds, cap);
const cpuUsed = process.cpuUsage(cpuBefore);
const total = result.requests.total;
const failedResponses = Object.entries(statuses).reduce((sum, [status, count]) => sum + (succeeded(Number(status)) ? 0 : count), 0) - soldOutResponses;
console.log(
  JSON.stringify({
    requests: total,
    duration_s: result.duration,
    rps: total / result.duration,
    latency_ms: { p50: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99, max: result.latency.max, mean: result.latency.average },
    errors: result.errors + result.timeouts + failedResponses,
    non2xx: result.non2xx,
    socket_errors: result.errors,
    timeouts: result.timeouts,
    statuses,
    sold_out_responses: soldOutResponses,
    error_samples: samples,
    sequence_used: next - started,
    stopped_early: spec.consume ? total >= cap : false,
    load_generator_cpu_ms: (cpuUsed.user + cpuUsed.system) / 1000,
  }),
);
