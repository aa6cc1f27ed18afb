// A production-faithful D1 for the tests: the real local D1 underneath, wrapped so that it enforces the limits
// production D1 enforces and the emulator ignores, injects the faults production D1 has, and records every round
// trip. The worker under test gets a fresh wrapper per invocation (test/contract.ts), as production counts queries
// per invocation. The bench serves its worker through the same wrapper (bench/instrumented-entry.ts), which may also
// delay each round trip by a modelled network time.

export const D1_LIMITS = {
  boundParameters: 100,
  sqlBytes: 100_000,
  valueBytes: 2_000_000,
  queriesPerInvocation: 50, // the Free plan's limit: what we design for
};

/** The messages Cloudflare documents as transient (retry) for D1. */
export const FAULT_MESSAGES = [
  'D1_ERROR: Network connection lost.',
  'D1_ERROR: Cannot resolve D1 DB due to transient issue on remote node.',
  'D1_ERROR: Durable Object reset because its code was updated.',
];

export interface FaultPlan {
  /** Probability that a round trip fails; half the failures come before executing, half after committing. */
  rate: number;
  /** Deterministic pseudo-random source (seeded by the test). */
  random: () => number;
}

export interface RoundTrip {
  statements: number;
  /** On the test-mode database (SANDBOX_DB) rather than DB. */
  sandbox?: boolean;
  /** On the binding itself, on a first-primary session, or after a write in the same session. */
  toPrimary: boolean;
  writes: boolean;
  /** D1's own `meta.rows_read` / `rows_written` summed over the trip's results (none for `first()` and `raw()`). */
  rowsRead?: number;
  rowsWritten?: number;
}

/** The rows D1 says a call read and wrote: its result's meta, or the sum over a batch's results. */
function rowsOf(result: unknown): { rowsRead: number; rowsWritten: number } | undefined {
  const metas = (Array.isArray(result) ? result : [result])
    .map((r) => (r as { meta?: { rows_read?: number; rows_written?: number } } | null)?.meta)
    .filter((m) => m !== undefined && typeof m.rows_read === 'number');
  if (metas.length === 0) return undefined;
  return { rowsRead: metas.reduce((n, m) => n + m!.rows_read!, 0), rowsWritten: metas.reduce((n, m) => n + (m!.rows_written ?? 0), 0) };
}

export interface InvocationOptions {
  faults?: FaultPlan | null;
  record?: (trip: RoundTrip) => void;
  /** Told when the fetch handler has returned its response (later trips are waitUntil work). */
  responded?: () => void;
  /** Modelled network time of a round trip in ms, spent half on the way there and half on the way back (bench). */
  networkMs?: (trip: RoundTrip) => number;
}

// `replace(` is SQLite's string function, not REPLACE INTO.
const WRITE = /\b(INSERT|UPDATE|DELETE)\b|\bREPLACE\b(?!\s*\()/i;
const encoder = new TextEncoder();

const limitError = (message: string) => new Error(`D1_ERROR: ${message}`);
// UTF-8 takes at most 3 bytes per UTF-16 code unit, so only a string longer than a third of the limit is encoded
// (the bench runs every request through this wrapper).
const utf8Over = (text: string, limit: number) => text.length * 3 > limit && encoder.encode(text).length > limit;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

class Invocation {
  queries = 0;
  constructor(readonly options: InvocationOptions) {}

  check(statements: LimitedStatement[]) {
    for (const s of statements) {
      if (utf8Over(s.sqlText, D1_LIMITS.sqlBytes)) throw limitError('Statement too long: SQLITE_TOOBIG');
      if (s.values.length > D1_LIMITS.boundParameters) throw limitError('too many SQL variables: SQLITE_ERROR');
      for (const value of s.values) {
        const over = typeof value === 'string' ? utf8Over(value, D1_LIMITS.valueBytes) : value instanceof ArrayBuffer && value.byteLength > D1_LIMITS.valueBytes;
        if (over) throw limitError('string or blob too big: SQLITE_TOOBIG');
      }
    }
    this.queries += statements.length;
    if (this.queries > D1_LIMITS.queriesPerInvocation) throw limitError('Too many API requests by single worker invocation.');
  }

  /**
   * One round trip: limits, then maybe a fault before executing, the work, maybe a fault after committing. Recorded
   * when it ends: work handed to waitUntil may start before the response but ends after it, unwaited for.
   */
  async trip<T>(statements: LimitedStatement[], toPrimary: boolean, work: () => Promise<T>): Promise<T> {
    this.check(statements);
    const writes = statements.some((s) => WRITE.test(s.sqlText));
    const roundTrip: RoundTrip = { statements: statements.length, toPrimary, writes };
    const networkMs = this.options.networkMs?.(roundTrip) ?? 0;
    const faults = this.options.faults;
    const fault = faults && faults.random() < faults.rate ? (faults.random() < 0.5 ? 'before' : 'after') : null;
    const message = fault ? FAULT_MESSAGES[Math.floor(faults!.random() * FAULT_MESSAGES.length)] : '';
    try {
      if (networkMs > 0) await sleep(networkMs / 2);
      if (fault === 'before') throw new Error(message);
      const result = await work();
      Object.assign(roundTrip, rowsOf(result));
      if (networkMs > 0) await sleep(networkMs / 2);
      if (fault === 'after') throw new Error(message);
      return result;
    } finally {
      this.options.record?.(roundTrip);
    }
  }
}

class LimitedStatement {
  constructor(
    readonly inner: D1PreparedStatement,
    readonly sqlText: string,
    readonly values: unknown[],
    private readonly owner: LimitedD1,
  ) {}

  bind(...values: unknown[]) {
    return new LimitedStatement(this.inner.bind(...values), this.sqlText, values, this.owner);
  }
  first(column?: string) {
    return this.owner.single(this, () => (column === undefined ? this.inner.first() : this.inner.first(column)));
  }
  all() {
    return this.owner.single(this, () => this.inner.all());
  }
  run() {
    return this.owner.single(this, () => this.inner.run());
  }
  raw(options?: { columnNames?: boolean }) {
    return this.owner.single(this, () => this.inner.raw(options as { columnNames: true }));
  }
}

class LimitedD1 {
  private wrote = false;
  constructor(
    private readonly inner: D1Database | D1DatabaseSession,
    private readonly invocation: Invocation,
    private readonly primaryFirst: boolean,
  ) {}

  private toPrimary(statements: LimitedStatement[]) {
    const toPrimary = this.primaryFirst || this.wrote || statements.some((s) => WRITE.test(s.sqlText));
    if (statements.some((s) => WRITE.test(s.sqlText))) this.wrote = true;
    return toPrimary;
  }

  prepare(sqlText: string) {
    return new LimitedStatement(this.inner.prepare(sqlText), sqlText, [], this);
  }
  single<T>(statement: LimitedStatement, work: () => Promise<T>) {
    return this.invocation.trip([statement], this.toPrimary([statement]), work);
  }
  batch(statements: LimitedStatement[]) {
    return this.invocation.trip(statements, this.toPrimary(statements), () => this.inner.batch(statements.map((s) => s.inner)));
  }
  exec(sqlText: string) {
    return (this.inner as D1Database).exec(sqlText);
  }
  withSession(constraint?: string) {
    const session = (this.inner as D1Database).withSession(constraint as D1SessionConstraint);
    return new LimitedD1(session, this.invocation, constraint === 'first-primary');
  }
  getBookmark() {
    return (this.inner as D1DatabaseSession).getBookmark();
  }
}

/** The binding one invocation of the worker sees. */
export function productionD1(binding: D1Database, options: InvocationOptions = {}): D1Database {
  return new LimitedD1(binding, new Invocation(options), true) as unknown as D1Database;
}

/** The test-mode database of the same invocation, wrapped alike; its round trips are recorded with `sandbox: true`. */
export function productionSandboxD1(binding: D1Database, options: InvocationOptions = {}): D1Database {
  const record = options.record;
  return productionD1(binding, { ...options, record: record && ((trip) => record({ ...trip, sandbox: true })) });
}

/** A small seeded PRNG (mulberry32), so a fault schedule reproduces from its seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
