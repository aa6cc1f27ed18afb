import { env } from 'cloudflare:test';
import { http, HttpResponse } from 'msw';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SQLiteAsyncDialect } from 'drizzle-orm/sqlite-core';
import { readConfig, type Bindings } from '../../src/env';
import { runScheduledJobs } from '../../src/services/operator/jobs';
import { pollCandidates } from '../../src/services/payments/poll';
import { useInvocationOptions } from '../contract';
import { balanceOf, call, expectError, newUser, type TestUser } from '../helpers';
import { network } from '../network';
import { productionD1, seededRandom } from '../production-d1';
import {
  apiUrl,
  depositRow,
  depositTransactions,
  gatewayEventsOf,
  notify,
  nowpaymentsSignature,
  PAID_STATUS,
  paidNotification,
  varsFor,
  vendorDeposit,
  vendorSays,
  type Vendor,
} from '../vendors';

// The contract's "Payments that cannot be lost": the vendor's own API is the truth, asked three ways (before a
// notification credits, on the operator's demand, on a schedule), all applied through the same guarded batches.

const MINUTE = 60_000;
const VENDORS: Vendor[] = ['stripe', 'nowpayments', 'cryptomus', 'btcpay'];
type Deposit = Awaited<ReturnType<typeof vendorDeposit>>;

let restore: (() => void) | undefined;
afterEach(() => restore?.());

/** Read from the database itself, past the faults the requests see. */
const storedBalanceCents = async (user: TestUser) =>
  (await env.DB.prepare('SELECT balance_cents AS b FROM users WHERE id = ?').bind(user.id).first<{ b: number }>())!.b;

const refresh = (id: number, vendor: Vendor, headers: Record<string, string> = {}) =>
  call(`/admin/deposits/${id}/refresh`, { method: 'POST', admin: true, vars: varsFor(vendor), headers });

const runJobs = (vendor: Vendor | Record<string, string>, nowMs: number, extra: Partial<Bindings> = {}) =>
  runScheduledJobs({ ...env, ...(typeof vendor === 'string' ? varsFor(vendor) : vendor), ...extra } as Bindings, nowMs);

/** Other tests' open deposits of this vendor would compete for the poll's places: mark them asked until `untilMs`. */
const setAside = (vendor: Vendor, untilMs: number) =>
  env.DB.prepare('UPDATE deposits SET last_checked_at = ? WHERE provider = ?').bind(new Date(untilMs).toISOString(), vendor).run();

/** NOWPayments is looked up by a payment id, learnt from a notification: an early IPN ("waiting") gives it. */
async function learnPaymentId(vendor: Vendor, deposit: Deposit) {
  if (vendor !== 'nowpayments') return;
  const payload = { payment_id: 5077125051, payment_status: 'waiting', order_id: deposit.reference, price_amount: deposit.amount };
  expect((await notify('nowpayments', JSON.stringify(payload), { 'x-nowpayments-sig': await nowpaymentsSignature(payload) })).status).toBe(200);
}

async function lostPayment(vendor: Vendor): Promise<{ user: TestUser; deposit: Deposit }> {
  const user = await newUser();
  const deposit = await vendorDeposit(vendor, user);
  await learnPaymentId(vendor, deposit);
  return { user, deposit };
}

for (const vendor of VENDORS) {
  describe(`${vendor}: a payment whose notification was lost`, () => {
    it('is credited by POST /admin/deposits/{id}/refresh, once; a second refresh is a duplicate', async () => {
      const { user, deposit } = await lostPayment(vendor);
      vendorSays(vendor, deposit, PAID_STATUS[vendor]);
      const res = await refresh(deposit.id, vendor);
      expect(res.status, res.text).toBe(200);
      expect(res.json.data).toMatchObject({ vendor_status: PAID_STATUS[vendor], outcome: 'credited', deposit: { id: deposit.id, status: 'paid' } });
      expect(res.json.data.deposit.last_checked_at).toMatch(/Z$/);
      const again = await refresh(deposit.id, vendor);
      expect(again.json.data.outcome).toBe('duplicate');
      expect(await balanceOf(user)).toBe(10);
      const logged = (await gatewayEventsOf(deposit.id)).filter((e) => e.outcome === 'credited' || e.outcome === 'duplicate');
      expect(logged).toMatchObject([{ outcome: 'credited', source: 'lookup', status: PAID_STATUS[vendor] }]);
    });

    it('is credited by the scheduled job alone', async () => {
      await setAside(vendor, Date.now() + 6 * MINUTE);
      const { user, deposit } = await lostPayment(vendor);
      vendorSays(vendor, deposit, PAID_STATUS[vendor]);
      const report = await runJobs(vendor, Date.now() + 6 * MINUTE);
      expect(report.poll.changed).toBeGreaterThanOrEqual(1);
      expect(await balanceOf(user)).toBe(10);
      expect((await depositRow(deposit.id)).last_checked_at).toBeTruthy();
    });

    it('a validly signed "paid" notification that the vendor does not back credits nothing (a leaked secret)', async () => {
      const { user, deposit } = await lostPayment(vendor);
      vendorSays(vendor, deposit, vendor === 'btcpay' ? 'New' : vendor === 'stripe' ? 'unpaid' : vendor === 'nowpayments' ? 'waiting' : 'check');
      const [body, headers] = await paidNotification(vendor, deposit);
      const res = await notify(vendor, body, headers);
      expect(res.status, res.text).toBe(200);
      expect(await balanceOf(user)).toBe(0);
      expect((await depositRow(deposit.id)).status).toBe('pending');
      expect((await gatewayEventsOf(deposit.id)).find((e) => e.outcome === 'unconfirmed')).toMatchObject({ source: 'notification' });
    });

    it('a vendor down during the confirmation is a 503 with Retry-After and nothing changes; the retry credits', async () => {
      const { user, deposit } = await lostPayment(vendor);
      const [body, headers] = await paidNotification(vendor, deposit);
      const lookup = vendorSays(vendor, deposit, PAID_STATUS[vendor]);
      network.use(http.all(`${apiUrl(vendor)}/*`, () => HttpResponse.json({ error: 'down' }, { status: 502 }), { once: true }));
      const down = await notify(vendor, body, headers);
      expectError(down, 503, 'GATEWAY_UNAVAILABLE');
      expect(Number(down.headers.get('Retry-After'))).toBeGreaterThan(0);
      expect(await balanceOf(user)).toBe(0);
      expect((await gatewayEventsOf(deposit.id)).filter((e) => e.outcome !== 'in_progress')).toEqual([]);
      expect((await notify(vendor, body, headers)).status).toBe(200);
      expect(await balanceOf(user)).toBe(10);
      expect(lookup).toHaveLength(1);
    });
  });
}

describe('refresh: what it refuses', () => {
  it('a deposit of a generic slot is 422 (no vendor to ask); an unknown deposit is 404', async () => {
    const user = await newUser();
    const generic = await call('/wallet/deposit', { key: user.key, body: { amount: 10, gateway: 'gateway_three' } });
    expectError(await refresh(generic.json.data.deposit_id, 'stripe'), 422, 'VALIDATION_FAILED');
    expectError(await refresh(999_999_999, 'stripe'), 404, 'NOT_FOUND');
  });

  it('a vendor down, an answer about another deposit, without a status or not JSON: 503, nothing changes', async () => {
    const { user, deposit } = await lostPayment('btcpay');
    const url = `${apiUrl('btcpay')}/api/v1/stores/StoreAbc123/invoices/${deposit.invoiceId}`;
    const answers = [
      () => HttpResponse.json({}, { status: 500 }),
      () => HttpResponse.json({ id: deposit.invoiceId, status: 'Settled', metadata: { orderId: 'dep_someone_else' } }),
      () => HttpResponse.json({ id: deposit.invoiceId, metadata: { orderId: deposit.reference } }),
      () => new HttpResponse('<html>', { status: 200 }),
      () => HttpResponse.json({}, { status: 404 }),
    ];
    for (const answer of answers) {
      network.use(http.get(url, answer, { once: true }));
      expectError(await refresh(deposit.id, 'btcpay'), 503, 'GATEWAY_UNAVAILABLE');
    }
    expect(await balanceOf(user)).toBe(0);
    expect(await depositRow(deposit.id)).toMatchObject({ status: 'pending', last_checked_at: null });
    expect(await gatewayEventsOf(deposit.id)).toEqual([]);
  });

  it('a confirmation answered about another deposit is unconfirmed: a leaked secret cannot reuse a real payment', async () => {
    const { user, deposit } = await lostPayment('stripe');
    vendorSays('stripe', { ...deposit, reference: 'dep_the_attackers_paid_one' }, 'paid');
    const [body, headers] = await paidNotification('stripe', deposit);
    expect((await notify('stripe', body, headers)).status).toBe(200);
    expect(await balanceOf(user)).toBe(0);
    expect((await gatewayEventsOf(deposit.id))[0]).toMatchObject({ outcome: 'unconfirmed' });
  });

  it('answers that change nothing are not recorded; an Idempotency-Key replays the first answer', async () => {
    const { deposit } = await lostPayment('stripe');
    vendorSays('stripe', deposit, 'unpaid');
    const key = { 'Idempotency-Key': `refresh-${deposit.id}` };
    const first = await refresh(deposit.id, 'stripe', key);
    expect(first.json.data).toMatchObject({ vendor_status: 'unpaid', outcome: 'in_progress' });
    const replay = await refresh(deposit.id, 'stripe', key);
    expect(replay.headers.get('Idempotent-Replayed')).toBe('true');
    expect(replay.json).toEqual(first.json);
    expect(await gatewayEventsOf(deposit.id)).toEqual([]);
  });

  it('an expired session closes a pending deposit once; a partial BTCPay payment is recorded once, not at every ask', async () => {
    const { deposit } = await lostPayment('stripe');
    vendorSays('stripe', deposit, 'expired');
    expect((await refresh(deposit.id, 'stripe')).json.data).toMatchObject({ outcome: 'closed', deposit: { status: 'expired' } });
    expect((await refresh(deposit.id, 'stripe')).json.data.outcome).toBe('duplicate');
    const partial = await lostPayment('btcpay');
    vendorSays('btcpay', partial.deposit, 'Expired');
    for (let i = 0; i < 3; i++) expect((await refresh(partial.deposit.id, 'btcpay')).json.data.outcome).toBe('amount_mismatch');
    expect((await gatewayEventsOf(partial.deposit.id)).map((e) => e.outcome)).toEqual(['amount_mismatch']);
    expect((await gatewayEventsOf(deposit.id)).map((e) => e.outcome)).toEqual(['closed']);
  });
});

describe('the race: a notification, a refresh and the scheduled job for one paid deposit', () => {
  it('credit exactly once, whatever the order', async () => {
    for (let round = 0; round < 5; round++) {
      await setAside('stripe', Date.now() + 6 * MINUTE);
      const { user, deposit } = await lostPayment('stripe');
      vendorSays('stripe', deposit, 'paid');
      const [body, headers] = await paidNotification('stripe', deposit);
      const results = await Promise.all([notify('stripe', body, headers), refresh(deposit.id, 'stripe'), runJobs('stripe', Date.now() + 6 * MINUTE)]);
      expect(results[0].status).toBe(200);
      expect(results[1].status).toBe(200);
      expect(await balanceOf(user)).toBe(10);
      expect(await depositTransactions(deposit.id)).toBe(1);
      expect((await gatewayEventsOf(deposit.id)).filter((e) => e.outcome === 'credited')).toHaveLength(1);
    }
  });
});

describe('the scheduled poll', () => {
  /** Deposits of one slot only, so other tests' open deposits do not take the poll's places. */
  const isolated = (vendor: Vendor, extra: Record<string, string> = {}) => ({ ...varsFor(vendor), ...extra });

  it('asks at most GATEWAY_POLL_LIMIT deposits, those asked longest ago first, and only after GATEWAY_POLL_MINUTES', async () => {
    const user = await newUser();
    const now = Date.now() + 6 * MINUTE;
    await setAside('btcpay', now);
    const made: Deposit[] = [];
    for (let i = 0; i < 4; i++) made.push(await vendorDeposit('btcpay', user));
    // Asked 30, 20 and 10 minutes ago, and never: the never-asked one first, then the oldest.
    const stamps = [new Date(now - 30 * MINUTE), new Date(now - 20 * MINUTE), new Date(now - 10 * MINUTE)];
    for (const [i, stamp] of stamps.entries()) await env.DB.prepare('UPDATE deposits SET last_checked_at = ? WHERE id = ?').bind(stamp.toISOString(), made[i].id).run();
    const asked = made.map((d) => vendorSays('btcpay', d, 'New'));
    const report = await runJobs(isolated('btcpay', { GATEWAY_POLL_LIMIT: '2' }), now);
    expect(report.poll).toMatchObject({ asked: 2, changed: 0, skipped: 0 });
    expect(asked.map((calls) => calls.length)).toEqual([1, 0, 0, 1]);
    // Too soon: created less than GATEWAY_POLL_MINUTES ago, nothing is asked.
    const fresh = await vendorDeposit('btcpay', user);
    const freshAsked = vendorSays('btcpay', fresh, 'New');
    await runJobs(isolated('btcpay', { GATEWAY_POLL_MINUTES: '10', GATEWAY_POLL_LIMIT: '40' }), Date.now() + 6 * MINUTE);
    expect(freshAsked).toHaveLength(0);
  });

  it('skips a vendor that is down without failing the run; the other vendor still credits; the skipped one is asked next', async () => {
    const user = await newUser();
    await Promise.all([setAside('stripe', Date.now() + 6 * MINUTE), setAside('btcpay', Date.now() + 6 * MINUTE)]);
    const paid = await vendorDeposit('stripe', user);
    const stuck = await vendorDeposit('btcpay', user);
    vendorSays('stripe', paid, 'paid');
    network.use(http.get(`${apiUrl('btcpay')}/api/v1/stores/StoreAbc123/invoices/${stuck.invoiceId}`, () => HttpResponse.error(), { once: true }));
    const vars = { ...varsFor('stripe'), ...varsFor('btcpay'), GATEWAY_POLL_LIMIT: '40' };
    await env.DB.prepare("DELETE FROM vendor_failures WHERE gateway = 'gateway_one'").run();
    const report = await runJobs(vars, Date.now() + 6 * MINUTE);
    expect(report.poll.skipped).toBeGreaterThanOrEqual(1);
    expect(await balanceOf(user)).toBe(10);
    expect((await depositRow(stuck.id)).last_checked_at).toBeNull();
    // The failure is the slot's last vendor failure on the payments page, as a request's would be.
    const slots = (await call('/admin/gateways', { admin: true, vars })).json.data as Array<{ gateway: string; last_failure: unknown }>;
    expect(slots.find((g) => g.gateway === 'gateway_one')!.last_failure).toMatchObject({ purpose: 'lookup', failure: 'unreachable' });
    vendorSays('btcpay', stuck, 'Settled');
    await runJobs(vars, Date.now() + 6 * MINUTE);
    expect(await balanceOf(user)).toBe(20);
  });

  it('never asks about a generic deposit, nor about one whose slot now has another provider', async () => {
    const user = await newUser();
    await setAside('nowpayments', Date.now() + 6 * MINUTE);
    const generic = await call('/wallet/deposit', { key: user.key, body: { amount: 10, gateway: 'gateway_one' } });
    const btcpay = await vendorDeposit('btcpay', user);
    // gateway_one now served by NOWPayments: the BTCPay deposit has nobody to ask (an unhandled call would fail).
    await runJobs({ ...varsFor('nowpayments'), GATEWAY_POLL_LIMIT: '40' }, Date.now() + 6 * MINUTE);
    expect((await depositRow(generic.json.data.deposit_id)).last_checked_at).toBeNull();
    expect((await depositRow(btcpay.id)).last_checked_at).toBeNull();
    expectError(await call(`/admin/deposits/${btcpay.id}/refresh`, { method: 'POST', admin: true, vars: varsFor('nowpayments') }), 422, 'VALIDATION_FAILED');
  });

  it('stays within the invocation query budget with many paid deposits; what is left is credited by the next runs', async () => {
    const user = await newUser();
    await setAside('cryptomus', Date.now() + 60 * MINUTE);
    const made: Deposit[] = [];
    for (let i = 0; i < 6; i++) made.push(await vendorDeposit('cryptomus', user));
    // One lookup URL for every Cryptomus deposit: answer by the uuid asked about.
    network.use(
      http.post(`${apiUrl('cryptomus')}/v1/payment/info`, async ({ request }) => {
        const { uuid } = (await request.json()) as { uuid: string };
        const deposit = made.find((d) => d.invoiceId === uuid);
        return deposit ? HttpResponse.json({ state: 0, result: { uuid, order_id: deposit.reference, status: 'paid' } }) : HttpResponse.json({}, { status: 404 });
      }),
    );
    const vars = { ...varsFor('cryptomus'), GATEWAY_POLL_LIMIT: '40' };
    const warn = vi.spyOn(console, 'warn');
    for (let run = 0; run < 6 && (await balanceOf(user)) < 60; run++) {
      // The production limit of 50 queries per invocation is enforced on the whole run: going over it would make
      // a lookup's batch fail (a skipped deposit).
      const report = await runJobs(vars, Date.now() + 6 * MINUTE + run * 6 * MINUTE, { DB: productionD1(env.DB) });
      expect(report.poll.skipped).toBe(0);
      expect(warn.mock.calls.filter(([line]) => String(line).includes('deposit poll')), 'no statement of the poll was refused').toEqual([]);
    }
    warn.mockRestore();
    expect(await balanceOf(user)).toBe(60);
  });

  it('D1 faults after the vendor said paid: no 500 from refresh, nothing lost, the next run credits', async () => {
    await setAside('stripe', Date.now() + 12 * MINUTE);
    const { user, deposit } = await lostPayment('stripe');
    vendorSays('stripe', deposit, 'paid');
    const random = seededRandom(4242);
    restore = useInvocationOptions(() => ({ faults: { rate: 0.5, random } }));
    for (let i = 0; i < 6; i++) {
      const before = await storedBalanceCents(user);
      const res = await refresh(deposit.id, 'stripe');
      expect(res.status, res.text).not.toBe(500);
      expect([200, 503]).toContain(res.status);
      if (res.status === 503) expect(await storedBalanceCents(user), 'a 503 changed nothing').toBe(before);
    }
    restore();
    // The scheduled job on a failing database: it does not throw, and a run on a healthy one finishes the job.
    // (The jobs before the poll may meet a fault themselves and end the run, as they did before; the poll's own faults
    // are caught.)
    await runJobs('stripe', Date.now() + 6 * MINUTE, { DB: productionD1(env.DB, { faults: { rate: 0.5, random } }) }).catch(() => undefined);
    await runJobs('stripe', Date.now() + 12 * MINUTE);
    expect(await balanceOf(user)).toBe(10);
    expect(await depositTransactions(deposit.id)).toBe(1);
  });

  it('its query is served by the deposits_vendor_open index, not a scan of every deposit', async () => {
    const config = readConfig({ ...env, ...varsFor('stripe') } as Bindings);
    const { sql: text, params } = new SQLiteAsyncDialect().sqlToQuery(pollCandidates(config, Date.now(), 20)!);
    const { results } = await env.DB.prepare(`EXPLAIN QUERY PLAN ${text}`).bind(...params).all<{ detail: string }>();
    const plan = results.map((r) => r.detail).join('\n');
    expect(plan).toMatch(/SEARCH deposits USING INDEX deposits_vendor_open \(expires_at>\?\)/);
  });
});

