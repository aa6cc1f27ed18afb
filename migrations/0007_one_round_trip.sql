-- One round trip per request ([7]/[8]).
-- An idempotent effect stores, in its own batch, a snapshot of the row its response is rendered from (the order,
-- the deposit...), so a replay renders the first outcome again without any write after the batch. Large parts
-- (a purchase's items) are referenced, not copied: rows stay far below D1's 2 MB per value.
ALTER TABLE idempotency_keys ADD COLUMN response_snapshot TEXT;

-- A deposit's reference is generated before its batch, so a write whose outcome a fault hid can be looked up.
ALTER TABLE deposits ADD COLUMN reference TEXT;
CREATE UNIQUE INDEX deposits_reference_unique ON deposits (reference);
