-- Lists that grow with features become tables, so a new name is one INSERT in a migration, never a table rebuild.
-- 0014, 0017, 0018 and 0019 each rebuilt audit_log or events to widen a CHECK (action IN (...)): on a production table
-- of millions of rows, a rebuild is the riskiest migration there is. The database still refuses an unknown name: the
-- column now references its list (D1 enforces foreign keys), which costs one primary-key lookup per insert.
--
-- Adding a name later:  INSERT INTO audit_actions (action) VALUES ('claim.replaced');
-- (and the same name in the TypeScript list of src/db/schema.ts; test/schema.test.ts keeps the two equal).
--
-- This is the last rebuild of these three tables. Each is set aside, dropped and created again under its own name
-- (docs/operating.md, "Upgrading a database that has data"); webhook_deliveries (ON DELETE CASCADE from events) is set
-- aside first, so dropping events deletes nothing.

CREATE TABLE audit_actions (action TEXT PRIMARY KEY);
INSERT INTO audit_actions (action) VALUES
  ('user.created'), ('user.updated'), ('balance.adjusted'), ('product.created'), ('product.updated'), ('stock.added'),
  ('deposit.marked_paid'), ('deposit.refreshed'), ('password_reset.created'), ('product.image_set'),
  ('product.image_removed'), ('coupon.created'), ('coupon.updated'), ('order.cancelled');

CREATE TABLE event_types (type TEXT PRIMARY KEY);
INSERT INTO event_types (type) VALUES
  ('order.created'), ('order.cancelled'), ('order.completed'), ('deposit.paid'), ('deposit.failed'), ('deposit.expired'),
  ('balance.adjusted'), ('product.restocked'), ('product.price_changed'), ('product.unavailable');

CREATE TABLE email_templates (template TEXT PRIMARY KEY);
INSERT INTO email_templates (template) VALUES
  ('password_reset'), ('order_receipt'), ('deposit_credited'), ('email_changed'), ('password_changed'),
  ('email_verification'), ('operator_alert');

-- audit_log
CREATE TABLE audit_log_kept AS SELECT id, actor, action, target, details, created_at FROM audit_log;
DROP TABLE audit_log;
CREATE TABLE audit_log (
  id INTEGER PRIMARY KEY,
  actor TEXT NOT NULL CHECK (actor = 'admin_token' OR actor LIKE 'user:%'),
  action TEXT NOT NULL REFERENCES audit_actions (action),
  target TEXT NOT NULL,
  details TEXT NOT NULL CHECK (json_valid(details)),
  created_at TEXT NOT NULL
);
INSERT INTO audit_log (id, actor, action, target, details, created_at)
  SELECT id, actor, action, target, details, created_at FROM audit_log_kept;
DROP TABLE audit_log_kept;
CREATE INDEX audit_log_created ON audit_log (created_at, id);

-- events (and webhook_deliveries, which reference them)
CREATE TABLE events_kept AS SELECT seq, id, user_id, type, object_id, snapshot, created_at, enqueued_at FROM events;
CREATE TABLE webhook_deliveries_kept AS SELECT id, event_id, endpoint_id, attempt, status_code, error, at FROM webhook_deliveries;
DROP TABLE webhook_deliveries;
DROP TABLE events;
CREATE TABLE events (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL,
  user_id INTEGER NOT NULL REFERENCES users (id),
  type TEXT NOT NULL REFERENCES event_types (type),
  object_id INTEGER NOT NULL,
  snapshot TEXT NOT NULL,
  created_at TEXT NOT NULL,
  enqueued_at TEXT
);
INSERT INTO events (seq, id, user_id, type, object_id, snapshot, created_at, enqueued_at)
  SELECT seq, id, user_id, type, object_id, snapshot, created_at, enqueued_at FROM events_kept;
DROP TABLE events_kept;
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

-- emails (nothing references them)
CREATE TABLE emails_kept AS SELECT * FROM emails;
DROP TABLE emails;
CREATE TABLE emails (
  id TEXT PRIMARY KEY,
  to_address TEXT NOT NULL,
  user_id INTEGER REFERENCES users (id),
  template TEXT NOT NULL REFERENCES email_templates (template),
  subject TEXT NOT NULL,
  data TEXT NOT NULL CHECK (json_valid(data)),
  carries_link INTEGER NOT NULL DEFAULT 0 CHECK (carries_link IN (0, 1)),
  status TEXT NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'sent', 'failed')),
  attempts INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  message_id TEXT,
  error TEXT,
  created_at TEXT NOT NULL,
  enqueued_at TEXT,
  sent_at TEXT
);
INSERT INTO emails (id, to_address, user_id, template, subject, data, carries_link, status, attempts, message_id, error, created_at, enqueued_at, sent_at)
  SELECT id, to_address, user_id, template, subject, data, carries_link, status, attempts, message_id, error, created_at, enqueued_at, sent_at FROM emails_kept;
DROP TABLE emails_kept;
CREATE INDEX emails_created ON emails (created_at, id);
CREATE INDEX emails_to_template_created ON emails (to_address COLLATE NOCASE, template, created_at);
CREATE INDEX emails_outbox ON emails (created_at) WHERE enqueued_at IS NULL;
