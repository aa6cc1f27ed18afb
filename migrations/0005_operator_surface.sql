-- Operator surface ([9]): retries, reconciliation and audit of production.

-- Idempotency-Key records of the operator (the admin routes). idempotency_keys.user_id references a user, and the
-- operator is none, so its keys live in a namespace of their own. Same life as a user's record: written in the batch
-- of the effect it guards with a snapshot of what the response renders from, replayed for 24 hours.
CREATE TABLE operator_idempotency_keys (
  id INTEGER PRIMARY KEY,
  idempotency_key TEXT NOT NULL,
  request_hash TEXT NOT NULL,
  -- the user, transaction, product, stock upload or deposit the guarded effect created or changed
  resource_id INTEGER NOT NULL,
  response_snapshot TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX operator_idempotency_keys_key_unique ON operator_idempotency_keys (idempotency_key);
CREATE INDEX operator_idempotency_keys_created ON operator_idempotency_keys (created_at);

-- One row per stock upload, written in the upload's batch before its items: what it added and skipped, computed
-- in that transaction. Its reference is generated before the batch, so an upload whose outcome a fault hid is
-- found again with its own counts (INSERT OR IGNORE alone cannot say what it did).
CREATE TABLE stock_uploads (
  id INTEGER PRIMARY KEY,
  reference TEXT NOT NULL,
  product_id INTEGER NOT NULL REFERENCES products (id),
  added INTEGER NOT NULL CHECK (added >= 0),
  skipped INTEGER NOT NULL CHECK (skipped >= 0),
  created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX stock_uploads_reference_unique ON stock_uploads (reference);

-- Every verified inbound gateway webhook, as received, in the batch of its effect where it has one. A payment that
-- arrived with the wrong amount is on record (outcome amount_mismatch) though nothing is credited. Unverified
-- deliveries are not stored (they are 401s in the request log).
CREATE TABLE gateway_events (
  id INTEGER PRIMARY KEY,
  -- generated before the batch: finds the row again when a fault hid whether the batch committed
  reference TEXT NOT NULL,
  gateway TEXT NOT NULL,
  deposit_id INTEGER NOT NULL REFERENCES deposits (id),
  status TEXT NOT NULL CHECK (status IN ('paid', 'failed', 'expired')),
  amount_cents INTEGER NOT NULL CHECK (amount_cents > 0),
  transaction_id TEXT NOT NULL,
  outcome TEXT NOT NULL CHECK (outcome IN ('credited', 'closed', 'duplicate', 'amount_mismatch')),
  received_at TEXT NOT NULL
);
CREATE UNIQUE INDEX gateway_events_reference_unique ON gateway_events (reference);
CREATE INDEX gateway_events_received ON gateway_events (received_at, id);
CREATE INDEX gateway_events_gateway_received ON gateway_events (gateway, received_at, id);
CREATE INDEX gateway_events_deposit_received ON gateway_events (deposit_id, received_at, id);
