import { z } from 'zod';
import { verifyHmacHex } from '../../../lib/crypto';
import { centsToDecimal } from '../../../lib/money';
import type { Slot } from './slots';
import type { Invoice, InvoiceRequest, LookupAnswer, LookupTarget, VendorAdapter, VendorNotification, VendorReport } from './types';
import { callVendor, forgedNotification, PageUrl, parseJsonObject, readAnswer } from './vendor-http';

// BTCPay Server's Greenfield API (a crypto slot, on the merchant's own server): an invoice per deposit in the store
// `ACCOUNT`, webhooks signed with `BTCPay-Sig`, and the invoice as the lookup. The buyer picks the coin on BTCPay's
// checkout (the store's payment methods), so `crypto_currency` is not sent.

const CreatedInvoice = z.object({ id: z.string().min(1), checkoutLink: PageUrl });

const Invoice = z.object({
  id: z.string().min(1),
  status: z.string().min(1),
  additionalStatus: z.string().nullable().optional(),
  metadata: z.object({ orderId: z.string().min(1) }),
});

const Webhook = z.object({
  type: z.string().min(1),
  invoiceId: z.string().min(1),
  storeId: z.string().optional(),
  partiallyPaid: z.boolean().optional(),
});

/**
 * The one status mapping of BTCPay: a webhook's event type or the invoice's status (`Invoice` + status names the
 * event): settled → paid; expired → expired, or a mismatch when partly paid; invalid → failed; else in progress.
 * Neither carries a paid amount in USD (`null`).
 */
function invoiceReport(status: string, invoiceId: string, partiallyPaid: boolean): VendorReport {
  const report = (verdict: VendorReport['verdict']) => ({ verdict, status, amountCents: null, transactionId: invoiceId });
  const state = status.replace(/^Invoice/, '');
  if (state === 'Settled') return report('paid');
  if (state === 'Expired') return report(partiallyPaid ? 'mismatch' : 'expired');
  if (state === 'Invalid') return report('failed');
  return report('in_progress');
}

export function btcpayAdapter(slot: Slot): VendorAdapter {
  const auth = { Authorization: `token ${slot.apiKey}` };
  const store = `/api/v1/stores/${encodeURIComponent(slot.account)}`;
  return {
    provider: 'btcpay',

    async createInvoice(request: InvoiceRequest): Promise<Invoice> {
      const minutes = Math.max(1, Math.round((Date.parse(request.expiresAt) - request.nowMs) / 60_000));
      const answer = await callVendor(slot, 'invoice', {
        method: 'POST',
        path: `${store}/invoices`,
        headers: { ...auth, 'Content-Type': 'application/json' },
        body: JSON.stringify({
          amount: centsToDecimal(request.amountCents),
          currency: 'USD',
          metadata: { orderId: request.reference },
          checkout: { expirationMinutes: minutes, redirectURL: request.returnUrl },
        }),
      });
      const invoice = readAnswer(slot, 'invoice', CreatedInvoice, answer);
      return { paymentUrl: invoice.checkoutLink, invoiceId: invoice.id };
    },

    async parseNotification(rawBody, headers): Promise<VendorNotification | null> {
      const header = headers.get('BTCPay-Sig') ?? '';
      const signature = header.startsWith('sha256=') ? header.slice('sha256='.length) : '';
      if (!(await verifyHmacHex('SHA-256', slot.webhookSecret, rawBody, signature))) throw forgedNotification();
      const webhook = Webhook.safeParse(parseJsonObject(rawBody));
      // Another store's invoice (one webhook secret serving several stores) is not ours.
      if (!webhook.success || (webhook.data.storeId !== undefined && webhook.data.storeId !== slot.account)) return null;
      const { type, invoiceId, partiallyPaid } = webhook.data;
      if (!type.startsWith('Invoice')) return null;
      return { ...invoiceReport(type, invoiceId, partiallyPaid === true), deposit: { invoiceId } };
    },

    async lookup(target: LookupTarget): Promise<LookupAnswer> {
      const answer = await callVendor(slot, 'lookup', { method: 'GET', path: `${store}/invoices/${encodeURIComponent(target.invoiceId)}`, headers: auth });
      const invoice = readAnswer(slot, 'lookup', Invoice, answer);
      return { reference: invoice.metadata.orderId, report: invoiceReport(invoice.status, invoice.id, invoice.additionalStatus === 'PaidPartial') };
    },
  };
}
