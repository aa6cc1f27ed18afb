// Bench data, written straight into the bench instance's local D1 with batched SQL: every statement binds one JSON
// array and expands it with json_each (D1 allows 100 bound parameters and 100 KB of SQL text per statement, so rows
// never become parameters or SQL text). Users get real API keys (stored as SHA-256 hex, like the worker does) and a
// balance backed by an 'adjustment' ledger row, so the ledger invariants hold (the bench audits them at the end).
import { createHash, pbkdf2Sync, randomBytes, randomInt } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const CATEGORIES = ['gift-cards', 'streaming', 'software', 'games', 'vpn', 'music', 'education', 'cloud'];
export const USER_BALANCE_CENTS = 100_000_000; // $1,000,000 each: no purchase in the bench fails for want of money
const ITEMS_PER_STATEMENT = 10_000; // the admin upload's own limit per call
const ROWS_PER_STATEMENT = 2_000;

/** Bestsellers: the first tenth of the products hold half of the items (the rest share the other half). */
export const bestsellerCount = (products) => Math.max(1, Math.floor(products / 10));

export function productOfItem(index, products) {
  // Even indexes go to the bestsellers, odd ones to the long tail, each round-robin: every product gets items at every
  // level, and the bestsellers always have enough for packs of 100.
  const best = bestsellerCount(products);
  const half = Math.floor(index / 2);
  return index % 2 === 0 ? (half % best) + 1 : best + (half % (products - best)) + 1;
}

function apiKey() {
  let body = '';
  for (let i = 0; i < 40; i++) body += BASE62[randomInt(62)];
  const key = `sk_live_${body}`;
  return { key, hash: createHash('sha256').update(key).digest('hex'), preview: `sk_live_****${key.slice(-4)}` };
}

/** The worker's password format; one hash shared by every bench user (100k PBKDF2 rounds each would cost a minute). */
function passwordHash(password) {
  const salt = randomBytes(16);
  const hash = pbkdf2Sync(password, salt, 100_000, 32, 'sha256');
  return `pbkdf2_sha256$100000$${salt.toString('base64')}$${hash.toString('base64')}`;
}

/** Apply the migrations in order; `split` is wrangler's own SQL splitter (what `d1 migrations apply` uses). */
export async function migrate(db, migrationsDir, split) {
  const files = readdirSync(migrationsDir).filter((f) => f.endsWith('.sql')).sort();
  for (const file of files) {
    const statements = split(readFileSync(join(migrationsDir, file), 'utf8'));
    await db.batch(statements.map((s) => db.prepare(s)));
  }
  // The bare-write ceiling's table: bench only, never in the migrations.
  await db.prepare('CREATE TABLE IF NOT EXISTS bench_writes (id INTEGER PRIMARY KEY, note TEXT NOT NULL, created_at TEXT NOT NULL)').run();
  return files;
}

function chunks(array, size) {
  const out = [];
  for (let i = 0; i < array.length; i += size) out.push(array.slice(i, i + size));
  return out;
}

/** Users with one API key each and a funded wallet. Returns the keys, index i for user id i + 1. */
export async function loadUsers(db, count, progress) {
  const now = new Date().toISOString();
  const hash = passwordHash('bench-password');
  const users = Array.from({ length: count }, (_, i) => ({ id: i + 1, ...apiKey() }));
  let done = 0;
  for (const chunk of chunks(users, ROWS_PER_STATEMENT)) {
    await db.batch([
      db
        .prepare(
          `INSERT INTO users (id, name, email, password_hash, balance_cents, created_at, updated_at)
           SELECT value, 'Bench User ' || value, 'bench-user-' || value || '@example.com', ?2, ?3, ?4, ?4 FROM json_each(?1)`,
        )
        .bind(JSON.stringify(chunk.map((u) => u.id)), hash, USER_BALANCE_CENTS, now),
      db
        .prepare(
          `INSERT INTO wallet_transactions (user_id, type, amount_cents, balance_after_cents, description, operation_id, created_at)
           SELECT value, 'adjustment', ?2, ?2, 'Bench credit', 'bench-credit-' || value, ?3 FROM json_each(?1)`,
        )
        .bind(JSON.stringify(chunk.map((u) => u.id)), USER_BALANCE_CENTS, now),
      db
        .prepare(
          `INSERT INTO api_keys (user_id, name, key_hash, key_preview, created_at)
           SELECT json_extract(value, '$[0]'), 'Bench key', json_extract(value, '$[1]'), json_extract(value, '$[2]'), ?2 FROM json_each(?1)`,
        )
        .bind(JSON.stringify(chunk.map((u) => [u.id, u.hash, u.preview])), now),
    ]);
    progress((done += chunk.length), count);
  }
  return users.map((u) => u.key);
}

export async function loadProducts(db, count, progress) {
  const start = Date.now() - count * 1000;
  const rows = Array.from({ length: count }, (_, i) => {
    const id = i + 1;
    const sku = `SKU-${String(id).padStart(5, '0')}`;
    const created = new Date(start + i * 1000).toISOString();
    return [id, `${CATEGORIES[i % CATEGORIES.length]} product ${id}`, sku, CATEGORIES[i % CATEGORIES.length], 50 + randomInt(4950), created];
  });
  let done = 0;
  for (const chunk of chunks(rows, ROWS_PER_STATEMENT)) {
    await db
      .prepare(
        `INSERT INTO products (id, name, sku, category, price_cents, allowed_quantities, active, stock_count, created_at, updated_at)
         SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]'), json_extract(value, '$[3]'),
                json_extract(value, '$[4]'), NULL, 1, 0, json_extract(value, '$[5]'), json_extract(value, '$[5]')
         FROM json_each(?1)`,
      )
      .bind(JSON.stringify(chunk))
      .run();
    progress((done += chunk.length), count);
  }
}

/** One statement inserting available items, each `[product_id, content]`. */
const insertItems = (db, items, now) =>
  db
    .prepare(
      `INSERT INTO stock_items (product_id, content, status, created_at)
       SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), 'available', ?2 FROM json_each(?1)`,
    )
    .bind(JSON.stringify(items), now)
    .run();

/**
 * Add stock items until the table holds `target` rows (all statuses), then recompute every stock_count in one
 * statement, as the admin upload does per product.
 */
export async function loadStockTo(db, target, products, progress) {
  const { n: existing } = await db.prepare('SELECT count(*) AS n FROM stock_items').first();
  const now = new Date().toISOString();
  let index = existing;
  while (index < target) {
    const size = Math.min(ITEMS_PER_STATEMENT, target - index);
    const items = new Array(size);
    for (let k = 0; k < size; k++, index++) {
      const product = productOfItem(index, products);
      items[k] = [product, `SKU-${String(product).padStart(5, '0')}-${randomBytes(6).toString('hex').toUpperCase()}-${index}`];
    }
    await insertItems(db, items, now);
    progress(index - existing, target - existing);
  }
  await standardVariants(db);
  return target - existing;
}

/**
 * Every product made here gets its `Standard` variant, as `POST /admin/products` makes it (migration 0031), its items
 * move to it, and the variants' and products' stock counts are recomputed, as the admin upload keeps them.
 */
export async function standardVariants(db) {
  await db.batch([
    db.prepare(
      `INSERT INTO product_variants (product_id, name, sku, price_cents, volume_prices, allowed_quantities, stock_count, active, position, created_at, updated_at)
       SELECT id, 'Standard', sku, price_cents, volume_prices, allowed_quantities, 0, 1, 0, created_at, updated_at FROM products p
       WHERE NOT EXISTS (SELECT 1 FROM product_variants v WHERE v.product_id = p.id)`,
    ),
    db.prepare(
      `UPDATE stock_items SET variant_id = (SELECT v.id FROM product_variants v WHERE v.product_id = stock_items.product_id ORDER BY v.position, v.id LIMIT 1)
       WHERE variant_id IS NULL`,
    ),
    db.prepare(`UPDATE product_variants SET stock_count = (SELECT count(*) FROM stock_items s WHERE s.variant_id = product_variants.id AND s.status = 'available')`),
    db.prepare(`UPDATE products SET stock_count = (SELECT coalesce(sum(stock_count), 0) FROM product_variants v WHERE v.product_id = products.id AND v.active = 1)`),
  ]);
}

/**
 * Packs for the qty-100 cases: adds items to the bestsellers (round-robin) until they hold at least `packs` whole
 * packs of `quantity` between them, then recomputes their stock_count. Returns the items added.
 */
export async function loadPacks(db, products, packs, quantity, progress) {
  const best = bestsellerCount(products);
  const { n: have } = await db
    .prepare('SELECT coalesce(sum(stock_count / ?2), 0) AS n FROM products WHERE id <= ?1 AND active = 1')
    .bind(best, quantity)
    .first();
  // Round-robin items fill every bestseller evenly, so a whole pack more for each needs `quantity` items each.
  const rounds = Math.ceil(Math.max(0, packs - have) / best);
  const total = rounds * best * quantity;
  const now = new Date().toISOString();
  for (let index = 0; index < total; ) {
    const size = Math.min(ITEMS_PER_STATEMENT, total - index);
    const items = new Array(size);
    for (let k = 0; k < size; k++, index++) {
      const product = (index % best) + 1;
      items[k] = [product, `SKU-${String(product).padStart(5, '0')}-${randomBytes(6).toString('hex').toUpperCase()}-P${index}`];
    }
    await insertItems(db, items, now);
    progress(index, total);
  }
  if (total > 0) await standardVariants(db);
  return total;
}

/**
 * The flash sale's product: a new active product of `items` stock items ($1.00 each, not one of the catalogue's), its
 * stock_count set in the same batch. Returns its id.
 */
export async function loadDrop(db, items) {
  const { id } = await db.prepare('SELECT coalesce(max(id), 0) + 1 AS id FROM products').first();
  const now = new Date().toISOString();
  const codes = Array.from({ length: items }, (_, i) => `DROP-${randomBytes(6).toString('hex').toUpperCase()}-${i}`);
  await db.batch([
    db
      .prepare(
        `INSERT INTO products (id, name, sku, category, price_cents, allowed_quantities, active, stock_count, created_at, updated_at)
         VALUES (?1, 'Flash drop', 'DROP-' || ?1, 'games', 100, NULL, 1, ?2, ?3, ?3)`,
      )
      .bind(id, items, now),
    db
      .prepare(`INSERT INTO stock_items (product_id, content, status, created_at) SELECT ?1, value, 'available', ?2 FROM json_each(?3)`)
      .bind(id, now, JSON.stringify(codes)),
  ]);
  await standardVariants(db);
  return id;
}
