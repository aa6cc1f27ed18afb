import { describe, expect, it } from 'vitest';
import { newOperator } from '../console-helpers';
import { alertEmailsTo, alertLines, scheduledRun } from '../email-helpers';
import { buy, deliverWebhook, expectError, newDeposit, newProduct, newUser, restock, unique } from '../helpers';

// Operator alerts: a line in the batch of its cause (once per low-stock crossing; amount mismatches), gathered by the
// scheduled run into one operator_alert email per kind and operator, at most one per kind an hour.

describe('operator alerts', () => {
  it('low stock: one line per crossing of LOW_STOCK_THRESHOLD (10), again only after a restock lifted it above', async () => {
    const buyer = await newUser({ balance: 100 });
    const product = await newProduct({ price: 1, stock: 12 });
    const lines = () => alertLines('low_stock', `Product #${product.id} %`);
    expect((await buy(buyer, product.id, 1)).status).toBe(201); // 11: above
    expect(await lines()).toEqual([]);
    expect((await buy(buyer, product.id, 1)).status).toBe(201); // 10: crossed
    expect((await buy(buyer, product.id, 1)).status).toBe(201); // 9: still low, no new line
    // the line ends with the product's console page
    expect(await lines()).toEqual([`Product #${product.id} ${product.name}: 10 left (threshold 10): http://localhost/dashboard/console/products/${product.id}`]);
    expectError(await buy(buyer, product.id, 50), 400, 'INSUFFICIENT_STOCK'); // refused: nothing
    await restock(product.id, 5); // 14
    expect((await buy(buyer, product.id, 6)).status).toBe(201); // 8: crossed again
    expect(await lines()).toHaveLength(2);
  });

  it('a payment with the wrong amount is a payment alert', async () => {
    const user = await newUser();
    const deposit = await newDeposit(user, { amount: 25.5, gateway: 'gateway_two' });
    const res = await deliverWebhook('gateway_two', { deposit_id: deposit.deposit_id, status: 'paid', amount: 25.51, transaction_id: unique('tx') });
    expectError(res, 400, 'AMOUNT_MISMATCH');
    expect(await alertLines('payment', `Deposit #${deposit.deposit_id} %`)).toEqual([
      `Deposit #${deposit.deposit_id} via gateway_two: amount_mismatch (reported paid, 25.51 USD)`,
    ]);
  });

  it('the scheduled run emails each kind at most once an hour, to every enabled operator; the rest go in the next', async () => {
    const operator = await newOperator();
    const buyer = await newUser({ balance: 100 });
    const first = await newProduct({ price: 1, stock: 11 });
    const second = await newProduct({ price: 1, stock: 11 });
    const base = Date.now() + 30 * 24 * 3_600_000; // a clock of its own, after every other test's runs
    const run = (offsetMinutes: number) => scheduledRun(base + offsetMinutes * 60_000);
    // Other tests' alerts of other kinds may be due too: only low stock is followed here.
    const alerts = () => alertEmailsTo(operator.email, 'low_stock');

    expect((await buy(buyer, first.id, 2)).status).toBe(201);
    const jobs = await run(0);
    const [email] = await alerts();
    expect(email.subject).toBe('Test Shop alert: Low stock');
    expect(JSON.parse(email.data).lines).toContain(`Product #${first.id} ${first.name}: 9 left (threshold 10): http://localhost/dashboard/console/products/${first.id}`);
    expect(jobs).toContainEqual({ email_id: email.id });

    expect((await buy(buyer, second.id, 2)).status).toBe(201);
    await run(10);
    expect(await alerts()).toHaveLength(1); // within the hour: gathered for the next one
    await run(61);
    const later = await alerts();
    expect(later).toHaveLength(2);
    const lines = JSON.parse(later[1].data).lines as string[];
    expect(lines).toContain(`Product #${second.id} ${second.name}: 9 left (threshold 10): http://localhost/dashboard/console/products/${second.id}`);
    expect(lines).not.toContain(`Product #${first.id} ${first.name}: 9 left (threshold 10): http://localhost/dashboard/console/products/${first.id}`);
  });
});
