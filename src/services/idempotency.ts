import { sql, type SQL } from 'drizzle-orm';
import { rowsOf, toStatement } from '../db/batch';
import type { Db } from '../db/client';
import { isoNow } from '../lib/time';
import { readAs, type Caller } from './caller';

export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;

/** The caller's claim on an Idempotency-Key, carried into the batch of the effect it guards. */
export interface IdempotencyClaim {
  key: string;
  requestHash: string;
  now: string;
}

const cutoffOf = (now: string) => new Date(Date.parse(now) - IDEMPOTENCY_TTL_MS).toISOString();

/**
 * Whose keys: a user's (the request's caller; keys are per user), or the operator's. The operator is no user
 * (idempotency_keys.user_id references one), so its keys are a namespace of their own, in their own table.
 */
export const OPERATOR = 'operator';
export type KeyOwner = Caller | typeof OPERATOR;

interface KeySpace {
  table: SQL;
  /** The owning user's id (SQL, NULL for a bad credential), or null in the operator's table, which has one owner. */
  userId: SQL | null;
  /** Reads in the owner's name: a user's prove the credential in the same batch. */
  read: (d1: Db, reads: SQL[]) => Promise<D1Result[]>;
}

const readPlain = (d1: Db, reads: SQL[]) => d1.batch(reads.map((s) => toStatement(d1, s)));

const spaceOf = (owner: KeyOwner): KeySpace =>
  owner === OPERATOR
    ? { table: sql`operator_idempotency_keys`, userId: null, read: readPlain }
    : { table: sql`idempotency_keys`, userId: owner.userId, read: (d1, reads) => readAs(d1, owner, reads) };

/** `user_id = <owner> AND ` for a user's records; nothing in the operator's table. */
const ownedBy = ({ userId }: KeySpace) => (userId ? sql`user_id = ${userId} AND ` : sql``);

/**
 * Statements appended to an effect's batch: an expired record of the same key is released, then the record is
 * written only when `resource` (a SELECT of `id` and `snapshot`, the JSON of the row the response is rendered from)
 * yields a row, i.e. only when the effect happened. A request that already holds the key makes the unique index fail
 * and the whole batch, effect included, roll back: that failure is how a replay is recognised, with no lookup first.
 */
export function recordClaim(owner: KeyOwner, claim: IdempotencyClaim, resource: SQL): SQL[] {
  const space = spaceOf(owner);
  const { table, userId } = space;
  return [
    sql`DELETE FROM ${table} WHERE ${ownedBy(space)}idempotency_key = ${claim.key} AND created_at <= ${cutoffOf(claim.now)}`,
    sql`INSERT INTO ${table} (${userId ? sql`user_id, ` : sql``}idempotency_key, request_hash, resource_id, response_snapshot, created_at)
        SELECT ${userId ? sql`${userId}, ` : sql``}${claim.key}, ${claim.requestHash}, r.id, r.snapshot, ${claim.now} FROM (${resource}) AS r
        WHERE ${userId ? sql`${userId} IS NOT NULL` : sql`1`}`,
  ];
}

export interface ClaimRecord {
  requestHash: string;
  resourceId: number;
  /** Responses stored whole by earlier versions (records of the last 24 hours before the upgrade). */
  responseStatus: number | null;
  responseBody: string | null;
  responseSnapshot: string | null;
}

/**
 * The live record of a key with whatever its replay renders from: `related` are reads keyed on the record's
 * resource id (a purchase's items), run in the same batch. One round trip.
 */
export async function findClaim(d1: Db, owner: KeyOwner, key: string, related: (resourceId: SQL) => SQL[] = () => []) {
  const space = spaceOf(owner);
  // The operator's table has no columns of records from before snapshots were stored.
  const legacy = space.userId
    ? sql`response_status AS responseStatus, response_body AS responseBody`
    : sql`NULL AS responseStatus, NULL AS responseBody`;
  const live = sql`${ownedBy(space)}idempotency_key = ${key} AND created_at > ${cutoffOf(isoNow())}`;
  const [record, ...rest] = await space.read(d1, [
    sql`SELECT request_hash AS requestHash, resource_id AS resourceId, ${legacy}, response_snapshot AS responseSnapshot
        FROM ${space.table} WHERE ${live}`,
    ...related(sql`(SELECT resource_id FROM ${space.table} WHERE ${live})`),
  ]);
  const [found] = rowsOf<ClaimRecord>(record);
  return found ? { record: found, related: rest } : null;
}

/** Scheduled job: forget records older than 24 hours (users' and the operator's), a bounded batch per table per run. */
export async function deleteExpiredRecords(d1: Db, now: string, limit: number): Promise<number> {
  const deletions = ['idempotency_keys', 'operator_idempotency_keys'].map((table) =>
    d1
      .prepare(`DELETE FROM ${table} WHERE id IN (SELECT id FROM ${table} WHERE created_at <= ? ORDER BY created_at LIMIT ?)`)
      .bind(cutoffOf(now), limit),
  );
  const results = await d1.batch(deletions);
  return results.reduce((sum, r) => sum + r.meta.changes, 0);
}
