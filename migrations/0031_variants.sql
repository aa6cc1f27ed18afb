-- Variants: the unit a buyer picks (docs/catalogue.md, "Variants"). A product has one or more variants, each with its
-- own price, volume prices, pack sizes, SKU and stock items. No table is rebuilt: the product keeps its columns, which
-- now show its variants (the one variant's values, or with several active ones the "from" price, the first SKU and
-- the summed stock), kept in the same batch as every change to a variant (src/services/catalogue/variants.ts).
CREATE TABLE product_variants (
  id INTEGER PRIMARY KEY,
  product_id INTEGER NOT NULL REFERENCES products (id),
  name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
  sku TEXT NOT NULL,
  price_cents INTEGER NOT NULL CHECK (price_cents > 0),
  -- JSON [{ "min_quantity", "price_cents" }] as products.volume_prices, NULL = none
  volume_prices TEXT CHECK (volume_prices IS NULL OR json_valid(volume_prices)),
  -- JSON array of allowed pack sizes, NULL = any quantity
  allowed_quantities TEXT CHECK (allowed_quantities IS NULL OR json_valid(allowed_quantities)),
  -- denormalised count of the variant's available items, changed in the same batch as the items
  stock_count INTEGER NOT NULL DEFAULT 0 CHECK (stock_count >= 0),
  active INTEGER NOT NULL DEFAULT 1 CHECK (active IN (0, 1)),
  position INTEGER NOT NULL DEFAULT 0,
  -- Backorders (the next step): settable and shown now, no behaviour yet.
  backorders INTEGER NOT NULL DEFAULT 0 CHECK (backorders IN (0, 1)),
  backorder_limit INTEGER NOT NULL DEFAULT 100 CHECK (backorder_limit BETWEEN 1 AND 100000),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX product_variants_sku_unique ON product_variants (sku);
CREATE INDEX product_variants_product ON product_variants (product_id, position, id);

-- A product's stock_count is the sum over its active variants: every change of an active variant's count moves the
-- product's by the same amount inside the same statement, so a purchase's batch (which the deposit credit's carries
-- too, near D1's 50 statements) decrements the variant alone, as it decremented the product before.
CREATE TRIGGER product_variants_stock_count AFTER UPDATE OF stock_count ON product_variants
WHEN NEW.active = 1 AND OLD.active = 1 AND NEW.stock_count <> OLD.stock_count
BEGIN
  UPDATE products SET stock_count = stock_count + NEW.stock_count - OLD.stock_count WHERE id = NEW.product_id;
END;

-- How many of the product's variants are active, kept with them: a product is listed while it is active and has one,
-- and asks for a variant_id when it has several.
ALTER TABLE products ADD COLUMN active_variants INTEGER NOT NULL DEFAULT 1 CHECK (active_variants >= 0);

ALTER TABLE stock_items ADD COLUMN variant_id INTEGER REFERENCES product_variants (id);
CREATE INDEX stock_items_variant_status ON stock_items (variant_id, status, id);
ALTER TABLE stock_uploads ADD COLUMN variant_id INTEGER REFERENCES product_variants (id);
ALTER TABLE orders ADD COLUMN variant_id INTEGER REFERENCES product_variants (id);
ALTER TABLE orders ADD COLUMN variant_name TEXT;
-- The variant of the order a deposit pays for (NULL: the product's one active variant).
ALTER TABLE deposits ADD COLUMN order_variant_id INTEGER;
-- JSON array of variant ids narrowing a coupon (checked like product_ids), NULL = every variant
ALTER TABLE coupons ADD COLUMN variant_ids TEXT CHECK (variant_ids IS NULL OR json_valid(variant_ids));

-- Every existing product gets its `Standard` variant, carrying what the product had; its items, uploads and orders
-- move to it, so every order, coupon and stock entry stays valid.
INSERT INTO product_variants (product_id, name, sku, price_cents, volume_prices, allowed_quantities, stock_count, active, position, created_at, updated_at)
SELECT id, 'Standard', sku, price_cents, volume_prices, allowed_quantities, stock_count, 1, 0, created_at, updated_at FROM products ORDER BY id;
UPDATE stock_items SET variant_id = (SELECT v.id FROM product_variants v WHERE v.product_id = stock_items.product_id);
UPDATE stock_uploads SET variant_id = (SELECT v.id FROM product_variants v WHERE v.product_id = stock_uploads.product_id);
UPDATE orders SET variant_id = (SELECT v.id FROM product_variants v WHERE v.product_id = orders.product_id), variant_name = 'Standard';

INSERT INTO audit_actions (action) VALUES ('variant.created'), ('variant.updated');
