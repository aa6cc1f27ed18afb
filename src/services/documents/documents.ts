import { sql, type SQL } from 'drizzle-orm';
import { columnsOf, rowsOf } from '../../db/batch';
import { documents, type DocumentRow, type DocumentType } from '../../db/schema';
import { notFound } from '../../lib/errors';
import { centsToAmount } from '../../lib/money';
import { pageWindow, type Page } from '../../lib/pagination';
import { withinDays } from '../../db/date-range';
import type { DateRange } from '../../lib/date-range';
import type { Caller, Query } from '../caller';

// Reading documents (issued by src/services/documents/issue.ts): a buyer's own, newest first, and the console's.
// A buyer's list total is the highest `user_seq` (`user_type_seq` with a type), one seek on its unique index: a
// document is never deleted on live, so the position of the newest is the count, without counting the history.

export interface DocumentFilter {
  type?: DocumentType;
}

export interface Party {
  legal_name?: string;
  name?: string;
  company?: string | null;
  address: string[];
  country: string | null;
  tax_id?: string | null;
  vat_id?: string | null;
  email?: string;
}

/** A document as the API shows it (contract: "Documents for the books"); amounts in USD, the rate in percent. */
export function presentDocument(row: DocumentRow & { correctsNumber?: string | null }) {
  const seller = JSON.parse(row.seller) as Party;
  const buyer = JSON.parse(row.buyer) as Party;
  const lines = JSON.parse(row.lines) as { description: string; quantity: number; unit_amount: number; amount: number }[];
  return {
    id: row.id,
    type: row.type,
    number: row.number,
    issued_at: row.issuedAt,
    order_id: row.orderId,
    deposit_id: row.depositId,
    corrects: row.correctsNumber ?? null,
    seller: { legal_name: seller.legal_name ?? '', address: seller.address ?? [], country: seller.country ?? null, tax_id: seller.tax_id ?? null },
    buyer: {
      name: buyer.name ?? '',
      company: buyer.company ?? null,
      address: buyer.address ?? [],
      country: buyer.country ?? null,
      vat_id: buyer.vat_id ?? null,
      email: buyer.email ?? '',
    },
    lines: lines.map((l) => ({ description: l.description, quantity: l.quantity, unit_amount: centsToAmount(l.unit_amount), amount: centsToAmount(l.amount) })),
    net_amount: centsToAmount(row.netAmountCents),
    tax_rate: row.taxRateBp / 100,
    tax_amount: centsToAmount(row.taxAmountCents),
    total_amount: centsToAmount(row.totalAmountCents),
    currency: 'USD' as const,
    tax_note: row.taxNote,
    evidence: { billing_country: row.billingCountry, ip_country: row.ipCountry },
  };
}
export type DocumentView = ReturnType<typeof presentDocument>;
export type DocumentWithCorrects = DocumentRow & { correctsNumber: string | null };

const withCorrects = sql`${columnsOf(documents)}, (SELECT c.number FROM documents c WHERE c.id = documents.corrects_id) AS correctsNumber`;

/** The caller's documents, newest first, and their total (see above). */
export const documentsQuery = (caller: Caller, page: Page, { type }: DocumentFilter = {}): Query<{ rows: DocumentWithCorrects[]; total: number }> => {
  const { limit, offset } = pageWindow(page);
  const ofType = type ? sql` AND type = ${type}` : sql``;
  const total = type
    ? sql`SELECT coalesce(max(user_type_seq), 0) AS total FROM documents WHERE user_id = ${caller.userId} AND type = ${type}`
    : sql`SELECT coalesce(max(user_seq), 0) AS total FROM documents WHERE user_id = ${caller.userId}`;
  return {
    reads: [
      sql`SELECT ${withCorrects} FROM documents WHERE user_id = ${caller.userId}${ofType} ORDER BY issued_at DESC, id DESC LIMIT ${limit} OFFSET ${offset}`,
      total,
    ],
    parse: ([rows, count]) => ({ rows: rowsOf<DocumentWithCorrects>(rows), total: rowsOf<{ total: number }>(count)[0]?.total ?? 0 }),
  };
};

/** One of the caller's documents (404 for an unknown or another user's). */
export const documentQuery = (caller: Caller, documentId: number): Query<DocumentWithCorrects> => ({
  reads: [sql`SELECT ${withCorrects} FROM documents WHERE id = ${documentId} AND user_id = ${caller.userId}`],
  parse: ([rows]) => {
    const [row] = rowsOf<DocumentWithCorrects>(rows);
    if (!row) throw notFound('Document');
    return row;
  },
});

/** The documents of one order (its invoice and credit notes), oldest first: the order's page links them. */
export const orderDocumentsQuery = (caller: Caller, orderId: number | SQL): Query<DocumentWithCorrects[]> => ({
  reads: [sql`SELECT ${withCorrects} FROM documents WHERE order_id = ${orderId} AND user_id = ${caller.userId} ORDER BY id`],
  parse: ([rows]) => rowsOf<DocumentWithCorrects>(rows),
});

/**
 * The console's list of every document (a type, a buyer, a range of days), newest first. Its total: without a range,
 * a buyer's highest position, or each type's highest number (gap-free; live documents are never deleted), one seek
 * each; with a range, the documents of those days counted on the (issued_at) index.
 */
export const allDocumentsQuery = (
  page: Page,
  { type, userId, range = {} }: DocumentFilter & { userId?: number; range?: DateRange },
): Query<{ rows: DocumentWithCorrects[]; total: number }> => {
  const { limit, offset } = pageWindow(page);
  const days = withinDays(sql`issued_at`, range);
  const conditions = [...(type ? [sql`type = ${type}`] : []), ...(userId ? [sql`user_id = ${userId}`] : []), ...days];
  const where = conditions.length ? sql`WHERE ${sql.join(conditions, sql` AND `)}` : sql``;
  const total =
    days.length > 0
      ? sql`SELECT count(*) AS total FROM documents ${where}`
      : userId !== undefined
      ? type
        ? sql`SELECT coalesce(max(user_type_seq), 0) AS total FROM documents WHERE user_id = ${userId} AND type = ${type}`
        : sql`SELECT coalesce(max(user_seq), 0) AS total FROM documents WHERE user_id = ${userId}`
      : sql`SELECT coalesce(sum((SELECT max(sequence) FROM documents d WHERE d.type = s.type) - s.deleted_up_to), 0) AS total
            FROM document_sequences s ${type ? sql`WHERE s.type = ${type}` : sql``}`;
  return {
    reads: [sql`SELECT ${withCorrects} FROM documents ${where} ORDER BY issued_at DESC, id DESC LIMIT ${limit} OFFSET ${offset}`, total],
    parse: ([rows, count]) => ({ rows: rowsOf<DocumentWithCorrects>(rows), total: rowsOf<{ total: number }>(count)[0]?.total ?? 0 }),
  };
};

/** Any document, for the console (404 unknown). */
export const anyDocumentQuery = (documentId: number): Query<DocumentWithCorrects> => ({
  reads: [sql`SELECT ${withCorrects} FROM documents WHERE id = ${documentId}`],
  parse: ([rows]) => {
    const [row] = rowsOf<DocumentWithCorrects>(rows);
    if (!row) throw notFound('Document');
    return row;
  },
});
