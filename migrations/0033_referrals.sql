-- Referrals (docs/referrals.md): every user has a code; a user brought by one records its referrer once; each order
-- a referred user pays for earns the referrer a share, held until the sale is final, taken back by every refund, and
-- moved into the wallet as a `commission` ledger row.

-- The shop's programme: one row. percent 0 = off.
CREATE TABLE referral_settings (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  percent INTEGER NOT NULL DEFAULT 0 CHECK (percent BETWEEN 0 AND 50),
  hold_days INTEGER NOT NULL DEFAULT 14 CHECK (hold_days BETWEEN 0 AND 365),
  min_transfer_cents INTEGER NOT NULL DEFAULT 1000 CHECK (min_transfer_cents BETWEEN 1 AND 1000000),
  updated_at TEXT
);
INSERT INTO referral_settings (id) VALUES (1);

-- NULL: the shop's percent; 0: this product earns nothing.
ALTER TABLE products ADD COLUMN referral_percent INTEGER CHECK (referral_percent IS NULL OR referral_percent BETWEEN 0 AND 50);

ALTER TABLE users ADD COLUMN referral_code TEXT;
-- Written by the INSERT that creates the account, never after. 0 is what a typed code nobody has becomes, so the
-- creation fails on this CHECK and answers 422 errors.referral_code in the same round trip.
ALTER TABLE users ADD COLUMN referred_by INTEGER REFERENCES users (id) CHECK (referred_by IS NULL OR referred_by <> 0);
-- Set while the operator has switched the user's referrals off: nothing more is earned.
ALTER TABLE users ADD COLUMN referrals_off_at TEXT;
-- Kept, not counted (issue #50): the rows of GET /user/referral/earnings, and the cents moved into the wallet.
ALTER TABLE users ADD COLUMN referral_earnings_count INTEGER NOT NULL DEFAULT 0 CHECK (referral_earnings_count >= 0);
ALTER TABLE users ADD COLUMN referral_transferred_cents INTEGER NOT NULL DEFAULT 0;

-- 64 random bits as 16 hex digits: every user's code, now and at creation, whatever path creates the account.
UPDATE users SET referral_code = upper(hex(randomblob(8))) WHERE referral_code IS NULL;
CREATE UNIQUE INDEX users_referral_code_unique ON users (referral_code);
CREATE INDEX users_referred_by ON users (referred_by) WHERE referred_by IS NOT NULL;
CREATE TRIGGER users_referral_code AFTER INSERT ON users WHEN NEW.referral_code IS NULL
BEGIN
  UPDATE users SET referral_code = upper(hex(randomblob(8))) WHERE id = NEW.id;
END;

-- One row per order earned from (kind 'earning'), and one per refund that took back a share after the earning was
-- already moved into the wallet (kind 'offset', negative, counted against the next transfer).
--   status 'pending': not moved yet (shown `pending` before available_at, `available` from then on);
--   'transferred': moved by the commission ledger row `transaction_id`; 'reversed': fully taken back (amount 0).
CREATE TABLE referral_earnings (
  id INTEGER PRIMARY KEY,
  referrer_id INTEGER NOT NULL REFERENCES users (id),
  order_id INTEGER NOT NULL REFERENCES orders (id),
  kind TEXT NOT NULL CHECK (kind IN ('earning', 'offset')),
  -- what the order earned (an offset: what it took back, negative)
  earned_cents INTEGER NOT NULL,
  -- what it is worth now: an earning's share left after refunds while it was held
  amount_cents INTEGER NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'transferred', 'reversed')),
  available_at TEXT NOT NULL,
  transaction_id INTEGER,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  CHECK (CASE kind WHEN 'earning' THEN earned_cents > 0 AND amount_cents BETWEEN 0 AND earned_cents
                   ELSE earned_cents < 0 AND amount_cents = earned_cents END),
  CHECK ((status = 'transferred') = (transaction_id IS NOT NULL)),
  CHECK (status <> 'reversed' OR (kind = 'earning' AND amount_cents = 0))
);
-- backstop: an order earns once
CREATE UNIQUE INDEX referral_earnings_one_per_order ON referral_earnings (order_id) WHERE kind = 'earning';
CREATE INDEX referral_earnings_order ON referral_earnings (order_id);
CREATE INDEX referral_earnings_referrer_created ON referral_earnings (referrer_id, created_at, id);
-- what a transfer moves and the balances read: only rows not moved yet
CREATE INDEX referral_earnings_held ON referral_earnings (referrer_id, available_at) WHERE status = 'pending';
CREATE INDEX referral_earnings_transaction ON referral_earnings (transaction_id) WHERE transaction_id IS NOT NULL;
CREATE TRIGGER referral_earnings_counted AFTER INSERT ON referral_earnings
BEGIN
  UPDATE users SET referral_earnings_count = referral_earnings_count + 1 WHERE id = NEW.referrer_id;
END;

-- The earning of an order, written by the statement that creates the order (so a purchase's batch, the deposit credit
-- that buys an order included, spends no statement more on it): when the buyer was referred and the referrer's
-- referrals are on, round_half_down(total x percent / 100) in integer cents ((2x + d - 1) / (2d)), the product's
-- percent where set, else the shop's; nothing when it is 0. Available after the longer of the shop's hold and the
-- product's warranty; the order's own hold period (ORDER_HOLD_HOURS, which the database does not know) is kept by
-- the transfer itself, which moves nothing of an order still pending (src/services/referrals/account.ts).
CREATE TRIGGER orders_referral_earning AFTER INSERT ON orders
BEGIN
  INSERT INTO referral_earnings (referrer_id, order_id, kind, earned_cents, amount_cents, status, available_at, created_at, updated_at)
  SELECT e.referrer_id, NEW.id, 'earning', e.cents, e.cents, 'pending',
         strftime('%Y-%m-%dT%H:%M:%fZ', NEW.created_at, '+' || e.hold_hours || ' hours'), NEW.created_at, NEW.created_at
  FROM (
    SELECT r.id AS referrer_id,
           -- The shop's percent 0 turns the programme off, whatever a product's own percent says.
           (2 * NEW.total_amount_cents * CASE WHEN s.percent = 0 THEN 0 ELSE coalesce(p.referral_percent, s.percent) END + 100 - 1) / 200 AS cents,
           max(s.hold_days * 24, p.warranty_hours) AS hold_hours
    FROM users b
      JOIN users r ON r.id = b.referred_by AND r.referrals_off_at IS NULL
      JOIN products p ON p.id = NEW.product_id
      JOIN referral_settings s ON s.id = 1
    WHERE b.id = NEW.user_id
  ) e
  WHERE e.cents > 0;
END;

INSERT INTO audit_actions (action) VALUES ('referrals.settings_changed'), ('user.referrals_off'), ('user.referrals_on');

-- The ledger learns `commission` (a transfer of referral earnings: always a credit). SQLite changes a CHECK only by
-- rebuilding the table (as 0020 did): every column, index and foreign key is kept; documents (0032) reference it, hence the deferred foreign keys.
PRAGMA defer_foreign_keys = true;
CREATE TABLE wallet_transactions_before_commission AS SELECT * FROM wallet_transactions;
DROP TABLE wallet_transactions;
CREATE TABLE wallet_transactions (
  id INTEGER PRIMARY KEY,
  user_id INTEGER NOT NULL REFERENCES users (id),
  type TEXT NOT NULL CHECK (type IN ('deposit', 'purchase', 'refund', 'adjustment', 'commission')),
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
                   WHEN 'commission' THEN amount_cents > 0
                   ELSE amount_cents <> 0 END)
);
INSERT INTO wallet_transactions (id, user_id, type, amount_cents, balance_after_cents, description, order_id, deposit_id, operation_id, created_at)
  SELECT id, user_id, type, amount_cents, balance_after_cents, description, order_id, deposit_id, operation_id, created_at
  FROM wallet_transactions_before_commission;
DROP TABLE wallet_transactions_before_commission;
CREATE UNIQUE INDEX wallet_transactions_operation_unique ON wallet_transactions (operation_id);
CREATE INDEX wallet_transactions_user_created ON wallet_transactions (user_id, created_at, id);
-- backstops: an order is paid for once, a deposit is credited once
CREATE UNIQUE INDEX wallet_transactions_one_purchase ON wallet_transactions (order_id) WHERE type = 'purchase';
CREATE UNIQUE INDEX wallet_transactions_one_deposit ON wallet_transactions (deposit_id) WHERE type = 'deposit';
CREATE INDEX wallet_transactions_user_refunds ON wallet_transactions (user_id, created_at) WHERE type = 'refund';
CREATE INDEX wallet_transactions_type_created ON wallet_transactions (type, created_at);
-- The rebuild dropped the triggers that keep the ledger's count per user (0030_counts_kept.sql): the same again. The
-- rows copied back above went in before them, so the kept counts, which already held them, stay right.
CREATE TRIGGER wallet_transactions_counted AFTER INSERT ON wallet_transactions
BEGIN
  INSERT INTO user_counts (user_id, transactions_count) VALUES (NEW.user_id, 1)
  ON CONFLICT (user_id) DO UPDATE SET transactions_count = transactions_count + 1;
END;

CREATE TRIGGER wallet_transactions_uncounted AFTER DELETE ON wallet_transactions
BEGIN
  UPDATE user_counts SET transactions_count = transactions_count - 1 WHERE user_id = OLD.user_id;
END;
