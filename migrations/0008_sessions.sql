-- Dashboard sign-in sessions. The browser holds a 256-bit random token; only its SHA-256 is stored, so a leaked
-- table opens no session. A session ends at idle_expires_at (slid forward while in use, at most once a minute, with
-- last_used_at) or at expires_at (30 days after sign-in, never extended), at sign-out, or when its user's password
-- changes (the row is deleted).
CREATE TABLE sessions (
  id INTEGER PRIMARY KEY,
  user_id INTEGER NOT NULL REFERENCES users (id),
  token_hash TEXT NOT NULL,
  created_at TEXT NOT NULL,
  last_used_at TEXT NOT NULL,
  idle_expires_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  CHECK (idle_expires_at <= expires_at)
);
CREATE UNIQUE INDEX sessions_token_hash_unique ON sessions (token_hash);
CREATE INDEX sessions_user ON sessions (user_id);
CREATE INDEX sessions_idle_expires ON sessions (idle_expires_at);
