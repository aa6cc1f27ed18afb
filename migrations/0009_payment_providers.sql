-- Real payment providers behind the gateway slots (contract: "Real payment providers behind the three gateway slots").

-- A vendor's payment id learnt from its notifications: Stripe's payment intent (a later refund or dispute names it),
-- NOWPayments' payment id (what its lookup asks about).
ALTER TABLE deposits ADD COLUMN vendor_payment_id TEXT;

-- Notifications name their deposit by the vendor's invoice id (BTCPay) or payment id (Stripe refunds and disputes).
CREATE INDEX deposits_gateway_external ON deposits (gateway, external_id);
CREATE INDEX deposits_gateway_vendor_payment ON deposits (gateway, vendor_payment_id) WHERE vendor_payment_id IS NOT NULL;

-- The gateway event log records each vendor's own status word and the amount it reported, which a vendor may not
-- report at all (BTCPay), and the outcomes of real providers' notifications. SQLite cannot change a CHECK in place:
-- the table is rebuilt with its rows and indexes.
CREATE TABLE gateway_events_next (
  id INTEGER PRIMARY KEY,
  -- generated before the batch: finds the row again when a fault hid whether the batch committed
  reference TEXT NOT NULL,
  gateway TEXT NOT NULL,
  deposit_id INTEGER NOT NULL REFERENCES deposits (id),
  status TEXT NOT NULL CHECK (length(status) BETWEEN 1 AND 100),
  amount_cents INTEGER CHECK (amount_cents IS NULL OR amount_cents >= 0),
  transaction_id TEXT NOT NULL,
  outcome TEXT NOT NULL CHECK (outcome IN ('credited', 'closed', 'duplicate', 'amount_mismatch', 'in_progress', 'reversed', 'unconfirmed')),
  received_at TEXT NOT NULL
);
INSERT INTO gateway_events_next (id, reference, gateway, deposit_id, status, amount_cents, transaction_id, outcome, received_at)
  SELECT id, reference, gateway, deposit_id, status, amount_cents, transaction_id, outcome, received_at FROM gateway_events;
DROP TABLE gateway_events;
ALTER TABLE gateway_events_next RENAME TO gateway_events;
CREATE UNIQUE INDEX gateway_events_reference_unique ON gateway_events (reference);
CREATE INDEX gateway_events_received ON gateway_events (received_at, id);
CREATE INDEX gateway_events_gateway_received ON gateway_events (gateway, received_at, id);
CREATE INDEX gateway_events_deposit_received ON gateway_events (deposit_id, received_at, id);
