import { sql, type SQL } from 'drizzle-orm';
import { rowsOf } from '../db/batch';
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
 * Statements appended to an effect's batch: an expired record of the same key is released, then the record is
 * written only when `resource` (a SELECT of `id` and `snapshot`, the JSON of the row the response is rendered from)
 * yields a row, i.e. only when the effect happened. A request that already holds the key makes the unique index fail
 * and the whole batch, effect included, roll back: that failure is how a replay is recognised, with no lookup first.
 */
export function recordClaim(caller: Caller, claim: IdempotencyClaim, resource: SQL): SQL[] {
  return [
    sql`DELETE FROM idempotency_keys WHERE user_id = ${caller.userId} AND idempotency_key = ${claim.key} AND created_at <= ${cutoffOf(claim.now)}`,
    sql`INSERT INTO idempotency_keys (user_id, idempotency_key, request_hash, resource_id, response_snapshot, created_at)
        SELECT ${caller.userId}, ${claim.key}, ${claim.requestHash}, r.id, r.snapshot, ${claim.now} FROM (${resource}) AS r
        WHERE ${caller.userId} IS NOT NULL`,
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
export async function findClaim(d1: Db, caller: Caller, key: string, related: (resourceId: SQL) => SQL[] = () => []) {
  const live = sql`user_id = ${caller.userId} AND idempotency_key = ${key} AND created_at > ${cutoffOf(isoNow())}`;
  const [record, ...rest] = await readAs(d1, caller, [
    sql`SELECT request_hash AS requestHash, resource_id AS resourceId, response_status AS responseStatus,
               response_body AS responseBody, response_snapshot AS responseSnapshot
        FROM idempotency_keys WHERE ${live}`,
    ...related(sql`(SELECT resource_id FROM idempotency_keys WHERE ${live})`),
  ]);
  const [found] = rowsOf<ClaimRecord>(record);
  return found ? { record: found, related: rest } : null;
}

/** Scheduled job: forget records older than 24 hours, a bounded batch per run. */
export async function deleteExpiredRecords(d1: Db, now: string, limit: number): Promise<number> {
  const result = await d1
    .prepare(
      `DELETE FROM idempotency_keys
       WHERE id IN (SELECT id FROM idempotency_keys WHERE created_at <= ? ORDER BY created_at LIMIT ?)`,
    )
    .bind(cutoffOf(now), limit)
    .run();
  return result.meta.changes;
}
