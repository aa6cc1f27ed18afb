-- API keys an integrator can narrow. `scopes` is a bitmask (read 1, orders 2, deposits 4, account 8, keys 16,
-- webhooks 32; src/lib/scopes.ts): existing keys get all six. `spend_limit_cents` caps the total of the key's
-- purchases per UTC day (NULL = none). `allowed_ips` is the list as the owner gave it (shown back); `ip_ranges` the
-- same list precomputed as [start, end] pairs of 32 lowercase hex digits of the 16-byte address (IPv4 as
-- IPv4-mapped IPv6), so the request's proof matches the client address with a string BETWEEN (NULL = anywhere).
-- `expires_at` NULL = never. Existing keys: every scope, no limit, anywhere, never expire.
ALTER TABLE api_keys ADD COLUMN scopes INTEGER NOT NULL DEFAULT 63 CHECK (scopes BETWEEN 1 AND 63);
ALTER TABLE api_keys ADD COLUMN spend_limit_cents INTEGER CHECK (spend_limit_cents IS NULL OR spend_limit_cents > 0);
ALTER TABLE api_keys ADD COLUMN allowed_ips TEXT;
ALTER TABLE api_keys ADD COLUMN ip_ranges TEXT;
ALTER TABLE api_keys ADD COLUMN expires_at TEXT;

-- The key that placed an order (NULL for the dashboard and older orders): the daily spend limit sums these.
ALTER TABLE orders ADD COLUMN api_key_id INTEGER REFERENCES api_keys (id);
CREATE INDEX orders_api_key_created ON orders (api_key_id, created_at) WHERE api_key_id IS NOT NULL;

-- Catalogue events (product.restocked, product.price_changed, product.unavailable) are shop-wide: each subscribed
-- user gets their own copy, and a product is restocked or repriced many times, so "each change is reported once"
-- keys on (type, object_id) only for the other types. The type CHECK gains the three names, which takes a rebuild of
-- events; its deliveries are set aside first and put back, so dropping events cascades into nothing.
CREATE TABLE events_next (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL,
  user_id INTEGER NOT NULL REFERENCES users (id),
  type TEXT NOT NULL CHECK (type IN ('order.created', 'order.cancelled', 'order.completed', 'deposit.paid',
    'deposit.failed', 'deposit.expired', 'balance.adjusted', 'product.restocked', 'product.price_changed',
    'product.unavailable')),
  object_id INTEGER NOT NULL,
  snapshot TEXT NOT NULL,
  created_at TEXT NOT NULL,
  enqueued_at TEXT
);
INSERT INTO events_next (seq, id, user_id, type, object_id, snapshot, created_at, enqueued_at)
  SELECT seq, id, user_id, type, object_id, snapshot, created_at, enqueued_at FROM events;
CREATE TABLE webhook_deliveries_kept AS SELECT id, event_id, endpoint_id, attempt, status_code, error, at FROM webhook_deliveries;
DROP TABLE webhook_deliveries;
DROP TABLE events;
ALTER TABLE events_next RENAME TO events;
CREATE UNIQUE INDEX events_id_unique ON events (id);
CREATE UNIQUE INDEX events_once_per_object ON events (type, object_id) WHERE type NOT LIKE 'product.%';
CREATE INDEX events_user_created ON events (user_id, created_at, seq);
CREATE INDEX events_created ON events (created_at);
CREATE INDEX events_outbox ON events (created_at) WHERE enqueued_at IS NULL;

CREATE TABLE webhook_deliveries (
  id INTEGER PRIMARY KEY,
  event_id TEXT NOT NULL REFERENCES events (id) ON DELETE CASCADE,
  endpoint_id INTEGER NOT NULL REFERENCES webhook_endpoints (id),
  attempt INTEGER NOT NULL CHECK (attempt >= 1),
  status_code INTEGER,
  error TEXT,
  at TEXT NOT NULL
);
INSERT INTO webhook_deliveries (id, event_id, endpoint_id, attempt, status_code, error, at)
  SELECT id, event_id, endpoint_id, attempt, status_code, error, at FROM webhook_deliveries_kept;
DROP TABLE webhook_deliveries_kept;
CREATE UNIQUE INDEX webhook_deliveries_attempt_unique ON webhook_deliveries (event_id, endpoint_id, attempt);
CREATE INDEX webhook_deliveries_at ON webhook_deliveries (at);
