import { sql, type SQL } from 'drizzle-orm';
import { rowsOf } from '../db/batch';
import type { Db } from '../db/client';
import { apiKeys } from '../db/schema';
import { randomBase62, sha256Hex } from '../lib/crypto';
import { ApiError, notFound } from '../lib/errors';
import { isoNow } from '../lib/time';
import { readAs, writeAs, type Caller } from './caller';
import { recordClaim, type IdempotencyClaim } from './idempotency';
import { endOwnedRow } from './owned-rows';

export const MAX_ACTIVE_KEYS = 5;
const KEY_PREFIX = 'sk_live_';
export const API_KEY_SHAPE = /^sk_live_[0-9A-Za-z]{40}$/;
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

/**
 * With a claim (the dashboard's key form), the key's idempotency record is written in the same batch. Its snapshot is
 * the key's row without the key (id, name, preview, created_at): a replay can say which key was created, never show it.
 */
export async function createApiKey(d1: Db, caller: Caller, name: string, claim?: IdempotencyClaim): Promise<CreatedKey> {
  const issued = await issueKey();
  const [created] = await writeAs(d1, caller, {
    writes: [
      insertKeyUnderLimit(caller.userId, name, issued, isoNow()),
      ...(claim
        ? recordClaim(caller, claim, sql`SELECT id, json_object('id', id, 'name', name, 'key_preview', key_preview, 'created_at', created_at) AS snapshot
            FROM api_keys WHERE key_hash = ${issued.keyHash}`)
        : []),
    ],
    reads: [sql`SELECT id, name, key_preview, created_at FROM api_keys WHERE key_hash = ${issued.keyHash}`],
    committed: ([row]) => rowsOf(row).length > 0,
  });
  const [row] = rowsOf<KeyRow>(created);
  if (!row) {
    throw new ApiError('API_KEY_LIMIT_REACHED', `A user can have at most ${MAX_ACTIVE_KEYS} active API keys. Revoke one first.`);
  }
  return { ...row, key: issued.key, api_key: issued.key };
}

export async function listApiKeys(d1: Db, caller: Caller) {
  const [keys] = await readAs(d1, caller, [
    sql`SELECT id, name, key_preview, last_used_at, created_at FROM api_keys
        WHERE user_id = ${caller.userId} AND revoked_at IS NULL ORDER BY created_at DESC, id DESC`,
  ]);
  return rowsOf<KeyRow & { last_used_at: string | null }>(keys);
}

/** Revoke one of the caller's keys (the very key of the request included: it is proved before the revoke). */
export async function revokeApiKey(d1: Db, caller: Caller, keyId: number): Promise<void> {
  if (!(await endOwnedRow(d1, caller, apiKeys, apiKeys.revokedAt, keyId))) throw notFound('API key');
}

/** After a request the key authenticated: refresh last_used_at when it is older than a minute. */
export function touchApiKey(d1: Db, keyHash: string, lastUsedAt: string | null): Promise<unknown> | null {
  const now = Date.now();
  if (lastUsedAt !== null && Date.parse(lastUsedAt) > now - LAST_USED_RESOLUTION_MS) return null;
  return d1
    .prepare('UPDATE api_keys SET last_used_at = ? WHERE key_hash = ? AND (last_used_at IS NULL OR last_used_at <= ?)')
    .bind(isoNow(now), keyHash, isoNow(now - LAST_USED_RESOLUTION_MS))
    .run();
}
