// Bench-only entry for `npm run bench -- --profile`: the API worker unchanged, with its D1 binding instrumented to
// count every statement it runs and the rows each one reads and writes (as reported by D1's result meta), so a
// profile names the statements behind each route. GET /__bench/statements returns the counts since the last call and
// resets them. Never deployed: bench/run.mjs builds it into a separate bundle for profiling runs only.
import worker from '../src/index';

interface StatementStats {
  sql: string;
  calls: number;
  rows_read: number;
  rows_written: number;
}

const stats = new Map<string, StatementStats>();
const sqlOf = new WeakMap<object, string>();
let requests = 0;
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

type Env = Record<string, unknown> & { DB: D1Database };

export default {
  async fetch(request: Request, env: Env, ctx: ExecutionContext) {
    if (new URL(request.url).pathname === '/__bench/statements') {
      const body = { requests, statements: [...stats.values()].sort((a, b) => b.calls - a.calls) };
      stats.clear();
      requests = 0;
      return Response.json(body);
    }
    patchStatements(env.DB);
    requests++;
    return worker.fetch(request, { ...env, DB: instrument(env.DB) } as never, ctx);
  },
  scheduled: worker.scheduled,
} satisfies ExportedHandler<Env>;
