// The API worker as `npm run bench` serves it: src/index unchanged, every invocation on the tests' production-faithful
// D1 (test/production-d1.ts: D1's limits enforced, every round trip recorded, "to the primary" as the round-trip test
// counts it: on the binding itself, on a `first-primary` session, or after a write in that session; a batch is one).
// - Round trips: counted per invocation, before its response and after it (waitUntil work), with the rows D1 says
//   they read and wrote (`meta.rows_read` / `rows_written` of each result; `first()` and `raw()` report none). GET /__bench/round-trips
//   returns the tally since the last call and resets it; bench/run.mjs reads it around each measured run.
// - Latency model (`--rtt primary=80,replica=10`): the vars BENCH_RTT_PRIMARY_MS and BENCH_RTT_REPLICA_MS delay each
//   round trip by the network time a far location pays to the primary or to a nearby replica, half each way.
// - Statements (`--profile`, var BENCH_STATEMENTS=true): every statement run and the rows it read and wrote (D1's
//   result meta). GET /__bench/statements returns the counts since the last call and resets them.
// Never deployed: bench/run.mjs builds this file in place of src/index.ts.
import worker from '../src/index';
import { productionD1, type RoundTrip } from '../test/production-d1';

interface RoundTripTally {
  requests: number;
  /** Round trips before the response (what a client waits for), and how many of them went to the primary. */
  trips: number;
  to_primary: number;
  /** Requests by `trips/to primary` before the response, e.g. { "1/0": 950, "2/1": 50 }. */
  per_request: Record<string, number>;
  /** D1's own `meta.rows_read` / `rows_written` over the round trips before the response (its billing units). */
  rows_read: number;
  rows_written: number;
  /** Round trips after the response (waitUntil bookkeeping): no client waits for them. */
  after_response: { trips: number; to_primary: number; rows_read: number; rows_written: number };
}

const newTally = (): RoundTripTally => ({
  requests: 0,
  trips: 0,
  to_primary: 0,
  per_request: {},
  rows_read: 0,
  rows_written: 0,
  after_response: { trips: 0, to_primary: 0, rows_read: 0, rows_written: 0 },
});
let tally = newTally();

interface StatementStats {
  sql: string;
  calls: number;
  rows_read: number;
  rows_written: number;
}

const stats = new Map<string, StatementStats>();
const sqlOf = new WeakMap<object, string>();
let statementRequests = 0;
let patched = false;

const normalise = (sql: string) => sql.replace(/\s+/g, ' ').trim();

function record(statement: object, result: unknown) {
  const sql = sqlOf.get(statement) ?? '(unknown statement)';
  const meta = (result as { meta?: { rows_read?: number; rows_written?: number } } | null)?.meta;
  const entry = stats.get(sql) ?? { sql, calls: 0, rows_read: 0, rows_written: 0 };
  entry.calls++;
  entry.rows_read += meta?.rows_read ?? 0;
  entry.rows_written += meta?.rows_written ?? 0;
  stats.set(sql, entry);
}

/** Patch the prepared-statement prototype once: bind keeps the SQL, run/all/first/raw record their results. */
function patchStatements(db: D1Database) {
  if (patched) return;
  patched = true;
  const proto = Object.getPrototypeOf(db.prepare('SELECT 1')) as Record<string, (...args: unknown[]) => unknown>;
  const bind = proto.bind;
  proto.bind = function (this: object, ...args: unknown[]) {
    const bound = bind.apply(this, args) as object;
    sqlOf.set(bound, sqlOf.get(this) ?? '');
    return bound;
  };
  for (const method of ['run', 'all']) {
    const original = proto[method];
    proto[method] = async function (this: object, ...args: unknown[]) {
      const result = await original.apply(this, args);
      record(this, result);
      return result;
    };
  }
  for (const method of ['first', 'raw']) {
    // No meta from these: counted, rows unknown.
    const original = proto[method];
    proto[method] = async function (this: object, ...args: unknown[]) {
      const result = await original.apply(this, args);
      record(this, null);
      return result;
    };
  }
}

function instrument<T extends D1Database | D1DatabaseSession>(db: T): T {
  return new Proxy(db, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (property === 'prepare') {
        return (sql: string) => {
          const statement = (value as D1Database['prepare']).call(target, sql);
          sqlOf.set(statement, normalise(sql));
          return statement;
        };
      }
      if (property === 'batch') {
        return async (statements: D1PreparedStatement[]) => {
          const results = await (value as D1Database['batch']).call(target, statements);
          statements.forEach((s, i) => record(s, results[i]));
          return results;
        };
      }
      if (property === 'withSession') {
        return (constraint?: string) => instrument((value as D1Database['withSession']).call(target, constraint));
      }
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

type Env = Record<string, unknown> & {
  DB: D1Database;
  MEDIA: R2Bucket;
  BENCH_RTT_PRIMARY_MS?: string;
  BENCH_RTT_REPLICA_MS?: string;
  BENCH_STATEMENTS?: string;
};

/** The modelled network time of a round trip, or none when the run has no latency model. */
function networkModel(env: Env): ((trip: RoundTrip) => number) | undefined {
  const primaryMs = Number(env.BENCH_RTT_PRIMARY_MS ?? 0);
  const replicaMs = Number(env.BENCH_RTT_REPLICA_MS ?? 0);
  if (!primaryMs && !replicaMs) return undefined;
  return (trip) => (trip.toPrimary ? primaryMs : replicaMs);
}

export default {
  ...worker, // every other handler (scheduled, and any added later) is the worker's own, uninstrumented
  async fetch(request: Request, env: Env, ctx: ExecutionContext) {
    const { pathname } = new URL(request.url);
    if (pathname === '/__bench/round-trips') {
      const body = tally;
      tally = newTally();
      return Response.json(body);
    }
    if (pathname === '/__bench/statements') {
      const body = { requests: statementRequests, statements: [...stats.values()].sort((a, b) => b.calls - a.calls) };
      stats.clear();
      statementRequests = 0;
      return Response.json(body);
    }
    let binding = env.DB;
    if (env.BENCH_STATEMENTS === 'true') {
      patchStatements(env.DB);
      statementRequests++;
      binding = instrument(env.DB);
    }
    let responded = false;
    let trips = 0;
    let toPrimary = 0;
    const db = productionD1(binding, {
      record: (trip) => {
        if (responded) {
          tally.after_response.trips++;
          if (trip.toPrimary) tally.after_response.to_primary++;
          tally.after_response.rows_read += trip.rowsRead ?? 0;
          tally.after_response.rows_written += trip.rowsWritten ?? 0;
          return;
        }
        tally.rows_read += trip.rowsRead ?? 0;
        tally.rows_written += trip.rowsWritten ?? 0;
        trips++;
        if (trip.toPrimary) toPrimary++;
      },
      networkMs: networkModel(env),
    });
    try {
      return await worker.fetch(request, { ...env, DB: db } as never, ctx);
    } finally {
      responded = true;
      tally.requests++;
      tally.trips += trips;
      tally.to_primary += toPrimary;
      const key = `${trips}/${toPrimary}`;
      tally.per_request[key] = (tally.per_request[key] ?? 0) + 1;
    }
  },
} satisfies ExportedHandler<Env>;
