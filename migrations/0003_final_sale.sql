-- Cancellation is not a way to take items for free (the items are disclosed in the purchase response).

-- Final sale: an operator marks goods that cannot be revoked at the vendor (gift codes, accounts) as not cancellable.
-- An order copies the flag at purchase, so a later change of the product never changes existing orders.
ALTER TABLE products ADD COLUMN cancellable INTEGER NOT NULL DEFAULT 1 CHECK (cancellable IN (0, 1));
ALTER TABLE orders ADD COLUMN cancellable INTEGER NOT NULL DEFAULT 1 CHECK (cancellable IN (0, 1));

-- When the cancel batch revoked an item: the operator's feed of items to deactivate at the vendor, newest first.
ALTER TABLE stock_items ADD COLUMN revoked_at TEXT CHECK (revoked_at IS NULL OR status = 'revoked');
UPDATE stock_items SET revoked_at = (SELECT updated_at FROM orders WHERE orders.id = stock_items.order_id) WHERE status = 'revoked';
CREATE INDEX stock_items_revoked ON stock_items (revoked_at, id) WHERE revoked_at IS NOT NULL;

-- The cancel cap counts a buyer's refunds of the last 24 hours inside the cancel's batch.
CREATE INDEX wallet_transactions_user_refunds ON wallet_transactions (user_id, created_at) WHERE type = 'refund';
