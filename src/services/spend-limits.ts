import { sql, type SQL } from 'drizzle-orm';
import { rowsOf } from '../db/batch';
import { ApiError } from '../lib/errors';
import { centsToAmount } from '../lib/money';
import type { Caller } from './caller';

// An API key's daily spend limit: the total_amount of the orders it placed since 00:00 UTC (cancelled ones too, so a
// buy-cancel loop cannot launder the cap), plus the purchase at hand, may not exceed `spend_limit_cents`.

export const utcDayStart = (now: string) => `${now.slice(0, 10)}T00:00:00.000Z`;

/** What key `keyId` (SQL) spent today, in cents. Indexed by orders_api_key_created. */
export const spentTodayCents = (keyId: SQL, now: string) =>
  sql`(SELECT coalesce(sum(total_amount_cents), 0) FROM orders WHERE api_key_id = ${keyId} AND created_at >= ${utcDayStart(now)})`;

/**
 * The purchase INSERT's condition: the caller's key has no limit, or today's spending plus `totalCents` (the order's
 * total as an SQL expression of the INSERT's own row) stays within it. Evaluated inside the purchase's batch, so
 * parallel purchases each see the ones committed before them. Not an API key (the dashboard): no limit.
 */
export function withinSpendLimit(caller: Caller, totalCents: SQL, now: string): SQL {
  if (!caller.keyId) return sql`1`;
  // CASE, not OR: an OR computes both sides, and the sum reads every order the key placed today.
  return sql`(SELECT CASE WHEN k.spend_limit_cents IS NULL THEN 1 ELSE ${spentTodayCents(sql`k.id`, now)} + ${totalCents} <= k.spend_limit_cents END
              FROM api_keys k WHERE k.id = ${caller.keyId})`;
}

/**
 * The explaining read for the end of the purchase's batch (none for a caller without a key); a key without a limit
 * reads 0 instead of summing its day.
 */
export const spendLimitState = (caller: Caller, now: string): SQL[] =>
  caller.keyId
    ? [
        sql`SELECT spend_limit_cents AS limitCents,
                   CASE WHEN spend_limit_cents IS NULL THEN 0 ELSE ${spentTodayCents(sql`api_keys.id`, now)} END AS spentCents
            FROM api_keys WHERE id = ${caller.keyId}`,
      ]
    : [];

/** SPEND_LIMIT_REACHED when the read above says `totalCents` more would pass the key's limit. */
export function overSpendLimit(state: D1Result | undefined, totalCents: number): ApiError | undefined {
  const [row] = rowsOf<{ limitCents: number | null; spentCents: number }>(state);
  if (!row || row.limitCents === null || row.spentCents + totalCents <= row.limitCents) return undefined;
  return new ApiError('SPEND_LIMIT_REACHED', "This purchase would take the API key past its daily spend limit.", {
    limit: centsToAmount(row.limitCents),
    spent_today: centsToAmount(row.spentCents),
    total: centsToAmount(totalCents),
  });
}
