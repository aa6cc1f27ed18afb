-- The console, third pass.
-- An operator deletes an unsold stock item (a mistyped code) from its product's page: audited.
INSERT INTO audit_actions (action) VALUES ('stock.item_deleted');

-- EMAIL_PREVIEW=true (local development only, set by `npm run dev`): each sent email's text and HTML, kept so the
-- console's Emails page opens them. Nothing is written here in production, where no message body is ever stored.
CREATE TABLE email_previews (
  email_id TEXT PRIMARY KEY REFERENCES emails (id) ON DELETE CASCADE,
  text_body TEXT NOT NULL,
  html_body TEXT NOT NULL,
  created_at TEXT NOT NULL
);
