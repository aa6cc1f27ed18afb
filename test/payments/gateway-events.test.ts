import { env } from 'cloudflare:test';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createCheckedApp } from '../contract';
import { faultyD1 } from '../faults';
import { balanceOf, call, deliverWebhook, expectError, newDeposit, newUser, signedWebhook, unique, type TestDeposit } from '../helpers';

// The inbound gateway event log: every verified webhook as received, in the batch of its effect, and the operator's
// feed of it (`GET /admin/gateway-events`). Storage is shared between the tests of this file: each test makes its own
// users and deposits and reads the feed for them.

const paid = (deposit: TestDeposit, overrides: Record<string, unknown> = {}) => ({
  deposit_id: deposit.deposit_id,
  status: 'paid',
  amount: deposit.amount,
  transaction_id: unique('tx'),
  ...overrides,
});

const feed = (query = '') => call(`/admin/gateway-events${query}`, { admin: true });

async function eventsOf(depositId: number) {
  const res = await feed(`?deposit_id=${depositId}&per_page=100`);
  expect(res.status, res.text).toBe(200);
  return res.json.data as Array<Record<string, unknown>>;
}

const storedEvents = async () => (await env.DB.prepare('SELECT count(*) AS n FROM gateway_events').first<{ n: number }>())!.n;

afterEach(() => vi.restoreAllMocks());

describe('the gateway event log', () => {
  it('records a paid webhook with the wrong amount, answers 400 AMOUNT_MISMATCH and credits nothing', async () => {
    const user = await newUser();
    const deposit = await newDeposit(user, { amount: 25.5, gateway: 'gateway_two' });
    const event = paid(deposit, { amount: 25.51 });
    expectError(await deliverWebhook('gateway_two', event), 400, 'AMOUNT_MISMATCH');
    expect(await balanceOf(user)).toBe(0);
    expect((await call(`/wallet/deposits/${deposit.deposit_id}/status`, { key: user.key })).json.data.status).toBe('pending');
    const [logged] = await eventsOf(deposit.deposit_id);
    expect(logged).toEqual({
      id: expect.any(Number),
      gateway: 'gateway_two',
      deposit_id: deposit.deposit_id,
      status: 'paid',
      amount: 25.51,
      transaction_id: event.transaction_id,
      outcome: 'amount_mismatch',
      received_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      source: 'notification',
    });
    const row = await env.DB.prepare('SELECT amount_cents FROM gateway_events WHERE id = ?').bind(logged.id).first<{ amount_cents: number }>();
    expect(row!.amount_cents).toBe(2551);
  });

  it('records a credit, then its replays as duplicates, newest first', async () => {
    const user = await newUser();
    const deposit = await newDeposit(user, { amount: 10 });
    const event = paid(deposit);
    for (let i = 0; i < 3; i++) expect((await deliverWebhook('gateway_one', event)).status).toBe(200);
    expect(await balanceOf(user)).toBe(10);
    const logged = await eventsOf(deposit.deposit_id);
    expect(logged.map((e) => e.outcome)).toEqual(['duplicate', 'duplicate', 'credited']);
    expect(logged.every((e) => e.transaction_id === event.transaction_id && e.amount === 10)).toBe(true);
    const ids = logged.map((e) => e.id as number);
    expect([...ids].sort((a, b) => b - a)).toEqual(ids);
  });

  it('records closes, and verdicts that changed nothing as duplicates', async () => {
    const user = await newUser();
    const deposit = await newDeposit(user, { amount: 4 });
    const failed = paid(deposit, { status: 'failed' });
    expect((await deliverWebhook('gateway_one', failed)).json.data.status).toBe('failed');
    expect((await deliverWebhook('gateway_one', { ...failed, status: 'expired' })).json.data.status).toBe('failed');
    expect((await deliverWebhook('gateway_one', paid(deposit))).json.data.status).toBe('paid');
    expect((await eventsOf(deposit.deposit_id)).map((e) => [e.status, e.outcome])).toEqual([
      ['paid', 'credited'],
      ['expired', 'duplicate'],
      ['failed', 'closed'],
    ]);
  });

  it('records each of ten concurrent identical payments: one credited, nine duplicates', async () => {
    const user = await newUser();
    const deposit = await newDeposit(user, { amount: 40 });
    const signed = await signedWebhook('gateway_one', paid(deposit));
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => call('/webhooks/gateway_one', { method: 'POST', body: signed.body, headers: signed.headers })),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(10).fill(200));
    const outcomes = (await eventsOf(deposit.deposit_id)).map((e) => e.outcome);
    expect(outcomes.filter((o) => o === 'credited')).toHaveLength(1);
    expect(outcomes.filter((o) => o === 'duplicate')).toHaveLength(9);
    expect(await balanceOf(user)).toBe(40);
  });

  it('does not record an unknown deposit, another gateway\'s deposit, or a bad signature', async () => {
    const user = await newUser();
    const deposit = await newDeposit(user, { amount: 5, gateway: 'gateway_three' });
    const before = await storedEvents();
    expectError(await deliverWebhook('gateway_three', paid(deposit, { deposit_id: deposit.deposit_id + 1_000_000 })), 404, 'NOT_FOUND');
    expectError(await deliverWebhook('gateway_one', paid(deposit)), 404, 'NOT_FOUND');
    expectError(await deliverWebhook('gateway_three', paid(deposit), { secret: 'not-the-secret' }), 401, 'UNAUTHORIZED');
    expect(await storedEvents()).toBe(before);
  });

  it('counts an unverified delivery in the request log only', async () => {
    const user = await newUser();
    const deposit = await newDeposit(user, { amount: 5 });
    const signed = await signedWebhook('gateway_one', paid(deposit), { secret: 'forged' });
    const lines: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(' ')));
    const before = await storedEvents();
    const res = await createCheckedApp().request(
      '/api/v2/webhooks/gateway_one',
      { method: 'POST', body: signed.body, headers: signed.headers },
      { ...env, LOG_REQUESTS: 'true' },
    );
    expect(res.status).toBe(401);
    expect(lines.map((line) => JSON.parse(line))).toEqual([
      expect.objectContaining({ msg: 'request', route: '/api/v2/webhooks/:gateway', status: 401 }),
    ]);
    expect(await storedEvents()).toBe(before);
  });

  it('logs a duplicate even when a fault hid whether its batch ran (the row, not the deposit, settles it)', async () => {
    const user = await newUser();
    const deposit = await newDeposit(user, { amount: 6 });
    expect((await deliverWebhook('gateway_one', paid(deposit))).status).toBe(200);
    const replay = await signedWebhook('gateway_one', paid(deposit));
    const d1 = faultyD1(env.DB, 'lost-before-run');
    const res = await createCheckedApp().request('/api/v2/webhooks/gateway_one', { method: 'POST', body: replay.body, headers: replay.headers }, { ...env, DB: d1.db });
    expect(d1.fired()).toBe(true);
    expect(res.status).toBe(200);
    expect((await eventsOf(deposit.deposit_id)).map((e) => e.outcome)).toEqual(['duplicate', 'credited']);
    expect(await balanceOf(user)).toBe(6);
  });
});

describe('GET /admin/gateway-events', () => {
  it('filters by gateway and deposit, pages newest first with the pagination meta', async () => {
    const user = await newUser();
    const one = await newDeposit(user, { amount: 3, gateway: 'gateway_one' });
    const three = await newDeposit(user, { amount: 3, gateway: 'gateway_three' });
    for (let i = 0; i < 3; i++) await deliverWebhook('gateway_one', paid(one));
    await deliverWebhook('gateway_three', paid(three, { status: 'failed' }));

    const page1 = await feed(`?deposit_id=${one.deposit_id}&per_page=2`);
    expect(page1.json.meta).toEqual({ current_page: 1, per_page: 2, total: 3, total_pages: 2 });
    expect(page1.json.data.map((e: { outcome: string }) => e.outcome)).toEqual(['duplicate', 'duplicate']);
    const page2 = await feed(`?deposit_id=${one.deposit_id}&per_page=2&page=2`);
    expect(page2.json.data.map((e: { outcome: string }) => e.outcome)).toEqual(['credited']);
    expect((await feed(`?deposit_id=${one.deposit_id}&page=9`)).json).toMatchObject({ data: [], meta: { total: 3, current_page: 9 } });

    expect((await feed(`?gateway=gateway_three&deposit_id=${one.deposit_id}`)).json.meta.total).toBe(0);
    const byGateway = await feed('?gateway=gateway_three&per_page=100');
    expect(byGateway.json.data.every((e: { gateway: string }) => e.gateway === 'gateway_three')).toBe(true);
    expect(byGateway.json.data[0]).toMatchObject({ deposit_id: three.deposit_id, outcome: 'closed' });

    const all = await feed('?per_page=100');
    const stamps = all.json.data.map((e: { received_at: string; id: number }) => [e.received_at, e.id]);
    expect([...stamps].sort((a, b) => (a[0] === b[0] ? b[1] - a[1] : a[0] < b[0] ? 1 : -1))).toEqual(stamps);
    expect(all.json.meta.total).toBe(await storedEvents());
  });

  it.each([
    ['an unknown gateway', '?gateway=paypal', 'gateway'],
    ['the crypto alias (events carry the gateway name)', '?gateway=crypto', 'gateway'],
    ['a deposit_id that is not a positive integer', '?deposit_id=abc', 'deposit_id'],
    ['deposit_id 0', '?deposit_id=0', 'deposit_id'],
    ['per_page over 100', '?per_page=101', 'per_page'],
    ['page 0', '?page=0', 'page'],
  ])('rejects %s with 422', async (_label, query, field) => {
    const res = await feed(query);
    expectError(res, 422, 'VALIDATION_FAILED');
    expect(res.json.errors).toHaveProperty(field);
  });

  it('answers 401 without the admin token', async () => {
    expectError(await call('/admin/gateway-events'), 401, 'UNAUTHORIZED');
  });
});
