-- A catalogue a buyer chooses from: product descriptions and images.

-- Plain text shown with its line breaks (never read as HTML), at most 2,000 characters (checked by the request schema).
ALTER TABLE products ADD COLUMN description TEXT;
-- The product's image in the MEDIA bucket, named by the SHA-256 of its bytes and its type: '<64 hex>.<png|jpg|webp>'.
-- Several products may share one image; the bucket's object is deleted once no row names it any more.
ALTER TABLE products ADD COLUMN image TEXT CHECK (image IS NULL OR (substr(image, 1, 64) NOT GLOB '*[^0-9a-f]*'
  AND length(substr(image, 1, 64)) = 64 AND substr(image, 65) IN ('.png', '.jpg', '.webp')));
-- "Does any product still use this image?", asked after every change of one.
CREATE INDEX products_image ON products (image) WHERE image IS NOT NULL;

-- The audit log's actions `product.image_set` and `product.image_removed` are allowed by the rebuild of audit_log in
-- 0017_prices.sql, whose CHECK lists every action the service writes.
