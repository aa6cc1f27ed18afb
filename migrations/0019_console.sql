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

-- An operator's "Cancel order" is on the audit log as `order.cancelled`. SQLite cannot change a CHECK in place, so the
-- table is rebuilt with the same columns, rows and index; its CHECK lists every action of the operator surface
-- (those of the product images and coupons included), so this rebuild leaves room for them.
CREATE TABLE audit_log_next (
  id INTEGER PRIMARY KEY,
  actor TEXT NOT NULL CHECK (actor = 'admin_token' OR actor LIKE 'user:%'),
  action TEXT NOT NULL CHECK (action IN ('user.created', 'user.updated', 'balance.adjusted', 'product.created', 'product.updated',
                                         'stock.added', 'deposit.marked_paid', 'deposit.refreshed', 'password_reset.created',
                                         'product.image_set', 'product.image_removed', 'coupon.created', 'coupon.updated',
                                         'order.cancelled')),
  target TEXT NOT NULL,
  details TEXT NOT NULL CHECK (json_valid(details)),
  created_at TEXT NOT NULL
);
INSERT INTO audit_log_next (id, actor, action, target, details, created_at) SELECT id, actor, action, target, details, created_at FROM audit_log;
DROP TABLE audit_log;
ALTER TABLE audit_log_next RENAME TO audit_log;
CREATE INDEX audit_log_created ON audit_log (created_at, id);
