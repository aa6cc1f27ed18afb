import { sql, type SQL } from 'drizzle-orm';
import { columnsOf, rowsOf } from '../../db/batch';
import type { Db } from '../../db/client';
import { claims, type ClaimRow, type EventType } from '../../db/schema';
import { randomBase62 } from '../../lib/crypto';
import { ApiError, fieldError, notFound } from '../../lib/errors';
import { centsToAmount } from '../../lib/money';
import { pageWindow, type Page } from '../../lib/pagination';
import { isoNow } from '../../lib/time';
import { actorMayChange, auditEntry, writeAsActor, type Actor } from '../accounts/audit-log';
import { writeAs, type Caller, type Query } from '../caller';
import { plan } from '../mail/notices';
import { claimOpenedAlert } from '../mail/alerts';
import { newEmailId } from '../mail/outbox';
import { SUBJECTS } from '../mail/templates';
import { eventIdsOf, inOutbox, newEvent, recordEvent, type Publish } from '../events/log';
import { newOperationId, walletMovement } from '../ledger';
import { creditNoteStatements } from '../documents/issue';
import { reversalStatements } from '../referrals/earnings';
import type { Mail } from '../mail/settings';

// Warranty claims. Within its order's `warranty_hours` (the product's when it was bought) of the purchase, a buyer reports one delivered item of an
// order that is not cancelled; the operator resolves the claim once: a replacement (a fresh item of the product takes
// the reported one's place in the order, the old one is revoked), a refund of one unit's share of what was paid, or a
// rejection with a note. Each step is one batch of guarded statements: a claim resolved twice in parallel, a
// replacement that finds no item or a refund beyond what is left of the order changes nothing.

export type ClaimStatus = ClaimRow['status'];
export const CLAIM_STATUSES = ['open', 'replaced', 'refunded', 'rejected'] as const satisfies readonly ClaimStatus[];

/** The id of the item at `index` (0-based) of an order's items as the order lists them (replacements in their slot). */
const itemAt = (orderId: SQL, index: number) =>
  sql`(SELECT id FROM stock_items WHERE order_id = ${orderId} AND replaced_by IS NULL ORDER BY coalesce(slot, id) LIMIT 1 OFFSET ${index})`;

/** ISO 8601 `now` less the order's warranty (o.warranty_hours), as SQL text comparable with created_at. */
const warrantyStart = (now: string) => sql`strftime('%Y-%m-%dT%H:%M:%fZ', ${now}, '-' || o.warranty_hours || ' hours')`;

const claimByReference = (reference: string) => sql`SELECT ${columnsOf(claims)} FROM claims WHERE reference = ${reference}`;

/** The claims of an order of the caller's, oldest first (for `GET /orders/{id}` and the order's page). */
export const orderClaims = (caller: Caller, orderId: number) =>
  sql`SELECT ${columnsOf(claims)} FROM claims WHERE order_id = ${orderId} AND user_id = ${caller.userId} ORDER BY id`;

interface ReportState {
  status: string;
  warrantyHours: number;
  within: number;
  items: number;
  reported: number;
}

/**
 * Report the item at `index` of an order: 201 with the open claim. 404 for an order that is not the caller's, 422
 * `errors.index` outside the order's items, 422 WARRANTY_EXPIRED for a product without warranty, past it or a cancelled
 * order, 409 ALREADY_REPORTED for an item reported before (a unique index backs this up).
 */
export async function reportItem(d1: Db, caller: Caller, orderId: number, index: number, reason: string, mail?: Mail): Promise<ClaimRow> {
  const now = isoNow();
  const reference = `clm_${randomBase62(24)}`;
  const item = itemAt(sql`o.id`, index);
  // The shop's operators are told at once (the console's front page shows open claims too).
  const alert = claimOpenedAlert(mail, reference, now);
  const [created, stateResult, alertResult] = await writeAs(d1, caller, {
    writes: [
      sql`INSERT INTO claims (reference, order_id, user_id, item_index, stock_item_id, reason, status, created_at)
          SELECT ${reference}, o.id, o.user_id, ${index}, ${item}, ${reason}, 'open', ${now}
          FROM orders o
          WHERE o.id = ${orderId} AND o.user_id = ${caller.userId} AND o.status <> 'cancelled'
            AND o.warranty_hours > 0 AND o.created_at > ${warrantyStart(now)}
            AND ${item} IS NOT NULL AND NOT EXISTS (SELECT 1 FROM claims c WHERE c.stock_item_id = ${item})`,
      ...alert.writes,
    ],
    reads: [
      claimByReference(reference),
      sql`SELECT o.status, o.warranty_hours AS warrantyHours, o.created_at > ${warrantyStart(now)} AS within,
                 (SELECT count(*) FROM stock_items s WHERE s.order_id = o.id AND s.replaced_by IS NULL) AS items,
                 EXISTS (SELECT 1 FROM claims c WHERE c.stock_item_id = ${item} AND c.reference <> ${reference}) AS reported
          FROM orders o WHERE o.id = ${orderId} AND o.user_id = ${caller.userId}`,
      ...alert.reads,
    ],
    committed: ([claim]) => rowsOf(claim).length > 0,
  });
  const [claim] = rowsOf<ClaimRow>(created);
  if (claim) {
    alert.sent(alertResult);
    return claim;
  }
  const [state] = rowsOf<ReportState>(stateResult);
  if (!state) throw notFound('Order');
  if (index >= state.items) throw fieldError('index', `index must be below ${state.items}: the order has ${state.items} item(s).`);
  if (state.status === 'cancelled') throw new ApiError('WARRANTY_EXPIRED', 'The order was cancelled: its items cannot be reported.');
  if (state.warrantyHours === 0) throw new ApiError('WARRANTY_EXPIRED', 'This product has no replacement warranty');
  if (!state.within) throw new ApiError('WARRANTY_EXPIRED', `The ${state.warrantyHours}-hour replacement warranty of this order is over.`);
  throw new ApiError('ALREADY_REPORTED', `Item ${index} of this order was already reported.`);
}

export type Resolution = { action: 'replace' } | { action: 'refund' } | { action: 'reject'; note: string };

const EVENT_OF: Record<Resolution['action'], EventType> = {
  replace: 'order.item_replaced',
  refund: 'order.item_refunded',
  reject: 'order.claim_rejected',
};
const AUDIT_OF = { replace: 'claim.replaced', refund: 'claim.refunded', reject: 'claim.rejected' } as const;

/** The buyer's email about the decision: what was decided, never the item itself (the order page shows it). */
const claimResolvedEmail = (mail: Mail | undefined, key: string, now: string) =>
  plan(mail, now, ({ settings, origin }) => [
    {
      id: newEmailId(),
      template: 'claim_resolved',
      subject: SUBJECTS.claim_resolved(settings.shopName),
      from: sql`FROM claims c JOIN orders o ON o.id = c.order_id JOIN users u ON u.id = c.user_id WHERE c.resolution_key = ${key}`,
      to: sql`u.email`,
      userId: sql`u.id`,
      data: sql`json_object('name', u.name, 'order_number', o.order_number, 'product_name', o.product_name, 'item', c.item_index + 1,
                            'status', c.status, 'note', c.resolution, 'refund_cents', c.refund_cents,
                            'order_url', ${origin} || '/dashboard/orders/' || o.id)`,
    },
  ]);

interface ResolveState {
  status: ClaimStatus;
  orderStatus: string;
  productId: number;
  available: number;
  share: number;
  remaining: number;
}

/** What the operator's resolution did: the claim after it, and the product whose stock changed (a replacement). */
export interface Resolved {
  claim: ClaimRow;
  productId: number;
}

/**
 * Resolve an open claim, once: one batch whose first statement moves the claim out of `open` (guarded by the claim
 * still being open, the order not cancelled and, for a replacement, an available item; for a refund, the share fits
 * in what is left of the order); every later statement is keyed on the resolution key generated here. 404 unknown
 * claim, 409 CLAIM_RESOLVED, 400 INSUFFICIENT_STOCK, 422 `errors.amount`.
 */
export async function resolveClaim(d1: Db, actor: Actor, claimId: number, resolution: Resolution, mail?: Mail, publish?: Publish): Promise<Resolved> {
  const now = isoNow();
  const key = newOperationId();
  const mine = sql`EXISTS (SELECT 1 FROM claims WHERE resolution_key = ${key})`;
  // A replacement comes from the reported item's variant.
  const variantOf = sql`(SELECT s.variant_id FROM claims c JOIN stock_items s ON s.id = c.stock_item_id WHERE c.id = ${claimId})`;
  const fresh = sql`(SELECT s.id FROM stock_items s WHERE s.variant_id = ${variantOf} AND s.status = 'available' ORDER BY s.id LIMIT 1)`;
  const orderLive = sql`EXISTS (SELECT 1 FROM orders o WHERE o.id = claims.order_id AND o.status <> 'cancelled')`;
  // An operator resolves any claim; a test key (playing the operator in its sandbox) only its own.
  const allowed = actorMayChange(actor, sql`(SELECT user_id FROM claims WHERE id = ${claimId})`);
  const event = newEvent(EVENT_OF[resolution.action], now);
  const email = claimResolvedEmail(mail, key, now);
  const effect: SQL[] =
    resolution.action === 'replace'
      ? [
          sql`UPDATE claims SET status = 'replaced', replacement_item_id = ${fresh}, resolution = 'Replaced with a new item.',
                                resolution_key = ${key}, resolved_at = ${now}
              WHERE id = ${claimId} AND status = 'open' AND ${orderLive} AND ${fresh} IS NOT NULL AND ${allowed}`,
          // The new item joins the order in the reported one's slot; the reported one is revoked and points at it.
          sql`UPDATE stock_items SET status = 'sold',
                order_id = (SELECT order_id FROM claims WHERE resolution_key = ${key}),
                slot = (SELECT coalesce(old.slot, old.id) FROM claims c JOIN stock_items old ON old.id = c.stock_item_id WHERE c.resolution_key = ${key})
              WHERE id = (SELECT replacement_item_id FROM claims WHERE resolution_key = ${key}) AND status = 'available'`,
          sql`UPDATE stock_items SET status = 'revoked', revoked_at = ${now},
                replaced_by = (SELECT replacement_item_id FROM claims WHERE resolution_key = ${key})
              WHERE id = (SELECT stock_item_id FROM claims WHERE resolution_key = ${key})`,
          // Its product's count follows (the trigger of migration 0031).
          sql`UPDATE product_variants SET stock_count = stock_count - 1 WHERE id = ${variantOf} AND ${mine}`,
        ]
      : resolution.action === 'refund'
        ? [
            ...walletMovement({
              userId: sql`(SELECT user_id FROM claims WHERE id = ${claimId})`,
              type: 'refund',
              operationId: key,
              now,
              // One unit's share of what was paid (rounded down to the cent), only while it fits in what is left.
              source: sql`
                SELECT o.total_amount_cents / o.quantity AS amount,
                       'Refund for item ' || (c.item_index + 1) || ' of order ' || o.order_number AS description, o.id AS order_id, NULL AS deposit_id
                FROM claims c JOIN orders o ON o.id = c.order_id
                WHERE c.id = ${claimId} AND c.status = 'open' AND o.status <> 'cancelled' AND ${allowed}
                  AND o.total_amount_cents - o.refunded_amount_cents >= o.total_amount_cents / o.quantity`,
            }),
            sql`UPDATE orders SET refunded_amount_cents = refunded_amount_cents + (SELECT amount_cents FROM wallet_transactions WHERE operation_id = ${key}),
                                  updated_at = ${now}
                WHERE id = (SELECT order_id FROM claims WHERE id = ${claimId})
                  AND EXISTS (SELECT 1 FROM wallet_transactions WHERE operation_id = ${key})`,
            ...reversalStatements(sql`(SELECT order_id FROM claims WHERE id = ${claimId})`, key, now),
            sql`UPDATE claims SET status = 'refunded', refund_cents = (SELECT amount_cents FROM wallet_transactions WHERE operation_id = ${key}),
                                  resolution = 'Refunded ' || printf('%.2f', (SELECT amount_cents FROM wallet_transactions WHERE operation_id = ${key}) / 100.0) || ' USD to the wallet.',
                                  resolution_key = ${key}, resolved_at = ${now}
                WHERE id = ${claimId} AND status = 'open' AND EXISTS (SELECT 1 FROM wallet_transactions WHERE operation_id = ${key})`,
            ...creditNoteStatements(key, now),
          ]
        : [
            sql`UPDATE claims SET status = 'rejected', resolution = ${resolution.note}, resolution_key = ${key}, resolved_at = ${now}
                WHERE id = ${claimId} AND status = 'open' AND ${allowed}`,
          ];
  const { reads } = await writeAsActor(d1, actor, {
    writes: [
      ...effect,
      auditEntry(
        actor,
        {
          action: AUDIT_OF[resolution.action],
          target: sql`'claim:' || c.id`,
          details: sql`json_object('order_id', c.order_id, 'item_index', c.item_index, 'status', c.status, 'resolution', c.resolution,
                                   'refund_cents', c.refund_cents)`,
          from: sql`FROM claims c WHERE c.resolution_key = ${key}`,
        },
        now,
      ),
      recordEvent(event, claims, sql`resolution_key = ${key}`),
      ...email.writes,
    ],
    reads: [
      sql`SELECT ${columnsOf(claims)} FROM claims WHERE id = ${claimId} AND ${allowed}`,
      sql`SELECT c.status, o.status AS orderStatus, o.product_id AS productId,
                 (SELECT count(*) FROM stock_items s WHERE s.product_id = o.product_id AND s.status = 'available') AS available,
                 o.total_amount_cents / o.quantity AS share, o.total_amount_cents - o.refunded_amount_cents AS remaining
          FROM claims c JOIN orders o ON o.id = c.order_id WHERE c.id = ${claimId}`,
      inOutbox(event),
      ...email.reads,
    ],
    committed: ([claim]) => rowsOf<ClaimRow>(claim)[0]?.resolutionKey === key,
  });
  const [claim] = rowsOf<ClaimRow>(reads[0]);
  if (!claim) throw notFound('Claim');
  const [state] = rowsOf<ResolveState>(reads[1]);
  if (claim.resolutionKey === key) {
    publish?.(eventIdsOf(reads[2]));
    email.sent(reads[3]);
    return { claim, productId: state.productId };
  }
  if (claim.status !== 'open') throw new ApiError('CLAIM_RESOLVED', `Claim ${claim.id} was already resolved (${claim.status}).`);
  if (state.orderStatus === 'cancelled') throw new ApiError('CLAIM_RESOLVED', `The order of claim ${claim.id} was cancelled and refunded.`);
  if (resolution.action === 'replace') {
    throw new ApiError('INSUFFICIENT_STOCK', 'No item of this product is available for a replacement.', {
      code: 'INSUFFICIENT_STOCK',
      requested: 1,
      available: state.available,
    });
  }
  throw fieldError(
    'amount',
    `One unit's share (${centsToAmount(state.share)} USD) is more than what is left to refund of the order (${centsToAmount(state.remaining)} USD).`,
  );
}

export interface AdminClaim extends ClaimRow {
  orderNumber: string;
  productId: number;
  productName: string;
  /** The buyer, for the console (name, email, link). */
  buyerName: string;
  buyerEmail: string;
  /** The order's item count ("Item 2 of 3"), and what "Refund item" would give (one unit's share). */
  orderQuantity: number;
  shareCents: number;
  /** The buyer's claims before this one. */
  earlierClaims: number;
}

/** One claim for the console's claim page: with the reported item itself (operator only), or null. */
export const claimDetailQuery = (claimId: number): Query<(AdminClaim & { item: string | null; replacement: string | null }) | null> => ({
  reads: [
    sql`SELECT ${columnsOfClaim}, ${adminClaimExtras},
               (SELECT content FROM stock_items WHERE id = c.stock_item_id) AS item,
               (SELECT content FROM stock_items WHERE id = c.replacement_item_id) AS replacement
        FROM claims c JOIN orders o ON o.id = c.order_id JOIN users u ON u.id = c.user_id WHERE c.id = ${claimId}`,
  ],
  parse: ([result]) => rowsOf<AdminClaim & { item: string | null; replacement: string | null }>(result)[0] ?? null,
});

/** The operator's list of claims, newest first, optionally of one status (the console's Claims page too). */
export const claimsQuery = (status: ClaimStatus | undefined, page: Page): Query<{ rows: AdminClaim[]; total: number }> => {
  const { limit, offset } = pageWindow(page);
  const where = status ? sql`WHERE c.status = ${status}` : sql``;
  return {
    reads: [
      sql`SELECT ${columnsOfClaim}, ${adminClaimExtras}
          FROM claims c JOIN orders o ON o.id = c.order_id JOIN users u ON u.id = c.user_id ${where}
          ORDER BY c.created_at DESC, c.id DESC LIMIT ${limit} OFFSET ${offset}`,
      sql`SELECT count(*) AS total FROM claims c ${where}`,
    ],
    parse: ([rows, total]) => ({ rows: rowsOf<AdminClaim>(rows), total: rowsOf<{ total: number }>(total)[0].total }),
  };
};

const columnsOfClaim = sql.raw(
  [
    'c.id AS id', 'c.reference AS reference', 'c.order_id AS orderId', 'c.user_id AS userId', 'c.item_index AS itemIndex',
    'c.stock_item_id AS stockItemId', 'c.reason AS reason', 'c.status AS status', 'c.resolution AS resolution',
    'c.replacement_item_id AS replacementItemId', 'c.refund_cents AS refundCents', 'c.resolution_key AS resolutionKey',
    'c.created_at AS createdAt', 'c.resolved_at AS resolvedAt',
  ].join(', '),
);

/** What the console shows beside a claim (aliases c, o, u: the claim, its order, its buyer). */
const adminClaimExtras = sql`o.order_number AS orderNumber, o.product_id AS productId, o.product_name AS productName,
  u.name AS buyerName, u.email AS buyerEmail, o.quantity AS orderQuantity, o.total_amount_cents / o.quantity AS shareCents,
  (SELECT count(*) FROM claims e WHERE e.user_id = c.user_id AND e.id < c.id) AS earlierClaims`;

/** Open claims and the oldest one's creation (the console's front page). */
export const openClaimsSummary: Query<{ open: number; oldest: string | null }> = {
  reads: [sql`SELECT count(*) AS open, min(created_at) AS oldest FROM claims WHERE status = 'open'`],
  parse: ([result]) => rowsOf<{ open: number; oldest: string | null }>(result)[0],
};

/** How many claims wait for the operator (the console's nav). */
export const openClaimsCount: Query<number> = {
  reads: [sql`SELECT count(*) AS open FROM claims WHERE status = 'open'`],
  parse: ([result]) => rowsOf<{ open: number }>(result)[0].open,
};
