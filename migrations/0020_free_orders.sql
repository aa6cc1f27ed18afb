-- A total of 0 is a price like any other: a 100 % coupon, an amount coupon at least the subtotal, or a 90 % discount
-- on a unit price under 5 cents makes a free order (docs/prices.md). Such an order is still paid by its one
-- `purchase` ledger row, of 0.00, and a cancellation refunds it by one `refund` row of 0.00: every order keeps exactly
-- one purchase row, and the refund row stays what marks an order refunded. SQLite changes a CHECK only by rebuilding
-- the table; both rebuilds keep every column (in order), index and foreign key.
-- D1 checks foreign keys at the end of the migration. Dropping orders counts a violation for every row of
-- stock_items, wallet_transactions and coupon_redemptions that points at it; the rows coming back into a table named
-- `orders` take them back (a copy renamed into place would not: see 0017_prices.sql), so each table is set aside,
-- dropped, created anew under its own name and refilled.
PRAGMA defer_foreign_keys = true;

CREATE TABLE orders_before_free AS SELECT * FROM orders;
DROP TABLE orders;
CREATE TABLE orders (
  id INTEGER PRIMARY KEY,
  order_number TEXT NOT NULL,
  user_id INTEGER NOT NULL REFERENCES users (id),
  product_id INTEGER NOT NULL REFERENCES products (id),
  product_name TEXT NOT NULL,
  quantity INTEGER NOT NULL CHECK (quantity >= 1),
  unit_price_cents INTEGER NOT NULL CHECK (unit_price_cents >= 0),
  total_amount_cents INTEGER NOT NULL CHECK (total_amount_cents >= 0),
  status TEXT NOT NULL CHECK (status IN ('pending', 'completed', 'cancelled')),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  cancellable INTEGER NOT NULL DEFAULT 1 CHECK (cancellable IN (0, 1)),
  list_unit_price_cents INTEGER NOT NULL CHECK (list_unit_price_cents > 0),
  discount_amount_cents INTEGER NOT NULL DEFAULT 0 CHECK (discount_amount_cents >= 0),
  coupon TEXT,
  api_key_id INTEGER REFERENCES api_keys (id),
  CHECK (unit_price_cents <= list_unit_price_cents),
  CHECK (total_amount_cents <= unit_price_cents * quantity),
  CHECK (discount_amount_cents = list_unit_price_cents * quantity - total_amount_cents)
);
INSERT INTO orders (id, order_number, user_id, product_id, product_name, quantity, unit_price_cents, total_amount_cents, status,
                    created_at, updated_at, cancellable, list_unit_price_cents, discount_amount_cents, coupon, api_key_id)
  SELECT id, order_number, user_id, product_id, product_name, quantity, unit_price_cents, total_amount_cents, status,
         created_at, updated_at, cancellable, list_unit_price_cents, discount_amount_cents, coupon, api_key_id
  FROM orders_before_free;
DROP TABLE orders_before_free;
CREATE UNIQUE INDEX orders_order_number_unique ON orders (order_number);
CREATE INDEX orders_user_created ON orders (user_id, created_at, id);
CREATE INDEX orders_status_created ON orders (status, created_at);
CREATE INDEX orders_created ON orders (created_at, id);
CREATE INDEX orders_api_key_created ON orders (api_key_id, created_at) WHERE api_key_id IS NOT NULL;

-- The ledger's "amount <> 0" becomes a sign per type, a tighter backstop than before: a deposit only credits, a
-- purchase never credits and a refund never debits (both may be 0.00, for a free order), an adjustment moves money.
CREATE TABLE wallet_transactions_before_free AS SELECT * FROM wallet_transactions;
DROP TABLE wallet_transactions;
CREATE TABLE wallet_transactions (
  id INTEGER PRIMARY KEY,
  user_id INTEGER NOT NULL REFERENCES users (id),
  type TEXT NOT NULL CHECK (type IN ('deposit', 'purchase', 'refund', 'adjustment')),
  amount_cents INTEGER NOT NULL,
  balance_after_cents INTEGER NOT NULL CHECK (balance_after_cents >= 0),
  description TEXT NOT NULL,
  order_id INTEGER REFERENCES orders (id),
  deposit_id INTEGER REFERENCES deposits (id),
  -- one id per money movement, generated before its batch; the balance update is keyed on it
  operation_id TEXT NOT NULL,
  created_at TEXT NOT NULL,
  CHECK (CASE type WHEN 'deposit' THEN amount_cents > 0
                   WHEN 'purchase' THEN amount_cents <= 0
                   WHEN 'refund' THEN amount_cents >= 0
                   ELSE amount_cents <> 0 END)
);
INSERT INTO wallet_transactions (id, user_id, type, amount_cents, balance_after_cents, description, order_id, deposit_id, operation_id, created_at)
  SELECT id, user_id, type, amount_cents, balance_after_cents, description, order_id, deposit_id, operation_id, created_at
  FROM wallet_transactions_before_free;
DROP TABLE wallet_transactions_before_free;
CREATE UNIQUE INDEX wallet_transactions_operation_unique ON wallet_transactions (operation_id);
CREATE INDEX wallet_transactions_user_created ON wallet_transactions (user_id, created_at, id);
-- backstops: an order is paid for once and refunded once, a deposit is credited once
CREATE UNIQUE INDEX wallet_transactions_one_purchase ON wallet_transactions (order_id) WHERE type = 'purchase';
CREATE UNIQUE INDEX wallet_transactions_one_refund ON wallet_transactions (order_id) WHERE type = 'refund';
CREATE UNIQUE INDEX wallet_transactions_one_deposit ON wallet_transactions (deposit_id) WHERE type = 'deposit';
CREATE INDEX wallet_transactions_user_refunds ON wallet_transactions (user_id, created_at) WHERE type = 'refund';
CREATE INDEX wallet_transactions_type_created ON wallet_transactions (type, created_at);
