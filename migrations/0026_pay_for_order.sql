-- The buyer's path: a deposit may carry an order, bought from the wallet in the batch that credits the deposit.
-- Only columns are added (no rebuild). The order a deposit asks for, at the price it locked (expected total), and the
-- key that made the deposit (its spend limit applies to the purchase); then what happened: the order bought, or the
-- error code that refused it (the credit stands either way).
ALTER TABLE deposits ADD COLUMN order_product_id INTEGER REFERENCES products(id);
ALTER TABLE deposits ADD COLUMN order_quantity INTEGER CHECK (order_quantity IS NULL OR order_quantity BETWEEN 1 AND 1000);
ALTER TABLE deposits ADD COLUMN order_coupon TEXT;
ALTER TABLE deposits ADD COLUMN order_expected_total_cents INTEGER CHECK (order_expected_total_cents IS NULL OR order_expected_total_cents >= 0);
ALTER TABLE deposits ADD COLUMN api_key_id INTEGER REFERENCES api_keys(id);
ALTER TABLE deposits ADD COLUMN order_id INTEGER REFERENCES orders(id);
ALTER TABLE deposits ADD COLUMN order_error TEXT;

-- The coupon's part of an order's discount_amount, stored at the purchase. Orders made before: the coupon took what
-- the subtotal (unit price after volume and discount, times quantity) lost on the way to the total.
ALTER TABLE orders ADD COLUMN coupon_amount_cents INTEGER NOT NULL DEFAULT 0 CHECK (coupon_amount_cents >= 0);
UPDATE orders SET coupon_amount_cents = unit_price_cents * quantity - total_amount_cents
WHERE coupon IS NOT NULL AND unit_price_cents * quantity > total_amount_cents;
