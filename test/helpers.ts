import { env } from 'cloudflare:test';
import { createCheckedApp, SELF } from './contract';
import { expect } from 'vitest';

export const BASE = 'http://localhost/api/v2';
export const ADMIN_TOKEN = 'test-admin-token';

let sequence = 0;
export const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${++sequence}-${Math.random().toString(36).slice(2, 8)}`;

export interface CallOptions {
  method?: string;
  key?: string;
  admin?: boolean;
  body?: unknown;
  headers?: Record<string, string>;
  /** Vars that differ from vitest.config.ts for this request (e.g. `{ MAX_CANCELS_PER_DAY: '100' }`). */
  vars?: Record<string, string | RateLimit>;
}

let appWithVars: ReturnType<typeof createCheckedApp> | undefined;

/** One request to the worker under test, through its real fetch handler (or, with `vars`, the same app with those vars). */
export async function call(path: string, { method, key, admin, body, headers = {}, vars }: CallOptions = {}) {
  const init: RequestInit = { method: method ?? (body === undefined ? 'GET' : 'POST'), headers: { ...headers } };
  const h = init.headers as Record<string, string>;
  if (key) h['X-API-Key'] = key;
  if (admin) h.Authorization = `Bearer ${ADMIN_TOKEN}`;
  if (body !== undefined) {
    h['Content-Type'] ??= 'application/json';
    init.body = typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body);
  }
  const res = vars ? await (appWithVars ??= createCheckedApp()).request(`${BASE}${path}`, init, { ...env, ...vars }) : await SELF.fetch(`${BASE}${path}`, init);
  const text = await res.text();
  let json: any = undefined;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    // text bodies (exports) are checked through `text`
  }
  return { status: res.status, headers: res.headers, text, json };
}

export function expectError(res: { status: number; json: any }, status: number, code: string) {
  expect(res.status, JSON.stringify(res.json)).toBe(status);
  expect(res.json).toMatchObject({ success: false, code });
  expect(typeof res.json.error).toBe('string');
}

export interface TestUser {
  id: number;
  key: string;
  email: string;
}

export async function newUser({ balance = 0, name = 'Test User' }: { balance?: number; name?: string } = {}): Promise<TestUser> {
  const email = `${unique('user')}@example.com`;
  const res = await call('/admin/users', { admin: true, body: { name, email, password: 'correct horse battery' } });
  expect(res.status, res.text).toBe(201);
  const user = { id: res.json.data.id as number, key: res.json.data.api_key as string, email };
  if (balance > 0) await fund(user, balance);
  return user;
}

export async function fund(user: { id: number }, amount: number) {
  const res = await call(`/admin/users/${user.id}/balance-adjustments`, { admin: true, body: { amount, description: 'test funding' } });
  expect(res.status, res.text).toBe(201);
  return res.json.data;
}

export interface ProductOptions {
  price?: number;
  stock?: number;
  category?: string | null;
  allowedQuantities?: number[] | null;
  active?: boolean;
  /** false: final sale */
  cancellable?: boolean;
  name?: string;
}

export async function newProduct({ price = 1.5, stock = 0, category = null, allowedQuantities = null, active = true, cancellable = true, name }: ProductOptions = {}) {
  const sku = unique('SKU');
  const res = await call('/admin/products', {
    admin: true,
    body: { name: name ?? `Product ${sku}`, sku, category, price, allowed_quantities: allowedQuantities, active, cancellable },
  });
  expect(res.status, res.text).toBe(201);
  const product = res.json.data as { id: number; sku: string; name: string; price: number };
  if (stock > 0) await restock(product.id, stock);
  return product;
}

export async function restock(productId: number, count: number, prefix = unique('ITEM')) {
  const items = Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
  const res = await call(`/admin/products/${productId}/stock`, { admin: true, body: { items } });
  expect(res.status, res.text).toBe(201);
  return items;
}

export async function buy(user: TestUser, productId: number, quantity = 1) {
  return call('/orders', { key: user.key, body: { product_id: productId, quantity } });
}

export async function balanceOf(user: TestUser): Promise<number> {
  const res = await call('/wallet/balance', { key: user.key });
  expect(res.status).toBe(200);
  return res.json.data.balance;
}

// ---------------------------------------------------------------------------------------------------------------
// Deposits and payment gateway webhooks
// ---------------------------------------------------------------------------------------------------------------

/** The webhook secrets vitest.config.ts gives the worker, by gateway. */
export const WEBHOOK_SECRETS: Record<string, string> = {
  gateway_one: 'test-secret-one',
  gateway_two: 'test-secret-two',
  gateway_three: 'test-secret-three',
};

export interface SignedWebhookRequest {
  /** The raw body exactly as signed. */
  body: string;
  /** `Content-Type` and `X-Signature`. */
  headers: Record<string, string>;
  t: number;
  v1: string;
}

export async function hmacSha256Hex(secret: string, message: string): Promise<string> {
  const encoder = new TextEncoder();
  const key = await crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const mac = await crypto.subtle.sign('HMAC', key, encoder.encode(message));
  return [...new Uint8Array(mac)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * A webhook as the gateway would send it: `payload` as JSON (a string is taken as the raw body, unchanged) and
 * `X-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`. The secret defaults to the one the
 * worker has for `gateway`, `t` to now.
 */
export async function signedWebhook(
  gateway: string,
  payload: unknown,
  { secret = WEBHOOK_SECRETS[gateway] ?? WEBHOOK_SECRETS.gateway_one, t = Math.floor(Date.now() / 1000) }: { secret?: string; t?: number } = {},
): Promise<SignedWebhookRequest> {
  const body = typeof payload === 'string' ? payload : JSON.stringify(payload);
  const v1 = await hmacSha256Hex(secret, `${t}.${body}`);
  return { body, headers: { 'Content-Type': 'application/json', 'X-Signature': `t=${t},v1=${v1}` }, t, v1 };
}

export interface TestDeposit {
  deposit_id: number;
  amount: number;
  payment_method: string;
  status: string;
  payment_url: string;
  expires_at: string;
}

/** A pending deposit through `POST /wallet/deposit`. */
export async function newDeposit(user: TestUser, { amount = 10, gateway = 'gateway_one' }: { amount?: number; gateway?: string } = {}): Promise<TestDeposit> {
  const res = await call('/wallet/deposit', { key: user.key, body: { amount, gateway } });
  expect(res.status, res.text).toBe(200);
  return res.json.data as TestDeposit;
}

/** Signs `payload` with the gateway's secret (or `options.secret`) and delivers it to `POST /webhooks/{gateway}`. */
export async function deliverWebhook(gateway: string, payload: unknown, options: { secret?: string; t?: number } = {}) {
  const signed = await signedWebhook(gateway, payload, options);
  return call(`/webhooks/${gateway}`, { method: 'POST', body: signed.body, headers: signed.headers });
}

/**
 * Set a one-variant product's denormalised stock count out of step with its items (a corruption some tests stage):
 * the product's and its variant's, which a purchase guards on.
 */
export async function setStockCount(productId: number, count: number) {
  // The variant first: its trigger moves the product's count, which is then set as well.
  await env.DB.batch([
    env.DB.prepare('UPDATE product_variants SET stock_count = ? WHERE product_id = ?').bind(count, productId),
    env.DB.prepare('UPDATE products SET stock_count = ? WHERE id = ?').bind(count, productId),
  ]);
}
