import { holdOnReversal } from '../accounts/holds';
import { and, eq, sql } from 'drizzle-orm';
import { columnsOf, rowJson, rowsOf } from '../../db/batch';
import { getDb, type Db } from '../../db/client';
import { DatabaseUnavailable, writeBatch } from '../../db/d1';
import { deposits, type DepositRow } from '../../db/schema';
import type { Config } from '../../env';
import { fieldError } from '../../lib/errors';
import { leastPaidCents } from '../../lib/money';
import { isoNow } from '../../lib/time';
import type { Actor } from '../accounts/audit-log';
import { closeDeposit, creditDeposit, findDeposit, type RefreshAudit } from './deposits';
import type { Publish } from '../events/log';
import { OPERATOR, recordClaim, type IdempotencyClaim } from '../idempotency';
import { logOnly, receiveEvent, type GatewayOutcome } from './gateway-events';
import { findGateway, GATEWAYS, isGatewayName, type DepositKey, type GatewayName, type PaymentGateway, type VendorNotification, type VendorReport } from './gateways';
import { gatewayUnavailable } from './gateways/vendor-http';
import type { Mail } from '../mail/settings';
import { paymentAlert } from '../mail/alerts';

// What real payment providers say about deposits, applied: their notifications (a paid one confirmed with the
// vendor's own API first), a refresh on the operator's demand, and the scheduled poll (src/services/payments/poll.ts).
// Every path ends in the guarded batches of src/services/payments/deposits.ts, so a payment is credited exactly once whichever
// path gets there first.

export type VendorGateway = Extract<PaymentGateway, { vendor: unknown }>;

const DEPOSIT_KEY_COLUMN = { reference: deposits.reference, invoiceId: deposits.externalId, paymentId: deposits.vendorPaymentId } as const;

/** The deposit of this slot and provider that a vendor's notification names, or null (not one of ours). */
async function findVendorDeposit(d1: Db, gateway: VendorGateway, key: DepositKey): Promise<DepositRow | null> {
  const [[name, value]] = Object.entries(key) as [[keyof typeof DEPOSIT_KEY_COLUMN, string]];
  const [deposit] = await getDb(d1)
    .select()
    .from(deposits)
    .where(and(eq(deposits.gateway, gateway.name), eq(deposits.provider, gateway.provider), eq(DEPOSIT_KEY_COLUMN[name], value)))
    .limit(1);
  return deposit ?? null;
}

/** A lookup's answer about one deposit: the vendor's report (null: nothing yet), or an answer about another one. */
type Answer = { report: VendorReport | null } | { otherDeposit: true };

/**
 * What a vendor's report means for this deposit: a "paid" that reports a USD amount below the deposit's less 1 %
 * (rounded down to the cent) is a mismatch, whatever the vendor calls it; nothing is credited for it.
 */
function judged<R extends VendorReport>(report: R, deposit: DepositRow): R {
  const short = report.verdict === 'paid' && report.amountCents !== null && report.amountCents < leastPaidCents(deposit.amountCents);
  return short ? { ...report, verdict: 'mismatch' } : report;
}

/** The vendor's own answer about a deposit, asked with the invoice id stored when the deposit was made. */
async function askVendor(gateway: VendorGateway, deposit: DepositRow, paymentId?: string): Promise<Answer> {
  const answer = await gateway.vendor.lookup({
    reference: deposit.reference ?? '',
    invoiceId: deposit.externalId ?? '',
    paymentId: paymentId ?? deposit.vendorPaymentId,
  });
  if (answer.reference !== null && answer.reference !== deposit.reference) return { otherDeposit: true };
  return { report: answer.report && judged(answer.report, deposit) };
}

/**
 * Keep the payment id a verified notification names before anything else happens (NOWPayments is looked up by it):
 * a "finished" the vendor's API does not confirm yet, or a vendor that cannot be reached right now, can then be asked
 * again by a refresh and by the scheduled poll. Not once the deposit is paid: its id is the one that paid it.
 */
async function rememberPaymentId(d1: Db, deposit: DepositRow, paymentId: string | undefined): Promise<DepositRow> {
  if (!paymentId || paymentId === deposit.vendorPaymentId || deposit.status === 'paid') return deposit;
  const { reads } = await writeBatch(d1, {
    writes: [sql`UPDATE deposits SET vendor_payment_id = ${paymentId} WHERE id = ${deposit.id} AND status <> 'paid'`],
    reads: [sql`SELECT ${columnsOf(deposits)} FROM deposits WHERE id = ${deposit.id}`],
    committed: ([row]) => {
      const stored = rowsOf<DepositRow>(row)[0];
      return stored?.vendorPaymentId === paymentId || stored?.status === 'paid';
    },
  });
  return rowsOf<DepositRow>(reads[0])[0] ?? deposit;
}

/**
 * Apply a verified notification of a real provider, always on record when it concerns a deposit of this slot:
 * paid credits the deposit's own amount once, but only when the vendor's own API says paid for that deposit too
 * (else `unconfirmed`; a vendor that cannot be reached is a 503 and nothing changes); failed or expired closes a
 * pending deposit; a partial payment, progress and money taken back (only about a credited deposit) change no
 * deposit. Null when it names no deposit of this slot, or is of a kind not handled (`notification` null).
 */
export async function applyVendorNotification(d1: Db, gateway: VendorGateway, notification: VendorNotification | null, publish?: Publish, mail?: Mail) {
  if (!notification) return null;
  const found = await findVendorDeposit(d1, gateway, notification.deposit);
  if (!found || (notification.verdict === 'reversed' && found.status !== 'paid')) return null;
  const { verdict, status, amountCents, transactionId, paymentId } = judged(notification, found);
  const deposit = await rememberPaymentId(d1, found, paymentId);
  const received = receiveEvent(gateway.name, { depositId: deposit.id, status, amountCents, transactionId }, 'notification');
  if (verdict === 'paid') {
    // A leaked webhook secret signs anything: only the vendor's own API says that money arrived, and how much.
    const answer = await askVendor(gateway, deposit);
    if ('report' in answer && answer.report?.verdict === 'mismatch') {
      await logOnly(d1, received, 'amount_mismatch', { also: paymentAlert(mail, received.reference, received.receivedAt) });
      return { deposit, credited: false };
    }
    if (!('report' in answer) || answer.report?.verdict !== 'paid') {
      await logOnly(d1, received, 'unconfirmed');
      return { deposit, credited: false };
    }
    return creditDeposit(d1, deposit, transactionId, { received, publish, paymentId, mail, paidAt: answer.report.paidAt ?? notification.paidAt });
  }
  if (verdict === 'failed' || verdict === 'expired') return { deposit: (await closeDeposit(d1, deposit, verdict, received, publish)).deposit, credited: false };
  await logOnly(d1, received, verdict === 'mismatch' ? 'amount_mismatch' : verdict, {
    also: [
      ...paymentAlert(mail, received.reference, received.receivedAt),
      // Money taken back after a credit (a refund or dispute) puts the deposit's user on hold, in the same batch.
      ...(verdict === 'reversed' ? [holdOnReversal(received.reference, received.receivedAt)] : []),
    ],
  });
  return { deposit, credited: false };
}

/**
 * The vendor that can look this deposit up: the provider the deposit was made with (it is recorded on the deposit),
 * on the deposit's own slot while that slot still has it, else on any slot configured with it now; null for a generic
 * deposit, or when that provider is no longer configured on any slot.
 */
export function lookupGateway(config: Config, deposit: Pick<DepositRow, 'gateway' | 'provider'>): VendorGateway | null {
  if (deposit.provider === 'generic') return null;
  const slots: GatewayName[] = isGatewayName(deposit.gateway) ? [deposit.gateway, ...GATEWAYS.filter((name) => name !== deposit.gateway)] : [...GATEWAYS];
  for (const name of slots) {
    const gateway = findGateway(name, config);
    if (gateway && gateway.provider !== 'generic' && gateway.provider === deposit.provider) return gateway;
  }
  return null;
}

/** Outcomes of an answer that changed the deposit or its record. */
export const CHANGES = new Set<GatewayOutcome>(['credited', 'closed', 'amount_mismatch']);

export interface LookupResult {
  deposit: DepositRow;
  /** The vendor's status as received; null when it has none yet. */
  vendorStatus: string | null;
  outcome: GatewayOutcome;
}

/**
 * Ask the vendor about a deposit and apply the answer as a verified notification with that status would be applied
 * (paid credits once, failed or expired closes it while pending). Only answers that change something are recorded,
 * and a mismatch once per deposit and status, so polls do not fill the log. An answer about another deposit changes
 * nothing: GATEWAY_UNAVAILABLE, as a vendor that cannot tell (a 422 on `payment_id` when the operator gave that id).
 * A refresh names its operator (`actor`): a credit or close it causes is audited in that batch. Does not stamp
 * `last_checked_at` (the caller does).
 */
export async function lookUpDeposit(
  d1: Db,
  gateway: VendorGateway,
  deposit: DepositRow,
  publish?: Publish,
  { paymentId, actor, mail }: RefreshOptions = {},
): Promise<LookupResult> {
  const answer = await askVendor(gateway, deposit, paymentId);
  if (!('report' in answer)) {
    // An id the operator gave that is another deposit's payment: their mistake to see, not a vendor fault.
    if (paymentId) throw fieldError('payment_id', `Payment ${paymentId} is not a payment of deposit ${deposit.id}; nothing was changed.`);
    throw gatewayUnavailable(gateway.slot, 'lookup', 'unexpected answer');
  }
  const { report } = answer;
  const result = (outcome: GatewayOutcome, after = deposit) => ({ deposit: after, vendorStatus: report?.status ?? null, outcome });
  if (!report) return result('in_progress');
  // Logged under the deposit's own slot, whichever slot's settings asked its vendor.
  const received = receiveEvent(isGatewayName(deposit.gateway) ? deposit.gateway : gateway.name, { depositId: deposit.id, ...report }, 'lookup');
  const refresh: RefreshAudit | undefined = actor && { actor, vendorStatus: report.status };
  switch (report.verdict) {
    case 'paid': {
      if (deposit.status === 'paid') return result('duplicate');
      const credit = await creditDeposit(d1, deposit, report.transactionId, { received, publish, paymentId, refresh, mail, paidAt: report.paidAt });
      return result(credit.credited ? 'credited' : 'duplicate', credit.deposit);
    }
    case 'failed':
    case 'expired': {
      if (deposit.status !== 'pending') return result('duplicate');
      const closed = await closeDeposit(d1, deposit, report.verdict, received, publish, refresh);
      return result(closed.closed ? 'closed' : 'duplicate', closed.deposit);
    }
    case 'mismatch':
      await logOnly(d1, received, 'amount_mismatch', { once: true, also: paymentAlert(mail, received.reference, received.receivedAt) });
      return result('amount_mismatch');
    default:
      return result('in_progress');
  }
}

/** Remember when the vendor was last asked about these deposits (one statement for a whole poll). */
export const stampChecked = (ids: number[], now: string) =>
  sql`UPDATE deposits SET last_checked_at = ${now} WHERE id IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`;

/** What an operator's refresh adds to a lookup: a payment id to ask about (NOWPayments), and who asked (audited). */
export interface RefreshOptions {
  /** The vendor's payment id, given by the operator; stored only when the vendor's answer names this deposit. */
  paymentId?: string;
  actor?: Actor;
  /** Mail on: a credit records its deposit_credited email, a mismatch its operator alert, in the change's batch. */
  mail?: Mail;
}

/** Why a deposit's vendor cannot be asked: a generic deposit, or a provider no slot is configured with any more. */
function noVendorToAsk(deposit: DepositRow): never {
  if (deposit.provider === 'generic') throw fieldError('id', `Deposit ${deposit.id} has no payment provider to ask: it was made with the generic gateway.`);
  throw fieldError('id', `Deposit ${deposit.id} was made with ${deposit.provider}, which is no longer configured on any gateway slot: it cannot be asked.`);
}

/**
 * Ask the vendor about one deposit now (`POST /admin/deposits/{id}/refresh`, the console's "Ask the vendor"): 404 for
 * an unknown deposit, 422 for one no vendor can be asked about (a generic slot's, or a provider no longer configured),
 * for a payment id given for another provider than NOWPayments or naming another deposit's payment, 503
 * GATEWAY_UNAVAILABLE when the vendor cannot tell (nothing changes). The deposit is answered as after the answer, with
 * `last_checked_at`; an answer that credits or closes it is audited (`deposit.refreshed`) in the batch of that change.
 */
export async function refreshDeposit(
  d1: Db,
  config: Config,
  depositId: number,
  options: RefreshOptions,
  claim?: IdempotencyClaim,
  publish?: Publish,
): Promise<LookupResult> {
  const deposit = await findDeposit(d1, depositId);
  const gateway = lookupGateway(config, deposit) ?? noVendorToAsk(deposit);
  const { paymentId } = options;
  if (paymentId && gateway.provider !== 'nowpayments') {
    throw fieldError('payment_id', `Only NOWPayments deposits are looked up by a payment id; deposit ${depositId} was made with ${gateway.provider}.`);
  }
  const result = await lookUpDeposit(d1, gateway, deposit, publish, options);
  const { vendorStatus, outcome } = result;
  const now = isoNow();
  // The operator's payment id named this deposit (else the lookup refused it): later lookups ask about it too.
  const remember = paymentId ? [sql`UPDATE deposits SET vendor_payment_id = ${paymentId} WHERE id = ${deposit.id}`] : [];
  // The operator's key is claimed with the answer: a replay renders it from this snapshot.
  const snapshot = sql`SELECT d.id, json_object('deposit', ${rowJson(deposits, 'd')}, 'vendorStatus', ${vendorStatus}, 'outcome', ${outcome}) AS snapshot
                       FROM deposits d WHERE d.id = ${deposit.id}`;
  try {
    const { reads } = await writeBatch(d1, {
      writes: [stampChecked([deposit.id], now), ...remember, ...(claim ? recordClaim(OPERATOR, claim, snapshot) : [])],
      reads: [sql`SELECT ${columnsOf(deposits)} FROM deposits WHERE id = ${deposit.id}`],
      committed: ([row]) => rowsOf<DepositRow>(row)[0]?.lastCheckedAt === now,
    });
    return { deposit: rowsOf<DepositRow>(reads[0])[0], vendorStatus, outcome };
  } catch (err) {
    // The answer already changed the deposit: that is the truth to tell, not a 503 (only the bookkeeping is lost).
    if (err instanceof DatabaseUnavailable && CHANGES.has(outcome)) return result;
    throw err;
  }
}
