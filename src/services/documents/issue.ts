import { sql, type SQL } from 'drizzle-orm';
import type { DocumentType } from '../../db/schema';

// Issuing a document in the batch that moves the money (docs/documents.md). Every document documents one ledger row,
// found by the operation id its batch generated: the one INSERT below is keyed on it, so a batch that moved no money
// issues nothing, and a batch that rolls back takes its number with it. The number is the type's highest + 1, read
// inside that INSERT: D1 runs a batch as one transaction on its single writer, so parallel purchases are serialised
// and each takes the next number; no number is skipped (nothing is issued outside a committed batch) or used twice
// (the UNIQUE index on (type, sequence) is the backstop and rolls the whole batch back). The seller's settings and the
// buyer's details are copied as they are now (JSON snapshots: later edits never change the document), and the tax is
// computed in integers (round half up). UNIQUE (wallet_transaction_id): one document per movement.

export const NUMBER_PREFIX: Record<DocumentType, string> = { invoice: 'INV-', receipt: 'RCT-', credit_note: 'CN-' };

export const REVERSE_CHARGE_NOTE = 'Reverse charge: VAT to be accounted for by the recipient.';

/**
 * A document to issue: its type and the SELECT of its one row (none when the batch moved no such money), with the
 * columns `issueDocuments` reads: user_id, wallet_transaction_id, order_id, deposit_id, corrects_id, lines (JSON),
 * total (cents), rate (basis points), tax_note, billing_country, ip_country.
 */
export interface DocumentIssue {
  type: DocumentType;
  source: SQL;
}

/**
 * The VAT of a sale to the user of `t` (a wallet_transactions alias) with the request's country `ipCountry`: the
 * buyer's country is the billing country, else the request's; a VAT id in another country than the seller's is a
 * reverse charge (rate 0 and the note); the rate is the settings' rate of that country, 0 where none is set; under
 * `tax_mode` none, 0. Columns for a source's SELECT, given `st` (invoicing_settings) and `b` (billing_details, LEFT
 * JOINed on the user).
 */
function saleTax(ipCountry: SQL): SQL {
  const country = sql`coalesce(b.country, ${ipCountry})`;
  const reverse = sql`(st.tax_mode = 'vat' AND coalesce(b.vat_id, '') <> '' AND ${country} IS NOT NULL AND ${country} <> coalesce(st.country, ''))`;
  return sql`
    CASE WHEN st.tax_mode <> 'vat' OR ${reverse} THEN 0
         ELSE coalesce(json_extract(st.vat_rates, '$.' || ${country}), 0) END AS rate,
    CASE WHEN ${reverse} THEN ${REVERSE_CHARGE_NOTE} END AS tax_note,
    b.country AS billing_country, ${ipCountry} AS ip_country`;
}

const line = (description: SQL, quantity: SQL, unitAmount: SQL, amount: SQL) =>
  sql`json_array(json_object('description', ${description}, 'quantity', ${quantity}, 'unit_amount', ${unitAmount}, 'amount', ${amount}))`;

/**
 * The invoice of an order, for the batch that charges it: keyed on the order's `purchase` ledger row (`operationId`).
 * `ipCountry`: the Cloudflare country of the request that bought (for an order a deposit pays for, the deposit's).
 */
export const invoiceIssue = (operationId: string, ipCountry: SQL): DocumentIssue => ({
  type: 'invoice',
  source: sql`
    SELECT t.user_id, t.id AS wallet_transaction_id, o.id AS order_id, NULL AS deposit_id, NULL AS corrects_id,
           ${line(
             sql`o.product_name || CASE WHEN o.coupon_amount_cents > 0 THEN ' (coupon ' || o.coupon || ': -' || printf('%.2f', o.coupon_amount_cents / 100.0) || ' USD)' ELSE '' END`,
             sql`o.quantity`,
             sql`o.unit_price_cents`,
             sql`o.total_amount_cents`,
           )} AS lines,
           o.total_amount_cents AS total, ${saleTax(ipCountry)}
    FROM wallet_transactions t
    JOIN orders o ON o.id = t.order_id
    JOIN invoicing_settings st ON st.id = 1
    LEFT JOIN billing_details b ON b.user_id = t.user_id
    WHERE t.operation_id = ${operationId} AND t.type = 'purchase'`,
});

/** The receipt of a credited deposit (a wallet top-up: no tax), keyed on its `deposit` ledger row. */
export const receiptIssue = (operationId: string): DocumentIssue => ({
  type: 'receipt',
  source: sql`
    SELECT t.user_id, t.id AS wallet_transaction_id, NULL AS order_id, d.id AS deposit_id, NULL AS corrects_id,
           ${line(sql`'Wallet top-up: deposit #' || d.id || ' via ' || d.gateway`, sql`1`, sql`t.amount_cents`, sql`t.amount_cents`)} AS lines,
           t.amount_cents AS total, 0 AS rate, NULL AS tax_note, b.country AS billing_country, d.ip_country AS ip_country
    FROM wallet_transactions t
    JOIN deposits d ON d.id = t.deposit_id
    LEFT JOIN billing_details b ON b.user_id = t.user_id
    WHERE t.operation_id = ${operationId} AND t.type = 'deposit'`,
});

/**
 * The credit note of a refund (a cancel, a claim's refund, an operator's refund), keyed on its `refund` ledger row:
 * it names the order's invoice and takes that invoice's rate, note and evidence (an order from before documents has
 * no invoice: the note corrects nothing and has no tax).
 */
export const creditNoteIssue = (operationId: string): DocumentIssue => ({
  type: 'credit_note',
  source: sql`
    SELECT t.user_id, t.id AS wallet_transaction_id, t.order_id, NULL AS deposit_id, i.id AS corrects_id,
           ${line(sql`t.description`, sql`1`, sql`t.amount_cents`, sql`t.amount_cents`)} AS lines,
           t.amount_cents AS total, coalesce(i.tax_rate_bp, 0) AS rate, i.tax_note, i.billing_country, i.ip_country
    FROM wallet_transactions t
    LEFT JOIN documents i ON i.order_id = t.order_id AND i.type = 'invoice'
    WHERE t.operation_id = ${operationId} AND t.type = 'refund' AND t.order_id IS NOT NULL`,
});

/** The statement of a refund's credit note, for the refund's batch. */
export const creditNoteStatements = (operationId: string, now: string) => issueDocuments([creditNoteIssue(operationId)], now);

/** The seller as the settings say now, and the buyer (billing details, else the account's name) with their email. */
const SELLER = sql`(SELECT json_object('legal_name', legal_name, 'address', json(address), 'country', country, 'tax_id', tax_id)
                    FROM invoicing_settings WHERE id = 1)`;
const buyerOf = (userId: SQL) => sql`(SELECT json_object('name', coalesce(b.name, u.name), 'company', b.company, 'address', json(coalesce(b.address, '[]')),
                                                         'country', b.country, 'vat_id', b.vat_id, 'email', u.email)
                                      FROM users u LEFT JOIN billing_details b ON b.user_id = u.id WHERE u.id = ${userId})`;
const PREFIX = sql.raw(`CASE s.type ${Object.entries(NUMBER_PREFIX).map(([type, prefix]) => `WHEN '${type}' THEN '${prefix}'`).join(' ')} END`);

/**
 * The one statement that issues documents of distinct types (an order's invoice; a credit's receipt and the invoice
 * of the order it pays for): each document whose source yields its row is inserted with its type's next number, the
 * highest issued + 1 (one seek on the UNIQUE (type, sequence) index; `deleted_up_to` covers the sandbox's reset,
 * which deletes test documents: their numbers are not given again). SQLite computes an INSERT's SELECT that reads its
 * own table in full before inserting, so the numbers and the user's positions are those before the statement: the
 * user's positions count up by row_number(). Tax = round_half_up(total x rate / (10000 + rate)) with the rate in
 * basis points, i.e. floor((2 x total x rate + 10000 + rate) / (2 x (10000 + rate))), integers only.
 */
export function issueDocuments(issues: DocumentIssue[], now: string): SQL[] {
  if (new Set(issues.map((i) => i.type)).size !== issues.length) throw new Error('one document per type per statement');
  const rows = sql.join(
    issues.map(({ type, source }, ord) => sql`SELECT ${ord} AS ord, ${type} AS type, x.* FROM (${source}) x`),
    sql` UNION ALL `,
  );
  const number = sql`max(coalesce((SELECT max(d.sequence) FROM documents d WHERE d.type = s.type), 0), q.deleted_up_to) + 1`;
  return [
    sql`
      INSERT INTO documents (type, sequence, number, user_id, user_seq, user_type_seq, wallet_transaction_id, order_id, deposit_id,
                             corrects_id, seller, buyer, lines, net_amount_cents, tax_rate_bp, tax_amount_cents, total_amount_cents,
                             tax_note, billing_country, ip_country, issued_at)
      SELECT s.type, ${number}, ${PREFIX} || printf('%06d', ${number}), s.user_id,
             (SELECT coalesce(max(user_seq), 0) FROM documents WHERE user_id = s.user_id) + row_number() OVER (PARTITION BY s.user_id ORDER BY s.ord),
             (SELECT coalesce(max(user_type_seq), 0) + 1 FROM documents WHERE user_id = s.user_id AND type = s.type),
             s.wallet_transaction_id, s.order_id, s.deposit_id, s.corrects_id, ${SELLER}, ${buyerOf(sql`s.user_id`)}, s.lines,
             s.total - s.tax, s.rate, s.tax, s.total, s.tax_note, s.billing_country, s.ip_country, ${now}
      FROM (SELECT r.*, (2 * r.total * r.rate + 10000 + r.rate) / (2 * (10000 + r.rate)) AS tax FROM (${rows}) r) s
      JOIN document_sequences q ON q.type = s.type
      ORDER BY s.ord`,
  ];
}
