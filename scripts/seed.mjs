// Demo data for local development: one user with a funded wallet and an API key, a demo operator (the console at
// /dashboard/console), a few products with stock.
// Passwords use the worker's format (PBKDF2-SHA256, 100k iterations); only the key's SHA-256 hash is stored.
import { createHash, pbkdf2Sync, randomBytes, randomInt } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export const DEMO_USER = { name: 'Demo User', email: 'demo@example.com', password: 'demo-password' };
export const DEMO_BALANCE_CENTS = 100_00;
export const DEMO_OPERATOR = { name: 'Demo Operator', email: 'operator@example.com', password: 'operator-password' };

// The gift card is final sale (`cancellable: false`): a disclosed gift code cannot be revoked at the vendor.
const PRODUCTS = [
  { name: 'Steam Gift Card $10', sku: 'STEAM-10', category: 'gift-cards', priceCents: 950, stock: 20, prefix: 'STEAM', cancellable: false },
  { name: 'Netflix Premium 1 Month', sku: 'NFLX-1M', category: 'streaming', priceCents: 499, stock: 15, prefix: 'NFLX' },
  { name: 'Windows 11 Pro Licence', sku: 'WIN11-PRO', category: 'software', priceCents: 1200, stock: 10, prefix: 'W11P' },
  { name: 'Indie Game Key (packs of 5, 10, 25)', sku: 'INDIE-KEY', category: 'games', priceCents: 75, stock: 60, prefix: 'GAME', packs: [5, 10, 25] },
];

const sqlString = (value) => `'${String(value).replaceAll("'", "''")}'`;

function hashPassword(password) {
  const salt = randomBytes(16);
  const hash = pbkdf2Sync(password, salt, 100_000, 32, 'sha256');
  return `pbkdf2_sha256$100000$${salt.toString('base64')}$${hash.toString('base64')}`;
}

export function newApiKey() {
  let body = '';
  for (let i = 0; i < 40; i++) body += BASE62[randomInt(62)];
  const key = `sk_live_${body}`;
  return { key, hash: createHash('sha256').update(key).digest('hex'), preview: `sk_live_****${key.slice(-4)}` };
}

const item = (prefix, n) => `${prefix}-${randomBytes(4).toString('hex').toUpperCase()}-${String(n).padStart(4, '0')}`;

/** The demo operator, unless a user has its email already (a database seeded before the console existed gets it too). */
export function operatorSql(now = new Date().toISOString()) {
  return `INSERT INTO users (name, email, password_hash, balance_cents, created_at, updated_at, role) SELECT ${sqlString(DEMO_OPERATOR.name)}, ${sqlString(DEMO_OPERATOR.email)}, ${sqlString(hashPassword(DEMO_OPERATOR.password))}, 0, ${sqlString(now)}, ${sqlString(now)}, 'operator' WHERE NOT EXISTS (SELECT 1 FROM users WHERE email = ${sqlString(DEMO_OPERATOR.email)});`;
}

/** SQL that seeds an empty database; returns the demo API key (shown once, like any key). */
export function seedSql(now = new Date().toISOString()) {
  const apiKey = newApiKey();
  const lines = [
    `INSERT INTO users (id, name, email, password_hash, balance_cents, created_at, updated_at) VALUES (1, ${sqlString(DEMO_USER.name)}, ${sqlString(DEMO_USER.email)}, ${sqlString(hashPassword(DEMO_USER.password))}, ${DEMO_BALANCE_CENTS}, ${sqlString(now)}, ${sqlString(now)});`,
    `INSERT INTO wallet_transactions (user_id, type, amount_cents, balance_after_cents, description, operation_id, created_at) VALUES (1, 'adjustment', ${DEMO_BALANCE_CENTS}, ${DEMO_BALANCE_CENTS}, 'Demo credit', 'seed-demo-credit', ${sqlString(now)});`,
    `INSERT INTO api_keys (user_id, name, key_hash, key_preview, created_at) VALUES (1, 'Demo key', ${sqlString(apiKey.hash)}, ${sqlString(apiKey.preview)}, ${sqlString(now)});`,
  ];
  PRODUCTS.forEach((p, index) => {
    const id = index + 1;
    const packs = p.packs ? sqlString(JSON.stringify(p.packs)) : 'NULL';
    lines.push(
      `INSERT INTO products (id, name, sku, category, price_cents, allowed_quantities, active, cancellable, stock_count, created_at, updated_at) VALUES (${id}, ${sqlString(p.name)}, ${sqlString(p.sku)}, ${sqlString(p.category)}, ${p.priceCents}, ${packs}, 1, ${p.cancellable === false ? 0 : 1}, ${p.stock}, ${sqlString(now)}, ${sqlString(now)});`,
    );
    const items = Array.from({ length: p.stock }, (_, n) => item(p.prefix, n + 1));
    lines.push(
      `INSERT INTO stock_items (product_id, content, status, created_at) SELECT ${id}, value, 'available', ${sqlString(now)} FROM json_each(${sqlString(JSON.stringify(items))});`,
    );
  });
  lines.push(operatorSql(now));
  return { sql: lines.join('\n'), apiKey: apiKey.key };
}
