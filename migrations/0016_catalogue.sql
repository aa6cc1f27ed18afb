-- A catalogue a buyer chooses from: product descriptions and images.

-- Plain text shown with its line breaks (never read as HTML), at most 2,000 characters (checked by the request schema).
ALTER TABLE products ADD COLUMN description TEXT;
-- The product's image in the MEDIA bucket, named by the SHA-256 of its bytes and its type: '<64 hex>.<png|jpg|webp>'.
-- Several products may share one image; the bucket's object is deleted once no row names it any more.
ALTER TABLE products ADD COLUMN image TEXT CHECK (image IS NULL OR (substr(image, 1, 64) NOT GLOB '*[^0-9a-f]*'
  AND length(substr(image, 1, 64)) = 64 AND substr(image, 65) IN ('.png', '.jpg', '.webp')));
-- "Does any product still use this image?", asked after every change of one.
CREATE INDEX products_image ON products (image) WHERE image IS NOT NULL;

-- The audit log's actions gain the image's two (SQLite changes a CHECK only by rebuilding the table). The list is
-- every action the service writes or will write, so a later rebuild for another action starts from the same list.
CREATE TABLE audit_log_new (
  id INTEGER PRIMARY KEY,
  actor TEXT NOT NULL CHECK (actor = 'admin_token' OR actor LIKE 'user:%'),
  action TEXT NOT NULL CHECK (action IN ('user.created', 'user.updated', 'balance.adjusted', 'product.created', 'product.updated',
                                         'stock.added', 'deposit.marked_paid', 'deposit.refreshed', 'password_reset.created',
                                         'product.image_set', 'product.image_removed', 'coupon.created', 'coupon.updated')),
  target TEXT NOT NULL,
  details TEXT NOT NULL CHECK (json_valid(details)),
  created_at TEXT NOT NULL
);
INSERT INTO audit_log_new (id, actor, action, target, details, created_at) SELECT id, actor, action, target, details, created_at FROM audit_log;
DROP TABLE audit_log;
ALTER TABLE audit_log_new RENAME TO audit_log;
CREATE INDEX audit_log_created ON audit_log (created_at, id);
