import { z } from 'zod';
import { verifyHmacHex } from '../../../lib/crypto';
import type { Slot } from './slots';
import type { Invoice, InvoiceRequest, LookupAnswer, LookupTarget, VendorAdapter, VendorNotification, VendorReport } from './types';
import { callVendor, forgedNotification, gatewayUnavailable, PageUrl, parseJsonObject, readAnswer } from './vendor-http';

// Stripe Checkout Sessions (the USD slot): a hosted card page per deposit, webhook events signed with
// `Stripe-Signature`, and the session itself as the lookup.

export const STRIPE_TOLERANCE_SECONDS = 300;
// Stripe accepts a session's expires_at from 30 minutes to 24 hours ahead; a minute of margin on each side.
const MIN_SESSION_SECONDS = 31 * 60;
const MAX_SESSION_SECONDS = 24 * 60 * 60 - 60;

const Session = z.object({
  object: z.literal('checkout.session'),
  id: z.string().min(1),
  client_reference_id: z.string().nullable().optional(),
  payment_status: z.string(),
  status: z.string().nullable().optional(),
  amount_total: z.number().int().nullable().optional(),
  payment_intent: z.string().nullable().optional(),
});
type Session = z.infer<typeof Session>;

const CreatedSession = z.object({ id: z.string().min(1), url: PageUrl });

/** A charge refunded or disputed: both name the payment intent the credit was recorded with. */
const MoneyBack = z.object({
  id: z.string().min(1),
  payment_intent: z.string().min(1),
  amount: z.number().int().nonnegative().optional(),
  amount_refunded: z.number().int().nonnegative().optional(),
});

const Event = z.object({ type: z.string(), data: z.object({ object: z.unknown() }) });

/**
 * The one status mapping of Stripe, for events and lookups alike: a session paid → paid (its `amount_total`),
 * expired → expired, anything else in progress; the async outcome events say paid or failed outright.
 */
function sessionReport(session: Session, status: string, eventType?: string): VendorReport {
  const amountCents = session.amount_total ?? null;
  const transactionId = session.payment_intent ?? session.id;
  const report = (verdict: VendorReport['verdict']) => ({ verdict, status, amountCents, transactionId });
  if (eventType === 'checkout.session.async_payment_failed') return report('failed');
  if (eventType === 'checkout.session.async_payment_succeeded' || session.payment_status === 'paid') return report('paid');
  if (eventType === 'checkout.session.expired' || session.status === 'expired') return report('expired');
  return report('in_progress');
}

const SESSION_EVENTS = new Set([
  'checkout.session.completed',
  'checkout.session.async_payment_succeeded',
  'checkout.session.async_payment_failed',
  'checkout.session.expired',
]);
const MONEY_BACK_EVENTS = new Set(['charge.refunded', 'charge.dispute.created']);

/** `t=<unix>,v1=<hex>[,v1=<hex>...]` (other schemes, such as v0, are ignored as Stripe's own library does). */
function parseStripeSignature(header: string | null): { t: number; v1: string[] } | null {
  if (!header) return null;
  let t: number | null = null;
  const v1: string[] = [];
  for (const part of header.split(',')) {
    const at = part.indexOf('=');
    const [key, value] = [part.slice(0, at).trim(), part.slice(at + 1).trim()];
    if (key === 't' && /^\d{1,12}$/.test(value)) t = Number(value);
    if (key === 'v1') v1.push(value);
  }
  return t === null || v1.length === 0 ? null : { t, v1 };
}

/** Whether any `v1` of the header signs `"<t>.<raw body>"` with the endpoint secret, within the tolerance. */
export async function verifyStripeSignature(secret: string, rawBody: string, header: string | null, nowMs: number): Promise<boolean> {
  const signature = parseStripeSignature(header);
  if (!signature) return false;
  const signed = `${signature.t}.${rawBody}`;
  // Every v1 is checked (no early exit), each by WebCrypto's constant-time verify; then the timestamp.
  const matches = await Promise.all(signature.v1.map((v1) => verifyHmacHex('SHA-256', secret, signed, v1)));
  return matches.some(Boolean) && Math.abs(nowMs / 1000 - signature.t) <= STRIPE_TOLERANCE_SECONDS;
}

const formBody = (fields: Record<string, string | number>) => new URLSearchParams(Object.entries(fields).map(([k, v]) => [k, String(v)])).toString();

export function stripeAdapter(slot: Slot): VendorAdapter {
  const auth = { Authorization: `Bearer ${slot.apiKey}` };
  return {
    provider: 'stripe',

    async createInvoice(request: InvoiceRequest): Promise<Invoice> {
      const now = Math.floor(request.nowMs / 1000);
      const wanted = Math.floor(Date.parse(request.expiresAt) / 1000);
      const expiresAt = Math.min(Math.max(wanted, now + MIN_SESSION_SECONDS), now + MAX_SESSION_SECONDS);
      const body = formBody({
        mode: 'payment',
        client_reference_id: request.reference,
        'line_items[0][price_data][currency]': 'usd',
        'line_items[0][price_data][unit_amount]': request.amountCents,
        'line_items[0][price_data][product_data][name]': 'Wallet deposit',
        'line_items[0][quantity]': 1,
        success_url: request.returnUrl,
        cancel_url: request.returnUrl,
        expires_at: expiresAt,
      });
      const answer = await callVendor(slot, 'invoice', {
        method: 'POST',
        path: '/v1/checkout/sessions',
        // The reference makes a repeated call (a network retry by Stripe's edge) return the same session.
        headers: { ...auth, 'Content-Type': 'application/x-www-form-urlencoded', 'Idempotency-Key': request.reference },
        body,
      });
      const session = readAnswer(slot, 'invoice', CreatedSession, answer);
      return { paymentUrl: session.url, invoiceId: session.id };
    },

    async parseNotification(rawBody, headers, nowMs): Promise<VendorNotification | null> {
      if (!(await verifyStripeSignature(slot.webhookSecret, rawBody, headers.get('Stripe-Signature'), nowMs))) throw forgedNotification();
      const event = Event.safeParse(parseJsonObject(rawBody));
      if (!event.success) return null;
      const { type, data } = event.data;
      if (SESSION_EVENTS.has(type)) {
        const session = Session.safeParse(data.object);
        if (!session.success || !session.data.client_reference_id) return null;
        const report = sessionReport(session.data, type, type);
        return { ...report, deposit: { reference: session.data.client_reference_id }, paymentId: session.data.payment_intent ?? undefined };
      }
      if (MONEY_BACK_EVENTS.has(type)) {
        const charge = MoneyBack.safeParse(data.object);
        if (!charge.success) return null;
        const amountCents = (type === 'charge.refunded' ? charge.data.amount_refunded : charge.data.amount) ?? null;
        return { verdict: 'reversed', status: type, amountCents, transactionId: charge.data.id, deposit: { paymentId: charge.data.payment_intent } };
      }
      return null;
    },

    async lookup(target: LookupTarget): Promise<LookupAnswer> {
      const answer = await callVendor(slot, 'lookup', { method: 'GET', path: `/v1/checkout/sessions/${encodeURIComponent(target.invoiceId)}`, headers: auth });
      const session = readAnswer(slot, 'lookup', Session, answer);
      const status = session.status === 'expired' && session.payment_status !== 'paid' ? 'expired' : session.payment_status;
      if (!session.client_reference_id) throw gatewayUnavailable(slot, 'lookup', 'unexpected answer');
      return { reference: session.client_reference_id, report: sessionReport(session, status) };
    },
  };
}
