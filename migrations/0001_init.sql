-- Money is integer cents everywhere. Timestamps are ISO 8601 UTC strings with milliseconds,
-- written by the worker, so text order is time order.

CREATE TABLE users (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  email TEXT NOT NULL COLLATE NOCASE,
  password_hash TEXT NOT NULL,
  balance_cents INTEGER NOT NULL DEFAULT 0 CHECK (balance_cents >= 0),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX users_email_unique ON users (email);

CREATE TABLE api_keys (
  id INTEGER PRIMARY KEY,
  user_id INTEGER NOT NULL REFERENCES users (id),
  name TEXT NOT NULL,
  key_hash TEXT NOT NULL,
  key_preview TEXT NOT NULL,
  last_used_at TEXT,
  created_at TEXT NOT NULL,
  revoked_at TEXT
);
CREATE UNIQUE INDEX api_keys_key_hash_unique ON api_keys (key_hash);
CREATE INDEX api_keys_user_active ON api_keys (user_id, revoked_at);

CREATE TABLE products (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  sku TEXT NOT NULL,
  category TEXT,
  price_cents INTEGER NOT NULL CHECK (price_cents > 0),
  -- JSON array of allowed pack sizes, or NULL for any quantity
  allowed_quantities TEXT,
  active INTEGER NOT NULL DEFAULT 1 CHECK (active IN (0, 1)),
  -- denormalised count of available stock items, changed in the same batch as the items
  stock_count INTEGER NOT NULL DEFAULT 0 CHECK (stock_count >= 0),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX products_sku_unique ON products (sku);
CREATE INDEX products_active_created ON products (active, created_at, id);

CREATE TABLE orders (
  id INTEGER PRIMARY KEY,
  order_number TEXT NOT NULL,
  user_id INTEGER NOT NULL REFERENCES users (id),
  product_id INTEGER NOT NULL REFERENCES products (id),
  product_name TEXT NOT NULL,
  quantity INTEGER NOT NULL CHECK (quantity >= 1),
  unit_price_cents INTEGER NOT NULL CHECK (unit_price_cents > 0),
  total_amount_cents INTEGER NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'completed', 'cancelled')),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  -- the purchase batch re-derives quantity from the items it claimed: a short claim fails this check
  CHECK (total_amount_cents = unit_price_cents * quantity)
);
CREATE UNIQUE INDEX orders_order_number_unique ON orders (order_number);
CREATE INDEX orders_user_created ON orders (user_id, created_at, id);
CREATE INDEX orders_status_created ON orders (status, created_at);

CREATE TABLE stock_items (
  id INTEGER PRIMARY KEY,
  product_id INTEGER NOT NULL REFERENCES products (id),
  content TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'available' CHECK (status IN ('available', 'sold', 'revoked')),
  order_id INTEGER REFERENCES orders (id),
  created_at TEXT NOT NULL,
  CHECK ((status = 'available') = (order_id IS NULL))
);
CREATE UNIQUE INDEX stock_items_product_content_unique ON stock_items (product_id, content);
CREATE INDEX stock_items_product_status ON stock_items (product_id, status, id);
CREATE INDEX stock_items_order ON stock_items (order_id);

CREATE TABLE deposits (
  id INTEGER PRIMARY KEY,
  user_id INTEGER NOT NULL REFERENCES users (id),
  amount_cents INTEGER NOT NULL CHECK (amount_cents > 0),
  gateway TEXT NOT NULL,
  crypto_currency TEXT,
  status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'paid', 'failed', 'expired')),
  payment_url TEXT,
  external_id TEXT,
  transaction_id TEXT,
  expires_at TEXT NOT NULL,
  paid_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX deposits_user_created ON deposits (user_id, created_at, id);
CREATE INDEX deposits_status_expires ON deposits (status, expires_at);

CREATE TABLE wallet_transactions (
  id INTEGER PRIMARY KEY,
  user_id INTEGER NOT NULL REFERENCES users (id),
  type TEXT NOT NULL CHECK (type IN ('deposit', 'purchase', 'refund', 'adjustment')),
  amount_cents INTEGER NOT NULL CHECK (amount_cents <> 0),
  balance_after_cents INTEGER NOT NULL CHECK (balance_after_cents >= 0),
  description TEXT NOT NULL,
  order_id INTEGER REFERENCES orders (id),
  deposit_id INTEGER REFERENCES deposits (id),
  -- one id per money movement, generated before its batch; the balance update is keyed on it
  operation_id TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX wallet_transactions_operation_unique ON wallet_transactions (operation_id);
CREATE INDEX wallet_transactions_user_created ON wallet_transactions (user_id, created_at, id);
-- backstops: an order is paid for once and refunded once, a deposit is credited once
CREATE UNIQUE INDEX wallet_transactions_one_purchase ON wallet_transactions (order_id) WHERE type = 'purchase';
CREATE UNIQUE INDEX wallet_transactions_one_refund ON wallet_transactions (order_id) WHERE type = 'refund';
CREATE UNIQUE INDEX wallet_transactions_one_deposit ON wallet_transactions (deposit_id) WHERE type = 'deposit';
