import { sql } from 'drizzle-orm';
import { rowsOf } from '../../db/batch';
import type { Db } from '../../db/client';
import { writeBatch } from '../../db/d1';
import { ApiError, notFound } from '../../lib/errors';
import { ALL_SCOPES } from '../../lib/scopes';
import { isoNow } from '../../lib/time';
import type { CreateApiKeyRequest } from '../../schemas/api-keys';
import {
  insertKeyUnderLimit,
  issueKey,
  keyColumns,
  keyInUse,
  keyLimitsOf,
  keyView,
  MAX_ACTIVE_KEYS,
  widerThanMaker,
  type CreatedKey,
  type KeyLimits,
  type KeyViewRow,
  type MakerRow,
} from '../accounts/keys';
import { readAs, userCaller, type Caller } from '../caller';
import { newOperationId } from '../ledger';
import { centsToAmount } from '../../lib/money';
import { familySpentTodayCents } from '../accounts/spend-limits';
import { liveAccountRead, sandboxAccountStatements, type LiveAccount } from './account';
import { liveAncestryOf } from './key-makers';

// Test keys made from live: a live key (scope `keys`) or a dashboard session asks for a `sk_test_` key. The caller is
// proved on the live database, the key is written in the sandbox: two databases, so two round trips (one each), the
// one documented exception to "one round trip per request". Nothing is atomic across them, and nothing needs to be:
// the live read changes nothing, and the sandbox batch alone creates the user (first time), its test money and the key.

interface MakerWithIps extends MakerRow {
  id: number;
  ancestry: string;
  allowed_ips: string | null;
}

/** The new key's limits, all decided here: as asked, else the maker's (none for a session: every scope, no limits). */
function resolvedLimits(asked: KeyLimits, maker: MakerWithIps | undefined): KeyLimits {
  const wider = widerThanMaker(asked, maker);
  if (wider) throw wider;
  return {
    scopes: asked.scopes ?? maker?.scopes ?? ALL_SCOPES,
    spendLimitCents: asked.spendLimitCents !== undefined ? asked.spendLimitCents : (maker?.spend_limit_cents ?? null),
    allowedIps: asked.allowedIps !== undefined ? asked.allowedIps : maker?.allowed_ips ? (JSON.parse(maker.allowed_ips) as string[]) : null,
    expiresAt: asked.expiresAt !== undefined ? asked.expiresAt : (maker?.expires_at ?? null),
  };
}

/**
 * A test key for the live caller: proved on `live` (with its scope and address, and the maker's limits read), then
 * one sandbox batch: the user and its test money on first need, and the key under the sandbox's own limit of five.
 */
export async function createTestKeyFromLive(live: Db, sandbox: Db, caller: Caller, request: CreateApiKeyRequest): Promise<CreatedKey> {
  const [accountRows, makerRows] = await readAs(live, caller, [
    liveAccountRead(caller.userId),
    sql`SELECT id, ancestry, scopes, spend_limit_cents, allowed_ips, ip_ranges, expires_at FROM api_keys WHERE id = ${caller.keyId ?? null}`,
  ]);
  const [account] = rowsOf<LiveAccount>(accountRows);
  if (!account) throw notFound('User');
  const maker = rowsOf<MakerWithIps>(makerRows)[0];
  const limits = resolvedLimits(keyLimitsOf(request), maker);
  // Its live makers, so it dies with them (src/services/sandbox/key-makers.ts).
  const liveAncestry = liveAncestryOf(maker);
  const issued = await issueKey('test');
  const now = isoNow();
  const { reads } = await writeBatch(sandbox, {
    writes: [
      ...sandboxAccountStatements(account, now, newOperationId()),
      insertKeyUnderLimit(sql`(SELECT id FROM users WHERE id = ${account.id})`, request.name, issued, now, { limits }),
      ...(liveAncestry ? [sql`UPDATE api_keys SET live_ancestry = ${liveAncestry} WHERE key_hash = ${issued.keyHash}`] : []),
    ],
    reads: [sql`SELECT ${keyColumns} FROM api_keys WHERE key_hash = ${issued.keyHash}`, sql`SELECT 1 FROM users WHERE id = ${account.id}`],
    committed: ([row]) => rowsOf(row).length > 0,
  });
  const [row] = rowsOf<KeyViewRow>(reads[0]);
  // Never the key limit for what is not one: a user the batch could not give a sandbox account is a fault of ours.
  if (!row && rowsOf(reads[1]).length === 0) throw new Error('sandbox account not created');
  if (!row) throw new ApiError('API_KEY_LIMIT_REACHED', `A user can have at most ${MAX_ACTIVE_KEYS} active test API keys. Revoke one first.`);
  return { ...keyView(row), key: issued.key, api_key: issued.key };
}

/** The user's active test keys (the dashboard's keys page, after its live read proved the session). */
export async function listTestKeys(sandbox: Db, userId: number) {
  const now = isoNow();
  const [keys] = await readAs(sandbox, userCaller(userId), [
    sql`SELECT ${keyColumns}, last_used_at, ${familySpentTodayCents('listed', now)} AS spent_cents FROM api_keys listed
        WHERE user_id = ${userId} AND ${keyInUse('listed', now)} ORDER BY created_at DESC, id DESC`,
  ]).catch((err: unknown) => {
    // No sandbox account yet: no test keys.
    if (err instanceof ApiError && err.code === 'UNAUTHORIZED') return [undefined];
    throw err;
  });
  return rowsOf<KeyViewRow & { last_used_at: string | null; spent_cents: number }>(keys).map(({ last_used_at, spent_cents, ...row }) => ({
    ...keyView(row),
    last_used_at,
    spent_today: centsToAmount(spent_cents),
  }));
}

/** Revoke one of the user's test keys (the dashboard's Revoke on a test key, its session proved on live). */
export async function revokeTestKey(sandbox: Db, userId: number, keyId: number): Promise<void> {
  const now = isoNow();
  const { reads } = await writeBatch(sandbox, {
    writes: [sql`UPDATE api_keys SET revoked_at = ${now} WHERE id = ${keyId} AND user_id = ${userId} AND revoked_at IS NULL`],
    reads: [sql`SELECT 1 FROM api_keys WHERE id = ${keyId} AND user_id = ${userId} AND revoked_at = ${now}`],
    committed: ([row]) => rowsOf(row).length > 0,
  });
  if (rowsOf(reads[0]).length === 0) throw notFound('API key');
}
