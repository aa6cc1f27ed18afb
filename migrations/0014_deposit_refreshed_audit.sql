-- An operator's refresh ("Ask the vendor", POST /admin/deposits/{id}/refresh) that credits or closes a deposit is on
-- the audit log as `deposit.refreshed`, written in the batch of the change. SQLite cannot change a CHECK in place:
-- the table is rebuilt with the longer list, its rows and ids kept as they were.
CREATE TABLE audit_log_new (
  id INTEGER PRIMARY KEY,
  actor TEXT NOT NULL CHECK (actor = 'admin_token' OR actor LIKE 'user:%'),
  action TEXT NOT NULL CHECK (action IN ('user.created', 'user.updated', 'balance.adjusted', 'product.created', 'product.updated',
                                         'stock.added', 'deposit.marked_paid', 'password_reset.created', 'deposit.refreshed')),
  target TEXT NOT NULL,
  details TEXT NOT NULL CHECK (json_valid(details)),
  created_at TEXT NOT NULL
);
INSERT INTO audit_log_new (id, actor, action, target, details, created_at)
  SELECT id, actor, action, target, details, created_at FROM audit_log;
DROP TABLE audit_log;
ALTER TABLE audit_log_new RENAME TO audit_log;
CREATE INDEX audit_log_created ON audit_log (created_at, id);
