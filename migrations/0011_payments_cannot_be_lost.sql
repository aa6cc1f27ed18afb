-- Payments that cannot be lost (contract: "Payments that cannot be lost: the vendor's own API is the truth").

-- The provider that made a deposit's invoice: only a real provider's deposit is ever looked up at its vendor, and
-- only while its slot is still served by that provider. Deposits made before real providers existed were generic.
ALTER TABLE deposits ADD COLUMN provider TEXT NOT NULL DEFAULT 'generic';
-- When the vendor was last asked about the deposit (a refresh or the scheduled job).
ALTER TABLE deposits ADD COLUMN last_checked_at TEXT;

-- The scheduled job's question: real-provider deposits pending, or expired less than 24 hours ago, asked longest ago
-- first. Paid, failed and generic deposits are not in this index, and the range on expires_at skips every deposit
-- that expired more than a day ago, so the job reads only the open deposits however many old ones the shop has.
CREATE INDEX deposits_vendor_open ON deposits (expires_at) WHERE provider <> 'generic' AND status IN ('pending', 'expired');

-- Where a gateway event log row came from: a vendor's notification (or the generic webhook), or a lookup.
ALTER TABLE gateway_events ADD COLUMN source TEXT NOT NULL DEFAULT 'notification' CHECK (source IN ('notification', 'lookup'));
