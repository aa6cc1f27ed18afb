-- Email through Cloudflare Email Service: the outbox of emails, receipts opt-out, and email verification.

-- Receipts (order_receipt, deposit_credited) may be turned off by the user; security notices cannot.
ALTER TABLE users ADD COLUMN email_receipts INTEGER NOT NULL DEFAULT 1 CHECK (email_receipts IN (0, 1));
-- Every account that exists now, and every account the operator makes, is verified; only a sign-up (or an email
-- change) under EMAIL_VERIFICATION=required writes 0 until its link is opened.
ALTER TABLE users ADD COLUMN email_verified INTEGER NOT NULL DEFAULT 1 CHECK (email_verified IN (0, 1));

-- One row per message, written in the batch of the effect that causes it (never outside it), sent afterwards by the
-- EMAIL_QUEUE consumer. No body is stored: `data` holds the non-secret fields its template needs (an order number,
-- amounts), never a delivered item and never a link token (a token travels only in the queue message, and
-- `carries_link` says the message cannot be rebuilt from this row).
CREATE TABLE emails (
  id TEXT PRIMARY KEY,
  to_address TEXT NOT NULL,
  user_id INTEGER REFERENCES users (id),
  template TEXT NOT NULL CHECK (template IN ('password_reset', 'order_receipt', 'deposit_credited', 'email_changed',
                                             'password_changed', 'email_verification', 'operator_alert')),
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
-- GET /admin/emails newest first; the per-address limits (reset and verification emails of the last hour).
CREATE INDEX emails_created ON emails (created_at, id);
CREATE INDEX emails_to_template_created ON emails (to_address COLLATE NOCASE, template, created_at);
-- The sweep's outbox: emails whose enqueue after their request was lost.
CREATE INDEX emails_outbox ON emails (created_at) WHERE enqueued_at IS NULL;

-- Email verification links: 256 random bits in the link, only their SHA-256 here; one use, 24 hours; the address it
-- proves is the one the link was sent to (a later email change makes it useless).
CREATE TABLE email_verifications (
  id INTEGER PRIMARY KEY,
  user_id INTEGER NOT NULL REFERENCES users (id),
  email TEXT NOT NULL,
  token_hash TEXT NOT NULL,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  used_at TEXT
);
CREATE UNIQUE INDEX email_verifications_token_hash_unique ON email_verifications (token_hash);
CREATE INDEX email_verifications_user ON email_verifications (user_id);

-- Operator alerts: one line per fact, written in the batch of its cause (a purchase taking a product's stock down to
-- LOW_STOCK_THRESHOLD or below, once per crossing; a payment recorded as amount_mismatch or reversed; an outgoing
-- webhook endpoint that exhausted its attempts). The scheduled run gathers each kind's unemailed lines into one
-- operator_alert email to every enabled operator, at most one per kind an hour (`emailed_at`).
CREATE TABLE operator_alerts (
  id INTEGER PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('low_stock', 'payment', 'webhook_endpoint')),
  line TEXT NOT NULL,
  created_at TEXT NOT NULL,
  emailed_at TEXT
);
CREATE INDEX operator_alerts_kind_emailed ON operator_alerts (kind, emailed_at);
