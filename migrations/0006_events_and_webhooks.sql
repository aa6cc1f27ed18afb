-- Outgoing webhooks and the event log ([10]).
-- An event is written in the same batch as the change it reports (a transactional outbox): never an event for a
-- change that rolled back, never a change without its event. `snapshot` is the reported row (order, deposit or wallet
-- transaction) as it was right after the change, rendered by the API's own presenters when read or delivered.
CREATE TABLE events (
  seq INTEGER PRIMARY KEY,
  -- 'evt_' + 24 base62, generated before the batch that writes it
  id TEXT NOT NULL,
  user_id INTEGER NOT NULL REFERENCES users (id),
  type TEXT NOT NULL CHECK (type IN ('order.created', 'order.cancelled', 'order.completed', 'deposit.paid',
    'deposit.failed', 'deposit.expired', 'balance.adjusted')),
  object_id INTEGER NOT NULL,
  snapshot TEXT NOT NULL,
  created_at TEXT NOT NULL,
  -- the outbox: NULL until the event was handed to the delivery queue (the scheduled sweep picks up what was not)
  enqueued_at TEXT
);
CREATE UNIQUE INDEX events_id_unique ON events (id);
-- backstop: each change is reported once (an order is created, cancelled and completed once, a deposit paid once...)
CREATE UNIQUE INDEX events_once_per_object ON events (type, object_id);
CREATE INDEX events_user_created ON events (user_id, created_at, seq);
CREATE INDEX events_created ON events (created_at);
CREATE INDEX events_outbox ON events (created_at) WHERE enqueued_at IS NULL;

CREATE TABLE webhook_endpoints (
  id INTEGER PRIMARY KEY,
  user_id INTEGER NOT NULL REFERENCES users (id),
  url TEXT NOT NULL,
  -- JSON array of event types, or ["*"]
  events TEXT NOT NULL,
  description TEXT,
  -- 'whsec_' + 32 base62: kept as is, since every delivery is signed with it; shown only in the creation response
  secret TEXT NOT NULL,
  created_at TEXT NOT NULL,
  deleted_at TEXT
);
CREATE INDEX webhook_endpoints_user_active ON webhook_endpoints (user_id, deleted_at);

-- One row per delivery attempt of an event to an endpoint; deleted with the event after 30 days.
CREATE TABLE webhook_deliveries (
  id INTEGER PRIMARY KEY,
  event_id TEXT NOT NULL REFERENCES events (id) ON DELETE CASCADE,
  endpoint_id INTEGER NOT NULL REFERENCES webhook_endpoints (id),
  attempt INTEGER NOT NULL CHECK (attempt >= 1),
  -- NULL when no HTTP answer came (network error, timeout)
  status_code INTEGER,
  error TEXT,
  at TEXT NOT NULL
);
-- a message delivered twice by the queue (at least once) records its attempt once
CREATE UNIQUE INDEX webhook_deliveries_attempt_unique ON webhook_deliveries (event_id, endpoint_id, attempt);
