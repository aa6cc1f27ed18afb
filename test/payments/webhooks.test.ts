import { createExecutionContext, env, waitOnExecutionContext } from 'cloudflare:test';
import { afterEach, describe, expect, it } from 'vitest';
import worker from '../../src/index';
import {
  ADMIN_TOKEN,
  balanceOf,
  BASE,
  call,
  expectError,
  newDeposit,
  newUser,
  signedWebhook,
  unique,
  type SignedWebhookRequest,
  type TestDeposit,
  type TestUser,
} from '../helpers';

// Payment gateway webhooks (`POST /webhooks/{gateway}`) and the operator's `POST /admin/deposits/{id}/mark-paid`.
// Storage is shared between the tests of this file: each test makes its own users and deposits.

const SECOND = 1000;
const MINUTE = 60 * SECOND;

// ---------------------------------------------------------------------------------------------------------------
// Local helpers
// ---------------------------------------------------------------------------------------------------------------

/** Sends an already signed webhook (so a test can replay the very same bytes). */
const send = (gateway: string, signed: { body: string; headers: Record<string, string> }) =>
  call(`/webhooks/${gateway}`, { method: 'POST', body: signed.body, headers: signed.headers });

/** Signs and sends a webhook with the gateway's own secret. */
async function deliver(gateway: string, payload: unknown, options: { secret?: string; t?: number } = {}) {
  return send(gateway, await signedWebhook(gateway, payload, options));
}

type Status = 'paid' | 'failed' | 'expired';

const event = (deposit: TestDeposit, status: Status = 'paid', overrides: Record<string, unknown> = {}) => ({
  deposit_id: deposit.deposit_id,
  status,
  amount: deposit.amount,
  transaction_id: unique('tx'),
  ...overrides,
});

const markPaid = (depositId: number, options: { admin?: boolean; headers?: Record<string, string> } = { admin: true }) =>
  call(`/admin/deposits/${depositId}/mark-paid`, { method: 'POST', ...options });

interface DepositDbRow {
  status: string;
  transaction_id: string | null;
  paid_at: string | null;
  updated_at: string;
  expires_at: string;
}

async function depositRow(depositId: number): Promise<DepositDbRow> {
  const row = await env.DB.prepare('SELECT status, transaction_id, paid_at, updated_at, expires_at FROM deposits WHERE id = ?')
    .bind(depositId)
    .first<DepositDbRow>();
  expect(row, `deposit ${depositId}`).not.toBeNull();
  return row!;
}

interface LedgerRow {
  id: number;
  type: string;
  amount_cents: number;
  balance_after_cents: number;
  description: string;
  deposit_id: number | null;
}

async function ledgerOf(userId: number): Promise<LedgerRow[]> {
  const { results } = await env.DB.prepare(
    'SELECT id, type, amount_cents, balance_after_cents, description, deposit_id FROM wallet_transactions WHERE user_id = ? ORDER BY id',
  )
    .bind(userId)
    .all<LedgerRow>();
  return results;
}

const depositRowsOf = async (userId: number, depositId: number) =>
  (await ledgerOf(userId)).filter((t) => t.type === 'deposit' && t.deposit_id === depositId);

/** Deposit status as its owner reads it (this read also applies lazy expiry, as a client's read would). */
async function statusOf(user: TestUser, depositId: number): Promise<string> {
  const res = await call(`/wallet/deposits/${depositId}/status`, { key: user.key });
  expect(res.status, res.text).toBe(200);
  return res.json.data.status;
}

/** Everything a webhook could change for one user and one deposit; read without side effects. */
async function snapshot(user: TestUser, depositId: number) {
  const balance = await env.DB.prepare('SELECT balance_cents FROM users WHERE id = ?').bind(user.id).first<{ balance_cents: number }>();
  return { balanceCents: balance!.balance_cents, ledger: await ledgerOf(user.id), deposit: await depositRow(depositId) };
}

/** Runs `action` and asserts that neither the user's money nor the deposit changed. */
async function expectNothingChanged<T>(user: TestUser, depositId: number, action: () => Promise<T>): Promise<T> {
  const before = await snapshot(user, depositId);
  const result = await action();
  expect(await snapshot(user, depositId)).toEqual(before);
  return result;
}

async function unknownDepositId(): Promise<number> {
  const row = await env.DB.prepare('SELECT coalesce(max(id), 0) AS max FROM deposits').first<{ max: number }>();
  return row!.max + 100_000;
}

// ---------------------------------------------------------------------------------------------------------------
// paid
// ---------------------------------------------------------------------------------------------------------------

describe('POST /webhooks/{gateway}: paid', () => {
  it('credits the wallet exactly once: status paid, balance += amount, one deposit transaction', async () => {
    const user = await newUser({ balance: 5 });
    const deposit = await newDeposit(user, { amount: 25.5, gateway: 'gateway_one' });
    const paid = event(deposit);
    const signed = await signedWebhook('gateway_one', paid);

    const res = await send('gateway_one', signed);
    expect(res.status, res.text).toBe(200);
    expect(res.json.success).toBe(true);
    expect(res.json.data).toMatchObject({ id: deposit.deposit_id, status: 'paid', amount: 25.5, payment_method: 'gateway_one' });

    expect(await statusOf(user, deposit.deposit_id)).toBe('paid');
    expect(await balanceOf(user)).toBe(30.5);
    const row = await depositRow(deposit.deposit_id);
    expect(row.status).toBe('paid');
    expect(row.transaction_id).toBe(paid.transaction_id);
    expect(row.paid_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);

    const credits = await depositRowsOf(user.id, deposit.deposit_id);
    expect(credits).toHaveLength(1);
    expect(credits[0]).toMatchObject({ amount_cents: 2550, balance_after_cents: 3050 });
    expect(credits[0].description).toContain(`#${deposit.deposit_id}`);
    expect(credits[0].description).not.toMatch(/expir/i);

    // ... and as the owner reads the ledger
    const ledger = await call('/wallet/transactions', { key: user.key });
    expect(ledger.json.data[0]).toMatchObject({ type: 'deposit', amount: 25.5, balance_after: 30.5 });
    expect(ledger.json.data[0].description).toContain(`#${deposit.deposit_id}`);

    // the very same bytes again, then the same event freshly signed: 200, nothing changes
    await expectNothingChanged(user, deposit.deposit_id, async () => {
      const replay = await send('gateway_one', signed);
      expect(replay.status, replay.text).toBe(200);
      expect(replay.json.data).toMatchObject({ id: deposit.deposit_id, status: 'paid', amount: 25.5 });
      const resigned = await deliver('gateway_one', paid, { t: Math.floor(Date.now() / SECOND) - 10 });
      expect(resigned.status, resigned.text).toBe(200);
      expect(resigned.json.data.status).toBe('paid');
    });
    expect(await balanceOf(user)).toBe(30.5);
  });

  it('credits once when 10 identical paid webhooks arrive at the same time', async () => {
    const user = await newUser();
    const deposit = await newDeposit(user, { amount: 40, gateway: 'gateway_one' });
    const signed = await signedWebhook('gateway_one', event(deposit));

    const responses = await Promise.all(Array.from({ length: 10 }, () => send('gateway_one', signed)));
    for (const res of responses) {
      expect(res.status, res.text).toBe(200);
      expect(res.json.data.status).toBe('paid');
    }
    expect(await balanceOf(user)).toBe(40);
    const credits = await depositRowsOf(user.id, deposit.deposit_id);
    expect(credits).toHaveLength(1);
    expect(credits[0]).toMatchObject({ amount_cents: 4000, balance_after_cents: 4000 });
    expect(await ledgerOf(user.id)).toHaveLength(1);
  });

  it('credits once when paid webhooks and admin mark-paid race on one deposit', async () => {
    const user = await newUser();
    const deposit = await newDeposit(user, { amount: 33 });
    const signed = await signedWebhook('gateway_one', event(deposit));
    const responses = await Promise.all([
      ...Array.from({ length: 5 }, () => send('gateway_one', signed)),
      ...Array.from({ length: 5 }, () => markPaid(deposit.deposit_id)),
    ]);
    for (const res of responses) {
      expect(res.status, res.text).toBe(200);
      expect(res.json.data.status).toBe('paid');
    }
    expect(await balanceOf(user)).toBe(33);
    expect(await depositRowsOf(user.id, deposit.deposit_id)).toHaveLength(1);
    expect(await ledgerOf(user.id)).toHaveLength(1);
  });

  it('credits each of several deposits once under concurrent deliveries, and the ledger chains', async () => {
    const user = await newUser({ balance: 1 });
    const deposits = [await newDeposit(user, { amount: 10 }), await newDeposit(user, { amount: 2.5 }), await newDeposit(user, { amount: 7.25 })];
    const signed = await Promise.all(deposits.map((d) => signedWebhook('gateway_one', event(d))));
    const responses = await Promise.all(signed.flatMap((s) => Array.from({ length: 4 }, () => send('gateway_one', s))));
    for (const res of responses) expect(res.status, res.text).toBe(200);

    expect(await balanceOf(user)).toBe(20.75);
    for (const d of deposits) expect(await depositRowsOf(user.id, d.deposit_id)).toHaveLength(1);
    const ledger = await ledgerOf(user.id);
    expect(ledger).toHaveLength(4);
    let balance = 0;
    for (const t of ledger) {
      balance += t.amount_cents;
      expect(t.balance_after_cents).toBe(balance);
    }
    expect(balance).toBe(2075);
  });

  it('never credits a second time for a paid event with another transaction_id', async () => {
    const user = await newUser();
    const deposit = await newDeposit(user, { amount: 15 });
    expect((await deliver('gateway_one', event(deposit))).status).toBe(200);
    const res = await expectNothingChanged(user, deposit.deposit_id, () => deliver('gateway_one', event(deposit)));
    expect(res.status).toBeLessThan(500);
    expect(await balanceOf(user)).toBe(15);
  });

  it.each(['gateway_two', 'gateway_three'])('credits a %s deposit through its own webhook and secret', async (gateway) => {
    const user = await newUser();
    const deposit = await newDeposit(user, { amount: 12.34, gateway });
    const res = await deliver(gateway, event(deposit));
    expect(res.status, res.text).toBe(200);
    expect(res.json.data).toMatchObject({ status: 'paid', payment_method: gateway });
    expect(await balanceOf(user)).toBe(12.34);
    expect(await depositRowsOf(user.id, deposit.deposit_id)).toHaveLength(1);
  });

  it("treats deposits made with the 'crypto' alias as gateway_one deposits", async () => {
    const user = await newUser();
    const deposit = await newDeposit(user, { amount: 9, gateway: 'crypto' });
    expect(deposit.payment_method).toBe('gateway_one');

    for (const gateway of ['gateway_two', 'gateway_three']) {
      const res = await expectNothingChanged(user, deposit.deposit_id, () => deliver(gateway, event(deposit)));
      expectError(res, 404, 'NOT_FOUND');
    }
    const res = await deliver('gateway_one', event(deposit));
    expect(res.status, res.text).toBe(200);
    expect(await statusOf(user, deposit.deposit_id)).toBe('paid');
    expect(await balanceOf(user)).toBe(9);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// signature
// ---------------------------------------------------------------------------------------------------------------

describe('POST /webhooks/{gateway}: X-Signature', () => {
  const now = () => Math.floor(Date.now() / SECOND);

  /** Each case turns a valid paid event for the deposit into a request that must be refused. */
  const forgeries: [string, (payload: Record<string, unknown>) => Promise<{ body: string; headers: Record<string, string> }>][] = [
    ["signed with another gateway's secret", (p) => signedWebhook('gateway_one', p, { secret: 'test-secret-two' })],
    ['signed with a wrong secret', (p) => signedWebhook('gateway_one', p, { secret: 'not-the-secret' })],
    [
      'body tampered after signing (amount)',
      async (p) => {
        const signed = await signedWebhook('gateway_one', { ...p, amount: 1 });
        return { ...signed, body: JSON.stringify(p) };
      },
    ],
    [
      'body tampered after signing (whitespace only)',
      async (p) => {
        const signed = await signedWebhook('gateway_one', p);
        return { ...signed, body: `${signed.body} ` };
      },
    ],
    [
      'missing X-Signature',
      async (p) => {
        const signed = await signedWebhook('gateway_one', p);
        return { body: signed.body, headers: { 'Content-Type': 'application/json' } };
      },
    ],
    ...(
      [
        ['empty X-Signature', () => ''],
        ['garbage X-Signature', () => 'garbage'],
        ['only t', (s) => `t=${s.t}`],
        ['only v1', (s) => `v1=${s.v1}`],
        ['bare hex', (s) => s.v1],
        ['non-numeric t', (s) => `t=abc,v1=${s.v1}`],
        ['t in milliseconds', (s) => `t=${s.t * 1000},v1=${s.v1}`],
        ['v1 not hex', (s) => `t=${s.t},v1=${'z'.repeat(64)}`],
        ['v1 truncated', (s) => `t=${s.t},v1=${s.v1.slice(0, 63)}`],
        ['another scheme name', (s) => `t=${s.t},v0=${s.v1}`],
        ['t not the signed one', (s) => `t=${s.t - 1},v1=${s.v1}`],
      ] as [string, (s: SignedWebhookRequest) => string][]
    ).map(
      ([label, header]) =>
        [
          `malformed header: ${label}`,
          async (p: Record<string, unknown>) => {
            const signed = await signedWebhook('gateway_one', p);
            return { body: signed.body, headers: { 'Content-Type': 'application/json', 'X-Signature': header(signed) } };
          },
        ] as (typeof forgeries)[number],
    ),
    // floor/ceil keep the distance above 300 s whatever the sub-second part of the server's clock
    ['timestamp 301 s in the past', (p) => signedWebhook('gateway_one', p, { t: Math.floor(Date.now() / SECOND) - 301 })],
    ['timestamp 301 s in the future', (p) => signedWebhook('gateway_one', p, { t: Math.ceil(Date.now() / SECOND) + 301 })],
    ['timestamp 1 hour in the past', (p) => signedWebhook('gateway_one', p, { t: now() - 3600 })],
  ];

  it.each(forgeries)('rejects %s with 401 UNAUTHORIZED and changes nothing', async (_label, forge) => {
    const user = await newUser({ balance: 2 });
    const deposit = await newDeposit(user, { amount: 20 });
    const request = await forge(event(deposit));
    const res = await expectNothingChanged(user, deposit.deposit_id, () => send('gateway_one', request));
    expectError(res, 401, 'UNAUTHORIZED');
    expect(await statusOf(user, deposit.deposit_id)).toBe('pending');
    expect(await balanceOf(user)).toBe(2);
  });

  it('rejects a failed event with a bad signature too (no status change)', async () => {
    const user = await newUser();
    const deposit = await newDeposit(user, { amount: 20 });
    const res = await expectNothingChanged(user, deposit.deposit_id, () =>
      deliver('gateway_one', event(deposit, 'failed'), { secret: 'test-secret-three' }),
    );
    expectError(res, 401, 'UNAUTHORIZED');
    expect(await statusOf(user, deposit.deposit_id)).toBe('pending');
  });

  it.each([
    ['299 s in the past', () => Math.round(Date.now() / SECOND) - 299],
    ['299 s in the future', () => Math.round(Date.now() / SECOND) + 299],
  ])('accepts a timestamp %s', async (_label, t) => {
    const user = await newUser();
    const deposit = await newDeposit(user, { amount: 3 });
    const res = await deliver('gateway_one', event(deposit), { t: t() });
    expect(res.status, res.text).toBe(200);
    expect(await balanceOf(user)).toBe(3);
  });

  it('rejects every webhook of a gateway that has no secret configured', async () => {
    const user = await newUser();
    const deposit = await newDeposit(user, { amount: 6 });
    const signed = await signedWebhook('gateway_one', event(deposit));
    const ctx = createExecutionContext();
    const res = await expectNothingChanged(user, deposit.deposit_id, async () => {
      const response = await worker.fetch(
        new Request(`${BASE}/webhooks/gateway_one`, { method: 'POST', body: signed.body, headers: signed.headers }),
        { ...env, GATEWAY_ONE_WEBHOOK_SECRET: '' },
        ctx,
      );
      await waitOnExecutionContext(ctx);
      return { status: response.status, json: (await response.json()) as any };
    });
    expectError(res, 401, 'UNAUTHORIZED');
  });
});

// ---------------------------------------------------------------------------------------------------------------
// which gateway, which deposit
// ---------------------------------------------------------------------------------------------------------------

describe('POST /webhooks/{gateway}: routing', () => {
  it('answers 404 NOT_FOUND for an unknown deposit id', async () => {
    const id = await unknownDepositId();
    for (const status of ['paid', 'failed', 'expired']) {
      const res = await deliver('gateway_one', { deposit_id: id, status, amount: 10, transaction_id: unique('tx') });
      expectError(res, 404, 'NOT_FOUND');
    }
    const row = await env.DB.prepare('SELECT count(*) AS n FROM deposits WHERE id = ?').bind(id).first<{ n: number }>();
    expect(row!.n).toBe(0);
  });

  it("answers 404 for another gateway's deposit and changes nothing", async () => {
    const user = await newUser({ balance: 1 });
    const deposit = await newDeposit(user, { amount: 30, gateway: 'gateway_two' });
    for (const status of ['paid', 'failed', 'expired'] as const) {
      for (const gateway of ['gateway_one', 'gateway_three']) {
        const res = await expectNothingChanged(user, deposit.deposit_id, () => deliver(gateway, event(deposit, status)));
        expectError(res, 404, 'NOT_FOUND');
      }
    }
    expect(await statusOf(user, deposit.deposit_id)).toBe('pending');
    expect(await balanceOf(user)).toBe(1);

    // its own gateway still works afterwards
    expect((await deliver('gateway_two', event(deposit))).status).toBe(200);
    expect(await balanceOf(user)).toBe(31);
  });

  it('answers 404 NOT_FOUND for an unknown gateway path, even when correctly signed', async () => {
    const user = await newUser();
    const deposit = await newDeposit(user, { amount: 8 });
    for (const gateway of ['nope', 'GATEWAY_ONE', 'gateway_four']) {
      const res = await expectNothingChanged(user, deposit.deposit_id, () =>
        deliver(gateway, event(deposit), { secret: 'test-secret-one' }),
      );
      expectError(res, 404, 'NOT_FOUND');
    }
    expect(await balanceOf(user)).toBe(0);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// amount
// ---------------------------------------------------------------------------------------------------------------

describe('POST /webhooks/{gateway}: amount mismatch', () => {
  it.each([25.49, 25.51, 2.55, 255, 1, 10000])('refuses a paid amount of %s for a 25.50 deposit with 400 AMOUNT_MISMATCH', async (amount) => {
    const user = await newUser({ balance: 1 });
    const deposit = await newDeposit(user, { amount: 25.5 });
    const res = await expectNothingChanged(user, deposit.deposit_id, () => deliver('gateway_one', event(deposit, 'paid', { amount })));
    expectError(res, 400, 'AMOUNT_MISMATCH');
    expect(await statusOf(user, deposit.deposit_id)).toBe('pending');
    expect(await balanceOf(user)).toBe(1);
    expect(await depositRowsOf(user.id, deposit.deposit_id)).toHaveLength(0);
  });

  it('still credits the right amount after a mismatched attempt', async () => {
    const user = await newUser();
    const deposit = await newDeposit(user, { amount: 100 });
    expectError(await deliver('gateway_one', event(deposit, 'paid', { amount: 99.99 })), 400, 'AMOUNT_MISMATCH');
    const res = await deliver('gateway_one', event(deposit, 'paid', { amount: 100 }));
    expect(res.status, res.text).toBe(200);
    expect(await balanceOf(user)).toBe(100);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// failed / expired
// ---------------------------------------------------------------------------------------------------------------

describe('POST /webhooks/{gateway}: failed and expired', () => {
  it.each(['failed', 'expired'] as const)('%s closes the deposit without credit; a replay changes nothing', async (status) => {
    const user = await newUser({ balance: 2 });
    const deposit = await newDeposit(user, { amount: 50 });
    const signed = await signedWebhook('gateway_one', event(deposit, status));
    const res = await send('gateway_one', signed);
    expect(res.status, res.text).toBe(200);
    expect(res.json.data).toMatchObject({ id: deposit.deposit_id, status });
    expect(await statusOf(user, deposit.deposit_id)).toBe(status);
    expect(await balanceOf(user)).toBe(2);
    expect(await depositRowsOf(user.id, deposit.deposit_id)).toHaveLength(0);

    const replay = await expectNothingChanged(user, deposit.deposit_id, () => send('gateway_one', signed));
    expect(replay.status, replay.text).toBe(200);
    expect(replay.json.data.status).toBe(status);
  });

  it.each(['failed', 'expired'] as const)('a %s event after paid leaves the paid deposit and the wallet alone', async (status) => {
    const user = await newUser();
    const deposit = await newDeposit(user, { amount: 11 });
    expect((await deliver('gateway_one', event(deposit))).status).toBe(200);
    const res = await expectNothingChanged(user, deposit.deposit_id, () => deliver('gateway_one', event(deposit, status)));
    expect(res.status, res.text).toBe(200);
    expect(res.json.data.status).toBe('paid');
    expect(await statusOf(user, deposit.deposit_id)).toBe('paid');
    expect(await balanceOf(user)).toBe(11);
  });

  it('a failed event does not turn an expired deposit into failed (and vice versa)', async () => {
    const user = await newUser();
    const expired = await newDeposit(user, { amount: 5 });
    const failed = await newDeposit(user, { amount: 5 });
    expect((await deliver('gateway_one', event(expired, 'expired'))).status).toBe(200);
    expect((await deliver('gateway_one', event(failed, 'failed'))).status).toBe(200);
    await expectNothingChanged(user, expired.deposit_id, () => deliver('gateway_one', event(expired, 'failed')));
    await expectNothingChanged(user, failed.deposit_id, () => deliver('gateway_one', event(failed, 'expired')));
    expect(await statusOf(user, expired.deposit_id)).toBe('expired');
    expect(await statusOf(user, failed.deposit_id)).toBe('failed');
  });

  /** Asserts the deposit was credited exactly once with a ledger description saying it was paid after expiry. */
  async function expectLatePaid(user: TestUser, deposit: TestDeposit, expectedBalance: number) {
    const paid = await signedWebhook('gateway_one', event(deposit));
    const res = await send('gateway_one', paid);
    expect(res.status, res.text).toBe(200);
    expect(res.json.data.status).toBe('paid');
    expect(await statusOf(user, deposit.deposit_id)).toBe('paid');
    expect(await balanceOf(user)).toBe(expectedBalance);
    const credits = await depositRowsOf(user.id, deposit.deposit_id);
    expect(credits).toHaveLength(1);
    expect(credits[0].amount_cents).toBe(Math.round(deposit.amount * 100));
    expect(credits[0].description).toContain(`#${deposit.deposit_id}`);
    expect(credits[0].description).toMatch(/after expiry/i);

    const replay = await expectNothingChanged(user, deposit.deposit_id, () => send('gateway_one', paid));
    expect(replay.status).toBe(200);
  }

  it('credits a late paid event once for a deposit that expired on its own (expires_at passed)', async () => {
    const user = await newUser({ balance: 1 });
    const deposit = await newDeposit(user, { amount: 17.5 });
    await env.DB.prepare('UPDATE deposits SET expires_at = ? WHERE id = ?')
      .bind(new Date(Date.now() - MINUTE).toISOString(), deposit.deposit_id)
      .run();
    expect(await statusOf(user, deposit.deposit_id)).toBe('expired');
    // Reads show it expired without writing; the scheduled job persists the status.
    expect((await depositRow(deposit.deposit_id)).status).toBe('pending');
    await expectLatePaid(user, deposit, 18.5);
  });

  it('credits a late paid event once for a deposit the gateway reported expired', async () => {
    const user = await newUser();
    const deposit = await newDeposit(user, { amount: 42 });
    expect((await deliver('gateway_one', event(deposit, 'expired'))).status).toBe(200);
    expect(await statusOf(user, deposit.deposit_id)).toBe('expired');
    await expectLatePaid(user, deposit, 42);
  });

  it('credits a paid event once for a pending deposit past expires_at that nothing has expired yet', async () => {
    const user = await newUser();
    const deposit = await newDeposit(user, { amount: 3.33 });
    await env.DB.prepare('UPDATE deposits SET expires_at = ? WHERE id = ?')
      .bind(new Date(Date.now() - SECOND).toISOString(), deposit.deposit_id)
      .run();
    expect((await depositRow(deposit.deposit_id)).status).toBe('pending');
    await expectLatePaid(user, deposit, 3.33);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// malformed bodies
// ---------------------------------------------------------------------------------------------------------------

describe('POST /webhooks/{gateway}: malformed body with a valid signature', () => {
  const cases: [string, (d: TestDeposit) => string, string | null][] = [
    ['bad JSON', (d) => `{"deposit_id": ${d.deposit_id}, "status": "paid",`, null],
    ['empty body', () => '', null],
    ['a JSON array', (d) => JSON.stringify([event(d)]), null],
    ['JSON null', () => 'null', null],
    ['missing deposit_id', (d) => JSON.stringify({ ...event(d), deposit_id: undefined }), 'deposit_id'],
    ['missing status', (d) => JSON.stringify({ ...event(d), status: undefined }), 'status'],
    ['missing amount', (d) => JSON.stringify({ ...event(d), amount: undefined }), 'amount'],
    ['missing transaction_id', (d) => JSON.stringify({ ...event(d), transaction_id: undefined }), 'transaction_id'],
    ['amount as a string', (d) => JSON.stringify(event(d, 'paid', { amount: String(d.amount) })), 'amount'],
    ['amount with 3 decimals', (d) => JSON.stringify(event(d, 'paid', { amount: d.amount + 0.001 })), 'amount'],
    ['amount 0', (d) => JSON.stringify(event(d, 'paid', { amount: 0 })), 'amount'],
    ['negative amount', (d) => JSON.stringify(event(d, 'paid', { amount: -d.amount })), 'amount'],
    ['deposit_id as a string', (d) => JSON.stringify(event(d, 'paid', { deposit_id: String(d.deposit_id) })), 'deposit_id'],
    ['fractional deposit_id', (d) => JSON.stringify(event(d, 'paid', { deposit_id: d.deposit_id + 0.5 })), 'deposit_id'],
    ['unknown status', (d) => JSON.stringify(event(d, 'paid', { status: 'refunded' })), 'status'],
    ['transaction_id as a number', (d) => JSON.stringify(event(d, 'paid', { transaction_id: 123 })), 'transaction_id'],
    ['empty transaction_id', (d) => JSON.stringify(event(d, 'paid', { transaction_id: '' })), 'transaction_id'],
  ];

  it.each(cases)('rejects %s with 422 VALIDATION_FAILED and changes nothing', async (_label, body, field) => {
    const user = await newUser();
    const deposit = await newDeposit(user, { amount: 12 });
    const res = await expectNothingChanged(user, deposit.deposit_id, async () => send('gateway_one', await signedWebhook('gateway_one', body(deposit))));
    expectError(res, 422, 'VALIDATION_FAILED');
    if (field) expect(res.json.errors).toHaveProperty(field);
    expect(await statusOf(user, deposit.deposit_id)).toBe('pending');
    expect(await balanceOf(user)).toBe(0);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// POST /admin/deposits/{id}/mark-paid
// ---------------------------------------------------------------------------------------------------------------

describe('POST /admin/deposits/{id}/mark-paid', () => {
  it('credits the deposit once; a second call answers 200 and changes nothing', async () => {
    const user = await newUser({ balance: 0.5 });
    const deposit = await newDeposit(user, { amount: 19.99, gateway: 'gateway_three' });

    const res = await markPaid(deposit.deposit_id);
    expect(res.status, res.text).toBe(200);
    expect(res.json.success).toBe(true);
    expect(res.json.data).toMatchObject({ id: deposit.deposit_id, status: 'paid', amount: 19.99, payment_method: 'gateway_three' });
    expect(await statusOf(user, deposit.deposit_id)).toBe('paid');
    expect(await balanceOf(user)).toBe(20.49);
    const credits = await depositRowsOf(user.id, deposit.deposit_id);
    expect(credits).toHaveLength(1);
    expect(credits[0]).toMatchObject({ amount_cents: 1999, balance_after_cents: 2049 });
    expect(credits[0].description).toContain(`#${deposit.deposit_id}`);

    const again = await expectNothingChanged(user, deposit.deposit_id, () => markPaid(deposit.deposit_id));
    expect(again.status, again.text).toBe(200);
    expect(again.json.data.status).toBe('paid');
  });

  it('credits once under concurrent calls', async () => {
    const user = await newUser();
    const deposit = await newDeposit(user, { amount: 8 });
    const responses = await Promise.all(Array.from({ length: 5 }, () => markPaid(deposit.deposit_id)));
    for (const res of responses) expect(res.status, res.text).toBe(200);
    expect(await balanceOf(user)).toBe(8);
    expect(await depositRowsOf(user.id, deposit.deposit_id)).toHaveLength(1);
  });

  it('answers 404 for an unknown deposit and 401 without a valid admin token', async () => {
    expectError(await markPaid(await unknownDepositId()), 404, 'NOT_FOUND');

    const user = await newUser();
    const deposit = await newDeposit(user, { amount: 8 });
    await expectNothingChanged(user, deposit.deposit_id, async () => {
      expectError(await markPaid(deposit.deposit_id, {}), 401, 'UNAUTHORIZED');
      expectError(await markPaid(deposit.deposit_id, { headers: { Authorization: 'Bearer wrong-token' } }), 401, 'UNAUTHORIZED');
      expectError(await markPaid(deposit.deposit_id, { headers: { Authorization: ADMIN_TOKEN } }), 401, 'UNAUTHORIZED');
      // a user's API key is not an admin token
      expectError(await call(`/admin/deposits/${deposit.deposit_id}/mark-paid`, { method: 'POST', key: user.key }), 401, 'UNAUTHORIZED');
    });
    expect(await statusOf(user, deposit.deposit_id)).toBe('pending');
  });

  it('does not credit again after a paid webhook, nor a webhook after mark-paid', async () => {
    const user = await newUser();
    const viaWebhook = await newDeposit(user, { amount: 10 });
    expect((await deliver('gateway_one', event(viaWebhook))).status).toBe(200);
    const res = await expectNothingChanged(user, viaWebhook.deposit_id, () => markPaid(viaWebhook.deposit_id));
    expect(res.status, res.text).toBe(200);
    expect(res.json.data.status).toBe('paid');

    const viaAdmin = await newDeposit(user, { amount: 5 });
    expect((await markPaid(viaAdmin.deposit_id)).status).toBe(200);
    const hook = await expectNothingChanged(user, viaAdmin.deposit_id, () => deliver('gateway_one', event(viaAdmin)));
    expect(hook.status, hook.text).toBe(200);

    expect(await balanceOf(user)).toBe(15);
    expect((await ledgerOf(user.id)).filter((t) => t.type === 'deposit')).toHaveLength(2);
  });

  it('credits an expired deposit once, saying it was paid after expiry', async () => {
    const user = await newUser();
    const deposit = await newDeposit(user, { amount: 6.5 });
    await env.DB.prepare('UPDATE deposits SET expires_at = ? WHERE id = ?')
      .bind(new Date(Date.now() - MINUTE).toISOString(), deposit.deposit_id)
      .run();
    expect(await statusOf(user, deposit.deposit_id)).toBe('expired');
    expect((await markPaid(deposit.deposit_id)).status).toBe(200);
    expect(await statusOf(user, deposit.deposit_id)).toBe('paid');
    expect(await balanceOf(user)).toBe(6.5);
    const credits = await depositRowsOf(user.id, deposit.deposit_id);
    expect(credits).toHaveLength(1);
    expect(credits[0].description).toMatch(/after expiry/i);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Invariants: checked after every test above (so a break points at its test) and once more at the end
// ---------------------------------------------------------------------------------------------------------------

/** Over the whole database: balance = sum of ledger, balance_after chains, a paid deposit has exactly one credit. */
async function expectLedgerInvariants(): Promise<{ users: number; paidDeposits: number }> {
  const { results: users } = await env.DB.prepare(
    `SELECT u.id, u.balance_cents, coalesce((SELECT sum(amount_cents) FROM wallet_transactions t WHERE t.user_id = u.id), 0) AS ledger_cents
     FROM users u`,
  ).all<{ id: number; balance_cents: number; ledger_cents: number }>();
  for (const u of users) expect(u.balance_cents, `user ${u.id}: balance vs sum of ledger`).toBe(u.ledger_cents);

  const { results: rows } = await env.DB.prepare('SELECT user_id, amount_cents, balance_after_cents FROM wallet_transactions ORDER BY user_id, id').all<{
    user_id: number;
    amount_cents: number;
    balance_after_cents: number;
  }>();
  const running = new Map<number, number>();
  for (const t of rows) {
    const balance = (running.get(t.user_id) ?? 0) + t.amount_cents;
    running.set(t.user_id, balance);
    expect(t.balance_after_cents, `user ${t.user_id}: balance_after chain`).toBe(balance);
    expect(balance).toBeGreaterThanOrEqual(0);
  }

  const { results: deposits } = await env.DB.prepare(
    `SELECT d.id, d.status, d.amount_cents,
            (SELECT count(*) FROM wallet_transactions t WHERE t.deposit_id = d.id AND t.type = 'deposit') AS credits,
            (SELECT sum(amount_cents) FROM wallet_transactions t WHERE t.deposit_id = d.id AND t.type = 'deposit') AS credited_cents,
            (SELECT count(*) FROM wallet_transactions t WHERE t.deposit_id = d.id AND t.user_id <> d.user_id) AS foreign_rows
     FROM deposits d`,
  ).all<{ id: number; status: string; amount_cents: number; credits: number; credited_cents: number | null; foreign_rows: number }>();
  for (const d of deposits) {
    expect(d.foreign_rows, `deposit ${d.id}: credited to another user`).toBe(0);
    if (d.status === 'paid') {
      expect(d.credits, `deposit ${d.id}: credits`).toBe(1);
      expect(d.credited_cents, `deposit ${d.id}: credited amount`).toBe(d.amount_cents);
    } else {
      expect(d.credits, `deposit ${d.id} (${d.status}): credits`).toBe(0);
    }
  }
  return { users: users.length, paidDeposits: deposits.filter((d) => d.status === 'paid').length };
}

afterEach(async () => {
  await expectLedgerInvariants();
});

describe('ledger invariants', () => {
  it("every user's balance equals the sum of their transactions; paid deposits are credited exactly once", async () => {
    const user = await newUser({ balance: 1 });
    const deposit = await newDeposit(user, { amount: 2 });
    expect((await deliver('gateway_one', event(deposit))).status).toBe(200);
    const seen = await expectLedgerInvariants();
    expect(seen.users).toBeGreaterThan(0);
    expect(seen.paidDeposits).toBeGreaterThan(0);
  });
});
