-- Key families. A key made with an API key is that key's child: `created_by_key_id` names its maker (NULL for keys
-- made in the dashboard or by the operator, and for every key that exists now), `ancestry` is the path of its makers,
-- root first, as '/<id>/<id>/' ('/' for a key nobody made with a key). A key's descendants are the keys whose ancestry
-- starts with its own ancestry || id || '/': one range of api_keys_ancestry, which revoking a key (every descendant
-- goes in the same statement) and the daily spend limit of a family (the purchases of the key and of every key made
-- from it) read. A key never changes maker, so the path never changes either.
ALTER TABLE api_keys ADD COLUMN created_by_key_id INTEGER REFERENCES api_keys (id);
ALTER TABLE api_keys ADD COLUMN ancestry TEXT NOT NULL DEFAULT '/' CHECK (ancestry GLOB '/*');
CREATE INDEX api_keys_ancestry ON api_keys (ancestry);

-- "Forgot password?" does the same database work whether or not the address has an account: every request writes
-- the row of its address (the SHA-256 of the address in lower case, so an address without an account is not kept
-- in clear). `recent` lists the requests of the last hour that were let through (at most 3, each '<time> <marker>');
-- a reset email is recorded only for a request this row let through, so the per-address limit is read and written
-- the same way for every address. Rows untouched for an hour are deleted by later requests.
CREATE TABLE password_reset_requests (
  address_hash TEXT PRIMARY KEY,
  recent TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX password_reset_requests_updated ON password_reset_requests (updated_at);
