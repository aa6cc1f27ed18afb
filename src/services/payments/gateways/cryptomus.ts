import { z } from 'zod';
import { base64Utf8, md5Hex, timingSafeEqualStrings } from '../../../lib/crypto';
import { centsToDecimal, decimalToCents } from '../../../lib/money';
import type { Slot } from './slots';
import type { Invoice, InvoiceRequest, LookupAnswer, LookupTarget, VendorAdapter, VendorNotification, VendorReport } from './types';
import { callVendor, forgedNotification, gatewayUnavailable, PageUrl, readAnswer } from './vendor-http';

// Cryptomus payments (a crypto slot): calls signed with the `merchant` and `sign` headers, webhooks carrying `sign` in
// their body (both from the payment API key: there is no separate webhook secret), and payment info as the lookup.

// Cryptomus takes an invoice lifetime of 5 minutes to 12 hours, in seconds.
const MIN_LIFETIME = 300;
const MAX_LIFETIME = 43_200;

const Created = z.object({ result: z.object({ uuid: z.string().min(1), url: PageUrl }) });

const PaymentInfo = z.object({
  uuid: z.string().min(1),
  order_id: z.string().min(1),
  status: z.string().min(1).optional(),
  payment_status: z.string().min(1).optional(),
  payment_amount_usd: z.union([z.string(), z.number()]).nullable().optional(),
});

/** The one status mapping of Cryptomus (the webhook table), for webhooks and payment info alike. */
function paymentReport(status: string, uuid: string, amountUsd: unknown): VendorReport {
  const report = (verdict: VendorReport['verdict'], amount: unknown) => ({ verdict, status, amountCents: decimalToCents(amount), transactionId: uuid });
  if (status === 'paid' || status === 'paid_over') return report('paid', amountUsd);
  if (status === 'wrong_amount') return report('mismatch', amountUsd);
  if (status === 'cancel') return report('expired', null);
  if (status === 'fail' || status === 'system_fail') return report('failed', null);
  return report('in_progress', null);
}

/** `md5(base64(body) + key)` in hex: Cryptomus' signature of a call's body and of a webhook's. */
export const cryptomusSign = async (body: string, apiKey: string) => md5Hex(base64Utf8(body) + apiKey);

/** A JSON number kept as written, so it is encoded again as PHP would write the value it decodes to. */
class JsonNumber {
  constructor(readonly source: string) {}
}

/**
 * A JSON value as PHP's `json_encode($value, JSON_UNESCAPED_UNICODE)` writes it: what Cryptomus signs after removing
 * `sign`. Object keys keep their order; `/` is escaped as `\/`; non-ASCII is left as is, but U+2028 and U+2029 are
 * escaped; a number with a fraction or exponent is a PHP float, written in its shortest form (`1.50` → `1.5`,
 * `1.0` → `1`, checked against PHP 8.2's own json_encode: test/payments/gateways/cryptomus.test.ts).
 */
export function phpJsonEncode(value: unknown): string {
  if (value instanceof JsonNumber) return /[.eE]/.test(value.source) ? String(Number(value.source)) : value.source;
  if (typeof value === 'string') return JSON.stringify(value).replace(/\//g, '\\/').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
  if (Array.isArray(value)) return `[${value.map(phpJsonEncode).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    // PHP decodes an empty JSON object into an empty array, which it encodes as `[]`.
    const entries = Object.entries(value);
    return entries.length === 0 ? '[]' : `{${entries.map(([k, v]) => `${phpJsonEncode(k)}:${phpJsonEncode(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

type Reviver = (this: unknown, key: string, value: unknown, context?: { source?: string }) => unknown;
const keepNumbers: Reviver = (_key, value, context) => (typeof value === 'number' && context?.source !== undefined ? new JsonNumber(context.source) : value);

/** A webhook body parsed with its numbers kept as written (workerd's JSON.parse passes each one's source text). */
function parseWebhook(rawBody: string): Record<string, unknown> | null {
  try {
    const value = JSON.parse(rawBody, keepNumbers as Parameters<typeof JSON.parse>[1]) as unknown;
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

const plain = (value: unknown) => (value instanceof JsonNumber ? value.source : value);

export function cryptomusAdapter(slot: Slot): VendorAdapter {
  const signedCall = async (path: string, purpose: 'invoice' | 'lookup', payload: unknown) => {
    const body = JSON.stringify(payload);
    return callVendor(slot, purpose, {
      method: 'POST',
      path,
      headers: { merchant: slot.account, sign: await cryptomusSign(body, slot.apiKey), 'Content-Type': 'application/json' },
      body,
    });
  };
  return {
    provider: 'cryptomus',

    async createInvoice(request: InvoiceRequest): Promise<Invoice> {
      const seconds = Math.round((Date.parse(request.expiresAt) - request.nowMs) / 1000);
      const answer = await signedCall('/v1/payment', 'invoice', {
        amount: centsToDecimal(request.amountCents),
        currency: 'USD',
        order_id: request.reference,
        url_callback: request.notifyUrl,
        url_return: request.returnUrl,
        lifetime: Math.min(Math.max(seconds, MIN_LIFETIME), MAX_LIFETIME),
        ...(request.cryptoCurrency && { to_currency: request.cryptoCurrency }),
      });
      const { result } = readAnswer(slot, 'invoice', Created, answer);
      return { paymentUrl: result.url, invoiceId: result.uuid };
    },

    async parseNotification(rawBody): Promise<VendorNotification | null> {
      const body = parseWebhook(rawBody);
      const { sign, ...rest } = body ?? {};
      if (typeof sign !== 'string' || !(await timingSafeEqualStrings(sign.toLowerCase(), await cryptomusSign(phpJsonEncode(rest), slot.apiKey)))) {
        throw forgedNotification();
      }
      const [uuid, orderId, status] = [plain(rest.uuid), plain(rest.order_id), plain(rest.status)];
      // Only payment webhooks about an order of ours (static wallet top-ups carry no order of ours).
      if (typeof uuid !== 'string' || typeof orderId !== 'string' || typeof status !== 'string' || (rest.type !== undefined && rest.type !== 'payment')) {
        return null;
      }
      return { ...paymentReport(status, uuid, plain(rest.payment_amount_usd)), deposit: { reference: orderId } };
    },

    async lookup(target: LookupTarget): Promise<LookupAnswer> {
      const answer = await signedCall('/v1/payment/info', 'lookup', { uuid: target.invoiceId });
      const { result } = readAnswer(slot, 'lookup', z.object({ result: PaymentInfo }), answer);
      const status = result.status ?? result.payment_status;
      if (!status) throw gatewayUnavailable(slot, 'lookup', 'unexpected answer');
      return { reference: result.order_id, report: paymentReport(status, result.uuid, result.payment_amount_usd) };
    },
  };
}
