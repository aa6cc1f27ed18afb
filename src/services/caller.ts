import { sql, type SQL } from 'drizzle-orm';
import { rowsOf, toStatement } from '../db/batch';
import type { Db } from '../db/client';
import { writeBatch, type WritePlan } from '../db/d1';
import { unauthorized } from '../lib/errors';

/**
 * Who a request acts for, as SQL: the credential is not looked up before the work, it travels in the work's own
 * batch. `proof` is the batch's first statement (one row while the credential is valid) and every user-scoped
 * statement takes the user id from `userId`, a scalar subquery that is NULL for an unknown or revoked credential, so
 * such a batch changes nothing and reads nothing, and the request answers 401. One round trip, auth included.
 */
export interface Caller {
  readonly userId: SQL;
  readonly proof: SQL;
  /** Set from the proof's row once a batch has proved the credential (e.g. for last-used bookkeeping). */
  proved?: CallerProof;
}

export interface CallerProof {
  userId: number;
  /** The API key's id, or the session's id for a dashboard session. */
  credentialId: number;
  lastUsedAt: string | null;
}

export function apiKeyCaller(keyHash: string): Caller {
  return {
    userId: sql`(SELECT user_id FROM api_keys WHERE key_hash = ${keyHash} AND revoked_at IS NULL)`,
    proof: sql`SELECT user_id AS userId, id AS credentialId, last_used_at AS lastUsedAt FROM api_keys WHERE key_hash = ${keyHash} AND revoked_at IS NULL`,
  };
}

/** A caller already known by id: operator routes and scheduled jobs act for a user without a credential. */
export function userCaller(userId: number): Caller {
  return {
    userId: sql`${userId}`,
    proof: sql`SELECT id AS userId, 0 AS credentialId, NULL AS lastUsedAt FROM users WHERE id = ${userId}`,
  };
}

/** Reads and how their results become a value. Queries compose: the reads of one page share one batch. */
export interface Query<T> {
  reads: SQL[];
  parse: (results: D1Result[]) => T;
}

type Values<Q extends readonly Query<unknown>[]> = { [K in keyof Q]: Q[K] extends Query<infer T> ? T : never };

/** Queries for a caller, all in one batch `[proof, ...reads]` (see readAs). */
export async function queryAs<const Q extends readonly Query<unknown>[]>(d1: Db, caller: Caller, queries: Q): Promise<Values<Q>> {
  const results = await readAs(d1, caller, queries.flatMap((q) => q.reads));
  let at = 0;
  return queries.map((q) => q.parse(results.slice(at, (at += q.reads.length)))) as Values<Q>;
}

function prove(caller: Caller, proofResult: D1Result | undefined) {
  const [row] = rowsOf<CallerProof>(proofResult);
  if (!row) throw unauthorized('The API key is invalid or has been revoked.');
  caller.proved = row;
}

/** Reads for a caller: one batch `[proof, ...reads]` (a replica may serve it). Throws 401 for a bad credential. */
export async function readAs(d1: Db, caller: Caller, reads: SQL[]): Promise<D1Result[]> {
  const [proof, ...results] = await d1.batch([caller.proof, ...reads].map((s) => toStatement(d1, s)));
  prove(caller, proof);
  return results;
}

/**
 * A write for a caller: one batch `[proof, ...writes, ...reads]` through `writeBatch` (settled and retried on
 * faults). Returns the reads' results. Throws 401 for a bad credential, which the writes then never touched. A
 * write settled as committed needs no proof: its writes only apply for a valid credential (and may have revoked it).
 */
export async function writeAs(d1: Db, caller: Caller, plan: Omit<WritePlan, 'before'>): Promise<D1Result[]> {
  return (await writeOutcomeAs(d1, caller, plan)).reads;
}

/** `writeAs`, also saying whether a fault hid the outcome and the reads, run alone afterwards, settled it. */
export async function writeOutcomeAs(d1: Db, caller: Caller, plan: Omit<WritePlan, 'before'>): Promise<{ reads: D1Result[]; settled: boolean }> {
  const { before, reads, settled } = await writeBatch(d1, { ...plan, before: [caller.proof] });
  if (!settled) prove(caller, before[0]);
  return { reads, settled };
}
