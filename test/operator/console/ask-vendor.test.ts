import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { newOperator } from '../../console-helpers';
import { signedInUser, visit, type PageOptions } from '../../dashboard-helpers';
import { balanceOf, call, newDeposit, newUser } from '../../helpers';
import { network } from '../../network';
import { apiUrl, depositRow, gatewayEventsOf, varsFor, vendorDeposit, vendorSays } from '../../vendors';

// The operator's view of "Payments that cannot be lost": each deposit's `last_checked_at` on GET /admin/deposits and
// the console's deposits page, and the console's "Ask the vendor" button (the admin API's refresh, for an operator's
// session only). Stripe on gateway_three stands for every real provider (their lookups are tested one by one in
// test/payments/cannot-be-lost.test.ts).

const STRIPE = varsFor('stripe');
const DEPOSITS = '/dashboard/console/deposits';

const adminDeposit = async (userId: number, id: number) =>
  (await call(`/admin/deposits?user_id=${userId}`, { admin: true })).json.data.find((d: { id: number }) => d.id === id);

/** A deposit's row in a console page, as HTML. */
const rowOf = (html: string, id: number) => new RegExp(`<tr role="row" id="deposit-${id}">[\\s\\S]*?</tr>`).exec(html)?.[0] ?? '';
const noticeOf = (html: string) => /<p class="notice" role="status">([^<]*)<\/p>/.exec(html)?.[1];
const alertOf = (html: string) => /<p class="alert" role="alert">([^<]*)<\/p>/.exec(html)?.[1];

/** A buyer with a pending Stripe deposit and a generic one, and an operator. */
async function fixtures() {
  const buyer = await newUser();
  const deposit = await vendorDeposit('stripe', buyer);
  const generic = (await newDeposit(buyer)).deposit_id;
  return { buyer, deposit, generic, operator: await newOperator() };
}

const ask = (id: number, options: PageOptions) => visit(`${DEPOSITS}/${id}/refresh`, { form: {}, vars: STRIPE, ...options });

/** What "nothing changed" means for a deposit: still pending, never asked, nothing credited, nothing logged. */
async function expectUntouched(buyer: { id: number; key: string; email: string }, id: number) {
  expect(await depositRow(id)).toMatchObject({ status: 'pending', last_checked_at: null });
  expect(await balanceOf(buyer)).toBe(0);
  expect(await gatewayEventsOf(id)).toEqual([]);
}

describe('last_checked_at on GET /admin/deposits', () => {
  it('is null until the vendor is asked, then when it was asked (a generic deposit: never)', async () => {
    const { buyer, deposit, generic } = await fixtures();
    expect(await adminDeposit(buyer.id, deposit.id)).toMatchObject({ last_checked_at: null });
    vendorSays('stripe', deposit, 'unpaid');
    const refreshed = await call(`/admin/deposits/${deposit.id}/refresh`, { method: 'POST', admin: true, vars: STRIPE });
    expect(refreshed.json.data.outcome).toBe('in_progress');
    const askedAt = refreshed.json.data.deposit.last_checked_at;
    expect(askedAt).toMatch(/^\d{4}-\d{2}-\d{2}T.*Z$/);
    expect(await adminDeposit(buyer.id, deposit.id)).toMatchObject({ status: 'pending', last_checked_at: askedAt });
    expect(await adminDeposit(buyer.id, generic)).toMatchObject({ last_checked_at: null });
  });
});

describe('"Ask the vendor" on the console', () => {
  it("is offered on a real provider's deposit only, and credits a lost payment once, with a notice", async () => {
    const { buyer, deposit, generic, operator } = await fixtures();
    const before = await visit(`${DEPOSITS}?user_id=${buyer.id}`, { cookie: operator.cookie, vars: STRIPE });
    expect(before.status).toBe(200);
    expect(rowOf(before.text, deposit.id)).toContain(`action="${DEPOSITS}/${deposit.id}/refresh"`);
    expect(rowOf(before.text, deposit.id)).toMatch(/>\s*Ask the vendor\s*</);
    expect(rowOf(before.text, deposit.id)).toContain('data-label="Vendor asked"><span><span>never</span>');
    expect(rowOf(before.text, generic)).not.toContain('Ask the vendor');

    vendorSays('stripe', deposit, 'paid');
    const asked = await ask(deposit.id, { cookie: operator.cookie });
    expect(asked.status, asked.text.slice(0, 300)).toBe(303);
    expect(asked.location).toBe(`${DEPOSITS}?asked=${deposit.id}&outcome=credited#deposit-${deposit.id}`);
    expect(await balanceOf(buyer)).toBe(10);

    const after = await visit(`${DEPOSITS}?user_id=${buyer.id}&asked=${deposit.id}&outcome=credited`, { cookie: operator.cookie, vars: STRIPE });
    expect(noticeOf(after.text)).toBe(`Asked the vendor about deposit #${deposit.id}: the vendor says it is paid; credited to the wallet.`);
    const row = rowOf(after.text, deposit.id);
    expect(row).toContain('status-paid');
    expect(row).toContain(`<time datetime="${(await depositRow(deposit.id)).last_checked_at}">`);
    expect(row).not.toContain('Ask the vendor'); // paid: nothing left to ask

    // Sent again (a second tab): the answer is a duplicate, nothing credited twice.
    const again = await ask(deposit.id, { cookie: operator.cookie });
    expect(again.location).toBe(`${DEPOSITS}?asked=${deposit.id}&outcome=duplicate#deposit-${deposit.id}`);
    expect(await balanceOf(buyer)).toBe(10);
    expect((await gatewayEventsOf(deposit.id)).map((e) => e.outcome)).toEqual(['credited']);
  });

  it('a made-up notice in the URL shows nothing', async () => {
    const { operator } = await fixtures();
    for (const query of ['asked=1&outcome=reversed', 'asked=1&outcome=constructor', 'asked=1&outcome=<b>', 'asked=x&outcome=credited', 'outcome=credited']) {
      const res = await visit(`${DEPOSITS}?${query}`, { cookie: operator.cookie });
      expect(res.status, query).toBe(200);
      expect(noticeOf(res.text), query).toBeUndefined();
    }
  });

  it('for a signed-in non-operator: 404 before the vendor is asked, nothing changed', async () => {
    const { buyer, deposit } = await fixtures();
    const user = await signedInUser();
    const seen = vendorSays('stripe', deposit, 'paid');
    const res = await ask(deposit.id, { cookie: user.cookie });
    expect(res.status).toBe(404);
    expect(res.text).not.toContain(DEPOSITS);
    expect(seen).toEqual([]);
    await expectUntouched(buyer, deposit.id);
  });

  it('the vendor unreachable: the page again with a 503 message, nothing changed', async () => {
    const { buyer, deposit, operator } = await fixtures();
    for (const down of [() => HttpResponse.error(), () => HttpResponse.json({ error: 'down' }, { status: 502 })]) {
      network.use(http.get(`${apiUrl('stripe')}/v1/checkout/sessions/${deposit.invoiceId}`, down, { once: true }));
      const res = await ask(deposit.id, { cookie: operator.cookie });
      expect(res.status).toBe(503);
      expect(res.headers.get('Retry-After')).toMatch(/^\d+$/);
      expect(alertOf(res.text)).toBe(
        `Deposit #${deposit.id}: the payment provider could not be reached, so nothing was changed. Try again in a minute; the scheduled job also asks it on its own.`,
      );
      expect(res.text).toContain('<h1'); // the deposits page itself, not an error page
      expect(res.text).toContain('aria-label="Filter deposits"');
      await expectUntouched(buyer, deposit.id);
    }
  });

  it("a generic slot's deposit (a crafted post): the page again with a 422 message, nothing changed", async () => {
    const { buyer, generic, operator } = await fixtures();
    const res = await ask(generic, { cookie: operator.cookie });
    expect(res.status).toBe(422);
    expect(alertOf(res.text)).toBe(`Deposit ${generic} has no payment provider to ask: it was made with the generic gateway.`);
    await expectUntouched(buyer, generic);
    expect((await ask(999_999_999, { cookie: operator.cookie })).status).toBe(404);
  });
});
