-- Counts kept, not counted (issue #50): what every list's `meta.total`, the dashboard's statistics and a key's daily
-- spend limit used to count over a user's (or a key family's) whole history on every request now live in rows that
-- change in the very statement that changes what they count. Triggers keep them: an order, a ledger row or a deposit
-- cannot be inserted, change status or be deleted without its counts changing in the same statement, so every batch
-- that writes one (the purchase, the deposit credit that buys, cancel, refunds, claims, the completion job, the
-- sandbox reset, and any added later) keeps them, with no statement of its own and within its transaction.
-- The ledger audit (src/services/operator/ledger-audit.ts) checks kept = counted.

-- A user's totals: GET /orders, /wallet/transactions, /wallet/deposits and the dashboard read this one row.
CREATE TABLE user_counts (
  user_id INTEGER PRIMARY KEY REFERENCES users(id),
  orders_count INTEGER NOT NULL DEFAULT 0 CHECK (orders_count >= 0),
  pending_orders INTEGER NOT NULL DEFAULT 0 CHECK (pending_orders >= 0),
  -- Sum of total_amount_cents of the orders not cancelled (the dashboard's total_spent; refunds do not lower it).
  spent_cents INTEGER NOT NULL DEFAULT 0 CHECK (spent_cents >= 0),
  transactions_count INTEGER NOT NULL DEFAULT 0 CHECK (transactions_count >= 0),
  deposits_count INTEGER NOT NULL DEFAULT 0 CHECK (deposits_count >= 0)
);

-- A key family's spending per UTC day: the row of key K and day D holds the total_amount_cents of every order placed
-- on D with K or any key made from it (cancelled ones too: src/services/accounts/spend-limits.ts). A purchase adds its
-- total to the row of its key and of each of its makers; the spend limit reads one row per limited key.
CREATE TABLE api_key_spend_days (
  id INTEGER PRIMARY KEY,
  api_key_id INTEGER NOT NULL REFERENCES api_keys(id),
  day TEXT NOT NULL,
  spent_cents INTEGER NOT NULL CHECK (spent_cents >= 0)
);
CREATE UNIQUE INDEX api_key_spend_days_key_day ON api_key_spend_days (api_key_id, day);

INSERT INTO user_counts (user_id, orders_count, pending_orders, spent_cents, transactions_count, deposits_count)
SELECT u.id,
       (SELECT count(*) FROM orders o WHERE o.user_id = u.id),
       (SELECT count(*) FROM orders o WHERE o.user_id = u.id AND o.status = 'pending'),
       (SELECT coalesce(sum(o.total_amount_cents), 0) FROM orders o WHERE o.user_id = u.id AND o.status <> 'cancelled'),
       (SELECT count(*) FROM wallet_transactions t WHERE t.user_id = u.id),
       (SELECT count(*) FROM deposits d WHERE d.user_id = u.id)
FROM users u;

-- A key and its makers as a JSON array: id 7 with ancestry '/1/5/' -> '[7,1,5]'; with ancestry '/' -> '[7]'.
INSERT INTO api_key_spend_days (api_key_id, day, spent_cents)
SELECT f.value, substr(o.created_at, 1, 10), sum(o.total_amount_cents)
FROM orders o JOIN api_keys k ON k.id = o.api_key_id, json_each('[' || rtrim(k.id || replace(k.ancestry, '/', ','), ',') || ']') f
WHERE o.api_key_id IS NOT NULL
GROUP BY f.value, substr(o.created_at, 1, 10);

CREATE TRIGGER orders_counted AFTER INSERT ON orders
BEGIN
  INSERT INTO user_counts (user_id, orders_count, pending_orders, spent_cents)
  VALUES (NEW.user_id, 1, NEW.status = 'pending', CASE WHEN NEW.status = 'cancelled' THEN 0 ELSE NEW.total_amount_cents END)
  ON CONFLICT (user_id) DO UPDATE SET orders_count = orders_count + 1, pending_orders = pending_orders + excluded.pending_orders,
                                      spent_cents = spent_cents + excluded.spent_cents;
END;

CREATE TRIGGER orders_spend_counted AFTER INSERT ON orders WHEN NEW.api_key_id IS NOT NULL
BEGIN
  INSERT INTO api_key_spend_days (api_key_id, day, spent_cents)
  SELECT f.value, substr(NEW.created_at, 1, 10), NEW.total_amount_cents
  FROM api_keys k, json_each('[' || rtrim(k.id || replace(k.ancestry, '/', ','), ',') || ']') f
  WHERE k.id = NEW.api_key_id
  ON CONFLICT (api_key_id, day) DO UPDATE SET spent_cents = spent_cents + excluded.spent_cents;
END;

-- An order's day, total or key never change in the service; a rewrite of one (a data repair) moves its spending.
CREATE TRIGGER orders_spend_moved AFTER UPDATE OF created_at, total_amount_cents, api_key_id ON orders
WHEN OLD.created_at IS NOT NEW.created_at OR OLD.total_amount_cents IS NOT NEW.total_amount_cents OR OLD.api_key_id IS NOT NEW.api_key_id
BEGIN
  UPDATE api_key_spend_days SET spent_cents = spent_cents - OLD.total_amount_cents
  WHERE day = substr(OLD.created_at, 1, 10)
    AND api_key_id IN (SELECT f.value FROM api_keys k, json_each('[' || rtrim(k.id || replace(k.ancestry, '/', ','), ',') || ']') f
                       WHERE k.id = OLD.api_key_id);
  INSERT INTO api_key_spend_days (api_key_id, day, spent_cents)
  SELECT f.value, substr(NEW.created_at, 1, 10), NEW.total_amount_cents
  FROM api_keys k, json_each('[' || rtrim(k.id || replace(k.ancestry, '/', ','), ',') || ']') f
  WHERE k.id = NEW.api_key_id
  ON CONFLICT (api_key_id, day) DO UPDATE SET spent_cents = spent_cents + excluded.spent_cents;
END;

-- Cancel (pending -> cancelled) and the completion job (pending -> completed); orders never change owner.
CREATE TRIGGER orders_status_counted AFTER UPDATE OF status, total_amount_cents ON orders
WHEN OLD.status IS NOT NEW.status OR OLD.total_amount_cents IS NOT NEW.total_amount_cents
BEGIN
  UPDATE user_counts
  SET pending_orders = pending_orders - (OLD.status = 'pending') + (NEW.status = 'pending'),
      spent_cents = spent_cents - CASE WHEN OLD.status = 'cancelled' THEN 0 ELSE OLD.total_amount_cents END
                                + CASE WHEN NEW.status = 'cancelled' THEN 0 ELSE NEW.total_amount_cents END
  WHERE user_id = NEW.user_id;
END;

-- The sandbox's reset deletes a test user's history.
CREATE TRIGGER orders_uncounted AFTER DELETE ON orders
BEGIN
  UPDATE user_counts
  SET orders_count = orders_count - 1, pending_orders = pending_orders - (OLD.status = 'pending'),
      spent_cents = spent_cents - CASE WHEN OLD.status = 'cancelled' THEN 0 ELSE OLD.total_amount_cents END
  WHERE user_id = OLD.user_id;
  UPDATE api_key_spend_days SET spent_cents = spent_cents - OLD.total_amount_cents
  WHERE day = substr(OLD.created_at, 1, 10)
    AND api_key_id IN (SELECT f.value FROM api_keys k, json_each('[' || rtrim(k.id || replace(k.ancestry, '/', ','), ',') || ']') f
                       WHERE k.id = OLD.api_key_id);
END;

CREATE TRIGGER wallet_transactions_counted AFTER INSERT ON wallet_transactions
BEGIN
  INSERT INTO user_counts (user_id, transactions_count) VALUES (NEW.user_id, 1)
  ON CONFLICT (user_id) DO UPDATE SET transactions_count = transactions_count + 1;
END;

CREATE TRIGGER wallet_transactions_uncounted AFTER DELETE ON wallet_transactions
BEGIN
  UPDATE user_counts SET transactions_count = transactions_count - 1 WHERE user_id = OLD.user_id;
END;

CREATE TRIGGER deposits_counted AFTER INSERT ON deposits
BEGIN
  INSERT INTO user_counts (user_id, deposits_count) VALUES (NEW.user_id, 1)
  ON CONFLICT (user_id) DO UPDATE SET deposits_count = deposits_count + 1;
END;

CREATE TRIGGER deposits_uncounted AFTER DELETE ON deposits
BEGIN
  UPDATE user_counts SET deposits_count = deposits_count - 1 WHERE user_id = OLD.user_id;
END;
