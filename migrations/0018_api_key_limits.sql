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
