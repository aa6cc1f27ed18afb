import { and, desc, eq, isNull, sql, type SQL } from 'drizzle-orm';
import { rowsOf, runBatch } from '../db/batch';
import { getDb, type Db } from '../db/client';
import { apiKeys } from '../db/schema';
import type { Principal } from '../env';
import { randomBase62, sha256Hex } from '../lib/crypto';
import { ApiError, notFound } from '../lib/errors';
import { isoNow } from '../lib/time';

export const MAX_ACTIVE_KEYS = 5;
const KEY_PREFIX = 'sk_live_';
const KEY_SHAPE = /^sk_live_[0-9A-Za-z]{40}$/;
// last_used_at is refreshed at most once a minute per key, so authentication is not a write per request.
const LAST_USED_RESOLUTION_MS = 60_000;

export interface IssuedKey {
  key: string;
  keyHash: string;
  keyPreview: string;
}

export async function issueKey(): Promise<IssuedKey> {
  const key = KEY_PREFIX + randomBase62(40);
  return { key, keyHash: await sha256Hex(key), keyPreview: `${KEY_PREFIX}****${key.slice(-4)}` };
}

export interface KeyRow {
  id: number;
  name: string;
  key_preview: string;
  created_at: string;
}

/**
 * The INSERT that adds a key only while its owner has fewer than five active ones, so the limit holds under
 * concurrency. `owner` is a scalar SQL expression (a brand-new user is addressed by email within its creation batch).
 */
export function insertKeyUnderLimit(owner: SQL, name: string, issued: IssuedKey, now: string): SQL {
  return sql`
    INSERT INTO api_keys (user_id, name, key_hash, key_preview, created_at)
    SELECT owner.id, ${name}, ${issued.keyHash}, ${issued.keyPreview}, ${now} FROM (SELECT ${owner} AS id) AS owner
    WHERE owner.id IS NOT NULL
      AND (SELECT count(*) FROM api_keys WHERE user_id = owner.id AND revoked_at IS NULL) < ${MAX_ACTIVE_KEYS}
    RETURNING id, name, key_preview, created_at`;
}

export interface CreatedKey {
  id: number;
  name: string;
  key: string;
  api_key: string;
  key_preview: string;
  created_at: string;
}

export async function createApiKey(d1: Db, userId: number, name: string): Promise<CreatedKey> {
  const issued = await issueKey();
  const [row] = rowsOf<KeyRow>((await runBatch(d1, [insertKeyUnderLimit(sql`${userId}`, name, issued, isoNow())]))[0]);
  if (!row) {
    throw new ApiError('API_KEY_LIMIT_REACHED', `A user can have at most ${MAX_ACTIVE_KEYS} active API keys. Revoke one first.`);
  }
  return { ...row, key: issued.key, api_key: issued.key };
}

export async function listApiKeys(d1: Db, userId: number) {
  return getDb(d1)
    .select({
      id: apiKeys.id,
      name: apiKeys.name,
      key_preview: apiKeys.keyPreview,
      last_used_at: apiKeys.lastUsedAt,
      created_at: apiKeys.createdAt,
    })
    .from(apiKeys)
    .where(and(eq(apiKeys.userId, userId), isNull(apiKeys.revokedAt)))
    .orderBy(desc(apiKeys.createdAt), desc(apiKeys.id));
}

export async function revokeApiKey(d1: Db, userId: number, keyId: number): Promise<void> {
  const result = await d1
    .prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND user_id = ? AND revoked_at IS NULL')
    .bind(isoNow(), keyId, userId)
    .run();
  if (result.meta.changes === 0) throw notFound('API key');
}

export interface Authenticated extends Principal {
  /** Set when last_used_at is stale: the caller runs it after the response (waitUntil). */
  touch?: () => Promise<unknown>;
}

/** The principal of a presented key, or null for unknown, malformed and revoked keys. */
export async function authenticateApiKey(d1: Db, presented: string): Promise<Authenticated | null> {
  if (!KEY_SHAPE.test(presented)) return null;
  const row = await d1
    .prepare('SELECT id, user_id, last_used_at FROM api_keys WHERE key_hash = ? AND revoked_at IS NULL')
    .bind(await sha256Hex(presented))
    .first<{ id: number; user_id: number; last_used_at: string | null }>();
  if (!row) return null;
  const now = Date.now();
  const stale = row.last_used_at === null || Date.parse(row.last_used_at) <= now - LAST_USED_RESOLUTION_MS;
  const touch = stale
    ? () => d1.prepare('UPDATE api_keys SET last_used_at = ? WHERE id = ?').bind(isoNow(now), row.id).run()
    : undefined;
  return { userId: row.user_id, apiKeyId: row.id, touch };
}
