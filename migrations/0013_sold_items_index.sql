-- Issue 17: the items of an order are indexed only once sold. Every unsold item had a NULL key in stock_items_order,
-- ordered by id, i.e. spread over the whole index: each item a purchase claimed moved its entry off a NULL key on a
-- page of its own, so a pack of 100 rewrote about 100 index pages. Unsold items now have no entry, and a purchase
-- inserts its items' entries side by side. Every query of it asks for `order_id = ...` (which implies IS NOT NULL).
DROP INDEX stock_items_order;
CREATE INDEX stock_items_order ON stock_items (order_id) WHERE order_id IS NOT NULL;
