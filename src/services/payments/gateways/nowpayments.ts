import { z } from 'zod';
import { verifyHmacHex } from '../../../lib/crypto';
import { centsToAmount, decimalToCents } from '../../../lib/money';
import type { Slot } from './slots';
import type { Invoice, InvoiceRequest, LookupAnswer, LookupTarget, VendorAdapter, VendorNotification, VendorReport } from './types';
import { callVendor, forgedNotification, PageUrl, parseJsonObject, readAnswer, VendorId } from './vendor-http';

// NOWPayments invoices (a crypto slot): a hosted page per deposit, IPN callbacks signed with
// `x-nowpayments-sig`, and the payment as the lookup.

// Coins with one obvious NOWPayments code. Stablecoins exist on several networks (usdttrc20, usdterc20...): for
// those the buyer picks the network on NOWPayments' page.
const PAY_CURRENCY: Record<string, string> = { BTC: 'btc', ETH: 'eth', LTC: 'ltc' };

const CreatedInvoice = z.object({ id: VendorId, invoice_url: PageUrl });

const Payment = z.object({
  payment_id: VendorId,
  payment_status: z.string().min(1),
  order_id: z.string().nullable().optional(),
  price_amount: z.union([z.number(), z.string()]).nullable().optional(),
  actually_paid_at_fiat: z.union([z.number(), z.string()]).nullable().optional(),
});
type Payment = z.infer<typeof Payment>;

/** The one status mapping of NOWPayments (the IPN table), for IPNs and lookups alike. */
function paymentReport(payment: Payment): VendorReport {
  const status = payment.payment_status;
  const report = (verdict: VendorReport['verdict'], amount: unknown) => ({
    verdict,
    status,
    amountCents: decimalToCents(amount),
    transactionId: payment.payment_id,
  });
  if (status === 'finished') return report('paid', payment.price_amount);
  if (status === 'partially_paid') return report('mismatch', payment.actually_paid_at_fiat);
  if (status === 'failed') return report('failed', null);
  if (status === 'expired') return report('expired', null);
  return report('in_progress', null);
}

/** The body with every object's keys sorted, as `JSON.stringify` writes it: what NOWPayments signs. */
export function sortedJson(value: unknown): string {
  const sort = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sort)
      : v !== null && typeof v === 'object'
        ? Object.fromEntries(Object.keys(v).sort().map((key) => [key, sort((v as Record<string, unknown>)[key])]))
        : v;
  return JSON.stringify(sort(value));
}

export function nowpaymentsAdapter(slot: Slot): VendorAdapter {
  const auth = { 'x-api-key': slot.apiKey };
  return {
    provider: 'nowpayments',

    async createInvoice(request: InvoiceRequest): Promise<Invoice> {
      const payCurrency = request.cryptoCurrency ? PAY_CURRENCY[request.cryptoCurrency] : undefined;
      const answer = await callVendor(slot, 'invoice', {
        method: 'POST',
        path: '/v1/invoice',
        headers: { ...auth, 'Content-Type': 'application/json' },
        body: JSON.stringify({
          price_amount: centsToAmount(request.amountCents),
          price_currency: 'usd',
          order_id: request.reference,
          order_description: `Wallet deposit ${request.reference}`,
          ipn_callback_url: request.notifyUrl,
          success_url: request.returnUrl,
          cancel_url: request.returnUrl,
          ...(payCurrency && { pay_currency: payCurrency }),
        }),
      });
      const invoice = readAnswer(slot, 'invoice', CreatedInvoice, answer);
      return { paymentUrl: invoice.invoice_url, invoiceId: invoice.id };
    },

    async parseNotification(rawBody, headers): Promise<VendorNotification | null> {
      const signature = headers.get('x-nowpayments-sig') ?? '';
      const body = parseJsonObject(rawBody);
      // NOWPayments signs the key-sorted body; it usually sends it sorted already, so the raw bytes are tried first.
      const authentic =
        body !== null &&
        ((await verifyHmacHex('SHA-512', slot.webhookSecret, rawBody, signature)) ||
          (await verifyHmacHex('SHA-512', slot.webhookSecret, sortedJson(body), signature)));
      if (!authentic) throw forgedNotification();
      const payment = Payment.safeParse(body);
      if (!payment.success || !payment.data.order_id) return null;
      return { ...paymentReport(payment.data), deposit: { reference: payment.data.order_id }, paymentId: payment.data.payment_id };
    },

    async lookup(target: LookupTarget): Promise<LookupAnswer> {
      // Before any IPN there is no payment to ask about: the invoice is still waiting for the buyer.
      if (!target.paymentId) return { reference: null, report: null };
      const answer = await callVendor(slot, 'lookup', { method: 'GET', path: `/v1/payment/${encodeURIComponent(target.paymentId)}`, headers: auth });
      const payment = readAnswer(slot, 'lookup', Payment.extend({ order_id: z.string().min(1) }), answer);
      return { reference: payment.order_id, report: paymentReport(payment) };
    },
  };
}
