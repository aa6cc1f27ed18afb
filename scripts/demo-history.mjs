// A month of plausible shop history for the demo database, so the operator console opens on sales, deposits and
// refunds rather than on empty tables: a few customers who fund their wallets (some deposits left unpaid until they
// expired), buy, and now and then cancel an order for a refund.
//
// Written as the API would have written it: every balance is the sum of its owner's ledger, each ledger row's
// balance_after chains on the one before, each order holds its quantity of real stock items (sold, or revoked once
// refunded), final-sale goods are never cancelled, packs come in their allowed sizes, an order younger than the hold
// is still pending. `npm run audit:ledger` finds nothing to report. Deterministic but for the timestamps (relative
// to now) and the item codes, so every fresh database tells the same story.

import { createHash } from 'node:crypto';

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
export const HISTORY_DAYS = 30;
const HOLD_MS = 24 * HOUR_MS; // ORDER_HOLD_HOURS of .dev.vars.example: younger orders are still pending
const DEPOSIT_TTL_MS = HOUR_MS; // DEPOSIT_TTL_MINUTES
const GATEWAYS = ['gateway_one', 'gateway_two', 'gateway_three'];

export const CUSTOMERS = [
  { name: 'Alice Martin', email: 'alice.martin@example.com' },
  { name: 'Bruno Costa', email: 'bruno.costa@example.com' },
  { name: 'Chloé Dubois', email: 'chloe.dubois@example.com' },
  { name: 'Daniel Okafor', email: 'daniel.okafor@example.com' },
  { name: 'Emma Schmidt', email: 'emma.schmidt@example.com' },
  { name: 'Farid Haddad', email: 'farid.haddad@example.com' },
  { name: 'Grace Lee', email: 'grace.lee@example.com' },
];

/** Numbers in [0, 1) from a fixed sequence (SHA-256 of a counter): the same story on every fresh database. */
function sequence(name) {
  let n = 0;
  return () => createHash('sha256').update(`${name}:${(n += 1)}`).digest().readUInt32BE(0) / 2 ** 32;
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * The history's rows, oldest first: `customers` (with their final balance), `deposits`, `orders` (with their items'
 * contents) and `ledger` (in the order the rows are to be inserted). `firstUserId` is the first customer's id;
 * deposits and orders are numbered from 1.
 */
export function demoHistory({ now, products, firstUserId, paymentBaseUrl, itemCode }) {
  const rand = sequence('demo-history');
  const pick = (list) => list[Math.floor(rand() * list.length)];
  const token = (length) => Array.from({ length }, () => BASE62[Math.floor(rand() * 62)]).join('');
  const iso = (ms) => new Date(ms).toISOString();
  const nowMs = now.getTime();
  const deposits = [];
  const orders = [];
  const ledger = [];
  const customers = CUSTOMERS.map((customer, index) => {
    const userId = firstUserId + index;
    const joinedMs = nowMs - (HISTORY_DAYS - index * 1.5) * DAY_MS + rand() * 6 * HOUR_MS;
    let balanceCents = 0;
    const entry = (type, amountCents, atMs, description, link) => {
      balanceCents += amountCents;
      ledger.push({ userId, type, amountCents, balanceAfterCents: balanceCents, description, atMs, ...link, operationId: `seed-${type}-${token(16)}` });
    };

    const deposit = (atMs, amountCents, paid) => {
      const id = deposits.length + 1;
      const gateway = pick(GATEWAYS);
      const paidMs = atMs + (2 + rand() * 10) * 60_000;
      deposits.push({
        id, userId, amountCents, gateway, cryptoCurrency: gateway === 'gateway_three' ? null : 'USDT', status: paid ? 'paid' : 'expired', createdAt: iso(atMs), expiresAt: iso(atMs + DEPOSIT_TTL_MS),
        paidAt: paid ? iso(paidMs) : null, updatedAt: iso(paid ? paidMs : atMs + DEPOSIT_TTL_MS), reference: `dep_${token(24)}`,
        paymentUrl: `${paymentBaseUrl}/pay/${id}`, externalId: `${gateway}_${id}`, transactionId: paid ? `checkout_seed_${token(12)}` : null,
      });
      if (paid) entry('deposit', amountCents, paidMs, `Deposit #${id} via ${gateway}`, { depositId: id });
    };

    const order = (atMs, product, quantity) => {
      const id = orders.length + 1;
      const totalCents = product.priceCents * quantity;
      const orderNumber = `ORD-${iso(atMs).slice(0, 10).replaceAll('-', '')}-${token(10).toUpperCase()}`;
      const cancelMs = atMs + (0.5 + rand() * 5) * HOUR_MS;
      const cancelled = product.cancellable !== false && rand() < 0.12 && cancelMs < nowMs;
      const held = nowMs - atMs < HOLD_MS;
      const status = cancelled ? 'cancelled' : held ? 'pending' : 'completed';
      const updatedMs = cancelled ? cancelMs : held ? atMs : atMs + HOLD_MS + rand() * 5 * 60_000;
      const items = Array.from({ length: quantity }, () => itemCode(product.prefix));
      orders.push({ id, orderNumber, userId, product, quantity, totalCents, status, createdAt: iso(atMs), updatedAt: iso(updatedMs), revokedAt: cancelled ? iso(cancelMs) : null, items });
      entry('purchase', -totalCents, atMs, `Purchase ${orderNumber}: ${quantity} x ${product.name}`, { orderId: id });
      if (cancelled) entry('refund', totalCents, cancelMs, `Refund for order ${orderNumber}`, { orderId: id });
    };

    const visit = (atMs) => {
      const product = pick(products);
      const quantity = product.packs ? pick(product.packs.slice(0, 2)) : rand() < 0.8 ? 1 : 2;
      if (rand() < 0.1) deposit(atMs, pick([20_00, 40_00]), false);
      else if (product.priceCents * quantity > balanceCents) deposit(atMs, pick([25_00, 50_00]), true);
      else order(atMs, product, quantity);
    };
    // Every customer starts by funding the wallet, then comes back every day or three until yesterday; every other one
    // also came today (after anything of theirs from before, refunds included), so today's figures are not zero.
    deposit(joinedMs, pick([25_00, 50_00, 100_00]), true);
    for (let atMs = joinedMs + (0.3 + rand() * 2) * DAY_MS; atMs < nowMs - DAY_MS; atMs += (0.3 + rand() * 2.5) * DAY_MS) visit(atMs);
    if (index % 2 === 0) visit(nowMs - (1 + rand() * 12) * HOUR_MS);
    return { ...customer, id: userId, createdAt: iso(joinedMs - HOUR_MS), balanceCents };
  });
  ledger.sort((a, b) => a.atMs - b.atMs);
  return { customers, deposits, orders, ledger: ledger.map((row) => ({ ...row, createdAt: iso(row.atMs) })) };
}
