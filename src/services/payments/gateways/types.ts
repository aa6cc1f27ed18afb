import type { Slot, VendorName } from './slots';

// What every real payment provider's adapter does, in the service's own terms. The wallet code sees only these.

/** What a vendor's status means for a deposit (the contract's status tables; one mapping per vendor). */
export type Verdict = 'paid' | 'failed' | 'expired' | 'mismatch' | 'in_progress' | 'reversed';

/** A vendor's word about one invoice, from a notification or from a lookup. */
export interface VendorReport {
  verdict: Verdict;
  /** The vendor's own status (or event type) as received. */
  status: string;
  /** The USD amount the vendor reports, in cents; null when it reports none. */
  amountCents: number | null;
  /** The vendor's payment or invoice id. */
  transactionId: string;
  /**
   * When the vendor says the money was paid (ISO 8601), where it reports one: a deposit's order is bought only for a
   * payment before the deposit's expiry, and a notification can arrive after it for a payment made before.
   */
  paidAt?: string | null;
}

/** How a notification names its deposit: our reference (the vendor's order id), the invoice id, or a payment id. */
export type DepositKey = { reference: string } | { invoiceId: string } | { paymentId: string };

export interface VendorNotification extends VendorReport {
  deposit: DepositKey;
  /** A payment id to remember on the deposit (Stripe's payment intent, NOWPayments' payment id). */
  paymentId?: string;
}

/** A deposit about to be created, as the vendor's invoice needs it. */
export interface InvoiceRequest {
  reference: string;
  amountCents: number;
  cryptoCurrency: string | null;
  expiresAt: string;
  nowMs: number;
  /** Where the vendor sends notifications: `<origin>/api/v2/webhooks/<slot>`. */
  notifyUrl: string;
  /** Where the buyer returns after paying (or giving up). */
  returnUrl: string;
}

export interface Invoice {
  paymentUrl: string;
  invoiceId: string;
}

/** The deposit a lookup asks about. */
export interface LookupTarget {
  reference: string;
  invoiceId: string;
  /** A payment id learnt from a notification (NOWPayments looks payments up by it), if any. */
  paymentId: string | null;
}

/**
 * A lookup's answer: the deposit it names (an answer about another deposit changes nothing) and the vendor's report,
 * or `null` for both when the vendor has nothing to say yet (NOWPayments before any payment: in progress).
 */
export type LookupAnswer = { reference: string; report: VendorReport } | { reference: null; report: null };

export interface VendorAdapter {
  readonly provider: VendorName;
  /** Creates the invoice (before the deposit's batch). Throws GATEWAY_UNAVAILABLE or GATEWAY_REJECTED. */
  createInvoice(request: InvoiceRequest): Promise<Invoice>;
  /**
   * Verifies a notification with the vendor's own scheme on the raw body (401 when it fails) and reads it: null for
   * a verified notification of a kind the service does not handle.
   */
  parseNotification(rawBody: string, headers: Headers, nowMs: number): Promise<VendorNotification | null>;
  /** Asks the vendor what happened to an invoice. Throws GATEWAY_UNAVAILABLE when it cannot tell. */
  lookup(target: LookupTarget): Promise<LookupAnswer>;
}

export type VendorFactory = (slot: Slot) => VendorAdapter;
