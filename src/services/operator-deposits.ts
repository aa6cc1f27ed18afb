import { sql } from 'drizzle-orm';
import { columnsOf, rowsOf } from '../db/batch';
import { deposits, gatewayEvents, type DepositRow, type GatewayEventRow } from '../db/schema';
import { pageWindow, type Page } from '../lib/pagination';
import type { Query } from './caller';

// Deposits as the operator sees them (GET /admin/deposits, the console's deposits page), with their gateway events.

export interface DepositFilters {
  status?: DepositRow['status'];
  gateway?: string;
  userId?: number;
}

export interface OperatorDeposit extends DepositRow {
  events: GatewayEventRow[];
}

/** Newest first; ?status= through deposits_status_created, the whole list through deposits_created. */
export const operatorDepositsQuery = ({ status, gateway, userId }: DepositFilters, page: Page): Query<{ rows: OperatorDeposit[]; total: number }> => {
  const { limit, offset } = pageWindow(page);
  const conditions = [
    ...(status === undefined ? [] : [sql`status = ${status}`]),
    ...(gateway === undefined ? [] : [sql`gateway = ${gateway}`]),
    ...(userId === undefined ? [] : [sql`user_id = ${userId}`]),
  ];
  const where = conditions.length === 0 ? sql`` : sql`WHERE ${sql.join(conditions, sql` AND `)}`;
  const pageOfIds = sql`SELECT id FROM deposits ${where} ORDER BY created_at DESC, id DESC LIMIT ${limit} OFFSET ${offset}`;
  return {
    reads: [
      sql`SELECT ${columnsOf(deposits)} FROM deposits ${where} ORDER BY created_at DESC, id DESC LIMIT ${limit} OFFSET ${offset}`,
      sql`SELECT count(*) AS total FROM deposits ${where}`,
      sql`SELECT ${columnsOf(gatewayEvents)} FROM gateway_events WHERE deposit_id IN (${pageOfIds}) ORDER BY received_at, id`,
    ],
    parse: ([rows, total, events]) => {
      const eventRows = rowsOf<GatewayEventRow>(events);
      return {
        rows: rowsOf<DepositRow>(rows).map((d) => ({ ...d, events: eventRows.filter((e) => e.depositId === d.id) })),
        total: rowsOf<{ total: number }>(total)[0].total,
      };
    },
  };
};
