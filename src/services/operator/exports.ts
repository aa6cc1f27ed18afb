import { sql, type SQL } from 'drizzle-orm';
import { rowsOf } from '../../db/batch';
import { withinDays } from '../../db/date-range';
import { csvFile, csvMoney, type CsvValue } from '../../lib/csv';
import type { DateRange } from '../../lib/date-range';
import { fieldError } from '../../lib/errors';
import type { Query } from '../caller';
import { depositsWhere } from './deposits';
import { ordersWhere } from './orders';
import { buyerColumns } from './users';

// The operator's CSV exports (GET /admin/exports/*.csv and the console's "Export CSV" links): orders, deposits and
// the wallet ledger within a range of UTC days, oldest first. Each file is ONE statement (one round trip, one query of
// the invocation's budget, a few hundred bytes of SQL whatever the range); a range holding more than EXPORT_MAX_ROWS
// rows is refused (422) rather than cut short, so a file is never silently incomplete. Never a stock item.

export const EXPORT_MAX_ROWS = 50_000;

export const EXPORTS = ['orders', 'deposits', 'transactions', 'documents'] as const;
export type ExportName = (typeof EXPORTS)[number];

interface ExportSpec {
  header: readonly string[];
  /** The SELECT, its WHERE included, without ORDER BY / LIMIT. */
  select: (range: DateRange) => SQL;
  row: (r: Record<string, unknown>) => CsvValue[];
}

const where = (conditions: SQL[]) => (conditions.length === 0 ? sql`` : sql`WHERE ${sql.join(conditions, sql` AND `)}`);
const cents = (value: unknown) => csvMoney(value as number);
const text = (value: unknown) => (value ?? null) as CsvValue;

const SPECS: Record<ExportName, ExportSpec> = {
  // The books' documents (src/services/documents/): one row each, numbers and amounts as issued.
  documents: {
    header: ['number', 'type', 'issued_at', 'corrects', 'user_id', 'buyer_name', 'buyer_company', 'buyer_country', 'buyer_vat_id', 'order_id',
      'deposit_id', 'net_amount', 'tax_rate', 'tax_amount', 'total_amount', 'currency', 'tax_note', 'billing_country', 'ip_country'],
    select: (range) => sql`SELECT number, type, issued_at AS created_at, (SELECT c.number FROM documents c WHERE c.id = documents.corrects_id) AS corrects,
                                  user_id, json_extract(buyer, '$.name') AS buyer_name, json_extract(buyer, '$.company') AS buyer_company,
                                  json_extract(buyer, '$.country') AS buyer_country, json_extract(buyer, '$.vat_id') AS buyer_vat_id, order_id, deposit_id,
                                  net_amount_cents, tax_rate_bp, tax_amount_cents, total_amount_cents, tax_note, billing_country, ip_country, id
                           FROM documents ${where(withinDays(sql`issued_at`, range))}`,
    row: (r) => [
      text(r.number), text(r.type), text(r.created_at), text(r.corrects), text(r.user_id), text(r.buyer_name), text(r.buyer_company),
      text(r.buyer_country), text(r.buyer_vat_id), text(r.order_id), text(r.deposit_id), cents(r.net_amount_cents), cents(r.tax_rate_bp),
      cents(r.tax_amount_cents), cents(r.total_amount_cents), 'USD', text(r.tax_note), text(r.billing_country), text(r.ip_country),
    ],
  },
  orders: {
    // The price columns came later: appended, so a reader that goes by position keeps working.
    header: ['order_number', 'created_at', 'status', 'user_id', 'user_name', 'user_email', 'product_id', 'product_name', 'quantity', 'unit_price',
      'total_amount', 'final_sale', 'list_unit_price', 'discount_amount', 'coupon'],
    select: (range) => sql`SELECT order_number, created_at, status, user_id, ${buyerColumns(sql`orders.user_id`)}, product_id, product_name,
                                  quantity, unit_price_cents, total_amount_cents, cancellable, list_unit_price_cents, discount_amount_cents, coupon, id
                           FROM orders ${ordersWhere(range)}`,
    row: (r) => [
      text(r.order_number), text(r.created_at), text(r.status), text(r.user_id), text(r.userName), text(r.userEmail), text(r.product_id),
      text(r.product_name), text(r.quantity), cents(r.unit_price_cents), cents(r.total_amount_cents), r.cancellable === 0,
      cents(r.list_unit_price_cents), cents(r.discount_amount_cents), text(r.coupon),
    ],
  },
  deposits: {
    header: ['id', 'reference', 'created_at', 'status', 'paid_at', 'user_id', 'user_name', 'user_email', 'gateway', 'provider', 'amount', 'transaction_id'],
    select: (range) => sql`SELECT id, reference, created_at, status, paid_at, user_id, ${buyerColumns(sql`deposits.user_id`)}, gateway, provider,
                                  amount_cents, transaction_id
                           FROM deposits ${depositsWhere(range)}`,
    row: (r) => [
      text(r.id), text(r.reference), text(r.created_at), text(r.status), text(r.paid_at), text(r.user_id), text(r.userName), text(r.userEmail),
      text(r.gateway), text(r.provider), cents(r.amount_cents), text(r.transaction_id),
    ],
  },
  transactions: {
    header: ['id', 'created_at', 'user_id', 'user_name', 'user_email', 'type', 'amount', 'balance_after', 'description', 'order_id', 'deposit_id'],
    select: (range) => sql`SELECT id, created_at, user_id, ${buyerColumns(sql`wallet_transactions.user_id`)}, type, amount_cents,
                                  balance_after_cents, description, order_id, deposit_id
                           FROM wallet_transactions ${where(withinDays(sql`created_at`, range))}`,
    row: (r) => [
      text(r.id), text(r.created_at), text(r.user_id), text(r.userName), text(r.userEmail), text(r.type), cents(r.amount_cents),
      cents(r.balance_after_cents), text(r.description), text(r.order_id), text(r.deposit_id),
    ],
  },
};

/** One export as a CSV file's text. */
export const exportQuery = (name: ExportName, range: DateRange, maxRows = EXPORT_MAX_ROWS): Query<string> => {
  const spec = SPECS[name];
  return {
    reads: [sql`${spec.select(range)} ORDER BY created_at, id LIMIT ${maxRows + 1}`],
    parse: ([result]) => {
      const rows = rowsOf<Record<string, unknown>>(result);
      if (rows.length > maxRows) {
        throw fieldError('from', `More than ${maxRows.toLocaleString('en-US')} rows in this range: export a shorter range of days (from, to).`);
      }
      return csvFile(spec.header, rows.map(spec.row));
    },
  };
};

/** The file's name in Content-Disposition: `orders-2026-11-01-to-2026-11-30.csv`. */
export function exportFileName(name: ExportName, { from, to }: DateRange): string {
  return `${name}${from ? `-from-${from}` : ''}${to ? `-to-${to}` : ''}.csv`;
}
