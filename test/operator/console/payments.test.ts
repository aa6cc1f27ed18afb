import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { newOperator } from '../../console-helpers';
import { signIn, visit } from '../../dashboard-helpers';
import { call, deliverWebhook, newDeposit, newUser, unique } from '../../helpers';
import { network } from '../../network';
import { apiUrl, fakeVendor, SLOT_OF, VENDOR_VARS, varsFor, type Vendor } from '../../vendors';

// The payment providers page (/dashboard/console/payments) and its admin twin: each slot's provider, availability (the
// missing setting by name, never a value), last notification, lookup and vendor failure, and "Check connection": one
// harmless authenticated read per vendor, tried against the fake vendors answering, refusing the key, and down.

/** Each vendor's check call as its API reference names it, and the header that must carry the key. */
const CHECK: Record<Vendor, { method: 'get' | 'post'; path: string; key: (seen: Headers) => string | null }> = {
  stripe: { method: 'get', path: '/v1/balance', key: (h) => h.get('authorization') },
  nowpayments: { method: 'get', path: '/v1/merchant/coins', key: (h) => h.get('x-api-key') },
  cryptomus: { method: 'post', path: '/v1/balance', key: (h) => h.get('merchant') && h.get('sign') },
  btcpay: { method: 'get', path: `/api/v1/stores/${VENDOR_VARS.btcpay.GATEWAY_ONE_ACCOUNT}`, key: (h) => h.get('authorization') },
};
const EXPECTED_KEY: Record<Vendor, RegExp> = {
  stripe: new RegExp(`^Bearer ${VENDOR_VARS.stripe.GATEWAY_THREE_API_KEY}$`),
  nowpayments: new RegExp(`^${VENDOR_VARS.nowpayments.GATEWAY_ONE_API_KEY}$`),
  cryptomus: /^[0-9a-f]{32}$/,
  btcpay: new RegExp(`^token ${VENDOR_VARS.btcpay.GATEWAY_ONE_API_KEY}$`),
};

const check = (vendor: Vendor) => call(`/admin/gateways/${SLOT_OF[vendor]}/check`, { admin: true, method: 'POST', vars: varsFor(vendor) });
const health = async (vendor: Vendor) =>
  ((await call('/admin/gateways', { admin: true, vars: varsFor(vendor) })).json.data as Array<Record<string, any>>).find((g) => g.gateway === SLOT_OF[vendor])!;

describe('Check connection, vendor by vendor', () => {
  for (const vendor of Object.keys(CHECK) as Vendor[]) {
    it(`${vendor}: answering → reachable (one authenticated read); refusing the key → key refused; down → unreachable; failures remembered`, async () => {
      const { method, path, key } = CHECK[vendor];
      const url = `${apiUrl(vendor)}${path}`;
      const seen = fakeVendor(method, url, {});
      const ok = await check(vendor);
      expect(ok.status, ok.text).toBe(200);
      expect(ok.json.data).toEqual({ gateway: SLOT_OF[vendor], provider: vendor, outcome: 'reachable', message: 'Reachable; the key was accepted.' });
      expect(seen).toHaveLength(1);
      expect(key(seen[0].headers)).toMatch(EXPECTED_KEY[vendor]);

      network.use(http[method](url, () => HttpResponse.json({ error: 'Invalid API key' }, { status: 401 })));
      const refused = await check(vendor);
      expect(refused.json.data.outcome).toBe('key_refused');
      expect(refused.json.data.message).toContain('refused the key (http 401)');
      const apiKey = Object.entries(VENDOR_VARS[vendor]).find(([name]) => name.endsWith('_API_KEY'))![1];
      expect(JSON.stringify(refused.json)).not.toContain(apiKey);
      expect((await health(vendor)).last_failure).toMatchObject({ purpose: 'check', failure: 'http 401' });

      network.use(http[method](url, () => HttpResponse.error()));
      const down = await check(vendor);
      expect(down.json.data.outcome).toBe('unreachable');
      expect((await health(vendor)).last_failure).toMatchObject({ purpose: 'check', failure: 'unreachable' });
      network.use(http[method](url, () => new HttpResponse('busy', { status: 503 })));
      expect((await check(vendor)).json.data).toMatchObject({ outcome: 'unreachable', message: expect.stringContaining('http 503') });
    });
  }

  it('a generic slot has no vendor to call; a vendor slot missing a setting says which, never a value; an unknown slot is a 422', async () => {
    expect((await call('/admin/gateways/gateway_one/check', { admin: true, method: 'POST' })).json.data.outcome).toBe('no_vendor');
    const vars = { GATEWAY_THREE_PROVIDER: 'stripe', GATEWAY_THREE_API_KEY: '', GATEWAY_THREE_WEBHOOK_SECRET: 'whsec_secret_value_here' };
    const res = await call('/admin/gateways/gateway_three/check', { admin: true, method: 'POST', vars });
    expect(res.json.data.outcome).toBe('not_available');
    expect(res.json.data.message).toContain('GATEWAY_THREE_API_KEY');
    const listed = (await call('/admin/gateways', { admin: true, vars })).json.data;
    expect(listed.map((g: { gateway: string }) => g.gateway)).toEqual(['gateway_one', 'gateway_two', 'gateway_three']);
    expect(listed[2]).toMatchObject({ provider: 'stripe', available: false, missing: 'GATEWAY_THREE_PROVIDER=stripe needs GATEWAY_THREE_API_KEY' });
    expect(JSON.stringify(listed)).not.toContain('whsec_secret_value_here');
    expect((await call('/admin/gateways/gateway_nine/check', { admin: true, method: 'POST' })).status).toBe(422);
    expect((await call('/admin/gateways')).status).toBe(401);
  });
});

describe('what the payments page remembers', () => {
  it('the last notification (time, outcome) and a deposit that failed at the vendor (the failure, after the response)', async () => {
    const user = await newUser();
    const { deposit_id: id } = await newDeposit(user, { amount: 3 });
    expect((await deliverWebhook('gateway_one', { deposit_id: id, status: 'paid', amount: 3, transaction_id: unique('tx') })).status).toBe(200);
    const generic = ((await call('/admin/gateways', { admin: true })).json.data as Array<Record<string, any>>)[0];
    expect(generic).toMatchObject({ gateway: 'gateway_one', provider: 'generic', available: true, missing: null, last_notification: { outcome: 'credited' } });
    expect(Date.parse(generic.last_notification.at)).toBeGreaterThan(Date.now() - 60_000);

    fakeVendor('post', `${apiUrl('stripe')}/v1/checkout/sessions`, () => new HttpResponse('down', { status: 502 }));
    const failed = await call('/wallet/deposit', { key: user.key, body: { amount: 10, gateway: 'gateway_three' }, vars: varsFor('stripe') });
    expect(failed.status).toBe(503);
    expect((await health('stripe')).last_failure).toMatchObject({ purpose: 'invoice', failure: 'http 502' });
  });
});

describe('the console page', () => {
  it('lists the slots with their provider; "Check connection" shows the vendor\'s answer; a user\'s session gets 404', async () => {
    const operator = await newOperator();
    const vars = varsFor('stripe');
    const pageRes = await visit('/dashboard/console/payments', { cookie: operator.cookie, vars });
    expect(pageRes.status).toBe(200);
    expect(pageRes.text).toContain('<h1>Payment providers</h1>');
    expect(pageRes.text).toContain('action="/dashboard/console/payments/gateway_three/check"');
    expect(pageRes.text).not.toContain(VENDOR_VARS.stripe.GATEWAY_THREE_API_KEY);
    fakeVendor('get', `${apiUrl('stripe')}/v1/balance`, {});
    const checked = await visit('/dashboard/console/payments/gateway_three/check', { cookie: operator.cookie, form: {}, vars });
    expect(checked.status).toBe(200);
    expect(checked.text).toContain('gateway_three (stripe): Reachable; the key was accepted.');
    network.use(http.get(`${apiUrl('stripe')}/v1/balance`, () => HttpResponse.json({}, { status: 401 })));
    const refused = await visit('/dashboard/console/payments/gateway_three/check', { cookie: operator.cookie, form: {}, vars });
    expect(refused.text).toMatch(/<p class="alert" role="alert">gateway_three \(stripe\): Reachable, but the vendor refused the key/);

    const user = await newUser();
    const cookie = await signIn(user.email);
    expect((await visit('/dashboard/console/payments', { cookie, vars })).status).toBe(404);
    // nobody but an operator makes the worker call a vendor
    network.resetHandlers();
    const seen = fakeVendor('get', `${apiUrl('stripe')}/v1/balance`, {});
    expect((await visit('/dashboard/console/payments/gateway_three/check', { cookie, form: {}, vars })).status).toBe(404);
    expect(seen).toHaveLength(0);
  });
});
