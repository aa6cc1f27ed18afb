// Demo data for local development: one user with a funded wallet and an API key, a demo operator (the console at
// /dashboard/console), a few products with stock, and a month of other customers' history (scripts/demo-history.mjs).
// Passwords use the worker's format (PBKDF2-SHA256, 100k iterations); only the key's SHA-256 hash is stored.
import { createHash, pbkdf2Sync, randomBytes, randomInt } from 'node:crypto';
import { demoHistory, HISTORY_DAYS } from './demo-history.mjs';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export const DEMO_USER = { name: 'Demo User', email: 'demo@example.com', password: 'demo-password' };
export const DEMO_BALANCE_CENTS = 100_00;
export const DEMO_OPERATOR = { name: 'Demo Operator', email: 'operator@example.com', password: 'operator-password' };

// The gift card is final sale (`cancellable: false`): a disclosed gift code cannot be revoked at the vendor. The
// licence has a 72-hour replacement warranty, so the demo shows "Report a problem" and the claims it opens.
const PRODUCTS = [
  { name: 'Steam Gift Card $10', sku: 'STEAM-10', category: 'gift-cards', priceCents: 950, stock: 20, prefix: 'STEAM', cancellable: false },
  { name: 'Netflix Premium 1 Month', sku: 'NFLX-1M', category: 'streaming', priceCents: 499, stock: 15, prefix: 'NFLX' },
  { name: 'Windows 11 Pro Licence', sku: 'WIN11-PRO', category: 'software', priceCents: 1200, stock: 10, prefix: 'W11P', warrantyHours: 72 },
  { name: 'Indie Game Key (packs of 5, 10, 25)', sku: 'INDIE-KEY', category: 'games', priceCents: 75, stock: 60, prefix: 'GAME', packs: [5, 10, 25] },
];

const sqlString = (value) => `'${String(value).replaceAll("'", "''")}'`;

function hashPassword(password) {
  const salt = randomBytes(16);
  const hash = pbkdf2Sync(password, salt, 100_000, 32, 'sha256');
  return `pbkdf2_sha256$100000$${salt.toString('base64')}$${hash.toString('base64')}`;
}

export function newApiKey(prefix = 'sk_live_') {
  let body = '';
  for (let i = 0; i < 40; i++) body += BASE62[randomInt(62)];
  const key = `${prefix}${body}`;
  return { key, hash: createHash('sha256').update(key).digest('hex'), preview: `${prefix}****${key.slice(-4)}` };
}

/**
 * SQL that seeds an empty test-mode sandbox (SANDBOX_DB, docs/test-mode.md) as the worker would make it: the demo user
 * (same id, no password) with its $1,000.00 of test money and a demo test key, and the catalogue's copy with generated
 * `TEST-<SKU>-<random>` stock (the worker refreshes it from the live shop on every scheduled run and operator change).
 */
export function sandboxSeedSql({ now = new Date() } = {}) {
  const apiKey = newApiKey('sk_test_');
  const at = sqlString(now.toISOString());
  const lines = [
    `INSERT INTO users (id, name, email, password_hash, balance_cents, created_at, updated_at, email_receipts) VALUES (1, ${sqlString(DEMO_USER.name)}, ${sqlString(DEMO_USER.email)}, '!', 100000, ${at}, ${at}, 0);`,
    `INSERT INTO wallet_transactions (user_id, type, amount_cents, balance_after_cents, description, operation_id, created_at) VALUES (1, 'adjustment', 100000, 100000, 'Test money', 'seed-test-money', ${at});`,
    `INSERT INTO api_keys (user_id, name, key_hash, key_preview, created_at) VALUES (1, 'Demo test key', ${sqlString(apiKey.hash)}, ${sqlString(apiKey.preview)}, ${at});`,
  ];
  PRODUCTS.forEach((p, index) => {
    const id = index + 1;
    const packs = p.packs ? sqlString(JSON.stringify(p.packs)) : 'NULL';
    lines.push(
      `INSERT INTO products (id, name, sku, category, price_cents, allowed_quantities, active, cancellable, warranty_hours, stock_count, created_at, updated_at) VALUES (${id}, ${sqlString(p.name)}, ${sqlString(p.sku)}, ${sqlString(p.category)}, ${p.priceCents}, ${packs}, 1, ${p.cancellable === false ? 0 : 1}, ${p.warrantyHours ?? 0}, ${p.stock}, ${at}, ${at});`,
    );
    const items = Array.from({ length: p.stock }, () => `TEST-${p.sku}-${randomBytes(8).toString('hex').toUpperCase()}`);
    lines.push(`INSERT INTO stock_items (product_id, content, status, created_at) SELECT ${id}, value, 'available', ${at} FROM json_each(${sqlString(JSON.stringify(items))});`);
  });
  lines.push(...STANDARD_VARIANTS_SQL);
  return { sql: lines.join('\n'), apiKey: apiKey.key };
}

/**
 * The seeded products' `Standard` variants, as `POST /admin/products` makes them (migration 0031), with their items,
 * their orders and the stock counts the products were seeded with.
 */
const STANDARD_VARIANTS_SQL = [
  `INSERT INTO product_variants (product_id, name, sku, price_cents, volume_prices, allowed_quantities, stock_count, active, position, created_at, updated_at) SELECT id, 'Standard', sku, price_cents, volume_prices, allowed_quantities, stock_count, 1, 0, created_at, updated_at FROM products p WHERE NOT EXISTS (SELECT 1 FROM product_variants v WHERE v.product_id = p.id);`,
  `UPDATE stock_items SET variant_id = (SELECT v.id FROM product_variants v WHERE v.product_id = stock_items.product_id ORDER BY v.position, v.id LIMIT 1) WHERE variant_id IS NULL;`,
  `UPDATE orders SET variant_id = (SELECT v.id FROM product_variants v WHERE v.product_id = orders.product_id ORDER BY v.position, v.id LIMIT 1), variant_name = 'Standard' WHERE variant_id IS NULL;`,
];

const item = (prefix, n) => `${prefix}-${randomBytes(4).toString('hex').toUpperCase()}-${String(n).padStart(4, '0')}`;

/** The demo operator, unless a user has its email already (a database seeded before the console existed gets it too). */
export function operatorSql(now = new Date().toISOString()) {
  return `INSERT INTO users (name, email, password_hash, balance_cents, created_at, updated_at, role) SELECT ${sqlString(DEMO_OPERATOR.name)}, ${sqlString(DEMO_OPERATOR.email)}, ${sqlString(hashPassword(DEMO_OPERATOR.password))}, 0, ${sqlString(now)}, ${sqlString(now)}, 'operator' WHERE NOT EXISTS (SELECT 1 FROM users WHERE email = ${sqlString(DEMO_OPERATOR.email)});`;
}

/** `INSERT INTO table (columns) VALUES (...), (...)`, in statements of at most 100 rows; nothing for no rows. */
function insertRows(table, columns, rows) {
  const statements = [];
  for (let i = 0; i < rows.length; i += 100) {
    const values = rows.slice(i, i + 100).map((row) => `(${row.map((v) => (v === null ? 'NULL' : typeof v === 'number' ? v : sqlString(v))).join(', ')})`);
    statements.push(`INSERT INTO ${table} (${columns.join(', ')}) VALUES ${values.join(', ')};`);
  }
  return statements;
}

/** The history's customers, deposits, orders, items and ledger (each customer's password is random and unknown). */
function historySql(history, productsSince) {
  const password = hashPassword(randomBytes(24).toString('base64'));
  const { customers, deposits, orders, ledger } = history;
  const items = orders.flatMap((o) =>
    o.items.map((content) => [o.product.id, content, o.status === 'cancelled' ? 'revoked' : 'sold', o.id, productsSince, o.revokedAt]),
  );
  return [
    ...insertRows('users', ['id', 'name', 'email', 'password_hash', 'balance_cents', 'created_at', 'updated_at'],
      customers.map((c) => [c.id, c.name, c.email, password, c.balanceCents, c.createdAt, c.createdAt])),
    ...insertRows('deposits', ['id', 'user_id', 'amount_cents', 'gateway', 'crypto_currency', 'status', 'payment_url', 'external_id', 'transaction_id', 'expires_at', 'paid_at', 'created_at', 'updated_at', 'reference', 'provider'],
      deposits.map((d) => [d.id, d.userId, d.amountCents, d.gateway, d.cryptoCurrency, d.status, d.paymentUrl, d.externalId, d.transactionId, d.expiresAt, d.paidAt, d.createdAt, d.updatedAt, d.reference, 'generic'])),
    // The local checkout's notification of each paid deposit, as the gateway log would hold it.
    ...insertRows('gateway_events', ['reference', 'gateway', 'deposit_id', 'status', 'amount_cents', 'transaction_id', 'outcome', 'received_at', 'source'],
      deposits.filter((d) => d.status === 'paid').map((d) => [`gwe_seed_${d.id}`, d.gateway, d.id, 'paid', d.amountCents, d.transactionId, 'credited', d.paidAt, 'notification'])),
    ...insertRows('orders', ['id', 'order_number', 'user_id', 'product_id', 'product_name', 'quantity', 'unit_price_cents', 'total_amount_cents', 'status', 'created_at', 'updated_at', 'cancellable', 'list_unit_price_cents', 'refunded_amount_cents', 'warranty_hours'],
      orders.map((o) => [o.id, o.orderNumber, o.userId, o.product.id, o.product.name, o.quantity, o.product.priceCents, o.totalCents, o.status, o.createdAt, o.updatedAt, o.product.cancellable === false ? 0 : 1, o.product.priceCents, o.status === 'cancelled' ? o.totalCents : 0, o.product.warrantyHours ?? 0])),
    ...insertRows('stock_items', ['product_id', 'content', 'status', 'order_id', 'created_at', 'revoked_at'], items),
    ...insertRows('wallet_transactions', ['user_id', 'type', 'amount_cents', 'balance_after_cents', 'description', 'order_id', 'deposit_id', 'operation_id', 'created_at'],
      ledger.map((t) => [t.userId, t.type, t.amountCents, t.balanceAfterCents, t.description, t.orderId ?? null, t.depositId ?? null, t.operationId, t.createdAt])),
  ];
}

/**
 * SQL that seeds an empty database; returns the demo API key (shown once, like any key) and a line saying what the
 * history holds. `paymentBaseUrl` is the local checkout's base, in the history's deposits' payment_url.
 */
export function seedSql({ paymentBaseUrl, now = new Date() }) {
  const apiKey = newApiKey();
  const at = now.toISOString();
  // The catalogue is older than the history it sold.
  const productsSince = new Date(now.getTime() - (HISTORY_DAYS + 1) * 86_400_000).toISOString();
  const lines = [
    `INSERT INTO users (id, name, email, password_hash, balance_cents, created_at, updated_at) VALUES (1, ${sqlString(DEMO_USER.name)}, ${sqlString(DEMO_USER.email)}, ${sqlString(hashPassword(DEMO_USER.password))}, ${DEMO_BALANCE_CENTS}, ${sqlString(at)}, ${sqlString(at)});`,
    `INSERT INTO wallet_transactions (user_id, type, amount_cents, balance_after_cents, description, operation_id, created_at) VALUES (1, 'adjustment', ${DEMO_BALANCE_CENTS}, ${DEMO_BALANCE_CENTS}, 'Demo credit', 'seed-demo-credit', ${sqlString(at)});`,
    `INSERT INTO api_keys (user_id, name, key_hash, key_preview, created_at) VALUES (1, 'Demo key', ${sqlString(apiKey.hash)}, ${sqlString(apiKey.preview)}, ${sqlString(at)});`,
  ];
  const products = PRODUCTS.map((p, index) => ({ ...p, id: index + 1 }));
  for (const p of products) {
    const packs = p.packs ? sqlString(JSON.stringify(p.packs)) : 'NULL';
    lines.push(
      `INSERT INTO products (id, name, sku, category, price_cents, allowed_quantities, active, cancellable, warranty_hours, stock_count, created_at, updated_at) VALUES (${p.id}, ${sqlString(p.name)}, ${sqlString(p.sku)}, ${sqlString(p.category)}, ${p.priceCents}, ${packs}, 1, ${p.cancellable === false ? 0 : 1}, ${p.warrantyHours ?? 0}, ${p.stock}, ${sqlString(productsSince)}, ${sqlString(productsSince)});`,
    );
    const items = Array.from({ length: p.stock }, (_, n) => item(p.prefix, n + 1));
    lines.push(
      `INSERT INTO stock_items (product_id, content, status, created_at) SELECT ${p.id}, value, 'available', ${sqlString(productsSince)} FROM json_each(${sqlString(JSON.stringify(items))});`,
    );
  }
  let sold = 0;
  const history = demoHistory({ now, products, firstUserId: 2, paymentBaseUrl, itemCode: (prefix) => item(prefix, (sold += 1)) });
  lines.push(...historySql(history, productsSince));
  lines.push(operatorSql(at));
  lines.push(...STANDARD_VARIANTS_SQL);
  const refunds = history.ledger.filter((t) => t.type === 'refund').length;
  const summary = `${HISTORY_DAYS} days of history (${history.customers.length} customers, ${history.orders.length} orders, ${history.deposits.length} deposits, ${refunds} refunds)`;
  return { sql: lines.join('\n'), apiKey: apiKey.key, summary };
}
