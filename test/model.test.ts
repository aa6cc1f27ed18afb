import { createExecutionContext, createScheduledController, env, waitOnExecutionContext } from 'cloudflare:test';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import worker from '../src/index';
import { auditLedger } from '../src/services/operator/ledger-audit';
import { call, fund, newProduct, newUser, restock, signedWebhook, unique, WEBHOOK_SECRETS, type CallOptions } from './helpers';
import { seedFor, testSettings } from './seed';

// Model-based, randomized concurrency test. fast-check generates a run: a few users, products and balances, then a
// sequence of *groups*; each group is 1..6 requests fired at the same time (Promise.all) through the worker's real
// fetch handler against the local D1. A small model (balances in cents, available items per product, orders,
// deposits, API keys, Idempotency-Key records) predicts every response:
//   - an outcome that does not depend on how the group interleaves is checked exactly (e.g. a purchase that is
//     affordable and in stock even if every other request of the group debits first must answer 201);
//   - otherwise any outcome the contract allows is accepted, bounded by the best and worst interleaving, and the
//     model is reconciled from the responses (201s debit, 200 cancels refund, ...), with group-level checks
//     (exactly one successful cancel of a pending order, at most one effect per Idempotency-Key, ...).
// Cancellation rules: an order keeps its product's `cancellable` flag of the moment it was bought (the run flips
// products between final sale and cancellable), and each user may make at most `cap` successful cancellations (the
// run's MAX_CANCELS_PER_DAY: the pinned 5, or 0, 1, 2, or 1,000 through a per-request var override, so runs that
// need many cancels get them). The operator's revoked-items feed lists exactly the items of the cancelled orders.
// After every run: auditLedger(env.DB) reports nothing new (and is [] over everything at the end), balances / order
// statuses / deposits / stock items / API keys equal the model, no item was ever delivered twice. Every response: no
// 5xx, every error body is { success: false, error, code }.
//
// The seed is pinned (test/seed.ts); another: SEED=<n> npx vitest run test/model.test.ts. Replay one failing case:
// SEED=<seed> VITE_FC_PATH=<path> (both printed on failure). VITE_FC_RUNS=<n> sets the number of runs (default 15),
// VITE_FC_NO_SHRINK=1 reports the first failure unshrunk. (process.env does not reach workerd; Vite passes VITE_*
// variables through import.meta.env.)

const SEED = seedFor('model.test.ts', 20_261_123);
const PATH = testSettings.VITE_FC_PATH;
const NUM_RUNS = Number(testSettings.VITE_FC_RUNS ?? 15);
const NO_SHRINK = testSettings.VITE_FC_NO_SHRINK === '1'; // report the first failure as found, without shrinking
// Past this, fast-check stops: shrinking a failure (each try replays a whole run) keeps the smallest one found so
// far; any interruption before all runs passed fails the test.
const TIME_LIMIT_MS = 100_000;
const MAX_GROUPS = 25;

// ---------------------------------------------------------------------------------------------------------------
// Generated actions (plain data: fast-check prints and shrinks them); resolved against the model when a group starts
// ---------------------------------------------------------------------------------------------------------------

type HookStatus = 'paid' | 'failed' | 'expired';
type HookVariant = 'ok' | 'wrongAmount' | 'wrongGateway' | 'badSignature' | 'unknown';

type Action =
  | { kind: 'purchase'; u: number; p: number; q: number; idem: number | null; sameBody: boolean }
  | { kind: 'cancel'; u: number; order: number; own: boolean }
  | { kind: 'deposit'; u: number; amount: number; gateway: string }
  | { kind: 'webhook'; dep: number; status: HookStatus; variant: HookVariant }
  | { kind: 'markPaid'; dep: number }
  | { kind: 'adjust'; u: number; cents: number }
  | { kind: 'restock'; p: number; items: number[] }
  | { kind: 'createKey'; u: number }
  | { kind: 'revokeKey'; u: number; key: number; other: boolean }
  | { kind: 'balance'; u: number; key: number }
  | { kind: 'setCancellable'; p: number; value: boolean }
  | { kind: 'tick' };

const USERS = 3;
const PRODUCTS = [
  { price: 1.23, allowed: null as number[] | null, cancellable: true },
  { price: 0.5, allowed: [2, 5], cancellable: true },
  { price: 7.99, allowed: null as number[] | null, cancellable: false },
];
/** MAX_CANCELS_PER_DAY of a run; 5 is the value vitest.config.ts pins, the others go as a per-request var. */
const PINNED_CAP = 5;
const ITEM_POOL = 24; // item contents per product come from a small pool, so restocks often repeat items

const user = fc.integer({ min: 0, max: USERS - 1 });
const product = fc.integer({ min: 0, max: PRODUCTS.length - 1 });
const pick = fc.nat({ max: 1000 });

const quantityArb = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(1, 2, 2, 5) }, // 2 and 5 are the pack sizes of product 1
  { weight: 3, arbitrary: fc.integer({ min: 1, max: 4 }) }, // 1, 3, 4: invalid pack sizes for product 1
  { weight: 2, arbitrary: fc.integer({ min: 6, max: 30 }) }, // often more than the stock
  { weight: 1, arbitrary: fc.constantFrom(0, 1001) }, // outside 1..1000: 422
);

const actionArb: fc.Arbitrary<Action> = fc.oneof(
  {
    weight: 7,
    arbitrary: fc.record({
      kind: fc.constant('purchase' as const),
      u: user,
      p: product,
      q: quantityArb,
      idem: fc.oneof(fc.constant(null), fc.constant(null), fc.integer({ min: 0, max: 2 })),
      sameBody: fc.boolean(),
    }),
  },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('cancel' as const), u: user, order: pick, own: fc.constantFrom(true, true, true, false) }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('deposit' as const),
      u: user,
      amount: fc.oneof(
        { weight: 6, arbitrary: fc.integer({ min: 100, max: 3000 }).map((cents) => cents / 100) },
        { weight: 1, arbitrary: fc.constantFrom(0, 0.5, 1.234, 10000.01) },
      ),
      gateway: fc.constantFrom('gateway_one', 'crypto', 'gateway_two', 'gateway_three', 'gateway_one', 'paypal'),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('webhook' as const),
      dep: pick,
      status: fc.constantFrom<HookStatus>('paid', 'paid', 'paid', 'failed', 'expired'),
      variant: fc.constantFrom<HookVariant>('ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'wrongAmount', 'wrongGateway', 'badSignature', 'unknown'),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('markPaid' as const), dep: pick }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('adjust' as const),
      u: user,
      cents: fc.oneof(fc.integer({ min: 1, max: 2500 }), fc.integer({ min: -4000, max: -1 })),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('restock' as const),
      p: product,
      items: fc.array(fc.integer({ min: 0, max: ITEM_POOL - 1 }), { minLength: 1, maxLength: 8 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('createKey' as const), u: user }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('revokeKey' as const), u: user, key: pick, other: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('balance' as const), u: user, key: pick }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('setCancellable' as const), p: product, value: fc.boolean() }) },
);

/**
 * One group = requests fired together: random ones, or one request repeated (double submits, concurrent replays); or,
 * alone, a tick of the scheduled jobs 25 hours ahead (pending orders complete, pending deposits expire, Idempotency-Key
 * records are forgotten).
 */
const groupArb: fc.Arbitrary<Action[]> = fc.oneof(
  { weight: 12, arbitrary: fc.array(actionArb, { minLength: 1, maxLength: 6 }) },
  { weight: 1, arbitrary: fc.constant<Action[]>([{ kind: 'tick' }]) },
  {
    weight: 4,
    arbitrary: fc.tuple(actionArb, fc.integer({ min: 2, max: 6 })).map(([action, n]) => Array.from({ length: n }, () => action)),
  },
);

const worldArb = fc.record({
  balances: fc.array(fc.oneof(fc.constantFrom(0, 123, 246, 500, 1230), fc.integer({ min: 1000, max: 8000 })), {
    minLength: USERS,
    maxLength: USERS,
  }),
  stock: fc.array(fc.integer({ min: 0, max: 15 }), { minLength: PRODUCTS.length, maxLength: PRODUCTS.length }),
  cap: fc.constantFrom(0, 1, 2, PINNED_CAP, PINNED_CAP, 1000),
});

// ---------------------------------------------------------------------------------------------------------------
// The model
// ---------------------------------------------------------------------------------------------------------------

type Gateway = 'gateway_one' | 'gateway_two' | 'gateway_three';
const GATEWAYS: Gateway[] = ['gateway_one', 'gateway_two', 'gateway_three'];

interface MKey {
  id: number;
  key: string;
  owner: number;
  revoked: boolean;
}
interface MUser {
  idx: number;
  id: number;
  key: string;
  balance: number; // cents
  keys: MKey[]; // keys created during the run (the first key is never revoked: every other request uses it)
  cancels: number; // successful cancellations (all within the last 24 hours: the run's clock does not move)
}
interface MProduct {
  idx: number;
  id: number;
  price: number; // cents
  allowed: number[] | null;
  prefix: string;
  all: Set<string>; // every item ever stocked (the unique index skips them forever)
  available: string[]; // in id order while orderKnown
  orderKnown: boolean;
  cancellable: boolean; // false: final sale
}
interface MOrder {
  id: number;
  u: number;
  p: number;
  total: number;
  status: 'pending' | 'cancelled' | 'completed';
  items: string[];
  cancellable: boolean; // the product's flag when it was bought
}
interface MDeposit {
  id: number;
  u: number;
  amount: number;
  gateway: Gateway;
  status: 'pending' | 'paid' | 'failed' | 'expired';
}
interface World {
  users: MUser[];
  products: MProduct[];
  orders: MOrder[];
  deposits: MDeposit[];
  /** `${user}|${key}` -> the request that holds the key and its stored response */
  idem: Map<string, { body: string; text: string }>;
  idemPrefix: string;
  cap: number; // MAX_CANCELS_PER_DAY of this run
  startedAt: string; // ISO time before the run's first request
}

/**
 * Audit rows already reported before the current run. Storage is shared by the runs of this file, and the audit reads
 * the whole database: a run is blamed only for violations it introduced, so that when one run breaks an invariant the
 * runs fast-check replays while shrinking are judged on their own. (With a correct service the audit is always [].)
 */
const knownViolations = new Set<string>();
/** False while a run is under way: a run that failed before its audit may have left violations behind. */
let auditedSinceLastRun = true;

async function recordKnownViolations() {
  for (const { check, rows } of await auditLedger(env.DB)) for (const row of rows) knownViolations.add(`${check}|${JSON.stringify(row)}`);
}

/** Items delivered by any 201 purchase, in any run of this file -> the order that got them. */
const delivered = new Map<string, number>();
const stats = { runs: 0, groups: 0, concurrentGroups: 0, requests: 0, setupMs: 0, groupsMs: 0, verifyMs: 0, byOutcome: new Map<string, number>() };

const activeKeys = (w: World, u: number) => 1 + w.users[u].keys.filter((k) => !k.revoked).length;
const validQuantity = (q: number) => Number.isInteger(q) && q >= 1 && q <= 1000;
const bodyKey = (p: number, q: number) => `${p}:${q}`;

// ---------------------------------------------------------------------------------------------------------------
// Resolved actions: concrete ids from the model state before the group
// ---------------------------------------------------------------------------------------------------------------

type R =
  | { kind: 'purchase'; u: number; p: number; q: number; idemKey: string | null }
  | { kind: 'cancel'; u: number; orderId: number; order?: MOrder }
  | { kind: 'deposit'; u: number; amount: number; gateway: string; valid: boolean }
  | { kind: 'webhook'; dep?: MDeposit; depositId: number; status: HookStatus; variant: HookVariant; path: Gateway; secret: string; amount: number }
  | { kind: 'markPaid'; dep?: MDeposit; depositId: number }
  | { kind: 'adjust'; u: number; cents: number }
  | { kind: 'restock'; p: number; items: string[] }
  | { kind: 'createKey'; u: number }
  | { kind: 'revokeKey'; u: number; keyId: number; target?: MKey }
  | { kind: 'balance'; u: number; key: string; entry?: MKey }
  | { kind: 'setCancellable'; p: number; value: boolean };

const BOGUS_ID = 1_999_999_999;

function resolve(w: World, a: Action): R {
  switch (a.kind) {
    case 'purchase': {
      if (a.idem === null) return { kind: 'purchase', u: a.u, p: a.p, q: a.q, idemKey: null };
      // with sameBody, a key always goes with the same request (so it is replayed), else with a random one (422)
      const [p, q] = a.sameBody ? [a.idem, a.idem === 1 ? 2 : 1] : [a.p, a.q];
      return { kind: 'purchase', u: a.u, p, q, idemKey: `${w.idemPrefix}-${a.idem}` };
    }
    case 'cancel': {
      // mostly the user's own orders (the newest first), else anybody's; sometimes an id that does not exist
      const own = w.orders.filter((o) => o.u === a.u).reverse();
      const pool = a.own && own.length > 0 ? own.slice(0, 4) : w.orders;
      const order = pool.length > 0 && a.order % 8 !== 7 ? pool[a.order % pool.length] : undefined;
      return { kind: 'cancel', u: a.u, orderId: order?.id ?? BOGUS_ID, order };
    }
    case 'deposit': {
      const cents = Math.round(a.amount * 100);
      const valid = cents / 100 === a.amount && cents >= 100 && cents <= 1_000_000 && a.gateway !== 'paypal';
      return { kind: 'deposit', u: a.u, amount: a.amount, gateway: a.gateway, valid };
    }
    case 'webhook': {
      // mostly one of the 4 newest deposits (so events meet pending deposits), else any
      const recent = a.dep % 3 === 0 ? w.deposits : w.deposits.slice(-4);
      const dep = a.variant !== 'unknown' && recent.length > 0 ? recent[a.dep % recent.length] : undefined;
      const own: Gateway = dep?.gateway ?? 'gateway_one';
      const other = GATEWAYS.filter((g) => g !== own)[a.dep % 2];
      const variant: HookVariant = dep ? a.variant : 'unknown';
      const path = variant === 'wrongGateway' ? other : own;
      const secret = WEBHOOK_SECRETS[variant === 'badSignature' ? other : path];
      const amount = dep ? dep.amount + (variant === 'wrongAmount' ? 100 : 0) : 500;
      return { kind: 'webhook', dep, depositId: dep?.id ?? BOGUS_ID, status: a.status, variant, path, secret, amount };
    }
    case 'markPaid': {
      const dep = w.deposits.length > 0 && a.dep % 8 !== 7 ? w.deposits[a.dep % w.deposits.length] : undefined;
      return { kind: 'markPaid', dep, depositId: dep?.id ?? BOGUS_ID };
    }
    case 'adjust':
      return { kind: 'adjust', u: a.u, cents: a.cents };
    case 'restock':
      return { kind: 'restock', p: a.p, items: a.items.map((i) => `${w.products[a.p].prefix}-${i}`) };
    case 'createKey':
      return { kind: 'createKey', u: a.u };
    case 'revokeKey': {
      const pool = a.other ? w.users.filter((x) => x.idx !== a.u).flatMap((x) => x.keys) : w.users[a.u].keys;
      const target = pool.length > 0 ? pool[a.key % pool.length] : undefined;
      return { kind: 'revokeKey', u: a.u, keyId: target?.id ?? BOGUS_ID, target };
    }
    case 'setCancellable':
      return { kind: 'setCancellable', p: a.p, value: a.value };
    case 'tick':
      throw new Error('a tick runs alone');
    case 'balance': {
      const keys = w.users[a.u].keys;
      const entry = keys.length > 0 && a.key % 3 !== 0 ? keys[a.key % keys.length] : undefined;
      return { kind: 'balance', u: a.u, key: entry?.key ?? w.users[a.u].key, entry };
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Sending
// ---------------------------------------------------------------------------------------------------------------

interface Res {
  status: number;
  json: any;
  text: string;
  replayed: boolean;
}

async function send(w: World, r: R): Promise<Res> {
  const key = (u: number) => w.users[u].key;
  let path: string;
  let options: CallOptions;
  switch (r.kind) {
    case 'purchase':
      path = '/orders';
      options = { key: key(r.u), body: { product_id: w.products[r.p].id, quantity: r.q }, headers: r.idemKey ? { 'Idempotency-Key': r.idemKey } : {} };
      break;
    case 'cancel':
      path = `/orders/${r.orderId}/cancel`;
      options = { method: 'POST', key: key(r.u), vars: w.cap === PINNED_CAP ? undefined : { MAX_CANCELS_PER_DAY: String(w.cap) } };
      break;
    case 'deposit':
      path = '/wallet/deposit';
      options = { key: key(r.u), body: { amount: r.amount, gateway: r.gateway } };
      break;
    case 'webhook': {
      const payload = { deposit_id: r.depositId, status: r.status, amount: r.amount / 100, transaction_id: unique('tx') };
      const signed = await signedWebhook(r.path, payload, { secret: r.secret });
      path = `/webhooks/${r.path}`;
      options = { method: 'POST', body: signed.body, headers: signed.headers };
      break;
    }
    case 'markPaid':
      path = `/admin/deposits/${r.depositId}/mark-paid`;
      options = { method: 'POST', admin: true };
      break;
    case 'adjust':
      path = `/admin/users/${w.users[r.u].id}/balance-adjustments`;
      options = { admin: true, body: { amount: r.cents / 100, description: 'model test adjustment' } };
      break;
    case 'restock':
      path = `/admin/products/${w.products[r.p].id}/stock`;
      options = { admin: true, body: { items: r.items } };
      break;
    case 'createKey':
      path = '/api-keys';
      options = { key: key(r.u), body: { name: unique('model-key') } };
      break;
    case 'revokeKey':
      path = `/api-keys/${r.keyId}`;
      options = { method: 'DELETE', key: key(r.u) };
      break;
    case 'balance':
      path = '/wallet/balance';
      options = { key: r.key };
      break;
    case 'setCancellable':
      path = `/admin/products/${w.products[r.p].id}`;
      options = { method: 'PATCH', admin: true, body: { cancellable: r.value } };
      break;
  }
  try {
    const res = await call(path, options);
    return { status: res.status, json: res.json, text: res.text, replayed: res.headers.get('Idempotent-Replayed') === 'true' };
  } catch (err) {
    // the request itself threw (the helpers' response check, or the fetch): reported as a failure of this request
    return { status: 599, json: undefined, text: `request threw: ${err instanceof Error ? err.message : String(err)}`, replayed: false };
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Bounds over the interleavings of one group
// ---------------------------------------------------------------------------------------------------------------

const isIdemTwin = (a: R, b: R) => a !== b && a.kind === 'purchase' && b.kind === 'purchase' && a.idemKey !== null && a.idemKey === b.idemKey && a.u === b.u;

/** Could this purchase create an order (valid quantity and pack size, no Idempotency-Key record yet)? */
function canBuy(w: World, r: Extract<R, { kind: 'purchase' }>) {
  const p = w.products[r.p];
  if (!validQuantity(r.q) || (p.allowed && !p.allowed.includes(r.q))) return false;
  return !(r.idemKey && w.idem.has(`${r.u}|${r.idemKey}`));
}

/** The user's own pending, cancellable orders that the group's requests of that user try to cancel. */
const cancellableTargets = (group: R[], u: number) =>
  new Set(group.flatMap((b) => (b.kind === 'cancel' && b.u === u && b.order && b.order.u === u && b.order.status === 'pending' && b.order.cancellable ? [b.order] : [])));

const isValidPaid = (r: R): r is Extract<R, { kind: 'webhook' }> & { dep: MDeposit } => r.kind === 'webhook' && !!r.dep && r.variant === 'ok' && r.status === 'paid';
const isValidClose = (r: R): r is Extract<R, { kind: 'webhook' }> & { dep: MDeposit } =>
  r.kind === 'webhook' && !!r.dep && r.status !== 'paid' && (r.variant === 'ok' || r.variant === 'wrongAmount');
const paysDeposit = (r: R): MDeposit | undefined => (isValidPaid(r) ? r.dep : r.kind === 'markPaid' ? r.dep : undefined);

/** [lowest, highest] balance of user u that `self` can observe, whatever the order of the rest of the group. */
function balanceBounds(w: World, group: R[], self: R | null, u: number): [number, number] {
  let min = w.users[u].balance;
  let max = min;
  const credited = new Set<string>();
  for (const b of group) {
    if (b === self || (self && isIdemTwin(self, b))) continue;
    if (b.kind === 'purchase' && b.u === u && canBuy(w, b)) min -= w.products[b.p].price * b.q;
    if (b.kind === 'adjust' && b.u === u) {
      if (b.cents < 0) min += b.cents;
      else max += b.cents;
    }
    if (b.kind === 'cancel' && b.order && b.order.u === u && b.u === u && b.order.status === 'pending' && !credited.has(`o${b.order.id}`)) {
      credited.add(`o${b.order.id}`);
      max += b.order.total;
    }
    const dep = paysDeposit(b);
    if (dep && dep.u === u && dep.status !== 'paid' && !credited.has(`d${dep.id}`)) {
      credited.add(`d${dep.id}`);
      max += dep.amount;
    }
  }
  return [min, max];
}

/** Items a restock of the group adds at most (distinct, not yet stocked), in request order. */
const newItems = (w: World, r: Extract<R, { kind: 'restock' }>) => [...new Set(r.items)].filter((i) => !w.products[r.p].all.has(i));

function stockBounds(w: World, group: R[], self: R, p: number): [number, number] {
  let min = w.products[p].available.length;
  const added = new Set<string>();
  for (const b of group) {
    if (b === self || isIdemTwin(self, b)) continue;
    if (b.kind === 'purchase' && b.p === p && canBuy(w, b)) min -= b.q;
    if (b.kind === 'restock' && b.p === p) for (const i of newItems(w, b)) added.add(i);
  }
  return [min, w.products[p].available.length + added.size];
}

// ---------------------------------------------------------------------------------------------------------------
// Expected outcomes
// ---------------------------------------------------------------------------------------------------------------

/** An allowed outcome: a status and, for errors, a code (undefined: any code). */
type Outcome = [number, string?];
const OK = (status: number): Outcome => [status];
const ERR = (status: number, code?: string): Outcome => [status, code];

function allowedOutcomes(w: World, group: R[], r: R): Outcome[] {
  switch (r.kind) {
    case 'purchase': {
      if (!validQuantity(r.q)) return [ERR(422, 'VALIDATION_FAILED')];
      const record = r.idemKey ? w.idem.get(`${r.u}|${r.idemKey}`) : undefined;
      if (record) return record.body === bodyKey(r.p, r.q) ? [OK(201)] : [ERR(422, 'IDEMPOTENCY_KEY_REUSED')];
      const product = w.products[r.p];
      const twins = group.filter((b) => isIdemTwin(r, b)) as Extract<R, { kind: 'purchase' }>[];
      const loose: Outcome[] = twins.some((t) => t.p !== r.p || t.q !== r.q) ? [OK(201), ERR(422, 'IDEMPOTENCY_KEY_REUSED')] : [];
      if (product.allowed && !product.allowed.includes(r.q)) return [ERR(400, 'INVALID_PACK_SIZE'), ...loose];
      const required = product.price * r.q;
      const [minStock, maxStock] = stockBounds(w, group, r, r.p);
      const [minBalance, maxBalance] = balanceBounds(w, group, r, r.u);
      const STOCK = ERR(400, 'INSUFFICIENT_STOCK');
      const BALANCE = ERR(400, 'INSUFFICIENT_BALANCE');
      if (minStock >= r.q && minBalance >= required) return [OK(201), ...loose];
      if (maxStock < r.q) return [STOCK, ...loose];
      if (maxBalance < required && minStock >= r.q) return [BALANCE, ...loose];
      if (maxBalance < required) return [STOCK, BALANCE, ...loose];
      return [OK(201), STOCK, BALANCE, ...loose];
    }
    case 'cancel': {
      const o = r.order;
      if (!o || o.u !== r.u) return [ERR(404, 'NOT_FOUND')];
      if (o.status !== 'pending' || !o.cancellable) return [ERR(400, 'ORDER_NOT_CANCELLABLE')];
      const room = w.cap - w.users[r.u].cancels;
      if (room <= 0) return [ERR(400, 'CANCEL_LIMIT_REACHED')];
      const outcomes = [OK(200)];
      // a racing cancel of the same order that wins first leaves it cancelled: not cancellable any more
      if (group.some((b) => b !== r && b.kind === 'cancel' && b.order === o && b.u === o.u)) outcomes.push(ERR(400, 'ORDER_NOT_CANCELLABLE'));
      // racing cancels of other orders may use up the room first
      if (cancellableTargets(group, r.u).size - 1 >= room) outcomes.push(ERR(400, 'CANCEL_LIMIT_REACHED'));
      return outcomes;
    }
    case 'deposit':
      return r.valid ? [OK(200)] : [ERR(422, 'VALIDATION_FAILED')];
    case 'webhook':
      if (!r.dep || r.variant === 'unknown' || r.variant === 'wrongGateway') return [ERR(404, 'NOT_FOUND')];
      if (r.variant === 'badSignature') return [ERR(401, 'UNAUTHORIZED')];
      if (r.variant === 'wrongAmount' && r.status === 'paid') return [ERR(400)];
      return [OK(200)];
    case 'markPaid':
      return r.dep ? [OK(200)] : [ERR(404, 'NOT_FOUND')];
    case 'adjust': {
      if (r.cents > 0) return [OK(201)];
      const [min, max] = balanceBounds(w, group, r, r.u);
      if (min + r.cents >= 0) return [OK(201)];
      if (max + r.cents < 0) return [ERR(400, 'INSUFFICIENT_BALANCE')];
      return [OK(201), ERR(400, 'INSUFFICIENT_BALANCE')];
    }
    case 'restock':
      return [OK(201)];
    case 'createKey': {
      const active = activeKeys(w, r.u);
      const creates = group.filter((b) => b !== r && b.kind === 'createKey' && b.u === r.u).length;
      const revokes = new Set(group.filter((b) => b.kind === 'revokeKey' && b.u === r.u && b.target && b.target.owner === r.u && !b.target.revoked).map((b) => (b as { keyId: number }).keyId)).size;
      if (active + creates < 5) return [OK(201)];
      if (active - revokes >= 5) return [ERR(400, 'API_KEY_LIMIT_REACHED')];
      return [OK(201), ERR(400, 'API_KEY_LIMIT_REACHED')];
    }
    case 'revokeKey': {
      const t = r.target;
      if (!t || t.owner !== r.u || t.revoked) return [ERR(404, 'NOT_FOUND')];
      const racing = group.some((b) => b !== r && b.kind === 'revokeKey' && b.u === r.u && b.target === t);
      return racing ? [OK(200), ERR(404, 'NOT_FOUND')] : [OK(200)];
    }
    case 'setCancellable':
      return [OK(200)];
    case 'balance': {
      if (!r.entry) return [OK(200)];
      if (r.entry.revoked) return [ERR(401, 'UNAUTHORIZED')];
      const racing = group.some((b) => b.kind === 'revokeKey' && b.u === r.u && b.target === r.entry);
      return racing ? [OK(200), ERR(401, 'UNAUTHORIZED')] : [OK(200)];
    }
  }
}

const describeR = (w: World, r: R): string => {
  switch (r.kind) {
    case 'purchase':
      return `purchase(u${r.u} product#${w.products[r.p].id} q=${r.q}${r.idemKey ? ` key=${r.idemKey}` : ''})`;
    case 'cancel':
      return `cancel(u${r.u} order#${r.orderId}${r.order ? ` of u${r.order.u}, ${r.order.status}${r.order.cancellable ? '' : ', final sale'}` : ''})`;
    case 'deposit':
      return `deposit(u${r.u} ${r.amount} ${r.gateway})`;
    case 'webhook':
      return `webhook(${r.path} deposit#${r.depositId}${r.dep ? ` ${r.dep.gateway} ${r.dep.status}` : ''} ${r.status} ${r.variant})`;
    case 'markPaid':
      return `markPaid(deposit#${r.depositId}${r.dep ? ` ${r.dep.status}` : ''})`;
    case 'adjust':
      return `adjust(u${r.u} ${r.cents}c)`;
    case 'restock':
      return `restock(product#${w.products[r.p].id} ${r.items.length} items)`;
    case 'createKey':
      return `createKey(u${r.u})`;
    case 'revokeKey':
      return `revokeKey(u${r.u} key#${r.keyId}${r.target ? ` of u${r.target.owner}${r.target.revoked ? ' revoked' : ''}` : ''})`;
    case 'setCancellable':
      return `setCancellable(product#${w.products[r.p].id} ${r.value})`;
    case 'balance':
      return `balance(u${r.u}${r.entry ? ` key#${r.entry.id}${r.entry.revoked ? ' revoked' : ''}` : ''})`;
  }
};

// ---------------------------------------------------------------------------------------------------------------
// Running a group
// ---------------------------------------------------------------------------------------------------------------

const cents = (amount: number) => Math.round(amount * 100);

/** The worker's own `scheduled` handler, as the cron trigger would run it, 25 hours from now. */
async function tick(w: World, log: string[]) {
  const handler: ExportedHandler<Cloudflare.Env> = worker;
  const ctx = createExecutionContext();
  await handler.scheduled!(createScheduledController({ scheduledTime: Date.now() + 25 * 3_600_000, cron: '*/5 * * * *' }), env, ctx);
  await waitOnExecutionContext(ctx);
  for (const o of w.orders) if (o.status === 'pending') o.status = 'completed';
  for (const d of w.deposits) if (d.status === 'pending') d.status = 'expired';
  w.idem.clear();
  log.push('[scheduled jobs, 25 h later]');
}

async function runGroup(w: World, actions: Action[], log: string[]) {
  if (actions.some((a) => a.kind === 'tick')) return tick(w, log);
  const group = actions.map((a) => resolve(w, a));
  const expected = group.map((r) => allowedOutcomes(w, group, r));
  // balance bounds and balances before any reconciliation of this group
  const preBounds = group.map((r) => (r.kind === 'adjust' || r.kind === 'balance' ? balanceBounds(w, group, r, r.u) : null));
  const preBalance = w.users.map((u) => u.balance);
  stats.groups++;
  if (group.length > 1) stats.concurrentGroups++;

  const responses = await Promise.all(group.map((r) => send(w, r)));
  stats.requests += responses.length;

  const ctx = (i: number) =>
    `\n  request: ${describeR(w, group[i])}\n  group: [${group.map((r) => describeR(w, r)).join(', ')}]\n  response: ${responses[i].status} ${responses[i].text.slice(0, 600)}\n  history:\n    ${log.slice(-12).join('\n    ')}`;

  // --- every response: no 5xx, error envelope, an allowed outcome
  responses.forEach((res, i) => {
    const outcome = `${group[i].kind} ${res.status}${res.status >= 400 ? ` ${res.json?.code}` : res.replayed ? ' replayed' : ''}${group.length > 1 ? '' : ' (alone)'}`;
    stats.byOutcome.set(outcome, (stats.byOutcome.get(outcome) ?? 0) + 1);
    expect(res.status, `${res.status === 599 ? 'request threw' : '5xx response'}${ctx(i)}`).toBeLessThan(500);
    if (res.status >= 400) {
      expect(res.json, `error envelope${ctx(i)}`).toMatchObject({ success: false });
      expect(typeof res.json.error, `error.error${ctx(i)}`).toBe('string');
      expect(typeof res.json.code, `error.code${ctx(i)}`).toBe('string');
    } else {
      expect(res.json?.success, `success envelope${ctx(i)}`).toBe(true);
    }
    const ok = expected[i].some(([status, code]) => status === res.status && (code === undefined || code === res.json?.code));
    expect(ok, `outcome not allowed by the model: expected one of ${JSON.stringify(expected[i])}${ctx(i)}`).toBe(true);
  });
  log.push(`[${group.map((r, i) => `${describeR(w, r)} -> ${responses[i].status}${responses[i].status >= 400 ? ` ${responses[i].json?.code}` : responses[i].replayed ? ' (replay)' : ''}`).join(' | ')}]`);

  const at = <K extends R['kind']>(kind: K) =>
    group.flatMap((r, i) => (r.kind === kind ? [{ r: r as Extract<R, { kind: K }>, res: responses[i], i }] : []));

  // --- restocks (before purchases: a purchase may take items of a restock it raced with)
  const groupNew = new Map<number, string[]>(); // product idx -> new items of this group, request order
  for (const p of w.products) {
    const restocks = at('restock').filter((x) => x.r.p === p.idx);
    if (restocks.length === 0) continue;
    const union = [...new Set(restocks.flatMap((x) => newItems(w, x.r)))];
    const adders = restocks.filter((x) => newItems(w, x.r).length > 0).length;
    const purchasesOfP = group.some((b) => b.kind === 'purchase' && b.p === p.idx);
    let addedTotal = 0;
    for (const { r, res, i } of restocks) {
      const { added, skipped, stock_count } = res.json.data;
      addedTotal += added;
      expect(added + skipped, `restock added + skipped${ctx(i)}`).toBe(r.items.length);
      if (restocks.length === 1) expect(added, `restock added${ctx(i)}`).toBe(union.length);
      if (!purchasesOfP) {
        if (restocks.length === 1) expect(stock_count, `restock stock_count${ctx(i)}`).toBe(p.available.length + union.length);
        else expect(stock_count).toBeLessThanOrEqual(p.available.length + union.length);
      }
    }
    expect(addedTotal, `racing restocks add each new item once (product ${p.id})`).toBe(union.length);
    for (const item of restocks.flatMap((x) => x.r.items)) p.all.add(item);
    groupNew.set(p.idx, union);
    if (adders > 1) p.orderKnown = false; // which racing restock inserted first is unknown
  }

  // --- purchases
  const newOrders: MOrder[] = [];
  const purchases = at('purchase');
  for (const { r, res, i } of purchases) {
    if (res.status !== 201) continue;
    const product = w.products[r.p];
    const o = res.json.data;
    expect(o, `order body${ctx(i)}`).toMatchObject({
      product_id: product.id,
      quantity: r.q,
      unit_price: product.price / 100,
      total_amount: (product.price * r.q) / 100,
    });
    expect(o.stock_items, `stock_items${ctx(i)}`).toHaveLength(r.q);
    const record = r.idemKey ? w.idem.get(`${r.u}|${r.idemKey}`) : undefined;
    if (record) {
      expect(res.replayed, `replay header${ctx(i)}`).toBe(true);
      expect(res.text, `replayed byte for byte${ctx(i)}`).toBe(record.text);
      continue;
    }
    if (res.replayed) {
      expect(r.idemKey, `replay without a key${ctx(i)}`).not.toBeNull();
      continue; // checked against the winner below
    }
    expect(o.status, `new order status${ctx(i)}`).toBe('pending');
    // the product's flag at purchase: the one before the group, or one a racing change of the product set
    const flags = [product.cancellable, ...at('setCancellable').filter((x) => x.r.p === r.p).map((x) => x.r.value)];
    expect(flags, `order cancellable is the product's flag at purchase${ctx(i)}`).toContain(o.cancellable);
    newOrders.push({ id: o.id, u: r.u, p: r.p, total: product.price * r.q, status: 'pending', items: o.stock_items, cancellable: o.cancellable });
  }
  // Idempotency-Key: at most one effect per (user, key); every replay is the winner's bytes; 422 only after a winner.
  const keyGroups = new Map<string, typeof purchases>();
  for (const x of purchases) if (x.r.idemKey && !w.idem.has(`${x.r.u}|${x.r.idemKey}`)) keyGroups.set(`${x.r.u}|${x.r.idemKey}`, [...(keyGroups.get(`${x.r.u}|${x.r.idemKey}`) ?? []), x]);
  for (const [k, xs] of keyGroups) {
    const winners = xs.filter((x) => x.res.status === 201 && !x.res.replayed);
    expect(winners.length, `one effect per Idempotency-Key ${k}${ctx(xs[0].i)}`).toBeLessThanOrEqual(1);
    const winner = winners[0];
    for (const x of xs) {
      if (x.res.status === 201 && x.res.replayed) {
        expect(winner, `replay without a first request${ctx(x.i)}`).toBeDefined();
        expect(bodyKey(x.r.p, x.r.q), `replay of another body${ctx(x.i)}`).toBe(bodyKey(winner!.r.p, winner!.r.q));
        expect(x.res.text, `replay bytes${ctx(x.i)}`).toBe(winner!.res.text);
      }
      if (x.res.status === 422 && x.res.json.code === 'IDEMPOTENCY_KEY_REUSED') {
        expect(winner && bodyKey(winner.r.p, winner.r.q) !== bodyKey(x.r.p, x.r.q), `422 reused without a different winner${ctx(x.i)}`).toBe(true);
      }
    }
    if (winner) w.idem.set(k, { body: bodyKey(winner.r.p, winner.r.q), text: winner.res.text });
  }
  // Items: every delivered item was available (or added by a racing restock), none twice; the group's purchases of
  // a product took the lowest-id available items (ids grow in stocking order).
  for (const p of w.products) {
    const mine = newOrders.filter((o) => o.p === p.idx);
    const pool = [...p.available, ...(groupNew.get(p.idx) ?? [])];
    const taken = mine.flatMap((o) => o.items);
    expect(new Set(taken).size, `items delivered twice within a group (product ${p.id})`).toBe(taken.length);
    for (const o of mine) {
      for (const item of o.items) {
        expect(pool, `order ${o.id} delivered ${item}, not available`).toContain(item);
        expect(delivered.get(item), `item ${item} delivered by order ${delivered.get(item)} and again by order ${o.id}`).toBeUndefined();
        delivered.set(item, o.id);
      }
    }
    if (p.orderKnown) expect([...taken].sort(), `lowest-id items first (product ${p.id})`).toEqual(pool.slice(0, taken.length).sort());
    const takenSet = new Set(taken);
    p.available = pool.filter((i) => !takenSet.has(i));
    if (p.available.length === 0) p.orderKnown = true;
  }
  for (const o of newOrders) w.users[o.u].balance -= o.total;
  w.orders.push(...newOrders);

  // --- cancels: each cancellable order targeted by its owner is cancelled once, or (cap reached) not at all, and
  // each user's cancels stop exactly at the cap: min(targets, room) of them succeed
  const cancels = at('cancel');
  const targetsOf = new Map(w.users.map((u) => [u.idx, cancellableTargets(group, u.idx)]));
  const roomOf = new Map(w.users.map((u) => [u.idx, Math.max(0, w.cap - u.cancels)]));
  for (const o of new Set(cancels.map((x) => x.r.order).filter((o): o is MOrder => !!o))) {
    const mine = cancels.filter((x) => x.r.order === o);
    const okays = mine.filter((x) => x.res.status === 200);
    if (targetsOf.get(o.u)!.has(o)) {
      expect(okays.length, `at most one successful cancel of order ${o.id}${ctx(mine[0].i)}`).toBeLessThanOrEqual(1);
      if (okays.length === 0) {
        for (const { res, i } of mine.filter((x) => x.r.u === o.u)) expect(res.json.code, `order ${o.id} stayed pending: over the cap${ctx(i)}`).toBe('CANCEL_LIMIT_REACHED');
        continue;
      }
      const { i, res } = okays[0];
      expect(res.json.data.refunded_amount, `refunded_amount${ctx(i)}`).toBe(o.total / 100);
      expect(res.json.data.order, `cancelled order${ctx(i)}`).toMatchObject({ id: o.id, status: 'cancelled', cancellable: true });
      o.status = 'cancelled';
      w.users[o.u].balance += o.total;
      w.users[o.u].cancels++;
    } else {
      expect(okays.length, `no successful cancel of order ${o.id}${ctx(mine[0].i)}`).toBe(0);
    }
  }
  for (const u of w.users) {
    const done = [...targetsOf.get(u.idx)!].filter((o) => o.status === 'cancelled').length;
    expect(done, `successful cancels of u${u.idx} (cap ${w.cap}, room ${roomOf.get(u.idx)})`).toBe(Math.min(targetsOf.get(u.idx)!.size, roomOf.get(u.idx)!));
  }

  // --- final sale flags
  for (const p of w.products) {
    const flips = at('setCancellable').filter((x) => x.r.p === p.idx);
    for (const { res, i } of flips) expect(res.json.data, `patched product${ctx(i)}`).toMatchObject({ id: p.id });
    const values = new Set(flips.map((x) => x.r.value));
    // racing changes to different values: the last one to commit wins
    if (values.size > 1) p.cancellable = (await env.DB.prepare('SELECT cancellable FROM products WHERE id = ?').bind(p.id).first('cancellable')) === 1;
    else if (values.size === 1) p.cancellable = [...values][0];
  }

  // --- deposits created
  for (const { r, res, i } of at('deposit')) {
    if (res.status !== 200) continue;
    const gateway = (r.gateway === 'crypto' ? 'gateway_one' : r.gateway) as Gateway;
    expect(res.json.data, `created deposit${ctx(i)}`).toMatchObject({ amount: r.amount, payment_method: gateway, status: 'pending' });
    w.deposits.push({ id: res.json.data.deposit_id, u: r.u, amount: cents(r.amount), gateway, status: 'pending' });
  }

  // --- webhooks and mark-paid, per deposit
  const depositActions = group.flatMap((r, i) => ((r.kind === 'webhook' || r.kind === 'markPaid') && r.dep ? [{ r, res: responses[i], i, dep: r.dep }] : []));
  for (const dep of new Set(depositActions.map((x) => x.dep))) {
    const mine = depositActions.filter((x) => x.dep === dep);
    const payers = mine.filter((x) => paysDeposit(x.r) && x.res.status === 200);
    const closers = mine.filter((x) => isValidClose(x.r) && x.res.status === 200);
    for (const { res, i } of payers) expect(res.json.data, `paid deposit${ctx(i)}`).toMatchObject({ id: dep.id, status: 'paid', amount: dep.amount / 100 });
    const racingPaid = mine.some((x) => paysDeposit(x.r));
    for (const { r, res, i } of closers) {
      const status = (r as Extract<R, { kind: 'webhook' }>).status;
      const others = closers.filter((c) => c.r !== r).map((c) => (c.r as Extract<R, { kind: 'webhook' }>).status);
      const possible = dep.status === 'pending' ? [status, ...others] : [dep.status];
      if (racingPaid) possible.push('paid');
      expect(possible, `deposit status after ${status}${ctx(i)}`).toContain(res.json.data.status);
    }
    if (payers.length > 0) {
      if (dep.status !== 'paid') w.users[dep.u].balance += dep.amount;
      dep.status = 'paid';
    } else if (closers.length > 0 && dep.status === 'pending') {
      const finals = new Set(closers.map((c) => c.res.json.data.status));
      expect(finals.size, `racing closes of deposit ${dep.id} agree${ctx(closers[0].i)}`).toBe(1);
      dep.status = [...finals][0];
    }
  }

  // --- adjustments
  for (const { r, res, i } of at('adjust')) {
    if (res.status !== 201) continue;
    expect(res.json.data, `adjustment${ctx(i)}`).toMatchObject({ type: 'adjustment', amount: r.cents / 100 });
    const [min, max] = preBounds[i]!;
    // alone on its user in the group: balance_after is exact
    if (min === max) expect(res.json.data.balance_after, `balance_after${ctx(i)}`).toBe((preBalance[r.u] + r.cents) / 100);
    w.users[r.u].balance += r.cents;
  }

  // --- API keys
  for (const { r, res, i } of at('createKey')) {
    if (res.status !== 201) continue;
    const d = res.json.data;
    expect(d.key, `api key shape${ctx(i)}`).toMatch(/^sk_live_[0-9A-Za-z]{40}$/);
    expect(d.api_key).toBe(d.key);
    expect(d.key_preview).toBe(`sk_live_****${d.key.slice(-4)}`);
    w.users[r.u].keys.push({ id: d.id, key: d.key, owner: r.u, revoked: false });
  }
  const revokes = at('revokeKey');
  for (const t of new Set(revokes.map((x) => x.r.target).filter((t): t is MKey => !!t))) {
    const okays = revokes.filter((x) => x.r.target === t && x.res.status === 200);
    const canRevoke = !t.revoked && revokes.some((x) => x.r.target === t && x.r.u === t.owner);
    expect(okays.length, `revocations of key ${t.id}${ctx(revokes.find((x) => x.r.target === t)!.i)}`).toBe(canRevoke ? 1 : 0);
    if (canRevoke) t.revoked = true;
  }
  for (const { r } of at('createKey')) expect(activeKeys(w, r.u), `at most 5 active keys`).toBeLessThanOrEqual(5);

  // --- balance reads: within what the rest of the group can do to the balance
  for (const { res, i } of at('balance')) {
    if (res.status !== 200) continue;
    const [min, max] = preBounds[i]!;
    const seen = cents(res.json.data.balance);
    expect(seen >= min && seen <= max, `balance ${seen} outside [${min}, ${max}]${ctx(i)}`).toBe(true);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// A run
// ---------------------------------------------------------------------------------------------------------------

async function setUp(init: { balances: number[]; stock: number[]; cap: number }): Promise<World> {
  const startedAt = new Date().toISOString();
  const users: MUser[] = await Promise.all(
    init.balances.map(async (balance, idx) => {
      const u = await newUser();
      if (balance > 0) await fund(u, balance / 100);
      return { idx, id: u.id, key: u.key, balance, keys: [], cancels: 0 };
    }),
  );
  const products: MProduct[] = await Promise.all(
    PRODUCTS.map(async (spec, idx) => {
      const created = await newProduct({ price: spec.price, allowedQuantities: spec.allowed, cancellable: spec.cancellable });
      const prefix = `${unique('IT')}-p${idx}`;
      const items = init.stock[idx] > 0 ? await restock(created.id, init.stock[idx], prefix) : [];
      return { idx, id: created.id, price: cents(spec.price), allowed: spec.allowed, prefix, all: new Set(items), available: items, orderKnown: true, cancellable: spec.cancellable };
    }),
  );
  return { users, products, orders: [], deposits: [], idem: new Map(), idemPrefix: unique('idem'), cap: init.cap, startedAt };
}

/** Every page of a list endpoint. */
async function listAll(path: string, auth: CallOptions): Promise<any[]> {
  const rows: any[] = [];
  for (let page = 1; ; page++) {
    const res = await call(`${path}${path.includes('?') ? '&' : '?'}per_page=100&page=${page}`, auth);
    expect(res.status, res.text).toBe(200);
    rows.push(...res.json.data);
    if (page >= res.json.meta.total_pages) return rows;
  }
}

async function verify(w: World, log: string[]) {
  const history = `\n  history:\n    ${log.join('\n    ')}`;
  const introduced = (await auditLedger(env.DB))
    .map(({ check, rows }) => ({ check, rows: rows.filter((row) => !knownViolations.has(`${check}|${JSON.stringify(row)}`)) }))
    .filter(({ rows }) => rows.length > 0);
  for (const { check, rows } of introduced) for (const row of rows) knownViolations.add(`${check}|${JSON.stringify(row)}`);
  auditedSinceLastRun = true;
  expect(introduced, `auditLedger (violations introduced by this run)${history}`).toEqual([]);
  await Promise.all(
    w.users.map(async (u) => {
      const [balance, keys, orders, deposits] = await Promise.all([
        call('/wallet/balance', { key: u.key }),
        call('/api-keys', { key: u.key }),
        listAll('/orders', { key: u.key }),
        listAll('/wallet/deposits', { key: u.key }),
      ]);
      expect(cents(balance.json.data.balance), `balance of u${u.idx} (user ${u.id})${history}`).toBe(u.balance);
      expect(keys.json.data.length, `active API keys of u${u.idx}${history}`).toBe(activeKeys(w, u.idx));
      const modelOrders = w.orders.filter((o) => o.u === u.idx).map((o) => ({ id: o.id, status: o.status, total_amount: o.total / 100, cancellable: o.cancellable }));
      const apiOrders = orders.map((o) => ({ id: o.id, status: o.status, total_amount: o.total_amount, cancellable: o.cancellable }));
      expect(apiOrders.sort((x, y) => x.id - y.id), `orders of u${u.idx}${history}`).toEqual(modelOrders.sort((x, y) => x.id - y.id));
      const modelDeposits = w.deposits.filter((d) => d.u === u.idx).map((d) => ({ id: d.id, status: d.status, amount: d.amount / 100, payment_method: d.gateway }));
      const apiDeposits = deposits.map((d) => ({ id: d.id, status: d.status, amount: d.amount, payment_method: d.payment_method }));
      expect(apiDeposits.sort((x, y) => x.id - y.id), `deposits of u${u.idx}${history}`).toEqual(modelDeposits.sort((x, y) => x.id - y.id));
    }),
  );
  // Items, straight from D1: available ones as the model says (in id order when known), sold ones attached to the
  // pending order that delivered them, revoked ones to the cancelled one.
  const orderOf = new Map(w.orders.flatMap((o) => o.items.map((item) => [item, o] as const)));
  for (const p of w.products) {
    const { results } = await env.DB.prepare('SELECT content, status, order_id, (SELECT stock_count FROM products WHERE id = ?1) AS stock_count FROM stock_items WHERE product_id = ?1 ORDER BY id')
      .bind(p.id)
      .all<{ content: string; status: string; order_id: number | null; stock_count: number }>();
    const available = results.filter((r) => r.status === 'available').map((r) => r.content);
    if (p.orderKnown) expect(available, `available items of product ${p.id} in id order${history}`).toEqual(p.available);
    else expect([...available].sort(), `available items of product ${p.id}${history}`).toEqual([...p.available].sort());
    expect(results.map((r) => r.content).sort(), `all items of product ${p.id}`).toEqual([...p.all].sort());
    for (const r of results.filter((x) => x.status !== 'available')) {
      const o = orderOf.get(r.content);
      expect({ item: r.content, order: r.order_id, status: r.status }, `item of product ${p.id}${history}`).toEqual({
        item: r.content,
        order: o?.id,
        status: o?.status === 'cancelled' ? 'revoked' : 'sold',
      });
    }
    if (results.length > 0) expect(results[0].stock_count, `stock_count of product ${p.id}`).toBe(p.available.length);
  }
  // The operator's feed: exactly the items of this run's cancelled orders (other runs' users are filtered out).
  const runUsers = new Set(w.users.map((u) => u.id));
  const feed = (await listAll(`/admin/revoked-items?since=${encodeURIComponent(w.startedAt)}`, { admin: true })).filter((r) => runUsers.has(r.user_id));
  const cancelledItems = w.orders.filter((o) => o.status === 'cancelled').flatMap((o) => o.items.map((item) => `${o.id}|${item}`));
  expect(feed.map((r) => `${r.order_id}|${r.item}`).sort(), `revoked-items feed${history}`).toEqual(cancelledItems.sort());
}

describe('model-based concurrency (fast-check)', () => {
  it('random concurrent groups of requests from several users keep the model, the ledger and the stock consistent', async () => {
    const started = Date.now();
    const details = await fc.check(
      fc.asyncProperty(worldArb, fc.array(groupArb, { minLength: 1, maxLength: MAX_GROUPS, size: 'max' }), async (init, groups) => {
        stats.runs++;
        let t = Date.now();
        if (!auditedSinceLastRun) await recordKnownViolations(); // the previous run failed: don't blame this one
        auditedSinceLastRun = false;
        const w = await setUp(init);
        stats.setupMs += Date.now() - t;
        t = Date.now();
        const log: string[] = [];
        for (const actions of groups) await runGroup(w, actions, log);
        stats.groupsMs += Date.now() - t;
        t = Date.now();
        await verify(w, log);
        stats.verifyMs += Date.now() - t;
      }),
      { seed: SEED, path: PATH, numRuns: NUM_RUNS, endOnFailure: NO_SHRINK, interruptAfterTimeLimit: TIME_LIMIT_MS },
    );
    if (details.failed) throw new Error(`${details.interrupted ? 'Shrinking stopped at the time limit. ' : ''}${fc.defaultReportMessage(details)}`);
    // fast-check counts an interruption as a pass unless told otherwise: every run must have happened.
    expect(details.interrupted, `interrupted after ${TIME_LIMIT_MS / 1000} s, ${details.numRuns} of ${NUM_RUNS} runs done`).toBe(false);
    if (!PATH) expect(details.numRuns, 'runs of the property').toBe(NUM_RUNS);
    expect(await auditLedger(env.DB), 'auditLedger over everything the runs wrote').toEqual([]);
    const outcomes = [...stats.byOutcome].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, n]) => `${k}: ${n}`);
    console.log(
      `[model.test] seed=${SEED}: ${stats.runs} runs, ${stats.groups} groups (${stats.concurrentGroups} concurrent), ${stats.requests} requests, ` +
        `${delivered.size} items delivered, ${((Date.now() - started) / 1000).toFixed(1)} s ` +
        `(set-up ${stats.setupMs} ms, groups ${stats.groupsMs} ms, verification ${stats.verifyMs} ms)\n  ${outcomes.join('\n  ')}`,
    );
  }, 180_000);
});
