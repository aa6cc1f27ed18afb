import { sql, type SQL } from 'drizzle-orm';
import { rowsOf, toStatement } from '../db/batch';
import type { Db } from '../db/client';
import { writeBatch, type WritePlan } from '../db/d1';
import { ApiError, insufficientScope, notFound, unauthorized } from '../lib/errors';
import { addressHex } from '../lib/ip';
import type { RequestPlace } from '../lib/place';
import { ALL_SCOPES, scopeBit, scopeMask, scopesOf, type Scope } from '../lib/scopes';
import { isoNow } from '../lib/time';

/**
 * Who a request acts for, as SQL: the credential is not looked up before the work, it travels in the work's own
 * batch. `proof` is the batch's first statement (one row while the credential is valid) and every user-scoped
 * statement takes the user id from `userId`, a scalar subquery that is NULL for an unknown or revoked credential, so
 * such a batch changes nothing and reads nothing, and the request answers 401. One round trip, auth included.
 */
export interface Caller {
  readonly userId: SQL;
  readonly proof: SQL;
  /** The API key acting (NULL while it may not act); absent for a session or a user known by id. */
  readonly keyId?: SQL;
  /** The scope the route needs (src/lib/scopes.ts), set by the route; only an API key can lack one. */
  requiredScope?: Scope;
  /** Scopes this request needs beside `requiredScope` (a deposit that pays for an order also needs `orders`). */
  alsoScopes?: Scope[];
  /** Set from the proof's row once a batch has proved the credential (e.g. for last-used bookkeeping). */
  proved?: CallerProof;
  /** Set when the proof found the credential but refused this request (scope or address): already answered. */
  refused?: boolean;
  /** Why a credential that exists may not make this request (an API key's scope or address), from its proof row. */
  refusal?: (proof: CallerProof) => ApiError | undefined;
  /** Where the request comes from, for the blocklist (src/services/accounts/blocklist.ts); absent for jobs. */
  place?: RequestPlace;
}

export interface CallerProof {
  userId: number;
  /** The credential's user's role (a dashboard session's proof says it; the console needs `operator`). */
  role?: 'user' | 'operator';
  /** The API key's id, or the session's id for a dashboard session. */
  credentialId: number;
  lastUsedAt: string | null;
  /** An API key's scopes (bitmask) and whether the request comes from one of its allowed addresses (1/0). */
  scopes?: number;
  placeAllowed?: number;
  /** An operator's session: the warranty claims waiting for a decision (the console's nav). */
  openClaims?: number | null;
}

/** The user of a credential row may act: not disabled (a disabled user's keys and sessions prove nothing). */
export const enabledUser = (userId: SQL) => sql`EXISTS (SELECT 1 FROM users u WHERE u.id = ${userId} AND u.disabled_at IS NULL)`;

/**
 * An API key as the caller. Beyond the key being live (not revoked, not expired, its user enabled), the user id is
 * NULL unless the key holds the route's scope (`requiredScope`, set by the route before any batch is built; none set =
 * every scope) and the client address is within its ranges, so a refused request changes nothing. The proof row finds
 * the live key whatever the route, and says which of the two refused it.
 */
export function apiKeyCaller(keyHash: string, clientIp: string | undefined, now = isoNow()): Caller {
  const live = sql`key_hash = ${keyHash} AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ${now})
    AND ${enabledUser(sql`api_keys.user_id`)}`;
  const fromHere = sql`(ip_ranges IS NULL OR EXISTS (SELECT 1 FROM json_each(api_keys.ip_ranges) r
    WHERE ${(clientIp && addressHex(clientIp)) ?? null} BETWEEN json_extract(r.value, '$[0]') AND json_extract(r.value, '$[1]')))`;
  const mask = (caller: Caller) => (caller.requiredScope ? scopeBit(caller.requiredScope) | scopeMask(caller.alsoScopes ?? []) : ALL_SCOPES);
  const mayAct = (caller: Caller) => sql`${live} AND scopes & ${mask(caller)} = ${mask(caller)} AND ${fromHere}`;
  return {
    get userId() {
      return sql`(SELECT user_id FROM api_keys WHERE ${mayAct(this)})`;
    },
    get keyId() {
      return sql`(SELECT id FROM api_keys WHERE ${mayAct(this)})`;
    },
    proof: sql`SELECT user_id AS userId, id AS credentialId, last_used_at AS lastUsedAt, scopes, ${fromHere} AS placeAllowed
               FROM api_keys WHERE ${live}`,
    refusal(proof) {
      if (proof.placeAllowed === 0) return new ApiError('IP_NOT_ALLOWED', 'This API key may not be used from this address.', { ip: [(clientIp ?? 'unknown').slice(0, 64)] });
      const needed = mask(this);
      const missing = needed & ~(proof.scopes ?? 0);
      if (missing !== 0) return insufficientScope(this.requiredScope && !this.alsoScopes?.length ? [this.requiredScope] : scopesOf(missing));
      return undefined;
    },
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
  return parseAll(queries, await readAs(d1, caller, queries.flatMap((q) => q.reads)));
}

/** Each query's value from its share of one batch's results. */
function parseAll<const Q extends readonly Query<unknown>[]>(queries: Q, results: D1Result[]): Values<Q> {
  let at = 0;
  return queries.map((q) => q.parse(results.slice(at, (at += q.reads.length)))) as Values<Q>;
}

/** Checks a caller's proof row from a batch: 401 for a bad credential, the key's own refusal (scope, address). */
export function proveCaller(caller: Caller, proofResult: D1Result | undefined) {
  prove(caller, proofResult);
}

function prove(caller: Caller, proofResult: D1Result | undefined) {
  const [row] = rowsOf<CallerProof>(proofResult);
  if (!row) throw unauthorized('The API key is invalid or has been revoked.');
  const refusal = caller.refusal?.(row);
  if (refusal) {
    caller.refused = true;
    throw refusal;
  }
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

/**
 * The console's check, on a proof already in the batch: a live session whose user is not an operator is answered as
 * if the page did not exist (404), so the console is not revealed; no live session at all stays a 401 (sign-in).
 */
export function proveOperator(caller: Caller, proofResult: D1Result | undefined): void {
  prove(caller, proofResult);
  if (caller.proved?.role !== 'operator') throw notFound('Page');
}

/** `queryAs` for the console: the same one batch, answered only for an operator's session. */
export async function queryAsOperator<const Q extends readonly Query<unknown>[]>(d1: Db, caller: Caller, queries: Q): Promise<Values<Q>> {
  const [proof, ...results] = await d1.batch([caller.proof, ...queries.flatMap((q) => q.reads)].map((s) => toStatement(d1, s)));
  proveOperator(caller, proof);
  return parseAll(queries, results);
}

/** Queries of the operator's API (behind the admin token, which the middleware checked): one batch, no proof. */
export async function queryPlain<const Q extends readonly Query<unknown>[]>(d1: Db, queries: Q): Promise<Values<Q>> {
  return parseAll(queries, await d1.batch(queries.flatMap((q) => q.reads).map((s) => toStatement(d1, s))));
}
