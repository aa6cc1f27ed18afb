-- After the sale: warranties and claims, operator refunds, holds on reversed payments, a blocklist.
-- No table is rebuilt: columns are added (with their CHECKs), two tables are new, one index is replaced.

-- Warranty: how long after a purchase a buyer may report a delivered item (0 = no warranty).
ALTER TABLE products ADD COLUMN warranty_hours INTEGER NOT NULL DEFAULT 0 CHECK (warranty_hours BETWEEN 0 AND 8760);

-- What was refunded of an order so far (operator refunds, claim refunds, a cancellation's rest). Every refund batch
-- raises it by exactly its ledger row's amount; the CHECK is the backstop that no order is refunded beyond its total.
ALTER TABLE orders ADD COLUMN refunded_amount_cents INTEGER NOT NULL DEFAULT 0
  CHECK (refunded_amount_cents >= 0 AND refunded_amount_cents <= total_amount_cents);
UPDATE orders SET refunded_amount_cents = (SELECT coalesce(sum(t.amount_cents), 0) FROM wallet_transactions t WHERE t.order_id = orders.id AND t.type = 'refund')
  WHERE EXISTS (SELECT 1 FROM wallet_transactions t WHERE t.order_id = orders.id AND t.type = 'refund');
-- An order may now have several refund rows (operator and claim refunds, then a cancellation of the rest): the cap on
-- what they add up to is the CHECK above, and a cancellation is once per order by its status change.
DROP INDEX wallet_transactions_one_refund;
-- The cancellation cap counts the buyer's cancelled orders of the last 24 hours (a cancelled order never changes
-- again, so its updated_at is when it was cancelled), not refund rows, which operators and claims now write too.
CREATE INDEX orders_user_cancelled ON orders (user_id, updated_at) WHERE status = 'cancelled';

-- A replacement takes a reported item's place in its order: the old item is revoked and points at its replacement;
-- `slot` (the id of the slot's first item) keeps the new one at the same index of the order's items.
ALTER TABLE stock_items ADD COLUMN replaced_by INTEGER REFERENCES stock_items (id);
ALTER TABLE stock_items ADD COLUMN slot INTEGER;

CREATE TABLE claims (
  id INTEGER PRIMARY KEY,
  reference TEXT NOT NULL,
  order_id INTEGER NOT NULL REFERENCES orders (id),
  user_id INTEGER NOT NULL REFERENCES users (id),
  item_index INTEGER NOT NULL CHECK (item_index >= 0),
  stock_item_id INTEGER NOT NULL REFERENCES stock_items (id),
  reason TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'replaced', 'refunded', 'rejected')),
  resolution TEXT,
  replacement_item_id INTEGER REFERENCES stock_items (id),
  refund_cents INTEGER CHECK (refund_cents IS NULL OR refund_cents >= 0),
  resolution_key TEXT,
  created_at TEXT NOT NULL,
  resolved_at TEXT,
  CHECK ((status = 'open') = (resolved_at IS NULL)),
  CHECK ((status = 'replaced') = (replacement_item_id IS NOT NULL)),
  CHECK ((status = 'refunded') = (refund_cents IS NOT NULL))
);
CREATE UNIQUE INDEX claims_reference_unique ON claims (reference);
-- One claim per delivered item, whatever races.
CREATE UNIQUE INDEX claims_one_per_item ON claims (stock_item_id);
CREATE UNIQUE INDEX claims_resolution_key_unique ON claims (resolution_key) WHERE resolution_key IS NOT NULL;
CREATE UNIQUE INDEX claims_one_replacement ON claims (replacement_item_id) WHERE replacement_item_id IS NOT NULL;
CREATE INDEX claims_order ON claims (order_id, item_index);
CREATE INDEX claims_status_created ON claims (status, created_at, id);

-- Holds: set by a reversed payment or by an operator; while set, deposits and purchases are refused.
ALTER TABLE users ADD COLUMN held_at TEXT;
ALTER TABLE users ADD COLUMN hold_reason TEXT CHECK ((hold_reason IS NULL) = (held_at IS NULL));

CREATE TABLE blocklist (
  id INTEGER PRIMARY KEY,
  type TEXT NOT NULL CHECK (type IN ('email', 'email_domain', 'ip', 'country', 'asn')),
  value TEXT NOT NULL,
  -- An ip rule's range as 32 hex digits each (an IPv4 address as its IPv4-mapped IPv6 form, src/lib/ip.ts).
  range_start TEXT,
  range_end TEXT,
  note TEXT,
  hits INTEGER NOT NULL DEFAULT 0 CHECK (hits >= 0),
  last_hit_at TEXT,
  created_at TEXT NOT NULL,
  CHECK ((type = 'ip') = (range_start IS NOT NULL AND range_end IS NOT NULL))
);
CREATE UNIQUE INDEX blocklist_type_value ON blocklist (type, value);
CREATE INDEX blocklist_ip_ranges ON blocklist (range_start, range_end) WHERE type = 'ip';

INSERT INTO audit_actions (action) VALUES
  ('claim.replaced'), ('claim.refunded'), ('claim.rejected'), ('order.refunded'), ('user.held'), ('user.released'),
  ('blocklist.added'), ('blocklist.removed');
INSERT INTO event_types (type) VALUES ('order.item_replaced'), ('order.item_refunded'), ('order.claim_rejected');
INSERT INTO email_templates (template) VALUES ('claim_resolved');
