-- Prices: volume breaks, a reseller's discount, coupons and a price lock (docs/prices.md).
-- D1 checks foreign keys at the end of the migration, so orders can be rebuilt while other tables reference it.
PRAGMA defer_foreign_keys = true;

-- A product's volume prices: JSON [{ "min_quantity": int >= 2, "price_cents": int }], increasing quantities and
-- falling prices (validated by the admin API and the console), NULL = none.
ALTER TABLE products ADD COLUMN volume_prices TEXT CHECK (volume_prices IS NULL OR json_valid(volume_prices));

-- A reseller's discount on every unit price (after volume pricing).
ALTER TABLE users ADD COLUMN discount_percent INTEGER NOT NULL DEFAULT 0 CHECK (discount_percent BETWEEN 0 AND 90);

CREATE TABLE coupons (
  id INTEGER PRIMARY KEY,
  code TEXT NOT NULL CHECK (length(code) BETWEEN 3 AND 32 AND code NOT GLOB '*[^A-Z0-9-]*'),
  percent_off INTEGER CHECK (percent_off IS NULL OR percent_off BETWEEN 1 AND 100),
  amount_off_cents INTEGER CHECK (amount_off_cents IS NULL OR amount_off_cents > 0),
  min_total_cents INTEGER CHECK (min_total_cents IS NULL OR min_total_cents > 0),
  starts_at TEXT,
  expires_at TEXT,
  max_redemptions INTEGER CHECK (max_redemptions IS NULL OR max_redemptions >= 1),
  -- NULL = no limit per buyer
  max_per_user INTEGER DEFAULT 1 CHECK (max_per_user IS NULL OR max_per_user >= 1),
  -- JSON array of product ids, NULL = every product
  product_ids TEXT CHECK (product_ids IS NULL OR json_valid(product_ids)),
  active INTEGER NOT NULL DEFAULT 1 CHECK (active IN (0, 1)),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  -- exactly one kind of deduction
  CHECK ((percent_off IS NULL) <> (amount_off_cents IS NULL))
);
CREATE UNIQUE INDEX coupons_code_unique ON coupons (code);
CREATE INDEX coupons_created ON coupons (created_at, id);

-- One row per order bought with a coupon, written in the purchase's batch: the purchase counts these (in that same
-- batch) against max_redemptions and max_per_user. A cancellation keeps it.
CREATE TABLE coupon_redemptions (
  id INTEGER PRIMARY KEY,
  coupon_id INTEGER NOT NULL REFERENCES coupons (id),
  user_id INTEGER NOT NULL REFERENCES users (id),
  order_id INTEGER NOT NULL REFERENCES orders (id),
  created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX coupon_redemptions_order_unique ON coupon_redemptions (order_id);
CREATE INDEX coupon_redemptions_coupon_user ON coupon_redemptions (coupon_id, user_id);

-- An order records its list price and everything taken off it; total_amount_cents is what was charged. The old
-- CHECK (total = unit price x quantity) no longer holds with a coupon, and SQLite changes a CHECK only by rebuilding
-- the table. The new CHECKs keep the backstop: a short claim of items changes quantity and breaks the discount's
-- identity, rolling the purchase back. Existing orders paid their list price: no discount, no coupon.
-- The rows are set aside and put back into a table named `orders` before the migration ends: dropping orders counts
-- a foreign key violation for every row of stock_items and wallet_transactions that points at it, and only rows of
-- orders coming back under that name take them back (a renamed copy does not). Corrected after it landed: the first
-- text renamed a copy into place and so failed on any database with an order (test/migrations-with-data.test.ts);
-- a database where it did apply had no orders, and the corrected text gives it the same schema.
CREATE TABLE orders_before_prices AS SELECT * FROM orders;
DROP TABLE orders;
CREATE TABLE orders (
  id INTEGER PRIMARY KEY,
  order_number TEXT NOT NULL,
  user_id INTEGER NOT NULL REFERENCES users (id),
  product_id INTEGER NOT NULL REFERENCES products (id),
  product_name TEXT NOT NULL,
  quantity INTEGER NOT NULL CHECK (quantity >= 1),
  unit_price_cents INTEGER NOT NULL CHECK (unit_price_cents > 0),
  total_amount_cents INTEGER NOT NULL CHECK (total_amount_cents > 0),
  status TEXT NOT NULL CHECK (status IN ('pending', 'completed', 'cancelled')),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  cancellable INTEGER NOT NULL DEFAULT 1 CHECK (cancellable IN (0, 1)),
  list_unit_price_cents INTEGER NOT NULL CHECK (list_unit_price_cents > 0),
  discount_amount_cents INTEGER NOT NULL DEFAULT 0 CHECK (discount_amount_cents >= 0),
  coupon TEXT,
  CHECK (unit_price_cents <= list_unit_price_cents),
  CHECK (total_amount_cents <= unit_price_cents * quantity),
  CHECK (discount_amount_cents = list_unit_price_cents * quantity - total_amount_cents)
);
INSERT INTO orders (id, order_number, user_id, product_id, product_name, quantity, unit_price_cents, total_amount_cents, status,
                    created_at, updated_at, cancellable, list_unit_price_cents, discount_amount_cents, coupon)
  SELECT id, order_number, user_id, product_id, product_name, quantity, unit_price_cents, total_amount_cents, status,
         created_at, updated_at, cancellable, unit_price_cents, unit_price_cents * quantity - total_amount_cents, NULL
  FROM orders_before_prices;
DROP TABLE orders_before_prices;
CREATE UNIQUE INDEX orders_order_number_unique ON orders (order_number);
CREATE INDEX orders_user_created ON orders (user_id, created_at, id);
CREATE INDEX orders_status_created ON orders (status, created_at);
CREATE INDEX orders_created ON orders (created_at, id);

-- The audit log's actions gain the coupons' two (a CHECK changes only by rebuilding the table): the full list of
-- actions the service writes.
CREATE TABLE audit_log_new (
  id INTEGER PRIMARY KEY,
  actor TEXT NOT NULL CHECK (actor = 'admin_token' OR actor LIKE 'user:%'),
  action TEXT NOT NULL CHECK (action IN ('user.created', 'user.updated', 'balance.adjusted', 'product.created', 'product.updated',
                                         'stock.added', 'deposit.marked_paid', 'deposit.refreshed', 'password_reset.created',
                                         'product.image_set', 'product.image_removed', 'coupon.created', 'coupon.updated')),
  target TEXT NOT NULL,
  details TEXT NOT NULL CHECK (json_valid(details)),
  created_at TEXT NOT NULL
);
INSERT INTO audit_log_new (id, actor, action, target, details, created_at) SELECT id, actor, action, target, details, created_at FROM audit_log;
DROP TABLE audit_log;
ALTER TABLE audit_log_new RENAME TO audit_log;
CREATE INDEX audit_log_created ON audit_log (created_at, id);
