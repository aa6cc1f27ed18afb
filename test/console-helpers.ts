import { env } from 'cloudflare:test';
import { expect } from 'vitest';
import { signIn } from './dashboard-helpers';
import { buy, call, newDeposit, newProduct, newUser, unique, type TestUser } from './helpers';

// The operator console's test fixtures (test/operator/console/console.test.ts, test/round-trips.test.ts).

export type Operator = TestUser & { cookie: string };

export async function newOperator(): Promise<Operator> {
  const user = await newUser();
  const res = await call(`/admin/users/${user.id}`, { admin: true, method: 'PATCH', body: { role: 'operator' } });
  expect(res.status, res.text).toBe(200);
  return { ...user, cookie: await signIn(user.email) };
}

interface Fixtures {
  buyer: TestUser;
  productId: number;
  orderId: number;
  depositId: number;
  /** An unsold item of the product. */
  stockItemId: number;
  /** The buyer's order receipt (an email of the outbox). */
  emailId: string;
}

export async function consoleFixtures(): Promise<Fixtures> {
  const buyer = await newUser({ balance: 20 });
  const product = await newProduct({ price: 1, stock: 5 });
  const order = await buy(buyer, product.id, 1);
  const deposit = await newDeposit(buyer);
  const item = await env.DB.prepare("SELECT id FROM stock_items WHERE product_id = ? AND status = 'available' ORDER BY id LIMIT 1").bind(product.id).first<{ id: number }>();
  const email = await env.DB.prepare("SELECT id FROM emails WHERE to_address = ? AND template = 'order_receipt'").bind(buyer.email).first<{ id: string }>();
  return { buyer, productId: product.id, orderId: order.json.data.id, depositId: deposit.deposit_id, stockItemId: item!.id, emailId: email!.id };
}

export const CONSOLE_PAGES: Array<[string, (f: Fixtures) => string]> = [
  ['overview', () => '/dashboard/console'],
  ['products', () => '/dashboard/console/products'],
  ['a product', (f) => `/dashboard/console/products/${f.productId}`],
  ['orders', () => '/dashboard/console/orders'],
  ['an order', (f) => `/dashboard/console/orders/${f.orderId}`],
  ['users', () => '/dashboard/console/users'],
  ['a user', (f) => `/dashboard/console/users/${f.buyer.id}`],
  ['deposits', () => '/dashboard/console/deposits'],
  ['revoked items', () => '/dashboard/console/revoked-items'],
  ['audit log', () => '/dashboard/console/audit'],
  ['emails', (f) => `/dashboard/console/emails?to=${encodeURIComponent(f.buyer.email)}&template=order_receipt&status=queued`],
  ['coupons', () => '/dashboard/console/coupons'],
  ['payments', () => '/dashboard/console/payments'],
  ['Mark paid confirmation', (f) => `/dashboard/console/deposits/${f.depositId}/mark-paid/confirm`],
  ['Adjust balance confirmation', (f) => `/dashboard/console/users/${f.buyer.id}/balance/confirm?amount=1&description=x`],
  ['Disable account confirmation', (f) => `/dashboard/console/users/${f.buyer.id}/disable/confirm`],
  ['orders CSV', () => '/dashboard/console/exports/orders.csv?from=2020-01-01'],
  ['Cancel order confirmation', (f) => `/dashboard/console/orders/${f.orderId}/cancel/confirm`],
  ['Delete item confirmation', (f) => `/dashboard/console/products/${f.productId}/items/${f.stockItemId}/delete/confirm`],
  ['an email', (f) => `/dashboard/console/emails/${f.emailId}`],
  ['claims', () => '/dashboard/console/claims'],
  ['blocklist', () => '/dashboard/console/blocklist'],
  ['Refund confirmation', (f) => `/dashboard/console/orders/${f.orderId}/refund/confirm?amount=0.5&reason=x`],
  ['Put on hold confirmation', (f) => `/dashboard/console/users/${f.buyer.id}/hold/confirm?reason=x`],
  ['Lift hold confirmation', (f) => `/dashboard/console/users/${f.buyer.id}/hold/lift/confirm`],
  ['documents', (f) => `/dashboard/console/documents?type=invoice&user_id=${f.buyer.id}&from=2020-01-01`],
  ['invoicing', () => '/dashboard/console/invoicing'],
  ['documents CSV', () => '/dashboard/console/exports/documents.csv?from=2020-01-01'],
  ['referrals', () => '/dashboard/console/referrals'],
  ['Switch off referrals confirmation', (f) => `/dashboard/console/referrals/users/${f.buyer.id}/off/confirm`],
];

export const CONSOLE_POSTS: Array<[string, (f: Fixtures) => [string, Record<string, string>]]> = [
  ['New product', () => ['/dashboard/console/products', { name: 'Sneaky', sku: unique('SNEAK'), price: '1', active: 'on', idempotency_key: crypto.randomUUID() }]],
  ['Save product', (f) => [`/dashboard/console/products/${f.productId}`, { name: 'Renamed', sku: unique('SNEAK'), price: '9' }]],
  ['Upload stock', (f) => [`/dashboard/console/products/${f.productId}/stock`, { items: 'SNEAKY-ITEM', idempotency_key: crypto.randomUUID() }]],
  ['Adjust balance', (f) => [`/dashboard/console/users/${f.buyer.id}/balance`, { amount: '1000', description: 'free money', idempotency_key: crypto.randomUUID() }]],
  ['Disable account', (f) => [`/dashboard/console/users/${f.buyer.id}/disable`, {}]],
  ['Enable account', (f) => [`/dashboard/console/users/${f.buyer.id}/enable`, {}]],
  ['Create password reset link', (f) => [`/dashboard/console/users/${f.buyer.id}/password-reset`, {}]],
  ['Mark paid', (f) => [`/dashboard/console/deposits/${f.depositId}/mark-paid`, {}]],
  ['Create coupon', () => ['/dashboard/console/coupons', { code: unique('SNEAK').replace(/[^A-Za-z0-9-]/g, '').slice(-30), percent_off: '100', active: 'on', idempotency_key: crypto.randomUUID() }]],
  ['Save discount', (f) => [`/dashboard/console/users/${f.buyer.id}/discount`, { discount_percent: '90' }]],
  ['Check connection', () => ['/dashboard/console/payments/gateway_one/check', {}]],
  ['Refund', (f) => [`/dashboard/console/orders/${f.orderId}/refund`, { amount: '0.5', reason: 'sneaky', idempotency_key: crypto.randomUUID() }]],
  ['Cancel order', (f) => [`/dashboard/console/orders/${f.orderId}/cancel`, { idempotency_key: crypto.randomUUID() }]],
  ['Delete item', (f) => [`/dashboard/console/products/${f.productId}/items/${f.stockItemId}/delete`, { idempotency_key: crypto.randomUUID() }]],
  ['Put on hold', (f) => [`/dashboard/console/users/${f.buyer.id}/hold`, { reason: 'sneaky' }]],
  ['Lift hold', (f) => [`/dashboard/console/users/${f.buyer.id}/hold/lift`, {}]],
  ['Add blocklist rule', () => ['/dashboard/console/blocklist', { type: 'email', value: `${unique('sneaky')}@example.com` }]],
  ['Save invoicing settings', () => ['/dashboard/console/invoicing', { legal_name: 'Sneaky Ltd', tax_mode: 'none' }]],
  ['Save referral settings', () => ['/dashboard/console/referrals/settings', { percent: '0', hold_days: '14', min_transfer: '10' }]],
  ['Switch off referrals', (f) => [`/dashboard/console/referrals/users/${f.buyer.id}/off`, {}]],
  ['Switch on referrals', (f) => [`/dashboard/console/referrals/users/${f.buyer.id}/on`, {}]],
];

