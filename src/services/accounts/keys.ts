import { sql, type SQL } from 'drizzle-orm';
import { rowsOf, runBatch } from '../../db/batch';
import type { Db } from '../../db/client';
import { randomBase62, sha256Hex } from '../../lib/crypto';
import { ApiError, notFound } from '../../lib/errors';
import { ipRange, rangesWithin } from '../../lib/ip';
import { centsToAmount } from '../../lib/money';
import { ALL_SCOPES, scopeMask, scopesOf, type Scope } from '../../lib/scopes';
import { isoNow } from '../../lib/time';
import type { CreateApiKeyRequest } from '../../schemas/api-keys';
import { readAs, writeAs, writeOutcomeAs, type Caller } from '../caller';
import { recordClaim, type IdempotencyClaim } from '../idempotency';
import { ancestorIds, descendantOf, familySpentTodayCents } from './spend-limits';

/** Per mode: a user has at most 5 active live keys and 5 active test keys (which live in the sandbox). */
export const MAX_ACTIVE_KEYS = 5;
export type KeyMode = 'live' | 'test';
const KEY_PREFIX: Record<KeyMode, string> = { live: 'sk_live_', test: 'sk_test_' };
export const API_KEY_SHAPE = /^sk_(live|test)_[0-9A-Za-z]{40}$/;
// last_used_at is refreshed at most once a minute per key, so authentication is not a write per request.
const LAST_USED_RESOLUTION_MS = 60_000;

export interface IssuedKey {
  key: string;
  keyHash: string;
  keyPreview: string;
}

export async function issueKey(mode: KeyMode = 'live'): Promise<IssuedKey> {
  const prefix = KEY_PREFIX[mode];
  const key = prefix + randomBase62(40);
  return { key, keyHash: await sha256Hex(key), keyPreview: `${prefix}****${key.slice(-4)}` };
}

/** A key's mode, as its preview shows it (a test key's row lives in the sandbox; its preview says `sk_test_`). */
export const modeOfPreview = (preview: string): KeyMode => (preview.startsWith(KEY_PREFIX.test) ? 'test' : 'live');

export interface KeyRow {
  id: number;
  name: string;
  key_preview: string;
  created_at: string;
}

/**
 * A key of alias `key` is listed: not revoked, and no key above it revoked or expired (a key never outlives its maker:
 * revoking one revokes its descendants in the same statement, and a child's expiry is never later than its maker's,
 * so this only hides a child whose maker expired first). A hidden key still counts towards the five until its
 * expired maker, which is listed, is revoked, and it with it.
 */
export const keyInUse = (key: string, now: string) => {
  const k = sql.identifier(key);
  return sql`${k}.revoked_at IS NULL AND (${k}.ancestry = '/' OR NOT EXISTS (
    SELECT 1 FROM api_keys up WHERE up.id IN (SELECT value FROM json_each(${ancestorIds(sql`${k}.ancestry`)}))
      AND (up.revoked_at IS NOT NULL OR up.expires_at <= ${now})))`;
};

/**
 * The INSERT that adds a key only while its owner has fewer than five active ones, so the limit holds under
 * concurrency. `owner` is a scalar SQL expression (a brand-new user is addressed by email within its creation batch).
 * A key made by another key (`grant.maker`, NULL while that key may not act) is its child (`created_by_key_id`, and
 * the maker's path in `ancestry`), takes what the request leaves out from its maker and may not be wider than it; all
 * decided here, in the creation's batch.
 */
export function insertKeyUnderLimit(owner: SQL, name: string, issued: IssuedKey, now: string, grant: KeyGrant = {}): SQL {
  const v = grantedValues(grant.limits ?? {});
  return sql`
    INSERT INTO api_keys (user_id, name, key_hash, key_preview, created_at, scopes, spend_limit_cents, allowed_ips, ip_ranges, expires_at,
                          created_by_key_id, ancestry)
    SELECT owner.id, ${name}, ${issued.keyHash}, ${issued.keyPreview}, ${now}, ${v.scopes}, ${v.spendLimitCents}, ${v.allowedIps}, ${v.ipRanges}, ${v.expiresAt},
           maker.id, coalesce(maker.ancestry || maker.id || '/', '/')
    FROM (SELECT ${owner} AS id) AS owner LEFT JOIN api_keys maker ON maker.id = ${grant.maker ?? null}
    WHERE owner.id IS NOT NULL
      AND (SELECT count(*) FROM api_keys WHERE user_id = owner.id AND revoked_at IS NULL) < ${MAX_ACTIVE_KEYS}
      AND (maker.id IS NULL OR ${withinMaker(v)})
    RETURNING id, name, key_preview, created_at`;
}

export interface KeyGrant {
  /** The API key making this one (SQL), if a key is. */
  maker?: SQL;
  limits?: KeyLimits;
}

/** A new key's limits as asked; a field left out (undefined) is inherited from the maker. */
export interface KeyLimits {
  scopes?: number;
  spendLimitCents?: number | null;
  allowedIps?: string[] | null;
  expiresAt?: string | null;
}

export function keyLimitsOf(request: CreateApiKeyRequest): KeyLimits {
  return {
    scopes: request.scopes && scopeMask(request.scopes),
    spendLimitCents: request.spend_limit_per_day,
    allowedIps: request.allowed_ips,
    expiresAt: request.expires_at,
  };
}

const rangesOf = (ips: string[]) => ips.map((ip) => ipRange(ip)!);
const jsonOrNull = (value: unknown[] | null) => (value === null ? null : JSON.stringify(value));

/** The INSERT's value of each limit: as asked, or the maker's (none for a session: every scope, no limits). */
function grantedValues(limits: KeyLimits) {
  const asked = <T>(value: T | undefined, inherited: SQL) => (value === undefined ? inherited : sql`${value}`);
  return {
    scopes: asked(limits.scopes, sql`coalesce(maker.scopes, ${ALL_SCOPES})`),
    spendLimitCents: asked(limits.spendLimitCents, sql`maker.spend_limit_cents`),
    allowedIps: asked(limits.allowedIps && jsonOrNull(limits.allowedIps), sql`maker.allowed_ips`),
    ipRanges: asked(limits.allowedIps && jsonOrNull(limits.allowedIps && rangesOf(limits.allowedIps)), sql`maker.ip_ranges`),
    expiresAt: asked(limits.expiresAt, sql`maker.expires_at`),
  };
}

const rangeEnd = (alias: string, i: 0 | 1) => sql`json_extract(${sql.identifier(alias)}.value, ${`$[${i}]`})`;

/** No wider than the maker: scopes a subset, limit and expiry no later or higher (and present), every range inside one of the maker's. */
const withinMaker = (v: ReturnType<typeof grantedValues>) => sql`(
  ${v.scopes} & ~maker.scopes = 0
  AND (maker.spend_limit_cents IS NULL OR ${v.spendLimitCents} <= maker.spend_limit_cents)
  AND (maker.expires_at IS NULL OR ${v.expiresAt} <= maker.expires_at)
  AND (maker.ip_ranges IS NULL OR (${v.ipRanges} IS NOT NULL AND NOT EXISTS (
    SELECT 1 FROM json_each(${v.ipRanges}) r WHERE NOT EXISTS (
      SELECT 1 FROM json_each(maker.ip_ranges) m WHERE ${rangeEnd('r', 0)} >= ${rangeEnd('m', 0)} AND ${rangeEnd('r', 1)} <= ${rangeEnd('m', 1)})))))`;

export interface CreatedKey extends ApiKeyView {
  key: string;
  api_key: string;
}

/**
 * With a claim (the dashboard's key form), the key's idempotency record is written in the same batch. Its snapshot is
 * the key's row without the key (id, name, preview, created_at): a replay can say which key was created, never show it.
 */
export async function createApiKey(d1: Db, caller: Caller, request: CreateApiKeyRequest, claim?: IdempotencyClaim): Promise<CreatedKey> {
  // The mode is the database's: a live key makes live keys here, a test key test keys (in the sandbox).
  const issued = await issueKey(request.mode);
  const limits = keyLimitsOf(request);
  const [created, maker] = await writeAs(d1, caller, {
    writes: [
      insertKeyUnderLimit(caller.userId, request.name, issued, isoNow(), { maker: caller.keyId, limits }),
      ...(claim
        ? recordClaim(caller, claim, sql`SELECT id, json_object('id', id, 'name', name, 'key_preview', key_preview, 'created_at', created_at) AS snapshot
            FROM api_keys WHERE key_hash = ${issued.keyHash}`)
        : []),
    ],
    reads: [
      sql`SELECT ${keyColumns} FROM api_keys WHERE key_hash = ${issued.keyHash}`,
      sql`SELECT scopes, spend_limit_cents, ip_ranges, expires_at FROM api_keys WHERE id = ${caller.keyId ?? null}`,
    ],
    committed: ([row]) => rowsOf(row).length > 0,
  });
  const [row] = rowsOf<KeyViewRow>(created);
  if (!row) {
    throw (
      widerThanMaker(limits, rowsOf<MakerRow>(maker)[0]) ??
      new ApiError('API_KEY_LIMIT_REACHED', `A user can have at most ${MAX_ACTIVE_KEYS} active API keys. Revoke one first.`)
    );
  }
  return { ...keyView(row), key: issued.key, api_key: issued.key };
}

export interface MakerRow {
  scopes: number;
  spend_limit_cents: number | null;
  ip_ranges: string | null;
  expires_at: string | null;
}

/** Why the creation's batch found the asked key wider than its maker (what `withinMaker` refused), if it was. */
export function widerThanMaker(limits: KeyLimits, maker: MakerRow | undefined): ApiError | undefined {
  if (!maker) return undefined;
  const errors: Record<string, string[]> = {};
  const missing = scopesOf((limits.scopes ?? 0) & ~maker.scopes);
  if (missing.length > 0) errors.scope = missing;
  if (maker.spend_limit_cents !== null && limits.spendLimitCents !== undefined && (limits.spendLimitCents ?? Infinity) > maker.spend_limit_cents) {
    errors.spend_limit_per_day = [`may not exceed this key's own, ${centsToAmount(maker.spend_limit_cents)}`];
  }
  if (maker.expires_at !== null && limits.expiresAt !== undefined && (limits.expiresAt ?? '9') > maker.expires_at) {
    errors.expires_at = [`may not be later than this key's own, ${maker.expires_at}`];
  }
  const makerRanges = maker.ip_ranges === null ? null : (JSON.parse(maker.ip_ranges) as [string, string][]);
  if (makerRanges && limits.allowedIps !== undefined && !(limits.allowedIps && rangesWithin(rangesOf(limits.allowedIps), makerRanges))) {
    errors.allowed_ips = ["must lie within this key's own allowed IPs"];
  }
  if (Object.keys(errors).length === 0) return undefined;
  return new ApiError('INSUFFICIENT_SCOPE', 'An API key can only make keys within its own scopes, spend limit, allowed IPs and expiry.', errors);
}

/** A key as the API shows it (never its hash or full value). */
export interface ApiKeyView extends KeyRow {
  /** The key that made this one; null when it was made in the dashboard or by the operator. */
  created_by_key_id: number | null;
  mode: KeyMode;
  scopes: Scope[];
  spend_limit_per_day: number | null;
  allowed_ips: string[] | null;
  expires_at: string | null;
}

export interface KeyViewRow extends KeyRow {
  created_by_key_id: number | null;
  scopes: number;
  spend_limit_cents: number | null;
  allowed_ips: string | null;
  expires_at: string | null;
}

export const keyColumns = sql`id, name, key_preview, created_at, created_by_key_id, scopes, spend_limit_cents, allowed_ips, expires_at`;

export function keyView({ scopes, spend_limit_cents, allowed_ips, ...row }: KeyViewRow): ApiKeyView {
  return {
    ...row,
    mode: modeOfPreview(row.key_preview),
    scopes: scopesOf(scopes),
    spend_limit_per_day: spend_limit_cents === null ? null : centsToAmount(spend_limit_cents),
    allowed_ips: allowed_ips === null ? null : (JSON.parse(allowed_ips) as string[]),
  };
}

/**
 * The caller's keys in use, newest first, each with what its family spent today (UTC: its own purchases and those of
 * every key made from it, what its limit counts). Expired keys are listed (revoke them); a key made from a revoked or
 * expired key is not.
 */
export async function listApiKeys(d1: Db, caller: Caller) {
  const now = isoNow();
  const [keys] = await readAs(d1, caller, [
    sql`SELECT ${keyColumns}, last_used_at, ${familySpentTodayCents('listed', now)} AS spent_cents FROM api_keys listed
        WHERE user_id = ${caller.userId} AND ${keyInUse('listed', now)} ORDER BY created_at DESC, id DESC`,
  ]);
  return rowsOf<KeyViewRow & { last_used_at: string | null; spent_cents: number }>(keys).map(({ spent_cents, last_used_at, ...row }) => ({
    ...keyView(row),
    last_used_at,
    spent_today: centsToAmount(spent_cents),
  }));
}

/**
 * The one statement that revokes a live key of `userId` (SQL) and, with it, every key made from it however deep: the
 * key's own row and each live descendant (one range of api_keys_ancestry) get the same `revoked_at`. Its subqueries
 * are evaluated once, before any row changes, so a key revoking its own maker (or itself) revokes the whole family.
 * Every path that revokes a key uses it, so no child outlives its maker.
 */
export const revokeKeyFamily = (userId: SQL, keyId: number, now: string) => {
  const revocable = sql`rk.id = ${keyId} AND rk.user_id = ${userId} AND rk.revoked_at IS NULL`;
  return sql`
  UPDATE api_keys SET revoked_at = ${now}
  WHERE user_id = ${userId} AND revoked_at IS NULL
    AND id IN (SELECT rk.id FROM api_keys rk WHERE ${revocable}
               UNION ALL
               SELECT d.id FROM api_keys rk JOIN api_keys d ON ${descendantOf('d', 'rk')} WHERE ${revocable})`;
};

/**
 * Revoke one of the caller's keys and every key made from it (the very key of the request included: it is proved
 * before the revoke). The UPDATE's own change count says whether this very request revoked it (two requests in the
 * same millisecond share a timestamp); only when a fault hid the outcome does the time, generated here, settle it.
 */
export async function revokeApiKey(d1: Db, caller: Caller, keyId: number): Promise<void> {
  const now = isoNow();
  const {
    reads: [changed, row],
    settled,
  } = await writeOutcomeAs(d1, caller, {
    writes: [revokeKeyFamily(caller.userId, keyId, now)],
    reads: [sql`SELECT changes() AS changed`, sql`SELECT id FROM api_keys WHERE id = ${keyId} AND revoked_at = ${now}`],
    committed: ([, result]) => rowsOf(result).length > 0,
  });
  const revoked = settled ? rowsOf(row).length > 0 : rowsOf<{ changed: number }>(changed)[0].changed > 0;
  if (!revoked) throw notFound('API key');
}

/**
 * After a request the key authenticated: refresh last_used_at when it is older than a minute, with `also` (where
 * its user was last seen) in the same batch: one trip after the response.
 */
export function touchApiKey(d1: Db, keyHash: string, lastUsedAt: string | null, also: SQL[] = []): Promise<unknown> | null {
  const now = Date.now();
  if (lastUsedAt !== null && Date.parse(lastUsedAt) > now - LAST_USED_RESOLUTION_MS) return null;
  return runBatch(d1, [
    sql`UPDATE api_keys SET last_used_at = ${isoNow(now)} WHERE key_hash = ${keyHash} AND (last_used_at IS NULL OR last_used_at <= ${isoNow(now - LAST_USED_RESOLUTION_MS)})`,
    ...also,
  ]);
}
