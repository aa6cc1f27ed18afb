-- Documents for the books (docs/documents.md): an invoice for every order, a receipt for every credited deposit, a
-- credit note for every refund, each issued in the batch that moves the money, numbered gap-free per type.

-- The seller: one row, the owner's invoicing settings. `address` is a JSON array of lines; `vat_rates` a JSON object
-- of ISO country -> rate in basis points (percent x 100, integers: 19 % is 1900, 7.5 % is 750).
CREATE TABLE invoicing_settings (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  legal_name TEXT NOT NULL DEFAULT '',
  address TEXT NOT NULL DEFAULT '[]',
  country TEXT,
  tax_id TEXT,
  tax_mode TEXT NOT NULL DEFAULT 'none' CHECK (tax_mode IN ('none', 'vat')),
  vat_rates TEXT NOT NULL DEFAULT '{}',
  updated_at TEXT NOT NULL
);
INSERT INTO invoicing_settings (id, updated_at) VALUES (1, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));

-- The buyer: a user's billing details (none until they are set; the document then names the account).
CREATE TABLE billing_details (
  user_id INTEGER PRIMARY KEY REFERENCES users (id),
  name TEXT NOT NULL,
  company TEXT,
  address TEXT NOT NULL DEFAULT '[]',
  country TEXT,
  vat_id TEXT,
  updated_at TEXT NOT NULL
);

-- One gap-free sequence per type: a document takes its type's highest number + 1 inside the INSERT that issues it,
-- in the batch that moves the money (src/services/documents/issue.ts), so a rolled-back batch takes no number and
-- D1's single writer serialises parallel issues. `deleted_up_to`: numbers of documents deleted by test mode's reset
-- (the sandbox only; live documents are never deleted), never given again. `started_at`: orders, refunds and
-- deposits from before this migration have no document (the ledger audit starts there).
CREATE TABLE document_sequences (
  type TEXT PRIMARY KEY CHECK (type IN ('invoice', 'receipt', 'credit_note')),
  deleted_up_to INTEGER NOT NULL DEFAULT 0 CHECK (deleted_up_to >= 0),
  started_at TEXT NOT NULL
);
INSERT INTO document_sequences (type, deleted_up_to, started_at) VALUES
  ('invoice', 0, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  ('receipt', 0, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  ('credit_note', 0, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));

-- A document never changes once issued: seller, buyer and lines are JSON snapshots of that moment. Each documents
-- exactly one ledger row (`wallet_transaction_id`, unique: a movement cannot get two). `user_seq` / `user_type_seq`:
-- the document's position among its user's documents (of all types / of its type), so a list's total is one index
-- seek (the max) instead of a count of the whole history.
CREATE TABLE documents (
  id INTEGER PRIMARY KEY,
  type TEXT NOT NULL CHECK (type IN ('invoice', 'receipt', 'credit_note')),
  sequence INTEGER NOT NULL CHECK (sequence >= 1),
  number TEXT NOT NULL,
  user_id INTEGER NOT NULL REFERENCES users (id),
  user_seq INTEGER NOT NULL CHECK (user_seq >= 1),
  user_type_seq INTEGER NOT NULL CHECK (user_type_seq >= 1),
  wallet_transaction_id INTEGER NOT NULL REFERENCES wallet_transactions (id),
  order_id INTEGER REFERENCES orders (id),
  deposit_id INTEGER REFERENCES deposits (id),
  corrects_id INTEGER REFERENCES documents (id),
  seller TEXT NOT NULL,
  buyer TEXT NOT NULL,
  lines TEXT NOT NULL,
  net_amount_cents INTEGER NOT NULL CHECK (net_amount_cents >= 0),
  tax_rate_bp INTEGER NOT NULL CHECK (tax_rate_bp BETWEEN 0 AND 5000),
  tax_amount_cents INTEGER NOT NULL CHECK (tax_amount_cents >= 0),
  total_amount_cents INTEGER NOT NULL CHECK (total_amount_cents >= 0 AND net_amount_cents + tax_amount_cents = total_amount_cents),
  tax_note TEXT,
  billing_country TEXT,
  ip_country TEXT,
  issued_at TEXT NOT NULL,
  CHECK ((type = 'credit_note') OR corrects_id IS NULL)
);
CREATE UNIQUE INDEX documents_type_sequence ON documents (type, sequence);
CREATE UNIQUE INDEX documents_one_per_movement ON documents (wallet_transaction_id);
CREATE UNIQUE INDEX documents_user_seq ON documents (user_id, user_seq);
CREATE UNIQUE INDEX documents_user_type_seq ON documents (user_id, type, user_type_seq);
CREATE UNIQUE INDEX documents_one_invoice_per_order ON documents (order_id) WHERE type = 'invoice';
CREATE INDEX documents_order ON documents (order_id, id) WHERE order_id IS NOT NULL;
CREATE INDEX documents_issued ON documents (issued_at, id);

-- The request's Cloudflare country when a deposit was made: the evidence of its receipt, and of the invoice of an
-- order it pays for (the credit comes from the vendor, not from the buyer).
ALTER TABLE deposits ADD COLUMN ip_country TEXT;

INSERT INTO audit_actions (action) VALUES ('settings.invoicing_updated');
