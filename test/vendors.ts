import { env } from 'cloudflare:test';
import { http, HttpResponse } from 'msw';
import { expect } from 'vitest';
import { call, hmacSha256Hex, type TestUser } from './helpers';
import { network } from './network';

// Payment vendors as the workerd suite fakes them: each slot's settings (vars per request), a Mock Service Worker
// stand-in for the vendor's API that records what it was sent, and notifications signed the way each vendor signs
// them, written here from the vendors' documentation (not from src/), so a test checks our code against the scheme.

export const VENDOR_VARS = {
  stripe: {
    GATEWAY_THREE_PROVIDER: 'stripe',
    GATEWAY_THREE_API_KEY: 'rk_test_stripe_key',
    GATEWAY_THREE_WEBHOOK_SECRET: 'whsec_test_endpoint_secret',
    GATEWAY_THREE_API_URL: 'https://stripe.vendor.test',
  },
  nowpayments: {
    GATEWAY_ONE_PROVIDER: 'nowpayments',
    GATEWAY_ONE_API_KEY: 'np-api-key',
    GATEWAY_ONE_WEBHOOK_SECRET: 'np-ipn-secret',
    GATEWAY_ONE_API_URL: 'https://nowpayments.vendor.test',
  },
  cryptomus: {
    GATEWAY_TWO_PROVIDER: 'cryptomus',
    GATEWAY_TWO_API_KEY: 'cryptomus-payment-key',
    GATEWAY_TWO_ACCOUNT: '8b03432e-385b-4670-8d06-064591096795',
    GATEWAY_TWO_API_URL: 'https://cryptomus.vendor.test',
  },
  btcpay: {
    GATEWAY_ONE_PROVIDER: 'btcpay',
    GATEWAY_ONE_API_KEY: 'btcpay-greenfield-key',
    GATEWAY_ONE_WEBHOOK_SECRET: 'btcpay-webhook-secret',
    GATEWAY_ONE_ACCOUNT: 'StoreAbc123',
    GATEWAY_ONE_API_URL: 'https://btcpay.vendor.test',
  },
} as const;

export type Vendor = keyof typeof VENDOR_VARS;
export const SLOT_OF: Record<Vendor, string> = { stripe: 'gateway_three', nowpayments: 'gateway_one', cryptomus: 'gateway_two', btcpay: 'gateway_one' };

/** The vendor's faked API base URL. */
export const apiUrl = (vendor: Vendor): string => Object.entries(VENDOR_VARS[vendor]).find(([name]) => name.endsWith('_API_URL'))![1];

/** The vars that put the vendor on its slot. */
export const varsFor = (vendor: Vendor): Record<string, string> => ({ ...VENDOR_VARS[vendor] });

export interface SeenRequest {
  method: string;
  url: string;
  headers: Headers;
  body: string;
}

/** A vendor endpoint answering `answer` (JSON, or a Response), recording each request it gets. */
export function fakeVendor(method: 'get' | 'post', url: string, answer: unknown | ((seen: SeenRequest) => Response | Promise<Response>)): SeenRequest[] {
  const seen: SeenRequest[] = [];
  network.use(
    http[method](url, async ({ request }) => {
      const record = { method: request.method, url: request.url, headers: request.headers, body: new TextDecoder().decode(await request.arrayBuffer()) };
      seen.push(record);
      return typeof answer === 'function' ? (answer as (s: SeenRequest) => Response)(record) : HttpResponse.json(answer as object);
    }),
  );
  return seen;
}

/** The invoice endpoint of each vendor (relative to its API URL) and a successful answer naming `page` and `id`. */
export const INVOICE_ENDPOINT: Record<Vendor, { path: string; answer: (page: string, id: string) => unknown }> = {
  stripe: { path: '/v1/checkout/sessions', answer: (url, id) => ({ id, object: 'checkout.session', url, payment_status: 'unpaid', status: 'open' }) },
  nowpayments: { path: '/v1/invoice', answer: (invoice_url, id) => ({ id, invoice_url, order_id: 'x', price_amount: '10' }) },
  cryptomus: { path: '/v1/payment', answer: (url, uuid) => ({ state: 0, result: { uuid, url, order_id: 'x', amount: '10.00', status: 'check' } }) },
  btcpay: { path: '/api/v1/stores/StoreAbc123/invoices', answer: (checkoutLink, id) => ({ id, checkoutLink, status: 'New' }) },
};

export async function depositRow(id: number) {
  return (await env.DB.prepare('SELECT * FROM deposits WHERE id = ?').bind(id).first<Record<string, any>>())!;
}

export async function depositCount(userId: number) {
  return (await env.DB.prepare('SELECT count(*) AS n FROM deposits WHERE user_id = ?').bind(userId).first<{ n: number }>())!.n;
}

/** A deposit on the vendor's slot with the vendor faked: returns it with its stored reference and invoice id. */
export async function vendorDeposit(vendor: Vendor, user: TestUser, amount = 10) {
  const invoiceId = `inv_${crypto.randomUUID().slice(0, 8)}`;
  const page = `https://pay.${vendor}.test/${invoiceId}`;
  const { path, answer } = INVOICE_ENDPOINT[vendor];
  const seen = fakeVendor('post', `${apiUrl(vendor)}${path}`, answer(page, invoiceId));
  const res = await call('/wallet/deposit', { key: user.key, body: { amount, gateway: SLOT_OF[vendor] }, vars: varsFor(vendor) });
  expect(res.status, res.text).toBe(200);
  expect(res.json.data.payment_url).toBe(page);
  const row = await depositRow(res.json.data.deposit_id);
  return { id: row.id as number, reference: row.reference as string, invoiceId, amount, seen };
}

/** Delivers a notification (raw body and headers) to the vendor's slot with its settings. */
export function notify(vendor: Vendor, body: string, headers: Record<string, string>, vars: Record<string, string> = varsFor(vendor)) {
  return call(`/webhooks/${SLOT_OF[vendor]}`, { method: 'POST', body, headers: { 'Content-Type': 'application/json', ...headers }, vars });
}

export async function gatewayEventsOf(depositId: number) {
  const res = await call(`/admin/gateway-events?deposit_id=${depositId}`, { admin: true });
  expect(res.status, res.text).toBe(200);
  return res.json.data as Array<{ status: string; amount: number | null; transaction_id: string; outcome: string; gateway: string; source: string }>;
}

export async function depositTransactions(depositId: number) {
  return (await env.DB.prepare("SELECT count(*) AS n FROM wallet_transactions WHERE deposit_id = ? AND type = 'deposit'").bind(depositId).first<{ n: number }>())!.n;
}

const hex = (bytes: ArrayBuffer) => [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, '0')).join('');

// --- Signing as each vendor does -----------------------------------------------------------------------------

/** Stripe: `Stripe-Signature: t=<unix>,v1=<hex HMAC-SHA256(whsec, "<t>.<body>")>`. */
export async function stripeSignature(body: string, { secret = VENDOR_VARS.stripe.GATEWAY_THREE_WEBHOOK_SECRET as string, t = Math.floor(Date.now() / 1000) } = {}) {
  return `t=${t},v1=${await hmacSha256Hex(secret, `${t}.${body}`)}`;
}

/** NOWPayments: `x-nowpayments-sig` = hex HMAC-SHA512(IPN secret, JSON.stringify of the body with keys sorted). */
export async function nowpaymentsSignature(payload: Record<string, unknown>, secret: string = VENDOR_VARS.nowpayments.GATEWAY_ONE_WEBHOOK_SECRET) {
  return hmacSha512Hex(secret, JSON.stringify(Object.fromEntries(Object.keys(payload).sort().map((k) => [k, payload[k]]))));
}

export async function hmacSha512Hex(secret: string, text: string) {
  const key = await crypto.subtle.importKey('raw', new TextEncoder().encode(secret), { name: 'HMAC', hash: 'SHA-512' }, false, ['sign']);
  return hex(await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(text)));
}

/** Cryptomus: `sign` = md5(base64(json_encode(body without sign)) . API key), the body re-encoded as PHP does. */
export async function cryptomusSigned(phpEncodedWithoutSign: string, apiKey: string = VENDOR_VARS.cryptomus.GATEWAY_TWO_API_KEY) {
  const bytes = new TextEncoder().encode(phpEncodedWithoutSign);
  const base64 = btoa(String.fromCharCode(...bytes));
  const sign = hex(await crypto.subtle.digest('MD5', new TextEncoder().encode(base64 + apiKey)));
  // Cryptomus sends the body with `sign` appended as the last member.
  return `${phpEncodedWithoutSign.slice(0, -1)},"sign":"${sign}"}`;
}

/** BTCPay: `BTCPay-Sig: sha256=<hex HMAC-SHA256(webhook secret, raw body)>`. */
export async function btcpaySignature(body: string, secret: string = VENDOR_VARS.btcpay.GATEWAY_ONE_WEBHOOK_SECRET) {
  return `sha256=${await hmacSha256Hex(secret, body)}`;
}

/** Gives a deposit the fixed reference a published or independently signed fixture names (references are unique). */
export async function useReference(depositId: number, reference: string) {
  await env.DB.prepare('UPDATE deposits SET reference = ? WHERE id = ?').bind(reference, depositId).run();
}

/** Each vendor's lookup endpoint, and its answer that the deposit is in the given vendor status. */
const LOOKUP: Record<Vendor, { method: 'get' | 'post'; url: (d: VendorDepositRef, paymentId: string) => string; answer: (d: VendorDepositRef, status: string) => unknown }> = {
  stripe: {
    method: 'get',
    url: (d) => `${apiUrl('stripe')}/v1/checkout/sessions/${d.invoiceId}`,
    answer: (d, status) => ({
      id: d.invoiceId,
      object: 'checkout.session',
      client_reference_id: d.reference,
      payment_status: status === 'expired' ? 'unpaid' : status,
      status: status === 'paid' ? 'complete' : status === 'expired' ? 'expired' : 'open',
      amount_total: Math.round(d.amount * 100),
      payment_intent: `pi_${d.reference}`,
    }),
  },
  nowpayments: {
    method: 'get',
    url: (_d, paymentId) => `${apiUrl('nowpayments')}/v1/payment/${paymentId}`,
    answer: (d, status) => ({ payment_id: 5077125051, payment_status: status, order_id: d.reference, price_amount: d.amount, actually_paid_at_fiat: 7.5 }),
  },
  cryptomus: {
    method: 'post',
    url: () => `${apiUrl('cryptomus')}/v1/payment/info`,
    answer: (d, status) => ({ state: 0, result: { uuid: d.invoiceId, order_id: d.reference, status, payment_amount_usd: String(d.amount) } }),
  },
  btcpay: {
    method: 'get',
    url: (d) => `${apiUrl('btcpay')}/api/v1/stores/StoreAbc123/invoices/${d.invoiceId}`,
    answer: (d, status) => ({ id: d.invoiceId, status, additionalStatus: status === 'Expired' ? 'PaidPartial' : 'None', metadata: { orderId: d.reference } }),
  },
};

export interface VendorDepositRef {
  reference: string;
  invoiceId: string;
  amount: number;
}

/** The vendor's lookup answering that the deposit is in `status` (its own word: `paid`, `finished`, `Settled`...). */
export function vendorSays(vendor: Vendor, deposit: VendorDepositRef, status: string, paymentId = '5077125051') {
  const { method, url, answer } = LOOKUP[vendor];
  return fakeVendor(method, url(deposit, paymentId), answer(deposit, status));
}

/** The paid status word of each vendor's lookup. */
export const PAID_STATUS: Record<Vendor, string> = { stripe: 'paid', nowpayments: 'finished', cryptomus: 'paid', btcpay: 'Settled' };

/** The vendor's signed "paid" notification for a deposit, reporting `amount` dollars (BTCPay reports none). */
export async function paidNotification(vendor: Vendor, deposit: VendorDepositRef & { invoiceId: string }, amount = deposit.amount): Promise<[string, Record<string, string>]> {
  if (vendor === 'stripe') {
    const session = { object: 'checkout.session', id: deposit.invoiceId, client_reference_id: deposit.reference, payment_status: 'paid', amount_total: Math.round(amount * 100), payment_intent: `pi_${deposit.reference}` };
    const body = JSON.stringify({ id: 'evt_1', type: 'checkout.session.completed', data: { object: session } });
    return [body, { 'Stripe-Signature': await stripeSignature(body) }];
  }
  if (vendor === 'nowpayments') {
    const payload = { payment_id: 5077125051, payment_status: 'finished', order_id: deposit.reference, price_amount: amount };
    return [JSON.stringify(payload), { 'x-nowpayments-sig': await nowpaymentsSignature(payload) }];
  }
  if (vendor === 'cryptomus') {
    const body = JSON.stringify({ type: 'payment', uuid: deposit.invoiceId, order_id: deposit.reference, status: 'paid', payment_amount_usd: amount.toFixed(2) });
    return [await cryptomusSigned(body), {}];
  }
  const body = JSON.stringify({ type: 'InvoiceSettled', invoiceId: deposit.invoiceId, storeId: 'StoreAbc123' });
  return [body, { 'BTCPay-Sig': await btcpaySignature(body) }];
}
