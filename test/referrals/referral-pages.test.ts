import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { newOperator } from '../console-helpers';
import { freshIp, idempotencyKeyIn, newEmail, sessionFrom, signedInUser, visit } from '../dashboard-helpers';
import { balanceOf, buy, call, newProduct, newUser } from '../helpers';

// The referral link, the dashboard's sign-up through it, the dashboard's and the console's Referrals pages.

const codeOf = async (key: string) => (await call('/user/referral', { key })).json.data.code as string;

async function signUp(form: Record<string, string>, cookie?: string) {
  const password = 'correct horse battery';
  const email = newEmail();
  const res = await visit('/dashboard/sign-up', {
    form: { name: 'New buyer', email, password, password_confirmation: password, ...form },
    headers: cookie ? { Cookie: cookie } : {},
    ip: freshIp(),
  });
  return { res, email };
}

const referredByOf = async (email: string) =>
  (await env.DB.prepare('SELECT (SELECT referral_code FROM users r WHERE r.id = u.referred_by) AS code FROM users u WHERE email = ?').bind(email).first<{ code: string | null }>())?.code;

describe('the referral link and the sign-up', () => {
  it('/r/<code> sets a first-party cookie for 30 days and opens the shop; a malformed code sets none', async () => {
    const referrer = await newUser();
    const code = await codeOf(referrer.key);
    const res = await visit(`/r/${code.toLowerCase()}`);
    expect(res.status).toBe(302);
    expect(res.location).toBe('/shop');
    expect(res.setCookie).toMatch(new RegExp(`^ref=${code}; Max-Age=2592000; Path=/; HttpOnly; Secure; SameSite=Lax`));
    const bad = await visit('/r/not-a-code');
    expect([bad.status, bad.location, bad.setCookie]).toEqual([302, '/shop', null]);
  });

  it('a sign-up with the cookie records the referrer once; the form shows the code', async () => {
    const referrer = await newUser();
    const code = await codeOf(referrer.key);
    const form = await visit('/dashboard/sign-up', { headers: { Cookie: `ref=${code}` } });
    expect(form.text).toContain(`value="${code}"`);
    const { res, email } = await signUp({}, `ref=${code}`);
    expect(res.status, res.text).toBe(303);
    expect(await referredByOf(email)).toBe(code);
  });

  it('a typed code records the referrer; a typed code nobody has is refused on its field; a stale cookie records nothing', async () => {
    const referrer = await newUser();
    const code = await codeOf(referrer.key);
    const typed = await signUp({ referral_code: code.toLowerCase() });
    expect(typed.res.status, typed.res.text).toBe(303);
    expect(await referredByOf(typed.email)).toBe(code);
    const unknown = await signUp({ referral_code: '0000000000000000' });
    expect(unknown.res.status).toBe(422);
    expect(unknown.res.text).toContain('No user has this referral code.');
    expect(await referredByOf(unknown.email)).toBeUndefined();
    const stale = await signUp({}, 'ref=0000000000000000');
    expect(stale.res.status, stale.res.text).toBe(303);
    expect(await referredByOf(stale.email)).toBeNull();
  });
});

describe('the dashboard Referrals page', () => {
  it('shows the link, the balances and the earnings; "Move to wallet" moves once, even re-sent', async () => {
    await call('/admin/settings/referrals', { admin: true, method: 'PUT', body: { percent: 10, hold_days: 0, min_transfer: 1 } });
    const referrer = await signedInUser();
    const code = await codeOf(referrer.key);
    const { res, email } = await signUp({ referral_code: code });
    expect(res.status).toBe(303);
    const buyerCookie = sessionFrom(res.setCookie)!;
    const buyerId = (await env.DB.prepare('SELECT id FROM users WHERE email = ?').bind(email).first<{ id: number }>())!.id;
    await call(`/admin/users/${buyerId}/balance-adjustments`, { admin: true, body: { amount: 50, description: 'x' } });
    const product = await newProduct({ price: 20, stock: 1 });
    const shop = await visit('/dashboard/shop', { cookie: buyerCookie });
    const bought = await visit('/dashboard/shop', { cookie: buyerCookie, form: { product_id: String(product.id), quantity: '1', idempotency_key: idempotencyKeyIn(shop.text) } });
    expect(bought.status, bought.text).toBe(303);

    let page = await visit('/dashboard/referrals', { cookie: referrer.cookie });
    expect(page.status).toBe(200);
    expect(page.text).toContain(`value="http://localhost/r/${code}"`);
    expect(page.text).toContain('<dt>Pending</dt><dd><span class="money">$2.00</span></dd>');
    const key = idempotencyKeyIn(page.text);
    const early = await visit('/dashboard/referrals/transfer', { cookie: referrer.cookie, form: { idempotency_key: key } });
    expect(early.status).toBe(400);
    expect(early.text).toContain('below the minimum transfer');

    // The order's hold (24 hours) over, as the clock and the scheduled job would make it.
    await env.DB.prepare(`UPDATE orders SET status = 'completed' WHERE user_id = ?`).bind(buyerId).run();
    await env.DB.prepare(`UPDATE referral_earnings SET available_at = '2020-01-01T00:00:00.000Z' WHERE referrer_id = ?`).bind(referrer.id).run();
    page = await visit('/dashboard/referrals', { cookie: referrer.cookie });
    const again = idempotencyKeyIn(page.text);
    for (let i = 0; i < 2; i++) {
      const moved = await visit('/dashboard/referrals/transfer', { cookie: referrer.cookie, form: { idempotency_key: again } });
      expect(moved.status).toBe(303);
      expect(moved.location).toBe('/dashboard/referrals?done=referrals_moved');
    }
    expect(await balanceOf(referrer)).toBe(2);
  });
});

describe('the console Referrals page', () => {
  it('lists referrers with what they earned, saves the settings, and switches one off (held earnings reversed)', async () => {
    const operator = await newOperator();
    await call('/admin/settings/referrals', { admin: true, method: 'PUT', body: { percent: 10, hold_days: 14 } });
    const referrer = await newUser();
    const buyerRes = await call('/admin/users', { admin: true, body: { name: 'B', email: newEmail(), password: 'correct horse battery', referral_code: await codeOf(referrer.key) } });
    const buyer = { id: buyerRes.json.data.id, key: buyerRes.json.data.api_key, email: '' };
    await call(`/admin/users/${buyer.id}/balance-adjustments`, { admin: true, body: { amount: 50, description: 'x' } });
    const product = await newProduct({ price: 30, stock: 1 });
    expect((await buy(buyer, product.id)).status).toBe(201);

    const page = await visit('/dashboard/console/referrals', { cookie: operator.cookie });
    expect(page.status).toBe(200);
    expect(page.text).toContain(`/dashboard/console/users/${referrer.id}`);
    expect(page.text).toContain('$3.00');

    const saved = await visit('/dashboard/console/referrals/settings', { cookie: operator.cookie, form: { percent: '12', hold_days: '7', min_transfer: '$5' } });
    expect(saved.status, saved.text).toBe(303);
    expect((await call('/admin/settings/referrals', { admin: true })).json.data).toEqual({ percent: 12, hold_days: 7, min_transfer: 5 });
    const refused = await visit('/dashboard/console/referrals/settings', { cookie: operator.cookie, form: { percent: '60', hold_days: '7', min_transfer: '5' } });
    expect(refused.status).toBe(422);

    const off = await visit(`/dashboard/console/referrals/users/${referrer.id}/off`, { cookie: operator.cookie, form: {} });
    expect(off.status).toBe(303);
    const earnings = (await call('/user/referral/earnings', { key: referrer.key })).json.data;
    expect(earnings.map((e: { status: string; amount: number }) => [e.status, e.amount])).toEqual([['reversed', 0]]);
    expect((await visit('/dashboard/console/referrals', { cookie: operator.cookie })).text).toContain('status-off');
    const audit = await env.DB.prepare(`SELECT count(*) AS n FROM audit_log WHERE action = 'user.referrals_off' AND target = ?`).bind(`user:${referrer.id}`).first<{ n: number }>();
    expect(audit!.n).toBe(1);
  });
});
