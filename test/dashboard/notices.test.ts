import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/lib/crypto';
import { createCheckedApp } from '../contract';
import { idempotencyKeyIn, signedInUser, signIn, visit } from '../dashboard-helpers';
import { balanceOf, buy, newDeposit, newProduct, newUser } from '../helpers';

// What a person is told after a form: the key form sent twice, the one-line notices after Buy, Cancel and an ended
// session, and the way back from the local checkout page.

const NEW_KEY = /sk_live_[0-9A-Za-z]{40}/;
const noticeOf = (html: string) => /<p class="notice" role="status">([^<]*)<\/p>/.exec(html)?.[1];
const activeKeys = async (userId: number) =>
  (await env.DB.prepare('SELECT count(*) AS n FROM api_keys WHERE user_id = ? AND revoked_at IS NULL').bind(userId).first<{ n: number }>())!.n;

describe('the key form sent again', () => {
  it('creates one key; a reload of the answer says it was already created, without showing it', async () => {
    const user = await signedInUser();
    const page = await visit('/dashboard/keys', { cookie: user.cookie });
    const form = { name: 'laptop', idempotency_key: idempotencyKeyIn(page.text) };
    const first = await visit('/dashboard/keys', { cookie: user.cookie, form });
    expect(first.status).toBe(200);
    const key = NEW_KEY.exec(first.text)![0];

    const again = await visit('/dashboard/keys', { cookie: user.cookie, form });
    expect(again.status).toBe(200);
    expect(again.text).not.toMatch(NEW_KEY);
    expect(noticeOf(again.text)).toBe(
      `This form was already sent: the key &quot;laptop&quot; (sk_live_****${key.slice(-4)}) was created then and is not shown again. If you did not copy it, revoke it and create another.`,
    );
    expect(await activeKeys(user.id)).toBe(2); // the user's first key (newUser) and this one
    // The answer carries a fresh key for the next form, so creating another key still works.
    expect(idempotencyKeyIn(again.text)).not.toBe(form.idempotency_key);
  });

  it('concurrent sends create one key, and exactly one answer shows it', async () => {
    const user = await signedInUser();
    const form = { name: 'double click', idempotency_key: crypto.randomUUID() };
    const answers = await Promise.all([1, 2, 3].map(() => visit('/dashboard/keys', { cookie: user.cookie, form })));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(answers.filter((a) => NEW_KEY.test(a.text))).toHaveLength(1);
    expect(answers.filter((a) => a.text.includes('Key already created'))).toHaveLength(2);
    expect(await activeKeys(user.id)).toBe(2);
  });

  it('never stores the key to replay it: the record holds the key\'s row without the key or its hash', async () => {
    const user = await signedInUser();
    const form = { name: 'stored?', idempotency_key: crypto.randomUUID() };
    const key = NEW_KEY.exec((await visit('/dashboard/keys', { cookie: user.cookie, form })).text)![0];
    const record = await env.DB.prepare('SELECT * FROM idempotency_keys WHERE user_id = ? AND idempotency_key = ?').bind(user.id, form.idempotency_key).first();
    expect(record).not.toBeNull();
    const stored = JSON.stringify(record);
    expect(stored).not.toContain(key);
    expect(stored).not.toContain(await sha256Hex(key));
    expect(JSON.parse(record!.response_snapshot as string)).toEqual({ id: expect.any(Number), name: 'stored?', key_preview: `sk_live_****${key.slice(-4)}`, created_at: expect.any(String) });
  });

  it('a replay at the five-key limit still says "already created"; the same key with another name is refused', async () => {
    const user = await signedInUser();
    for (let i = 2; i <= 4; i++) await visit('/dashboard/keys', { cookie: user.cookie, form: { name: `key ${i}` } });
    const form = { name: 'fifth', idempotency_key: crypto.randomUUID() };
    expect((await visit('/dashboard/keys', { cookie: user.cookie, form })).text).toMatch(NEW_KEY);
    expect(await activeKeys(user.id)).toBe(5);
    const replay = await visit('/dashboard/keys', { cookie: user.cookie, form });
    expect([replay.status, replay.text.includes('Key already created'), NEW_KEY.test(replay.text)]).toEqual([200, true, false]);

    const reused = await visit('/dashboard/keys', { cookie: user.cookie, form: { ...form, name: 'another name' } });
    expect(reused.status).toBe(422);
    expect(reused.text).toContain('This idempotency_key was already used with a different request.');
    expect(await activeKeys(user.id)).toBe(5);
  });
});

describe('notices after Buy and Cancel', () => {
  it('Buy answers with "Charged $4.99" on the order, Cancel with "Refunded $4.99"', async () => {
    const user = await signedInUser({ balance: 10 });
    const product = await newProduct({ price: 4.99, stock: 2 });
    const shop = await visit('/dashboard/shop', { cookie: user.cookie });
    const bought = await visit('/dashboard/shop', { cookie: user.cookie, form: { product_id: String(product.id), quantity: '1', idempotency_key: idempotencyKeyIn(shop.text) } });
    expect(bought.status).toBe(303);
    expect(bought.location).toMatch(/^\/dashboard\/orders\/\d+\?notice=charged$/);
    const order = await visit(bought.location!, { cookie: user.cookie });
    expect(noticeOf(order.text)).toBe('Charged $4.99');

    const path = bought.location!.replace(/\?.*$/, '');
    const confirm = await visit(`${path}/cancel/confirm`, { cookie: user.cookie });
    const cancelled = await visit(`${path}/cancel`, { cookie: user.cookie, form: { idempotency_key: idempotencyKeyIn(confirm.text) } });
    expect(cancelled.location).toBe(`${path}?notice=refunded`);
    expect(noticeOf((await visit(cancelled.location!, { cookie: user.cookie })).text)).toBe('Refunded $4.99');
    expect(await balanceOf(user)).toBe(10);
    // The order's page without the parameter says nothing.
    expect(noticeOf((await visit(path, { cookie: user.cookie })).text)).toBeUndefined();
  });

  it('a crafted link can only state a fact about the user\'s own order: no refund claimed for a pending order', async () => {
    const user = await signedInUser({ balance: 10 });
    const product = await newProduct({ price: 2.5, stock: 2 });
    const order = (await buy(user, product.id, 2)).json.data;
    const at = async (query: string) => noticeOf((await visit(`/dashboard/orders/${order.id}${query}`, { cookie: user.cookie })).text);
    expect(await at('?notice=refunded')).toBeUndefined();
    expect(await at('?notice=charged')).toBe('Charged $5.00');
    for (const query of ['?notice=Refunded%20%24500', '?notice=toString', '?notice=__proto__', '?notice=']) expect(await at(query), query).toBeUndefined();
  });
});

describe('a sign-in page reached from an ended session', () => {
  const expire = async (token: string) =>
    env.DB.prepare('UPDATE sessions SET idle_expires_at = ? WHERE token_hash = ?').bind(new Date(Date.now() - 1000).toISOString(), await sha256Hex(token)).run();

  it('says "Your session ended; sign in again" and drops the stale cookie', async () => {
    const user = await newUser();
    const token = await signIn(user.email);
    await expire(token);
    const page = await visit('/dashboard/orders', { cookie: token });
    expect([page.status, page.location, page.setCookie]).toEqual([303, '/dashboard/sign-in?next=%2Fdashboard%2Forders', null]);
    const signInPage = await visit(page.location!, { cookie: token });
    expect(signInPage.status).toBe(200);
    expect(noticeOf(signInPage.text)).toBe('Your session ended; sign in again');
    expect(signInPage.setCookie).toMatch(/^dashboard_session=; Max-Age=0; Path=\/dashboard; HttpOnly; Secure; SameSite=Lax$/);
    // Once dropped, the page is the plain sign-in page again.
    expect(noticeOf((await visit(page.location!)).text)).toBeUndefined();
  });

  it('says nothing to a browser without a session, with a live one, with a malformed cookie, or after signing out', async () => {
    const user = await signedInUser();
    expect(noticeOf((await visit('/dashboard/sign-in?next=%2Fdashboard&session=ended&notice=ended')).text)).toBeUndefined();
    const live = await visit('/dashboard/sign-in', { cookie: user.cookie });
    expect([noticeOf(live.text), live.setCookie]).toEqual([undefined, null]);
    const malformed = await visit('/dashboard/sign-in', { cookie: 'not-a-token' });
    expect(noticeOf(malformed.text)).toBeUndefined();
    expect(malformed.setCookie).toContain('Max-Age=0');
    const signOut = await visit('/dashboard/sign-out', { cookie: user.cookie, form: {} });
    expect(signOut.setCookie).toContain('Max-Age=0');
    expect(noticeOf((await visit(signOut.location!)).text)).toBeUndefined();
  });
});

describe('the local checkout page', () => {
  it('links back to the wallet', async () => {
    const user = await newUser();
    const deposit = await newDeposit(user, { amount: 5 });
    const html = await (await createCheckedApp().request(`/pay/${deposit.deposit_id}`, {}, env)).text();
    expect(html).toContain('<a href="/dashboard/wallet">Back to your wallet</a>');
  });
});
