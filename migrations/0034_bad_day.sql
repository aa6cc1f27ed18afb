-- The owner's bad day and the integrator's first hour: an order keeps its warranty, users record where they signed
-- up and last signed in, an operator's refund is an event and an email, a new claim emails the operators.
-- No table is rebuilt: columns are added, names are inserted into their lists.

-- Warranty is the order's: the product's warranty_hours when it was bought (a later change does not reach back).
ALTER TABLE orders ADD COLUMN warranty_hours INTEGER NOT NULL DEFAULT 0 CHECK (warranty_hours BETWEEN 0 AND 8760);
UPDATE orders SET warranty_hours = (SELECT p.warranty_hours FROM products p WHERE p.id = orders.product_id)
  WHERE EXISTS (SELECT 1 FROM products p WHERE p.id = orders.product_id AND p.warranty_hours > 0);

-- Who to block: the address and country of the sign-up, and of the last sign-in (dashboard or API key use).
ALTER TABLE users ADD COLUMN signup_ip TEXT;
ALTER TABLE users ADD COLUMN signup_country TEXT;
ALTER TABLE users ADD COLUMN last_seen_ip TEXT;
ALTER TABLE users ADD COLUMN last_seen_country TEXT;
ALTER TABLE users ADD COLUMN last_seen_at TEXT;
-- The last address as 32 hex digits (src/lib/ip.ts), so an ip rule's preview counts the accounts last seen in its range.
ALTER TABLE users ADD COLUMN last_seen_ip_hex TEXT;
CREATE INDEX users_last_seen_ip_hex ON users (last_seen_ip_hex) WHERE last_seen_ip_hex IS NOT NULL;

INSERT INTO event_types (type) VALUES ('order.refunded');
INSERT INTO email_templates (template) VALUES ('order_refunded'), ('claim_opened');
