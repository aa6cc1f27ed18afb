import type { SQL } from 'drizzle-orm';
import type { Db } from './client';
import { toStatement } from './batch';

// The one place that talks to D1. Every statement and batch of the worker goes through a binding wrapped here:
// - transient faults of read-only work are retried (bounded, exponential backoff with full jitter);
// - a write is never retried blindly: a lost connection may come after its commit. `writeBatch` retries a write only
//   after learning, from reads keyed on ids generated before it, that it did not commit;
// - when the database stays unavailable and nothing was committed, `DatabaseUnavailable` becomes a 503;
// - D1 counts every statement against a limit per invocation (50 on the Free plan): retries stop while a write can
//   still settle its outcome, instead of running into the limit (whose error would leave a write's outcome unknown).
// Cloudflare's guidance (D1 "debug" and "rules of D1" pages): retry the messages below, back off on "overloaded",
// at most 3 attempts, backoff capped at 2 s.

const TRANSIENT = [
  'Network connection lost',
  'Cannot resolve D1 DB due to transient issue',
  'reset because its code was updated',
  'Internal error while starting up D1 DB storage caused object to be reset',
  'D1 DB storage caused object to be reset',
];
const OVERLOADED = ['D1 DB is overloaded', 'Too many requests queued'];

export type FaultClass = 'transient' | 'overloaded' | 'constraint' | 'other';

/** The innermost message of an error chain (drizzle wraps D1's error and puts the SQL and its parameters in front). */
export function rootMessage(err: unknown): string {
  let e: unknown = err;
  for (let depth = 0; depth < 5 && e instanceof Error && e.cause !== undefined && e.cause !== null; depth++) e = e.cause;
  return e instanceof Error ? e.message : String(e);
}

export function classifyFault(err: unknown): FaultClass {
  const message = rootMessage(err);
  if (TRANSIENT.some((m) => message.includes(m))) return 'transient';
  if (OVERLOADED.some((m) => message.includes(m))) return 'overloaded';
  if (/constraint failed|SQLITE_CONSTRAINT/i.test(message)) return 'constraint';
  return 'other';
}

/** The database did not answer in time and nothing was committed: the client may retry (503 + Retry-After). */
export class DatabaseUnavailable extends Error {
  readonly retryAfterSeconds = 1;
  constructor(readonly cause: unknown) {
    super('The database is temporarily unavailable.');
    this.name = 'DatabaseUnavailable';
  }
}

/** A write failed in a way that may have come after its commit, and nothing resolved it: a bug in the caller. */
export class WriteOutcomeUnknown extends Error {
  constructor(readonly cause: unknown) {
    super('A database write ended with a transient fault and its caller cannot tell whether it committed.');
    this.name = 'WriteOutcomeUnknown';
  }
}

export const RETRY = {
  attempts: 3,
  baseMs: 40,
  capMs: 2_000,
  /** Attempts of the read that settles a write whose outcome is unknown: it must be learnt before answering. */
  settleAttempts: 6, // 2 rounds of the wrapper's 3 read attempts
};

/** Statements a request's retries may spend: the Free plan's 50 less a reserve for work after the response. */
export const QUERY_BUDGET = 45;

/** The statements one request's wrapper has sent; shared by the sessions it opens. */
class QueryBudget {
  used = 0;
  spend(statements: number) {
    this.used += statements;
  }
  affords(statements: number) {
    return this.used + statements <= QUERY_BUDGET;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Full jitter: a random wait between 0 and the capped exponential step. */
const backoff = (attempt: number) => sleep(Math.random() * Math.min(RETRY.capMs, RETRY.baseMs * 2 ** attempt));

const WRITE = /\b(INSERT|UPDATE|DELETE|REPLACE|CREATE|DROP|ALTER)\b/i;
const isReadOnly = (sqlText: string) => !WRITE.test(sqlText);

const asUnavailable = (err: unknown) => (err instanceof DatabaseUnavailable ? err : new DatabaseUnavailable(err));

/**
 * Run `work` again on a transient or overloaded fault, up to `attempts` times (and while the budget affords another
 * `cost` statements); anything else is thrown as is.
 */
async function retrying<T>(work: () => Promise<T>, attempts: number, cost = 0, budget?: QueryBudget): Promise<T> {
  let lastFault: unknown;
  for (let attempt = 1; ; attempt++) {
    // Even a first attempt: a settling read that comes after a request's retries must not run into D1's own
    // per-invocation limit (its error is no fault to retry, and would answer 500).
    if (budget && !budget.affords(cost)) throw asUnavailable(lastFault ?? new Error("D1: this request's query budget is spent"));
    try {
      return await work();
    } catch (err) {
      const fault = err instanceof DatabaseUnavailable ? 'overloaded' : classifyFault(err);
      if (fault !== 'transient' && fault !== 'overloaded') throw err;
      // The first D1 fault says most: a later refusal may only say that the budget ran out retrying it.
      lastFault ??= err;
      const affordable = !budget || budget.affords(cost);
      if (attempt >= attempts || !affordable) throw asUnavailable(lastFault);
      await backoff(attempt);
    }
  }
}

/** A prepared statement that remembers its SQL, so the wrapper knows whether it may be retried. */
class Statement {
  constructor(
    readonly inner: D1PreparedStatement,
    readonly sqlText: string,
    readonly budget: QueryBudget,
  ) {}

  bind(...values: unknown[]) {
    return new Statement(this.inner.bind(...values), this.sqlText, this.budget);
  }

  private run_<T>(work: () => Promise<T>): Promise<T> {
    const counted = () => (this.budget.spend(1), work());
    return isReadOnly(this.sqlText) ? retrying(counted, RETRY.attempts, 1, this.budget) : failFastWrite(counted);
  }

  first<T>(column?: string) {
    return this.run_(() => (column === undefined ? this.inner.first<T>() : this.inner.first<T>(column)));
  }
  all<T>() {
    return this.run_(() => this.inner.all<T>());
  }
  run<T>() {
    return this.run_(() => this.inner.run<T>());
  }
  raw<T>(options?: { columnNames?: boolean }) {
    return this.run_(() => this.inner.raw<T>(options as { columnNames: true }));
  }
}

/** A write that failed before anyone could learn its outcome is reported as such, never as a plain fault. */
async function failFastWrite<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    const fault = classifyFault(err);
    if (fault === 'overloaded') throw new DatabaseUnavailable(err); // refused before it ran: nothing committed
    if (fault === 'transient') throw new WriteOutcomeUnknown(err);
    throw err;
  }
}

type Session = { getBookmark(): string | null };

/**
 * The worker's view of D1 (or of one D1 session): statements and batches as D1 has them, with read-only work
 * retried. drizzle and the raw batch helpers both use it unchanged.
 */
export class ResilientD1 {
  constructor(
    readonly inner: Db,
    readonly budget = new QueryBudget(),
  ) {}

  prepare(sqlText: string) {
    return new Statement(this.inner.prepare(sqlText), sqlText, this.budget);
  }

  /** Read-only batches are retried; a batch that writes throws `WriteOutcomeUnknown` on a transient fault. */
  batch<T = unknown>(statements: Statement[]): Promise<D1Result<T>[]> {
    const inner = statements.map((s) => s.inner);
    const work = () => (this.budget.spend(inner.length), this.inner.batch<T>(inner));
    return statements.every((s) => isReadOnly(s.sqlText)) ? retrying(work, RETRY.attempts, inner.length, this.budget) : failFastWrite(work);
  }

  withSession(constraint?: string) {
    return new ResilientD1((this.inner as D1Database).withSession(constraint as D1SessionConstraint), this.budget);
  }

  getBookmark() {
    return (this.inner as unknown as Session).getBookmark?.() ?? null;
  }
}

/** The wrapped binding, typed as the D1 interface drizzle and the batch helpers expect. */
export const resilient = (d1: Db): D1DatabaseSession & D1Database => new ResilientD1(d1) as unknown as D1DatabaseSession & D1Database;

export interface WritePlan {
  /** Reads that must see the state before the writes (a credential's proof), first in the batch. */
  before?: SQL[];
  /** The statements that change state. Each is guarded and keyed on ids generated before the batch. */
  writes: SQL[];
  /** Reads keyed on those ids, run after the writes in the same batch: they show what the batch did. */
  reads: SQL[];
  /** Given the reads' results: whether the writes committed. Asked only when a fault hid the outcome. */
  committed: (reads: D1Result[]) => boolean;
}

export interface WriteOutcome {
  before: D1Result[];
  reads: D1Result[];
  /** True when a fault hid the outcome and the reads, run again alone, showed the writes had committed. */
  settled: boolean;
}

/**
 * Run a write as one atomic batch `[...before, ...writes, ...reads]`. On a fault that may have come after the
 * commit, `[...before, ...reads]` alone settle it (on the primary): committed → those results are the answer; not
 * committed → the batch runs again (its ids make that safe). Out of attempts with nothing committed →
 * `DatabaseUnavailable`.
 */
export async function writeBatch(d1: Db, plan: WritePlan): Promise<WriteOutcome> {
  const before = plan.before ?? [];
  const statements = [...before, ...plan.writes, ...plan.reads];
  // Another attempt only when the budget still affords it and one round of the reads that would settle its outcome.
  const budget = d1 instanceof ResilientD1 ? d1.budget : null;
  const attemptCost = statements.length + before.length + plan.reads.length;
  let lastFault: unknown;
  for (let attempt = 1; attempt <= RETRY.attempts; attempt++) {
    if (attempt > 1 && budget && !budget.affords(attemptCost)) break;
    try {
      const results = await d1.batch(statements.map((s) => toStatement(d1, s)));
      return { before: results.slice(0, before.length), reads: results.slice(before.length + plan.writes.length), settled: false };
    } catch (err) {
      const outcome = outcomeOf(err);
      if (outcome === 'failed') throw err;
      lastFault = err;
      if (outcome === 'unknown') {
        const results = await settle(d1, [...before, ...plan.reads]);
        const reads = results.slice(before.length);
        if (plan.committed(reads)) return { before: results.slice(0, before.length), reads, settled: true };
      }
      if (attempt < RETRY.attempts) await backoff(attempt);
    }
  }
  throw new DatabaseUnavailable(lastFault);
}

/** What a failed write batch did: nothing (`refused`), maybe something (`unknown`), or failed on its own (a guard). */
function outcomeOf(err: unknown): 'refused' | 'unknown' | 'failed' {
  if (err instanceof DatabaseUnavailable) return 'refused';
  if (err instanceof WriteOutcomeUnknown) return 'unknown';
  // A binding that is not wrapped (a test calling a service with env.DB) reports D1's own errors.
  const fault = classifyFault(err);
  return fault === 'overloaded' ? 'refused' : fault === 'transient' ? 'unknown' : 'failed';
}

/** The reads that say whether a write committed; their outcome must be learnt, so they get more attempts. */
function settle(d1: Db, reads: SQL[]): Promise<D1Result[]> {
  return retrying(() => d1.batch(reads.map((s) => toStatement(d1, s))), RETRY.settleAttempts / RETRY.attempts);
}
