import { eq, sql, type SQL } from 'drizzle-orm';
import { amountJson } from '../../db/json';
import { columnsOf, rowJson, rowsOf } from '../../db/batch';
import { getDb, type Db } from '../../db/client';
import type { WritePlan } from '../../db/d1';
import { deposits, type DepositRow } from '../../db/schema';
import type { Config } from '../../env';
import { ApiError, notFound } from '../../lib/errors';
import { formatUsd } from '../../lib/money';
import { pageWindow, type Page } from '../../lib/pagination';
import { addMinutes, isoNow } from '../../lib/time';
import { randomBase62 } from '../../lib/crypto';
import {
  DEFAULT_CRYPTO_CURRENCY,
  gatewayForDeposit,
  normaliseGateway,
  type CryptoCurrency,
  type GatewayEvent,
  type GatewayInput,
  type GatewayName,
  type PaymentGateway,
  type TestPaymentGateway,
} from './gateways';
import { enabledUser, queryAs, readAs, writeAs, writeOutcomeAs, type Caller, type Query } from '../caller';
import { purchaseStatements, type PurchaseRequest, type PurchaseStatements } from '../orders/orders';
import { allOf, pricedPurchase, purchaseRefusal, sellableGuards, type PricedPurchase, type PurchaseGuard } from '../catalogue/pricing';
import { loggedEvent, logEvent, logOnly, receiveEvent, type ReceivedEvent } from './gateway-events';
import { changeRowsWithEvents, eventIdsOf, inOutbox, newEvent, recordEvent, type Publish } from '../events/log';
import { OPERATOR, recordClaim, type IdempotencyClaim } from '../idempotency';
import { newOperationId, walletMovement } from '../ledger';
import { auditEntry, writeAsActor, type Actor } from '../accounts/audit-log';
import { depositCreditedEmail } from '../mail/notices';
import { verificationGate } from '../accounts/email-verification';
import { accountGate } from '../accounts/holds';
import type { Mail } from '../mail/settings';
import { paymentAlert } from '../mail/alerts';
import { issueDocuments, receiptIssue, type DocumentIssue } from '../documents/issue';
import { keptTotal } from '../accounts/counts';

export interface DepositRequest {
  amountCents: number;
  gateway: GatewayInput;
  cryptoCurrency?: CryptoCurrency;
  /**
   * The shop's public origin (PUBLIC_BASE_URL), never the request's Host, which a client chooses: vendors notify
   * `<origin>/api/v2/webhooks/<slot>` and send the buyer back to `<origin>/dashboard/wallet`. Null while it is unset.
   */
  origin: string | null;
  /** Resolves when a vendor invoice may be opened for this client, throws (429) when not; not asked for a generic slot. */
  beforeVendorCall: () => Promise<void>;
  /** An order the deposit pays for: bought with the wallet when the deposit is credited, at its expected total. */
  order?: PurchaseRequest & { expectedTotalCents: number };
}

interface NewDeposit {
  reference: string;
  amountCents: number;
  cryptoCurrency: string | null;
  expiresAt: string;
  nowMs: number;
}

/**
 * The deposit's payment page and invoice id as SQL for its batch. A real provider's invoice is created here, before
 * the batch and keyed on the deposit's reference: a vendor that fails answers 503 or 422 and nothing is stored. The
 * generic adapter derives both from the deposit's id inside the batch.
 */
async function invoiceFor(gateway: PaymentGateway | TestPaymentGateway, deposit: NewDeposit, depositId: SQL, request: DepositRequest) {
  if (gateway.provider === 'generic') return gateway.generic.invoiceColumns(depositId);
  if (gateway.provider === 'test') return gateway.test.invoiceColumns();
  const { origin } = request;
  if (!origin) {
    throw new ApiError('GATEWAY_UNAVAILABLE', 'This payment provider cannot be used until the shop sets PUBLIC_BASE_URL (where it is notified); nothing was stored.', undefined, {
      'Retry-After': '300',
    });
  }
  await request.beforeVendorCall();
  const invoice = await gateway.vendor.createInvoice({
    ...deposit,
    notifyUrl: `${origin}/api/v2/webhooks/${gateway.name}`,
    returnUrl: `${origin}/dashboard/wallet`,
  });
  return { paymentUrl: sql`${invoice.paymentUrl}`, externalId: sql`${invoice.invoiceId}` };
}

export async function createDeposit(
  d1: Db,
  config: Config,
  caller: Caller,
  request: DepositRequest,
  claim?: IdempotencyClaim,
  mail?: Mail,
): Promise<DepositRow> {
  const gateway = gatewayForDeposit(normaliseGateway(request.gateway), config);
  const gate = verificationGate(mail, caller.userId);
  const account = accountGate(caller);
  const nowMs = Date.now();
  const now = isoNow(nowMs);
  const expiresAt = addMinutes(now, config.depositTtlMinutes);
  const cryptoCurrency = gateway.isCrypto ? (request.cryptoCurrency ?? DEFAULT_CRYPTO_CURRENCY) : null;
  // Generated before the batch: the batch's statements find the new deposit by it, and so does a retry after a fault.
  const reference = `dep_${randomBase62(24)}`;
  const depositId = sql`(SELECT id FROM deposits WHERE reference = ${reference})`;
  const deposit = { reference, amountCents: request.amountCents, cryptoCurrency, expiresAt, nowMs };
  const invoice = await invoiceFor(gateway, deposit, depositId, request);
  const order = request.order ? orderCheck(caller, request.order, now) : null;
  const [created, ...tail] = await writeAs(d1, caller, {
    writes: [
      sql`INSERT INTO deposits (user_id, amount_cents, gateway, crypto_currency, status, expires_at, created_at, updated_at, reference, provider,
                                order_product_id, order_quantity, order_coupon, order_expected_total_cents, api_key_id, ip_country, order_variant_id)
          SELECT ${caller.userId}, ${request.amountCents}, ${gateway.name}, ${cryptoCurrency}, 'pending',
                 ${expiresAt}, ${now}, ${now}, ${reference}, ${gateway.provider},
                 ${request.order?.productId ?? null}, ${request.order?.quantity ?? null}, ${request.order?.coupon ?? null},
                 ${request.order?.expectedTotalCents ?? null}, ${caller.keyId ?? null}, ${caller.place?.country ?? null}, ${request.order?.variantId ?? null}
          WHERE ${caller.userId} IS NOT NULL AND ${gate.allows} AND ${account.allows}${order ? sql` AND ${order.allows}` : sql``}`,
      sql`UPDATE deposits SET payment_url = ${invoice.paymentUrl}, external_id = ${invoice.externalId} WHERE reference = ${reference}`,
      ...(claim ? recordClaim(caller, claim, sql`SELECT id, ${rowJson(deposits)} AS snapshot FROM deposits WHERE reference = ${reference}`) : []),
    ],
    reads: [sql`SELECT ${columnsOf(deposits)} FROM deposits WHERE reference = ${reference}`, ...gate.reads, ...account.reads, ...(order ? [order.read] : [])],
    committed: ([deposit]) => rowsOf(deposit).length > 0,
  });
  const [row] = rowsOf<DepositRow>(created);
  if (row) return row;
  account.check(tail.slice(gate.reads.length, gate.reads.length + account.reads.length));
  gate.check(tail[0]);
  if (request.order) {
    const refusal = purchaseRefusal(rowsOf<PricedPurchase>(tail.at(-1))[0], request.order.quantity, request.order.expectedTotalCents);
    if (refusal.code !== 'INSUFFICIENT_BALANCE') throw refusal;
  }
  throw new Error('deposit not created and no reason read');
}

/**
 * The order a new deposit pays for must be one a purchase would make now (product, pack size, stock, coupon, and the
 * total it expects): else the deposit is refused with the purchase's own error and nothing is stored. Its balance is
 * not asked (the deposit is there to cover it); the purchase at the credit checks everything again.
 */
function orderCheck(caller: Caller, order: PurchaseRequest & { expectedTotalCents: number }, now: string) {
  const priced = pricedPurchase({ userId: caller.userId, productId: order.productId, variantId: order.variantId ?? null, quantity: order.quantity, coupon: order.coupon ?? null, now });
  const guards = [...sellableGuards(order.quantity), { code: 'PRICE_CHANGED', allows: sql`q.total = ${order.expectedTotalCents}` }];
  return { allows: sql`EXISTS (SELECT 1 FROM (${priced}) q WHERE ${allOf(guards)})`, read: priced };
}

/**
 * A pending deposit past its expiry reads as expired at once; the scheduled job writes the status later. Reads stay
 * reads (no write on the replica-friendly path), and a late payment is still accepted either way.
 */
export const asOfNow = (deposit: DepositRow, now = isoNow()): DepositRow =>
  deposit.status === 'pending' && deposit.expiresAt <= now ? { ...deposit, status: 'expired' } : deposit;

export const depositsQuery = (caller: Caller, page: Page): Query<{ rows: DepositRow[]; total: number }> => {
  const { limit, offset } = pageWindow(page);
  return {
    reads: [
      sql`SELECT ${columnsOf(deposits)} FROM deposits WHERE user_id = ${caller.userId} ORDER BY created_at DESC, id DESC LIMIT ${limit} OFFSET ${offset}`,
      keptTotal(caller.userId, 'deposits_count'),
    ],
    parse: ([rows, total]) => {
      const now = isoNow();
      return { rows: rowsOf<DepositRow>(rows).map((row) => asOfNow(row, now)), total: rowsOf<{ total: number }>(total)[0].total };
    },
  };
};

/** One of the caller's deposits as of now, or null (none asked, unknown or another user's): a page's read. */
export const depositQuery = (caller: Caller, depositId: number | null): Query<DepositRow | null> => ({
  reads: depositId === null ? [] : [sql`SELECT ${columnsOf(deposits)} FROM deposits WHERE id = ${depositId} AND user_id = ${caller.userId}`],
  parse: ([rows]) => {
    const [deposit] = rowsOf<DepositRow>(rows);
    return deposit ? asOfNow(deposit) : null;
  },
});

export async function listDeposits(d1: Db, caller: Caller, page: Page) {
  const [found] = await queryAs(d1, caller, [depositsQuery(caller, page)]);
  return found;
}

export async function getDeposit(d1: Db, caller: Caller, depositId: number): Promise<DepositRow> {
  const [found] = await readAs(d1, caller, [
    sql`SELECT ${columnsOf(deposits)} FROM deposits WHERE id = ${depositId} AND user_id = ${caller.userId}`,
  ]);
  const [deposit] = rowsOf<DepositRow>(found);
  if (!deposit) throw notFound('Deposit');
  return asOfNow(deposit);
}

/** What a mark-paid replay renders from: the deposit as it was, and whether that request credited it. */
export interface CreditSnapshot {
  deposit: DepositRow;
  credited: number;
}

/**
 * Records written in the credit's own batch (the gateway event that asked for it, or the operator's key claim), and
 * where to publish its outgoing event after the commit.
 */
export interface CreditRecords {
  received?: ReceivedEvent;
  /** An operator's confirmation: audited, and a console session's proof leads the batch. */
  actor?: Actor;
  claim?: IdempotencyClaim;
  publish?: Publish;
  /** The vendor's payment id, kept on the deposit (Stripe's payment intent finds a later refund or dispute). */
  paymentId?: string;
  /** An operator's refresh: audited as `deposit.refreshed` when this batch changes the deposit. */
  refresh?: RefreshAudit;
  /** Mail on: the user's deposit_credited email is recorded in the credit's batch. */
  mail?: Mail;
  /** When the vendor says the money was paid (ISO), where it reports one; else the credit's own time is the payment's. */
  paidAt?: string | null;
}

/**
 * A deposit the credit's batch reads itself (the test gateway: one round trip, src/services/sandbox/deposits.ts):
 * its user and the order it pays for are subqueries of the batch, nothing changes unless `owned` (the caller's own
 * deposit of that gateway) and `enough` (paid at least 99 %) hold, the gateway log records `amount_mismatch` when only
 * `enough` fails, and the caller's proof leads the batch.
 */
export interface UnreadDeposit {
  id: number;
  caller: Caller;
  owned: SQL;
  enough: SQL;
}

const isUnread = (deposit: DepositRow | UnreadDeposit): deposit is UnreadDeposit => 'owned' in deposit;


/** Who asked the vendor about a deposit on demand, and the vendor's status as received. */
export interface RefreshAudit {
  actor: Actor;
  vendorStatus: string | null;
}

/** The `deposit.refreshed` entry of a refresh that credited or closed the deposit, for that change's batch. */
const refreshedEntry = ({ vendorStatus }: RefreshAudit, outcome: 'credited' | 'closed', depositId: number, from: SQL) =>
  ({
    action: 'deposit.refreshed',
    target: sql`${`deposit:${depositId}`}`,
    details: sql`json_object('outcome', ${outcome}, 'vendor_status', ${vendorStatus})`,
    from,
  }) as const;

/**
 * Credit a deposit exactly once: one batch whose ledger row is written only while the deposit is not yet paid and
 * has no deposit transaction (a partial unique index backs this up), then the balance by that row's amount, then the
 * deposit marked paid. A replay finds it paid and changes nothing. A payment for an expired deposit is still credited
 * (the money arrived) and its ledger description says so. The gateway event is logged in the same batch, as
 * `credited` or (nothing changed) `duplicate`.
 */
export async function creditDeposit(
  d1: Db,
  deposit: DepositRow | UnreadDeposit,
  transactionId: string,
  { received, actor, claim, publish, paymentId, refresh, mail, paidAt }: CreditRecords = {},
): Promise<{ deposit: DepositRow; credited: boolean; lateCredit: boolean }> {
  const now = isoNow();
  const paid = { depositId: deposit.id, at: paidAt ?? now };
  const operationId = newOperationId();
  const notice = depositCreditedEmail(mail, operationId, now);
  const creditedHere = sql`EXISTS (SELECT 1 FROM wallet_transactions WHERE operation_id = ${operationId})`;
  const event = newEvent('deposit.paid', now);
  const unread = isUnread(deposit) ? deposit : null;
  // The credit's receipt; with an order, issued by the order's own two document statements beside its invoice.
  const receipt = receiptIssue(operationId);
  // A deposit that pays for an order buys it in this same batch, only when this batch credits it.
  const order = unread
    ? orderOfUnreadDeposit(paid, creditedHere, now, publish, receipt)
    : orderOfDeposit(deposit as DepositRow, paid, creditedHere, now, publish, mail, receipt);
  const loggedRead = received ? [loggedEvent(received)] : [];
  const paidColumns = sql`status = 'paid', paid_at = ${now}, transaction_id = ${transactionId}, updated_at = ${now},
                           vendor_payment_id = coalesce(${paymentId ?? null}, vendor_payment_id)`;
  const run = (plan: Omit<WritePlan, 'before'>) => (unread ? writeOutcomeAs(d1, unread.caller, plan) : writeAsActor(d1, actor ?? refresh?.actor, plan));
  const results = (
    await run({
      writes: [
        ...walletMovement({
          userId: unread ? sql`(SELECT user_id FROM deposits WHERE id = ${deposit.id})` : (deposit as DepositRow).userId,
          type: 'deposit',
          operationId,
          now,
          source: sql`
            SELECT d.amount_cents AS amount,
                   'Deposit #' || d.id || ' via ' || d.gateway
                     || CASE WHEN d.status = 'expired' OR d.expires_at <= ${now} THEN ' (paid after expiry)' ELSE '' END AS description,
                   NULL AS order_id, d.id AS deposit_id
            FROM deposits d
            WHERE d.id = ${deposit.id} AND d.status <> 'paid'${unread ? sql` AND ${unread.owned} AND ${unread.enough}` : sql``}
              AND NOT EXISTS (SELECT 1 FROM wallet_transactions t WHERE t.deposit_id = d.id AND t.type = 'deposit')`,
        }),
        ...(order
          ? [
              ...order.writes,
              // After the purchase's statements, one UPDATE marks the deposit paid and records its order (or why not):
              // the receipt rides in the invoice's statement, so the batch is no longer than before documents.
              sql`UPDATE deposits SET ${paidColumns},
                                      order_id = CASE WHEN order_product_id IS NOT NULL THEN (SELECT id FROM orders WHERE order_number = ${order.orderNumber}) END,
                                      order_error = CASE WHEN order_product_id IS NOT NULL THEN ${order.refusalCode} END
                  WHERE id = ${deposit.id} AND ${creditedHere}`,
            ]
          : [sql`UPDATE deposits SET ${paidColumns} WHERE id = ${deposit.id} AND ${creditedHere}`, ...issueDocuments([receipt], now)]),
        ...(received
          ? [
              logEvent(
                received,
                sql`CASE WHEN ${creditedHere} THEN 'credited' ${unread ? sql`WHEN NOT ${unread.enough} THEN 'amount_mismatch' ` : sql``}ELSE 'duplicate' END`,
                unread?.owned,
              ),
            ]
          : []),
        ...(claim
          ? recordClaim(OPERATOR, claim, sql`SELECT d.id, json_object('deposit', ${rowJson(deposits, 'd')}, 'credited', ${creditedHere}) AS snapshot
                                             FROM deposits d WHERE d.id = ${deposit.id}`)
          : []),
        recordEvent(event, deposits, sql`id = ${deposit.id} AND ${creditedHere}`),
        ...(order?.announce ?? []),
        ...(actor
          ? [
              auditEntry(
                actor,
                {
                  action: 'deposit.marked_paid',
                  target: sql`'deposit:' || deposit_id`,
                  details: sql`json_object('user_id', user_id, 'amount', ${amountJson(sql`amount_cents`)}, 'transaction_id', id)`,
                  from: sql`FROM wallet_transactions WHERE operation_id = ${operationId}`,
                },
                now,
              ),
            ]
          : []),
        ...(refresh
          ? [auditEntry(refresh.actor, refreshedEntry(refresh, 'credited', deposit.id, sql`FROM wallet_transactions WHERE operation_id = ${operationId}`), now)]
          : []),
        ...notice.writes,
      ],
      reads: [
        sql`SELECT ${columnsOf(deposits)} FROM deposits WHERE id = ${deposit.id}`,
        sql`SELECT description LIKE '% (paid after expiry)' AS late FROM wallet_transactions WHERE operation_id = ${operationId}`,
        inOutbox(event),
        ...loggedRead,
        ...notice.reads,
        ...(order?.announceReads ?? []),
      ],
      // Paid by this batch or by another one: either way the credit exists once and a re-run would change nothing,
      // except for a gateway event, which is logged only once its own row is there.
      committed: ([row, , , logged]) => (received ? rowsOf(logged).length > 0 : rowsOf<DepositRow>(row)[0]?.status === 'paid'),
    })
  ).reads;
  const [read, credit, outbox] = results;
  const afterNotice = 3 + loggedRead.length + notice.reads.length;
  publish?.(eventIdsOf(outbox));
  notice.sent(results[afterNotice - 1]);
  const credited = rowsOf(credit).length > 0;
  if (order && credited) order.announced(results.slice(afterNotice));
  // `lateCredit`: this credit came after the deposit's expiry (its ledger row says so; the test gateway tells it).
  return { deposit: rowsOf<DepositRow>(read)[0], credited, lateCredit: rowsOf<{ late: number }>(credit)[0]?.late === 1 };
}

/**
 * The purchase a deposit pays for, as statements for its credit's batch: bought for the deposit's user with the key
 * that made the deposit (its spend limit applies), at the locked total, by the one builder of purchases. Only when this
 * batch credits the deposit (a repeated notification buys nothing more), the user is not disabled, and the items are
 * really there (a stock count out of step must refuse the order, never roll the credit back). Null for a plain deposit.
 */
function orderOfDeposit(
  deposit: DepositRow,
  paid: DepositPayment,
  creditedHere: SQL,
  now: string,
  publish: Publish | undefined,
  mail: Mail | undefined,
  receipt: DocumentIssue,
): PurchaseStatements | null {
  const { orderProductId: productId, orderQuantity: quantity } = deposit;
  if (productId === null || productId === undefined || quantity === null || quantity === undefined) return null;
  const buyer: Caller = {
    userId: sql`${deposit.userId}`,
    proof: sql`SELECT ${deposit.userId} AS userId`,
    ...(deposit.apiKeyId !== null && deposit.apiKeyId !== undefined ? { keyId: sql`${deposit.apiKeyId}` } : {}),
  };
  return depositPurchase(
    buyer,
    { productId, variantId: deposit.orderVariantId ?? null, quantity, coupon: deposit.orderCoupon, expectedTotalCents: deposit.orderExpectedTotalCents },
    paid,
    creditedHere,
    now,
    publish,
    mail,
    receipt,
  );
}

/**
 * `orderOfDeposit` for a deposit the batch reads itself (`UnreadDeposit`, the sandbox's test gateway): the order's
 * fields are subqueries of the deposit, so the statements are always there and buy nothing for a deposit that pays
 * for no order (its product is NULL: the purchase's guard refuses, and the deposit's order columns stay NULL). A
 * sandbox deposit is always made with a (test) key, whose spend limit applies. The purchase builder binds these
 * fields into its SQL only, so SQL stands in for their values.
 */
function orderOfUnreadDeposit(paid: DepositPayment, creditedHere: SQL, now: string, publish: Publish | undefined, receipt: DocumentIssue): PurchaseStatements {
  const { depositId } = paid;
  const field = (column: string) => sql`(SELECT ${sql.raw(column)} FROM deposits WHERE id = ${depositId})`;
  const buyer: Caller = { userId: field('user_id'), proof: sql`SELECT ${field('user_id')} AS userId`, keyId: field('api_key_id') };
  const asValue = <T>(value: SQL) => value as unknown as T;
  return depositPurchase(
    buyer,
    {
      productId: asValue<number>(field('order_product_id')),
      variantId: asValue<number | null>(field('order_variant_id')),
      // 0, not NULL, for a deposit that pays for no order: SQLite refuses `LIMIT NULL`.
      quantity: asValue<number>(sql`coalesce(${field('order_quantity')}, 0)`),
      coupon: asValue<string | null>(field('order_coupon')),
      expectedTotalCents: asValue<number | null>(field('order_expected_total_cents')),
    },
    paid,
    creditedHere,
    now,
    publish,
    undefined,
    receipt,
  );
}

/** Which deposit a credit pays, and when the money was paid (the vendor's time where it reports one, else the credit's). */
interface DepositPayment {
  depositId: number;
  at: string;
}

/**
 * What a deposit's order needs before any rule of a purchase, named first when it fails: the key that made the
 * deposit is still live (not revoked, not expired; a dashboard session's deposit has no key) and its user enabled,
 * else `UNAUTHORIZED`; the money was paid before the deposit's `expires_at`, else `DEPOSIT_EXPIRED`. The credit
 * stands either way: the money arrived, only the order dies with its key or its deposit.
 */
const depositOrderGuards = (buyer: Caller, paid: DepositPayment, now: string): PurchaseGuard[] => [
  {
    code: 'UNAUTHORIZED',
    allows: sql`${enabledUser(buyer.userId)} AND (${buyer.keyId ?? null} IS NULL OR EXISTS (
      SELECT 1 FROM api_keys k WHERE k.id = ${buyer.keyId ?? null} AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > ${now})))`,
  },
  { code: 'DEPOSIT_EXPIRED', allows: sql`EXISTS (SELECT 1 FROM deposits WHERE id = ${paid.depositId} AND expires_at > ${paid.at})` },
];

/** The purchase a credited deposit makes, for its credit's batch (see `orderOfDeposit`). */
function depositPurchase(
  buyer: Caller,
  { productId, variantId, quantity, coupon, expectedTotalCents }: PurchaseRequest & { coupon: string | null; expectedTotalCents: number | null },
  paid: DepositPayment,
  creditedHere: SQL,
  now: string,
  publish: Publish | undefined,
  mail: Mail | undefined,
  receipt: DocumentIssue,
): PurchaseStatements {
  return purchaseStatements(
    buyer,
    { productId, variantId, quantity, coupon, expectedTotalCents },
    {
      // Catalogue events' image URLs: the shop's origin where mail knows it (no request made this change).
      origin: mail?.origin ?? '',
      publish,
      mail,
      now,
      requireFirst: depositOrderGuards(buyer, paid, now),
      ipCountry: sql`(SELECT ip_country FROM deposits WHERE id = ${paid.depositId})`,
      alsoIssue: [receipt],
      alsoRequire: [
        {
          code: 'INSUFFICIENT_STOCK',
          allows: sql`(SELECT count(*) FROM (SELECT 1 FROM stock_items WHERE variant_id = q.variant_id AND status = 'available' LIMIT ${quantity})) = ${quantity}`,
        },
        { code: 'NOT_CREDITED', allows: creditedHere },
      ],
    },
  );
}

/**
 * A gateway's failed/expired verdict closes a pending deposit without credit; a paid one is never reopened. The
 * event is logged first in the batch, as `closed` while the deposit is pending (then the close applies, keyed on
 * that row) or else `duplicate`, so the log and the deposit agree whatever runs concurrently.
 */
export async function closeDeposit(
  d1: Db,
  deposit: Pick<DepositRow, 'id'>,
  status: 'failed' | 'expired',
  received: ReceivedEvent,
  publish?: Publish,
  refresh?: RefreshAudit,
  /** The test gateway's close: the caller's proof leads the batch and nothing is logged (or closed) unless `owned`. */
  unread?: Pick<UnreadDeposit, 'caller' | 'owned'>,
): Promise<{ deposit: DepositRow; closed: boolean }> {
  const now = isoNow();
  const event = newEvent(`deposit.${status}`, now);
  const closedHere = sql`FROM gateway_events WHERE reference = ${received.reference} AND outcome = 'closed'`;
  const run = (plan: Omit<WritePlan, 'before'>) => (unread ? writeOutcomeAs(d1, unread.caller, plan) : writeAsActor(d1, refresh?.actor, plan));
  const { reads } = await run({
    writes: [
      logEvent(received, sql`(SELECT CASE WHEN status = 'pending' THEN 'closed' ELSE 'duplicate' END FROM deposits WHERE id = ${deposit.id})`, unread?.owned),
      sql`UPDATE deposits SET status = ${status}, updated_at = ${now}
          WHERE id = ${deposit.id} AND status = 'pending'
            AND EXISTS (SELECT 1 FROM gateway_events WHERE reference = ${received.reference} AND outcome = 'closed')`,
      recordEvent(event, deposits, sql`id = ${deposit.id} AND status = ${status} AND updated_at = ${now}`),
      ...(refresh ? [auditEntry(refresh.actor, refreshedEntry(refresh, 'closed', deposit.id, closedHere), now)] : []),
    ],
    reads: [
      sql`SELECT ${columnsOf(deposits)} FROM deposits WHERE id = ${deposit.id}`,
      loggedEvent(received),
      inOutbox(event),
    ],
    committed: ([, logged]: D1Result[]) => rowsOf(logged).length > 0,
  });
  publish?.(eventIdsOf(reads[2]));
  return { deposit: rowsOf<DepositRow>(reads[0])[0], closed: rowsOf<{ outcome: string }>(reads[1])[0]?.outcome === 'closed' };
}

export async function findDeposit(d1: Db, depositId: number): Promise<DepositRow> {
  const [deposit] = await getDb(d1).select().from(deposits).where(eq(deposits.id, depositId));
  if (!deposit) throw notFound('Deposit');
  return deposit;
}

/**
 * Apply a verified gateway event and log it. A gateway only ever acts on its own deposits: an event for an unknown
 * deposit or another gateway's is a 404, not logged (it concerns no deposit of this gateway).
 */
export async function applyGatewayEvent(d1: Db, gateway: GatewayName, event: GatewayEvent, publish?: Publish, mail?: Mail) {
  const deposit = await findDeposit(d1, event.depositId);
  if (deposit.gateway !== gateway) throw notFound('Deposit');
  const received = receiveEvent(gateway, event, 'notification');
  if (event.status !== 'paid') return { deposit: (await closeDeposit(d1, deposit, event.status, received, publish)).deposit, credited: false };
  // The amount of a deposit never changes, so comparing it outside the batch is safe.
  if (event.amountCents !== deposit.amountCents) {
    await logOnly(d1, received, 'amount_mismatch', { also: paymentAlert(mail, received.reference, received.receivedAt) });
    throw new ApiError('AMOUNT_MISMATCH', `Paid amount ${formatUsd(event.amountCents)} does not match the deposit amount ${formatUsd(deposit.amountCents)}.`);
  }
  return creditDeposit(d1, deposit, event.transactionId, { received, publish, mail });
}

/** Operator confirmation of a payment seen outside the webhook: the same single credit path. */
export async function markDepositPaid(d1: Db, actor: Actor, depositId: number, claim?: IdempotencyClaim, publish?: Publish, mail?: Mail) {
  return creditDeposit(d1, await findDeposit(d1, depositId), `manual-${depositId}`, { actor, claim, publish, mail });
}

/**
 * Scheduled job: pending deposits past `expires_at` become expired, each with its `deposit.expired` event, a bounded
 * batch per run.
 */
export async function expireDeposits(d1: Db, now: string, limit: number): Promise<number> {
  return changeRowsWithEvents(d1, {
    type: 'deposit.expired',
    table: deposits,
    candidates: sql`SELECT * FROM deposits WHERE status = 'pending' AND expires_at <= ${now} ORDER BY expires_at LIMIT ${limit}`,
    set: { status: 'expired', updatedAt: now },
    limit,
    now,
  });
}
