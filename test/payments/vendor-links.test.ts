import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { createCheckedApp } from '../contract';
import { call, expectError, newUser } from '../helpers';
import { signedInUser, visit } from '../dashboard-helpers';
import { apiUrl, depositCount, fakeVendor, INVOICE_ENDPOINT, SLOT_OF, varsFor } from '../vendors';

// Vendor notification and return URLs come from PUBLIC_BASE_URL, never from the request's Host, which a client
// chooses (contract: "Links and defaults"); without PUBLIC_BASE_URL a vendor deposit is refused and nothing stored.

const SHOP = 'https://shop.example';

function fakeInvoice() {
  const invoiceId = `inv_${crypto.randomUUID().slice(0, 8)}`;
  const { path, answer } = INVOICE_ENDPOINT.nowpayments;
  return fakeVendor('post', `${apiUrl('nowpayments')}${path}`, answer(`https://pay.nowpayments.test/${invoiceId}`, invoiceId));
}

describe('vendor links', () => {
  it('the API: a request to another Host still tells the vendor PUBLIC_BASE_URL', async () => {
    const user = await newUser();
    const seen = fakeInvoice();
    const app = createCheckedApp();
    const res = await app.request(
      'https://attacker.example/api/v2/wallet/deposit',
      { method: 'POST', headers: { 'X-API-Key': user.key, 'Content-Type': 'application/json' }, body: JSON.stringify({ amount: 10, gateway: SLOT_OF.nowpayments }) },
      { ...env, ...varsFor('nowpayments'), PUBLIC_BASE_URL: SHOP },
    );
    expect(res.status, await res.clone().text()).toBe(200);
    expect(JSON.parse(seen[0].body)).toMatchObject({ ipn_callback_url: `${SHOP}/api/v2/webhooks/gateway_one`, success_url: `${SHOP}/dashboard/wallet` });
  });

  it('without PUBLIC_BASE_URL: 503 GATEWAY_UNAVAILABLE, the vendor is not asked, nothing stored', async () => {
    const user = await newUser();
    const seen = fakeInvoice();
    const res = await call('/wallet/deposit', { key: user.key, body: { amount: 10, gateway: SLOT_OF.nowpayments }, vars: { ...varsFor('nowpayments'), PUBLIC_BASE_URL: '' } });
    expectError(res, 503, 'GATEWAY_UNAVAILABLE');
    expect(seen).toHaveLength(0);
    expect(await depositCount(user.id)).toBe(0);
  });

  it("the dashboard's wallet form too", async () => {
    const user = await signedInUser();
    const seen = fakeInvoice();
    const page = await visit('/dashboard/wallet', { cookie: user.cookie });
    const key = /name="idempotency_key" value="([^"]+)"/.exec(page.text)?.[1] ?? crypto.randomUUID();
    const res = await visit('/dashboard/wallet/deposit', {
      cookie: user.cookie,
      origin: 'http://localhost',
      form: { amount: '10', gateway: SLOT_OF.nowpayments, idempotency_key: key },
      vars: { ...varsFor('nowpayments'), PUBLIC_BASE_URL: SHOP },
    });
    expect(res.status, res.text.slice(0, 300)).toBeLessThan(400);
    expect(JSON.parse(seen[0].body)).toMatchObject({ ipn_callback_url: `${SHOP}/api/v2/webhooks/gateway_one`, success_url: `${SHOP}/dashboard/wallet` });
  });
});

describe('wrangler.toml', () => {
  it('ships no localhost origin as a production value (local values live in .dev.vars)', async () => {
    const { default: toml } = await import('../../wrangler.toml?raw');
    const vars = /^\[vars\]\n([\s\S]*?)(?=^\[)/m.exec(toml)?.[1] ?? '';
    const values = [...vars.matchAll(/^([A-Z][A-Z0-9_]*)\s*=\s*"([^"]*)"/gm)].map((m) => [m[1], m[2]]);
    expect(values.map(([name]) => name)).toEqual(expect.arrayContaining(['PUBLIC_BASE_URL', 'PAYMENT_BASE_URL']));
    expect(values.filter(([, value]) => /localhost|127\.0\.0\.1|\[::1\]/i.test(value))).toEqual([]);
  });
});
