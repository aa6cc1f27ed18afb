-- The console's payments page: the last failed call to each slot's payment vendor (a deposit's invoice, a lookup, a
-- connection check), one row per slot, overwritten by the next failure. Written after the response that met the
-- failure, so it costs that request nothing. Never a key, a signature or a vendor body: only what failed.
CREATE TABLE vendor_failures (
  gateway TEXT PRIMARY KEY CHECK (gateway IN ('gateway_one', 'gateway_two', 'gateway_three')),
  provider TEXT NOT NULL,
  purpose TEXT NOT NULL,
  failure TEXT NOT NULL,
  at TEXT NOT NULL
);
