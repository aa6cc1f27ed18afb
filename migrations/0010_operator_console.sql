-- The operator console ([16]): roles, disabled accounts, the audit log, password reset links, and the indexes the
-- console's searches and lists use.

-- Every user has a role; operators open /dashboard/console. A disabled user (disabled_at set) is refused everywhere as
-- if the credentials were wrong; nothing of theirs is deleted.
ALTER TABLE users ADD COLUMN role TEXT NOT NULL DEFAULT 'user' CHECK (role IN ('user', 'operator'));
ALTER TABLE users ADD COLUMN disabled_at TEXT;

-- Every operator write (console or admin API), appended in the batch of its effect. `actor` is 'admin_token' or
-- 'user:<id>' of a live operator session: a console write whose session is not one has a NULL actor, so the NOT NULL
-- check fails the whole batch and its effect rolls back with it. `details` is a JSON object without secrets.
CREATE TABLE audit_log (
  id INTEGER PRIMARY KEY,
  actor TEXT NOT NULL CHECK (actor = 'admin_token' OR actor LIKE 'user:%'),
  action TEXT NOT NULL CHECK (action IN ('user.created', 'user.updated', 'balance.adjusted', 'product.created', 'product.updated',
                                         'stock.added', 'deposit.marked_paid', 'password_reset.created')),
  target TEXT NOT NULL,
  details TEXT NOT NULL CHECK (json_valid(details)),
  created_at TEXT NOT NULL
);
-- GET /admin/audit-log and the console's audit page: newest first.
CREATE INDEX audit_log_created ON audit_log (created_at, id);

-- Password reset links made by an operator: 256 random bits in the link, only their SHA-256 here; one use, 60 minutes.
CREATE TABLE password_resets (
  id INTEGER PRIMARY KEY,
  user_id INTEGER NOT NULL REFERENCES users (id),
  token_hash TEXT NOT NULL,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  used_at TEXT
);
CREATE UNIQUE INDEX password_resets_token_hash_unique ON password_resets (token_hash);
CREATE INDEX password_resets_user ON password_resets (user_id);

-- Searches and lists of the console and the admin read API (the query each one serves):
--   exact email (users ?q=, orders ?q=): users_email_unique (0001, COLLATE NOCASE);
--   exact order number (orders ?q=): orders_order_number_unique (0001);
--   a user's orders / deposits / transactions: orders_user_created, deposits_user_created,
--     wallet_transactions_user_created (0001);
--   orders ?status=: orders_status_created (0001); units sold per product: stock_items_product_status (0001).
-- Added here:
--   every order, newest first (GET /admin/orders without filters):
CREATE INDEX orders_created ON orders (created_at, id);
--   every deposit newest first, and ?status= (pending deposits on the overview):
CREATE INDEX deposits_created ON deposits (created_at, id);
CREATE INDEX deposits_status_created ON deposits (status, created_at, id);
--   sales per day (GET /admin/stats/sales: purchases, refunds and deposit credits by day):
CREATE INDEX wallet_transactions_type_created ON wallet_transactions (type, created_at);
--   open amount mismatches on the overview:
CREATE INDEX gateway_events_outcome_received ON gateway_events (outcome, received_at);
--   failing webhook endpoints on the overview (deliveries of the last 24 hours):
CREATE INDEX webhook_deliveries_at ON webhook_deliveries (at);
