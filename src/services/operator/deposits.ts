import { sql, type SQL } from 'drizzle-orm';
import { columnsOf, rowsOf } from '../../db/batch';
import { deposits, gatewayEvents, type DepositRow, type GatewayEventRow } from '../../db/schema';
import { withinDays } from '../../db/date-range';
import type { DateRange } from '../../lib/date-range';
import { notFound } from '../../lib/errors';
import { pageWindow, type Page } from '../../lib/pagination';
import type { Query } from '../caller';
import { buyerColumns, type Buyer } from './users';

// Deposits as the operator sees them (GET /admin/deposits, the console's deposits page), with their gateway events.

export interface DepositFilters extends DateRange {
  status?: DepositRow['status'];
  gateway?: string;
  userId?: number;
}

export interface OperatorDeposit extends DepositRow, Buyer {
  events: GatewayEventRow[];
}

/** Newest first; ?status= through deposits_status_created, the whole list through deposits_created. */
export function depositsWhere({ status, gateway, userId, from, to }: DepositFilters): SQL {
  const conditions = [
    ...(status === undefined ? [] : [sql`status = ${status}`]),
    ...(gateway === undefined ? [] : [sql`gateway = ${gateway}`]),
    ...(userId === undefined ? [] : [sql`user_id = ${userId}`]),
    ...withinDays(sql`created_at`, { from, to }),
  ];
  return conditions.length === 0 ? sql`` : sql`WHERE ${sql.join(conditions, sql` AND `)}`;
}

export const operatorDepositsQuery = (filters: DepositFilters, page: Page): Query<{ rows: OperatorDeposit[]; total: number }> => {
  const { limit, offset } = pageWindow(page);
  const where = depositsWhere(filters);
  const pageOfIds = sql`SELECT id FROM deposits ${where} ORDER BY created_at DESC, id DESC LIMIT ${limit} OFFSET ${offset}`;
  return {
    reads: [
      sql`SELECT ${columnsOf(deposits)}, ${buyerColumns(sql`deposits.user_id`)} FROM deposits ${where} ORDER BY created_at DESC, id DESC LIMIT ${limit} OFFSET ${offset}`,
      sql`SELECT count(*) AS total FROM deposits ${where}`,
      sql`SELECT ${columnsOf(gatewayEvents)} FROM gateway_events WHERE deposit_id IN (${pageOfIds}) ORDER BY received_at, id`,
    ],
    parse: ([rows, total, events]) => {
      const eventRows = rowsOf<GatewayEventRow>(events);
      return {
        rows: rowsOf<DepositRow & Buyer>(rows).map((d) => ({ ...d, events: eventRows.filter((e) => e.depositId === d.id) })),
        total: rowsOf<{ total: number }>(total)[0].total,
      };
    },
  };
};

/** One deposit with its user's name and email (the confirmation of "Mark paid"). */
export const depositWithBuyerQuery = (depositId: number): Query<DepositRow & Buyer> => ({
  reads: [sql`SELECT ${columnsOf(deposits)}, ${buyerColumns(sql`deposits.user_id`)} FROM deposits WHERE id = ${depositId}`],
  parse: ([result]) => {
    const [deposit] = rowsOf<DepositRow & Buyer>(result);
    if (!deposit) throw notFound('Deposit');
    return deposit;
  },
});
