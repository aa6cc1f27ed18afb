import { sql } from 'drizzle-orm';
import { columnsOf, rowsOf } from '../../db/batch';
import { deposits, gatewayEvents, type DepositRow, type GatewayEventRow } from '../../db/schema';
import type { Query } from '../caller';
import { buyerColumns, type Buyer } from './users';

// What the operator watches: sales per day (GET /admin/stats/sales, the console's chart), and what needs attention.

export interface SalesDay {
  /** YYYY-MM-DD, UTC */
  date: string;
  orders: number;
  revenueCents: number;
  refundsCents: number;
  depositsCents: number;
}

const DAY_MS = 86_400_000;

/** The UTC dates of the last `days` days, oldest first, today last. */
export function lastDays(days: number, nowMs = Date.now()): string[] {
  const today = Math.floor(nowMs / DAY_MS) * DAY_MS;
  return Array.from({ length: days }, (_, i) => new Date(today - (days - 1 - i) * DAY_MS).toISOString().slice(0, 10));
}

/**
 * One row per UTC day, days without activity included (zeros). Read from the ledger through
 * wallet_transactions_type_created: orders and revenue are the day's purchases (gross, also of orders cancelled
 * later), refunds the day's refunds, deposits the day's deposit credits.
 */
export const salesQuery = (days: number, nowMs = Date.now()): Query<SalesDay[]> => {
  const dates = lastDays(days, nowMs);
  return {
    reads: [
      sql`SELECT substr(created_at, 1, 10) AS date, type, count(*) AS count, sum(amount_cents) AS cents
          FROM wallet_transactions
          WHERE type IN ('purchase', 'refund', 'deposit') AND created_at >= ${dates[0]}
          GROUP BY date, type`,
    ],
    parse: ([rows]) => {
      const byDay = new Map(dates.map((date) => [date, { date, orders: 0, revenueCents: 0, refundsCents: 0, depositsCents: 0 }]));
      for (const row of rowsOf<{ date: string; type: 'purchase' | 'refund' | 'deposit'; count: number; cents: number }>(rows)) {
        const day = byDay.get(row.date);
        if (!day) continue; // a clock ahead of the worker's: not one of the days asked for
        if (row.type === 'purchase') {
          day.orders = row.count;
          day.revenueCents = -row.cents;
        } else if (row.type === 'refund') day.refundsCents = row.cents;
        else day.depositsCents = row.cents;
      }
      return [...byDay.values()];
    },
  };
};

export interface FailingEndpoint {
  endpointId: number;
  url: string;
  userId: number;
  failures: number;
  lastFailureAt: string;
}

export interface Attention {
  pendingDeposits: (DepositRow & Buyer)[];
  pendingDepositsTotal: number;
  /** Amount mismatches (and, with the real providers, reversals) on deposits that are not paid. */
  openMismatches: GatewayEventRow[];
  failingEndpoints: FailingEndpoint[];
}

const LISTED = 20;

/** The overview's lists: pending deposits, open mismatches, endpoints whose deliveries failed in the last 24 hours. */
export const attentionQuery = (nowMs = Date.now()): Query<Attention> => ({
  reads: [
    sql`SELECT ${columnsOf(deposits)}, ${buyerColumns(sql`deposits.user_id`)} FROM deposits WHERE status = 'pending' ORDER BY created_at DESC, id DESC LIMIT ${LISTED}`,
    sql`SELECT count(*) AS total FROM deposits WHERE status = 'pending'`,
    sql`SELECT ${columnsOf(gatewayEvents)} FROM gateway_events g
        WHERE outcome IN ('amount_mismatch', 'reversed')
          AND NOT EXISTS (SELECT 1 FROM deposits d WHERE d.id = g.deposit_id AND d.status = 'paid' AND g.outcome = 'amount_mismatch')
        ORDER BY received_at DESC LIMIT ${LISTED}`,
    sql`SELECT e.id AS endpointId, e.url, e.user_id AS userId, count(*) AS failures, max(d.at) AS lastFailureAt
        FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
        WHERE d.at > ${new Date(nowMs - 86_400_000).toISOString()} AND e.deleted_at IS NULL
          AND (d.status_code IS NULL OR d.status_code NOT BETWEEN 200 AND 299)
        GROUP BY e.id ORDER BY failures DESC LIMIT ${LISTED}`,
  ],
  parse: ([pending, pendingTotal, mismatches, endpoints]) => ({
    pendingDeposits: rowsOf<DepositRow & Buyer>(pending),
    pendingDepositsTotal: rowsOf<{ total: number }>(pendingTotal)[0].total,
    openMismatches: rowsOf<GatewayEventRow>(mismatches),
    failingEndpoints: rowsOf<FailingEndpoint>(endpoints),
  }),
});
