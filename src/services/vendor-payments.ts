import { and, eq, sql } from 'drizzle-orm';
import { columnsOf, rowJson, rowsOf } from '../db/batch';
import { getDb, type Db } from '../db/client';
import { DatabaseUnavailable, writeBatch } from '../db/d1';
import { deposits, type DepositRow } from '../db/schema';
import type { Config } from '../env';
import { fieldError } from '../lib/errors';
import { isoNow } from '../lib/time';
import { closeDeposit, creditDeposit, findDeposit } from './deposits';
import type { Publish } from './events';
import { OPERATOR, recordClaim, type IdempotencyClaim } from './idempotency';
import { logOnly, receiveEvent, type GatewayOutcome } from './gateway-events';
import { findGateway, isGatewayName, type DepositKey, type PaymentGateway, type VendorNotification, type VendorReport } from './gateways';
import { gatewayUnavailable } from './gateways/vendor-http';
import type { Mail } from './mail';
import { paymentAlert } from './operator-alerts';

// What real payment providers say about deposits, applied: their notifications (a paid one confirmed with the
// vendor's own API first), a refresh on the operator's demand, and the scheduled poll (src/services/vendor-poll.ts).
// Every path ends in the guarded batches of src/services/deposits.ts, so a payment is credited exactly once whichever
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

/** The vendor's own answer about a deposit, asked with the invoice id stored when the deposit was made. */
async function askVendor(gateway: VendorGateway, deposit: DepositRow, paymentId?: string): Promise<Answer> {
  const answer = await gateway.vendor.lookup({
    reference: deposit.reference ?? '',
    invoiceId: deposit.externalId ?? '',
    paymentId: paymentId ?? deposit.vendorPaymentId,
  });
  return answer.reference !== null && answer.reference !== deposit.reference ? { otherDeposit: true } : { report: answer.report };
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
  const deposit = await findVendorDeposit(d1, gateway, notification.deposit);
  if (!deposit || (notification.verdict === 'reversed' && deposit.status !== 'paid')) return null;
  const { verdict, status, amountCents, transactionId, paymentId } = notification;
  const received = receiveEvent(gateway.name, { depositId: deposit.id, status, amountCents, transactionId }, 'notification');
  if (verdict === 'paid') {
    // A leaked webhook secret signs anything: only the vendor's own API says that money arrived.
    const answer = await askVendor(gateway, deposit, paymentId);
    if (!('report' in answer) || answer.report?.verdict !== 'paid') {
      await logOnly(d1, received, 'unconfirmed');
      return { deposit, credited: false };
    }
    return creditDeposit(d1, deposit, transactionId, { received, publish, paymentId, mail });
  }
  if (verdict === 'failed' || verdict === 'expired') return { deposit: (await closeDeposit(d1, deposit, verdict, received, publish)).deposit, credited: false };
  // A payment id learnt before the credit (NOWPayments') is what a later lookup asks about.
  const remember = paymentId ? [sql`UPDATE deposits SET vendor_payment_id = ${paymentId} WHERE id = ${deposit.id} AND status <> 'paid'`] : [];
  await logOnly(d1, received, verdict === 'mismatch' ? 'amount_mismatch' : verdict, {
    also: [...remember, ...paymentAlert(mail, received.reference, received.receivedAt)],
  });
  return { deposit, credited: false };
}

/** The slot's vendor when it can look this deposit up: a real provider's deposit whose slot that provider still serves. */
export function lookupGateway(config: Config, deposit: Pick<DepositRow, 'gateway' | 'provider'>): VendorGateway | null {
  if (deposit.provider === 'generic' || !isGatewayName(deposit.gateway)) return null;
  const gateway = findGateway(deposit.gateway, config);
  return gateway && gateway.provider !== 'generic' && gateway.provider === deposit.provider ? gateway : null;
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
 * nothing: GATEWAY_UNAVAILABLE, as a vendor that cannot tell. Does not stamp `last_checked_at` (the caller does).
 */
export async function lookUpDeposit(d1: Db, gateway: VendorGateway, deposit: DepositRow, publish?: Publish, mail?: Mail): Promise<LookupResult> {
  const answer = await askVendor(gateway, deposit);
  if (!('report' in answer)) throw gatewayUnavailable(gateway.slot, 'lookup', 'unexpected answer');
  const { report } = answer;
  const result = (outcome: GatewayOutcome, after = deposit) => ({ deposit: after, vendorStatus: report?.status ?? null, outcome });
  if (!report) return result('in_progress');
  const received = receiveEvent(gateway.name, { depositId: deposit.id, ...report }, 'lookup');
  switch (report.verdict) {
    case 'paid': {
      if (deposit.status === 'paid') return result('duplicate');
      const credit = await creditDeposit(d1, deposit, report.transactionId, { received, publish, mail });
      return result(credit.credited ? 'credited' : 'duplicate', credit.deposit);
    }
    case 'failed':
    case 'expired': {
      if (deposit.status !== 'pending') return result('duplicate');
      const closed = await closeDeposit(d1, deposit, report.verdict, received, publish);
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

/**
 * Ask the vendor about one deposit now (`POST /admin/deposits/{id}/refresh`, the console's "Ask the vendor"): 404 for
 * an unknown deposit, 422 for one no vendor can be asked about (a generic slot's), 503 GATEWAY_UNAVAILABLE when the
 * vendor cannot tell (nothing changes). The deposit is answered as after the answer, with `last_checked_at`.
 */
export async function refreshDeposit(
  d1: Db,
  config: Config,
  depositId: number,
  claim?: IdempotencyClaim,
  publish?: Publish,
  mail?: Mail,
): Promise<LookupResult> {
  const deposit = await findDeposit(d1, depositId);
  const gateway = lookupGateway(config, deposit);
  if (!gateway) throw fieldError('id', `Deposit ${depositId} has no payment provider to ask: it was made with the generic gateway.`);
  const result = await lookUpDeposit(d1, gateway, deposit, publish, mail);
  const { vendorStatus, outcome } = result;
  const now = isoNow();
  // The operator's key is claimed with the answer: a replay renders it from this snapshot.
  const snapshot = sql`SELECT d.id, json_object('deposit', ${rowJson(deposits, 'd')}, 'vendorStatus', ${vendorStatus}, 'outcome', ${outcome}) AS snapshot
                       FROM deposits d WHERE d.id = ${deposit.id}`;
  try {
    const { reads } = await writeBatch(d1, {
      writes: [stampChecked([deposit.id], now), ...(claim ? recordClaim(OPERATOR, claim, snapshot) : [])],
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
