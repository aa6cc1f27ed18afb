-- Idempotency-Key records. A record is written in the same batch as the effect it guards (so neither exists without
-- the other); the response is stored right after, and replayed byte for byte for 24 hours.
CREATE TABLE idempotency_keys (
  id INTEGER PRIMARY KEY,
  user_id INTEGER NOT NULL REFERENCES users (id),
  idempotency_key TEXT NOT NULL,
  request_hash TEXT NOT NULL,
  -- the order or deposit the guarded effect created or changed
  resource_id INTEGER NOT NULL,
  response_status INTEGER,
  response_body TEXT,
  created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX idempotency_keys_user_key_unique ON idempotency_keys (user_id, idempotency_key);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
