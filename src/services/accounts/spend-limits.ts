import { sql, type SQL } from 'drizzle-orm';
import { rowsOf } from '../../db/batch';
import { ApiError } from '../../lib/errors';
import { centsToAmount, formatUsd } from '../../lib/money';
import { addMinutes } from '../../lib/time';
import type { Caller } from '../caller';

// An API key's daily spend limit covers its family: the total_amount of the orders placed since 00:00 UTC with the
// key and with every key made from it, directly or further down (revoked ones too, and cancelled orders too, so
// neither a make-spend-revoke loop nor a buy-cancel loop can launder the cap), plus the purchase at hand, may not
// exceed `spend_limit_cents` of the buying key nor of any key above it. A key's limit is never above its maker's and
// a key made by a limited key is limited (src/services/accounts/keys.ts), so a key without a limit has no limited key
// above it: its purchases read nothing. The family's spending is kept, not summed: one row per key and UTC day
// (api_key_spend_days), which the order's own INSERT updates (migrations/0030_counts_kept.sql), so a purchase reads
// the same rows after its family's 100,000th order of the day as after its first.

export const utcDayStart = (now: string) => `${now.slice(0, 10)}T00:00:00.000Z`;
/** When today's spending stops counting: the next 00:00 UTC. */
export const nextUtcDay = (now: string) => addMinutes(utcDayStart(now), 24 * 60);

/** The ids of a key's makers (`ancestry` '/1/5/' → JSON '[1,5]', '/' → '[]'), for json_each. */
export const ancestorIds = (ancestry: SQL) => sql`('[' || rtrim(replace(substr(${ancestry}, 2), '/', ','), ',') || ']')`;

/** The key of alias `key` and every key above it, as a subquery of ids (primary-key lookups). */
export const keyAndMakers = (key: string) =>
  sql`(SELECT ${sql.identifier(key)}.id UNION ALL SELECT value FROM json_each(${ancestorIds(sql`${sql.identifier(key)}.ancestry`)}))`;

/** The key of alias `child` was made from the key of alias `key`, directly or further down. */
export const descendantOf = (child: string, key: string) => {
  const [c, k] = [sql.identifier(child), sql.identifier(key)];
  return sql`${c}.ancestry >= ${k}.ancestry || ${k}.id || '/' AND ${c}.ancestry < ${k}.ancestry || ${k}.id || '0'`;
};

/** The UTC day ('YYYY-MM-DD') of an ISO timestamp: the key of a family's kept spending. */
export const utcDay = (now: string) => now.slice(0, 10);

/**
 * What the family of the key of alias `key` spent today, in cents: one row of api_key_spend_days, which the order's
 * INSERT itself keeps (a trigger of migrations/0030_counts_kept.sql adds each order's total to the row of its key and
 * of every key above it). So a purchase reads one row per limited key however many orders the family placed today.
 */
export const familySpentTodayCents = (key: string, now: string) =>
  sql`coalesce((SELECT sd.spent_cents FROM api_key_spend_days sd WHERE sd.api_key_id = ${sql.identifier(key)}.id AND sd.day = ${utcDay(now)}), 0)`;

/**
 * The purchase INSERT's condition: the caller's key has no limit (then nothing is summed), or for the key and every
 * limited key above it, its family's spending today plus `totalCents` (the order's total as an SQL expression of the
 * INSERT's own row) stays within its limit. Evaluated inside the purchase's batch, so parallel purchases through any
 * keys of a family each see the ones committed before them. Not an API key (the dashboard): no limit.
 */
export function withinSpendLimit(caller: Caller, totalCents: SQL, now: string): SQL {
  if (!caller.keyId) return sql`1`;
  // CASE, not OR: a key without a limit reads nothing more.
  return sql`(SELECT CASE WHEN k.spend_limit_cents IS NULL THEN 1 ELSE NOT EXISTS (
                SELECT 1 FROM api_keys lim
                WHERE lim.id IN ${keyAndMakers('k')} AND lim.spend_limit_cents IS NOT NULL
                  AND ${familySpentTodayCents('lim', now)} + ${totalCents} > lim.spend_limit_cents) END
              FROM api_keys k WHERE k.id = ${caller.keyId})`;
}

/**
 * The explaining read for the end of the purchase's batch (none for a caller without a key): each limited key from the
 * buying key up, with its family's spending today. A key without a limit reads no row and sums nothing.
 */
export const spendLimitState = (caller: Caller, now: string): SQL[] =>
  caller.keyId
    ? [
        sql`SELECT lim.id AS keyId, lim.spend_limit_cents AS limitCents, ${familySpentTodayCents('lim', now)} AS spentCents,
                   ${nextUtcDay(now)} AS resetsAt
            FROM api_keys k JOIN api_keys lim ON lim.id IN ${keyAndMakers('k')}
            WHERE k.id = ${caller.keyId} AND k.spend_limit_cents IS NOT NULL AND lim.spend_limit_cents IS NOT NULL`,
      ]
    : [];

interface LimitRow {
  keyId: number;
  limitCents: number;
  spentCents: number;
  resetsAt: string;
}

/**
 * SPEND_LIMIT_REACHED when the read above says `totalCents` more would pass a limit: the key with the least left
 * today (the nearest to the buying key on a tie) is named.
 */
export function overSpendLimit(state: D1Result | undefined, totalCents: number): ApiError | undefined {
  const reached = rowsOf<LimitRow>(state)
    .filter((row) => row.spentCents + totalCents > row.limitCents)
    .sort((a, b) => a.limitCents - a.spentCents - (b.limitCents - b.spentCents) || b.keyId - a.keyId);
  const [row] = reached;
  if (!row) return undefined;
  const left = Math.max(0, row.limitCents - row.spentCents);
  return new ApiError(
    'SPEND_LIMIT_REACHED',
    `This purchase of ${formatUsd(totalCents)} would take API key ${row.keyId} past its daily spend limit of ${formatUsd(row.limitCents)}: ` +
      `${formatUsd(left)} is left today, until the limit resets at ${row.resetsAt} (00:00 UTC).`,
    {
      limit: centsToAmount(row.limitCents),
      spent_today: centsToAmount(row.spentCents),
      total: centsToAmount(totalCents),
      resets_at: row.resetsAt,
      key_id: row.keyId,
    },
  );
}
