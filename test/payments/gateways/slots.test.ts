import { env } from 'cloudflare:test';
import { delay, http, HttpResponse } from 'msw';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createCheckedApp } from '../../contract';
import { freshIp, ORIGIN, signedInUser } from '../../dashboard-helpers';
import { call, expectError, newUser, signedWebhook } from '../../helpers';
import { network } from '../../network';
import { apiUrl, depositCount, fakeVendor, INVOICE_ENDPOINT, VENDOR_VARS, varsFor } from '../../vendors';

// The gateway slots as configuration makes them (contract: "Real payment providers behind the three gateway slots"):
// which are available, and what a deposit answers when the vendor fails.

afterEach(() => vi.restoreAllMocks());

const STRIPE_INVOICE = `${apiUrl('stripe')}${INVOICE_ENDPOINT.stripe.path}`;
const deposit = (user: { key: string }, vars: Record<string, string | RateLimit>, headers: Record<string, string> = {}) =>
  call('/wallet/deposit', { key: user.key, body: { amount: 10, gateway: 'gateway_three' }, vars, headers });

describe('which slots are available', () => {
  it('GET /wallet/gateways lists the three generic slots by default, in order', async () => {
    const user = await newUser();
    const res = await call('/wallet/gateways', { key: user.key });
    expect(res.status, res.text).toBe(200);
    expect(res.json.data).toEqual([
      { gateway: 'gateway_one', kind: 'crypto', provider: 'generic', crypto_currencies: ['USDT', 'USDC', 'BTC', 'ETH', 'LTC'] },
      { gateway: 'gateway_two', kind: 'crypto', provider: 'generic', crypto_currencies: ['USDT', 'USDC', 'BTC', 'ETH', 'LTC'] },
      { gateway: 'gateway_three', kind: 'usd', provider: 'generic', crypto_currencies: [] },
    ]);
    expect((await call('/wallet/gateways')).status).toBe(401);
    expect((await call('/wallet/gateways', { key: `sk_live_${'x'.repeat(40)}` })).status).toBe(401);
  });

  it('lists the real providers configured on their slots', async () => {
    const user = await newUser();
    const res = await call('/wallet/gateways', { key: user.key, vars: { ...varsFor('btcpay'), ...varsFor('cryptomus'), ...varsFor('stripe') } });
    expect(res.json.data.map((g: { gateway: string; provider: string }) => [g.gateway, g.provider])).toEqual([
      ['gateway_one', 'btcpay'],
      ['gateway_two', 'cryptomus'],
      ['gateway_three', 'stripe'],
    ]);
  });

  const broken: Array<[string, Record<string, string>, string]> = [
    ['a provider missing its webhook secret', { ...varsFor('stripe'), GATEWAY_THREE_WEBHOOK_SECRET: '' }, 'GATEWAY_THREE_WEBHOOK_SECRET'],
    ['a provider missing its API key', { ...varsFor('stripe'), GATEWAY_THREE_API_KEY: ' ' }, 'GATEWAY_THREE_API_KEY'],
    ['an unknown provider', { GATEWAY_THREE_PROVIDER: 'paypal' }, 'GATEWAY_THREE_PROVIDER'],
    ['a crypto provider on the USD slot', { ...varsFor('stripe'), GATEWAY_THREE_PROVIDER: 'nowpayments' }, 'GATEWAY_THREE_PROVIDER'],
    ['a generic slot without its secret', { GATEWAY_THREE_WEBHOOK_SECRET: '' }, 'GATEWAY_THREE_WEBHOOK_SECRET'],
  ];
  for (const [what, vars, setting] of broken) {
    it(`${what}: not listed, a deposit on it is 422 errors.gateway with nothing stored, the reason logged once without secrets`, async () => {
      const warn = vi.spyOn(console, 'warn');
      const user = await newUser();
      const listed = await call('/wallet/gateways', { key: user.key, vars });
      expect(listed.json.data.map((g: { gateway: string }) => g.gateway)).toEqual(['gateway_one', 'gateway_two']);
      const res = await deposit(user, vars);
      expectError(res, 422, 'VALIDATION_FAILED');
      expect(res.json.errors.gateway).toEqual(['gateway_three is not available.']);
      await deposit(user, vars);
      expect(await depositCount(user.id)).toBe(0);
      const logged = warn.mock.calls.map((args) => String(args[0])).filter((line) => line.includes('not available') && line.includes(setting));
      expect(logged.length).toBeLessThanOrEqual(1); // once per isolate: an earlier test may have logged it already
      for (const line of warn.mock.calls.map((args) => String(args[0]))) {
        for (const secret of Object.values(VENDOR_VARS.stripe)) if (secret.length > 8 && !secret.startsWith('https')) expect(line).not.toContain(secret);
      }
    });
  }

  it('a notification on a slot that is not available is 401', async () => {
    const signed = await signedWebhook('gateway_three', { deposit_id: 1, status: 'paid', amount: 10, transaction_id: 't' });
    const res = await call('/webhooks/gateway_three', { method: 'POST', body: signed.body, headers: signed.headers, vars: { GATEWAY_THREE_PROVIDER: 'paypal' } });
    expectError(res, 401, 'UNAUTHORIZED');
  });

  it('the default API URL is the vendor\'s own (Stripe: https://api.stripe.com)', async () => {
    const user = await newUser();
    const seen = fakeVendor('post', 'https://api.stripe.com/v1/checkout/sessions', INVOICE_ENDPOINT.stripe.answer('https://checkout.stripe.com/c/pay/cs_1', 'cs_1'));
    const res = await deposit(user, { ...varsFor('stripe'), GATEWAY_THREE_API_URL: '' });
    expect(res.status, res.text).toBe(200);
    expect(seen).toHaveLength(1);
  });
});

describe('the dashboard offers only available slots, labelled by what the buyer pays with', () => {
  async function walletPage(vars: Record<string, string>) {
    const user = await signedInUser();
    const res = await createCheckedApp().request(`${ORIGIN}/dashboard/wallet`, { headers: { Cookie: `dashboard_session=${user.cookie}`, 'CF-Connecting-IP': freshIp() } }, { ...env, ...vars });
    expect(res.status).toBe(200);
    return { user, html: await res.text() };
  }
  const options = (html: string) => [...html.matchAll(/<option value="(gateway_\w+)"[^>]*>([^<]+)<\/option>/g)].map((m) => [m[1], m[2]]);

  it('names crypto and card slots and leaves out a slot that is not available', async () => {
    expect(options((await walletPage({})).html)).toEqual([
      ['gateway_one', 'Crypto (1)'],
      ['gateway_two', 'Crypto (2)'],
      ['gateway_three', 'Card'],
    ]);
    expect(options((await walletPage({ GATEWAY_TWO_WEBHOOK_SECRET: '' })).html)).toEqual([
      ['gateway_one', 'Crypto'],
      ['gateway_three', 'Card'],
    ]);
  });

  it("Add funds on a Stripe slot sends the browser to Stripe's page", async () => {
    const user = await signedInUser();
    fakeVendor('post', STRIPE_INVOICE, INVOICE_ENDPOINT.stripe.answer('https://checkout.stripe.com/c/pay/cs_dash', 'cs_dash'));
    const form = new URLSearchParams({ amount: '10', gateway: 'gateway_three', crypto_currency: 'USDT', idempotency_key: crypto.randomUUID() });
    const res = await createCheckedApp().request(
      `${ORIGIN}/dashboard/wallet/deposit`,
      { method: 'POST', body: form, redirect: 'manual', headers: { Cookie: `dashboard_session=${user.cookie}`, Origin: ORIGIN, 'Content-Type': 'application/x-www-form-urlencoded', 'CF-Connecting-IP': freshIp() } },
      { ...env, ...varsFor('stripe') },
    );
    expect(res.status).toBe(303);
    expect(res.headers.get('Location')).toBe('https://checkout.stripe.com/c/pay/cs_dash');
  });
});

describe('a vendor that fails: nothing stored, the Idempotency-Key left free', () => {
  const unavailable: Array<[string, () => Response | Promise<Response>]> = [
    ['answers 500', () => HttpResponse.json({ error: { message: 'boom' } }, { status: 500 })],
    ['answers 502 with HTML', () => new HttpResponse('<html>bad gateway</html>', { status: 502 })],
    ['answers 401 (a wrong key)', () => HttpResponse.json({ error: { message: 'Invalid API Key provided: rk_test_****' } }, { status: 401 })],
    ['answers 403 (a key without the right)', () => HttpResponse.json({ error: { message: 'forbidden' } }, { status: 403 })],
    ['redirects', () => new HttpResponse(null, { status: 302, headers: { Location: 'https://elsewhere.test/' } })],
    ['answers 200 that is not JSON', () => new HttpResponse('OK', { status: 200 })],
    ['answers without the page URL', () => HttpResponse.json({ id: 'cs_1', object: 'checkout.session' })],
    ['answers a page URL that is not http(s)', () => HttpResponse.json({ id: 'cs_1', url: 'javascript:alert(1)' })],
    ['answers an unexpected shape', () => HttpResponse.json(['cs_1'])],
    ['cannot be reached', () => HttpResponse.error()],
  ];
  for (const [what, answer] of unavailable) {
    it(`the vendor ${what} → 503 GATEWAY_UNAVAILABLE with Retry-After`, async () => {
      const warn = vi.spyOn(console, 'warn');
      const user = await newUser();
      network.use(http.post(STRIPE_INVOICE, answer));
      const res = await deposit(user, varsFor('stripe'));
      expectError(res, 503, 'GATEWAY_UNAVAILABLE');
      expect(Number(res.headers.get('Retry-After'))).toBeGreaterThan(0);
      expect(await depositCount(user.id)).toBe(0);
      const logs = warn.mock.calls.map((args) => String(args[0])).join('\n');
      expect(logs).toContain('payment provider call failed');
      expect(logs).not.toContain(VENDOR_VARS.stripe.GATEWAY_THREE_API_KEY);
      expect(logs).not.toContain('boom');
    });
  }

  it('the vendor slower than 10 s → 503, nothing stored', async () => {
    const user = await newUser();
    network.use(http.post(STRIPE_INVOICE, async () => (await delay(12_000), HttpResponse.json({}))));
    const started = Date.now();
    const res = await deposit(user, varsFor('stripe'));
    expectError(res, 503, 'GATEWAY_UNAVAILABLE');
    expect(Date.now() - started).toBeLessThan(11_500);
    expect(await depositCount(user.id)).toBe(0);
  }, 20_000);

  it("another 4xx → 422 GATEWAY_REJECTED with the vendor's reason (at most 200 characters)", async () => {
    const user = await newUser();
    network.use(http.post(STRIPE_INVOICE, () => HttpResponse.json({ error: { message: 'Amount must be at least $0.50 usd' } }, { status: 400 })));
    const res = await deposit(user, varsFor('stripe'));
    expectError(res, 422, 'GATEWAY_REJECTED');
    expect(res.json.error).toBe('Amount must be at least $0.50 usd');
    network.use(http.post(STRIPE_INVOICE, () => HttpResponse.json({ message: 'x'.repeat(500) }, { status: 422 })));
    const long = await deposit(user, varsFor('stripe'));
    expectError(long, 422, 'GATEWAY_REJECTED');
    expect(long.json.error).toBe('x'.repeat(200));
    expect(await depositCount(user.id)).toBe(0);
  });

  it('a retry with the same Idempotency-Key after a failure creates the deposit; a replay then answers it again', async () => {
    const user = await newUser();
    const headers = { 'Idempotency-Key': `vendor-retry-${crypto.randomUUID()}` };
    network.use(http.post(STRIPE_INVOICE, () => HttpResponse.json({}, { status: 503 }), { once: true }));
    expectError(await deposit(user, varsFor('stripe'), headers), 503, 'GATEWAY_UNAVAILABLE');
    network.use(http.post(STRIPE_INVOICE, () => HttpResponse.json({ error: { message: 'no' } }, { status: 400 }), { once: true }));
    expectError(await deposit(user, varsFor('stripe'), headers), 422, 'GATEWAY_REJECTED');
    fakeVendor('post', STRIPE_INVOICE, INVOICE_ENDPOINT.stripe.answer('https://checkout.stripe.com/c/pay/cs_ok', 'cs_ok'));
    const created = await deposit(user, varsFor('stripe'), headers);
    expect(created.status, created.text).toBe(200);
    const replay = await deposit(user, varsFor('stripe'), headers);
    expect(replay.headers.get('Idempotent-Replayed')).toBe('true');
    expect(replay.json.data.deposit_id).toBe(created.json.data.deposit_id);
    expect(await depositCount(user.id)).toBe(1);
  });
});

describe('invoices opened before the credential is proved', () => {
  // The vendor call comes before the deposit's one batch, which is where the API key is proved; each made-up key has a
  // rate-limit bucket of its own, so only a per-IP limit stops a flood of fake keys from opening vendor invoices.
  const madeUpKey = () => ({ key: `sk_live_${crypto.randomUUID().replaceAll('-', '')}${'Q'.repeat(8)}` });

  it('made-up keys from one client IP open at most the limit of invoices, then 429 before the vendor is called', async () => {
    const seen = fakeVendor('post', STRIPE_INVOICE, INVOICE_ENDPOINT.stripe.answer('https://pay.stripe.test/x', 'cs_x'));
    const vars = { ...varsFor('stripe'), VENDOR_INVOICE_IP_RATE_LIMITER: env.TINY_RATE_LIMITER };
    const headers = { 'CF-Connecting-IP': freshIp() };
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await deposit(madeUpKey(), vars, headers)).status);
    expect(statuses).toEqual([401, 401, 401, 429, 429]);
    expect(seen).toHaveLength(3);
    const refused = await deposit(madeUpKey(), vars, headers);
    expect(refused.headers.get('Retry-After')).toBe('60');
  });

  it('a generic slot opens no vendor invoice and is not limited by it', async () => {
    const user = await newUser();
    const vars = { VENDOR_INVOICE_IP_RATE_LIMITER: env.TINY_RATE_LIMITER };
    const headers = { 'CF-Connecting-IP': freshIp() };
    for (let i = 0; i < 5; i++) expect((await deposit(user, vars, headers)).status).toBe(200);
  });
});
