import { and, eq, gt, sql, type SQL } from 'drizzle-orm';
import { getDb, type Db } from '../db/client';
import { idempotencyKeys } from '../db/schema';

export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;

/** The caller's claim on an Idempotency-Key, carried into the batch of the effect it guards. */
export interface IdempotencyClaim {
  userId: number;
  key: string;
  requestHash: string;
  now: string;
}

const cutoffOf = (now: string) => new Date(Date.parse(now) - IDEMPOTENCY_TTL_MS).toISOString();

/**
 * Statements appended to an effect's batch: an expired record of the same key is released, then the record is
 * written only when `resource` (a SELECT of one `id` column) yields a row, i.e. only when the effect happened. A
 * concurrent request that already wrote the key makes the unique index fail and the whole batch, effect included,
 * roll back.
 */
export function recordClaim(claim: IdempotencyClaim, resource: SQL): SQL[] {
  return [
    sql`DELETE FROM idempotency_keys WHERE user_id = ${claim.userId} AND idempotency_key = ${claim.key} AND created_at <= ${cutoffOf(claim.now)}`,
    sql`INSERT INTO idempotency_keys (user_id, idempotency_key, request_hash, resource_id, created_at)
        SELECT ${claim.userId}, ${claim.key}, ${claim.requestHash}, r.id, ${claim.now} FROM (${resource}) AS r`,
  ];
}

export async function findLiveRecord(d1: Db, userId: number, key: string, now: string) {
  const [record] = await getDb(d1)
    .select()
    .from(idempotencyKeys)
    .where(and(eq(idempotencyKeys.userId, userId), eq(idempotencyKeys.idempotencyKey, key), gt(idempotencyKeys.createdAt, cutoffOf(now))));
  return record;
}

export async function storeResponse(d1: Db, userId: number, key: string, status: number, body: string) {
  await getDb(d1)
    .update(idempotencyKeys)
    .set({ responseStatus: status, responseBody: body })
    .where(and(eq(idempotencyKeys.userId, userId), eq(idempotencyKeys.idempotencyKey, key)));
}

/** Scheduled job: forget records older than 24 hours, a bounded batch per run. */
export async function deleteExpiredRecords(d1: Db, now: string, limit: number): Promise<number> {
  const result = await getDb(d1).run(sql`
    DELETE FROM idempotency_keys
    WHERE id IN (SELECT id FROM idempotency_keys WHERE created_at <= ${cutoffOf(now)} ORDER BY created_at LIMIT ${limit})`);
  return result.meta.changes;
}
