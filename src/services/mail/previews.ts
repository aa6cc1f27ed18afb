import { sql, type SQL } from 'drizzle-orm';
import { rowsOf } from '../../db/batch';
import type { EmailRow } from '../../db/schema';
import { notFound } from '../../lib/errors';
import type { Query } from '../caller';

// EMAIL_PREVIEW=true, local development only (`npm run dev` sets it; never in production, where no message body is
// stored): the queue consumer keeps each sent email's text and HTML here, in the batch that marks it sent, so the
// console's Emails page opens them (a reset link without `cat`-ing a file under .wrangler/).

export const isPreviewOn = (value: string | undefined) => value === 'true';

/** Appended to the "sent" batch of an email: its bodies as sent. */
export const keepPreview = (emailId: string, text: string, html: string, now: string): SQL =>
  sql`INSERT OR REPLACE INTO email_previews (email_id, text_body, html_body, created_at) VALUES (${emailId}, ${text}, ${html}, ${now})`;

export interface EmailPreview {
  email: Pick<EmailRow, 'id' | 'template' | 'subject' | 'status' | 'createdAt' | 'sentAt'> & { to: string };
  text: string | null;
  html: string | null;
}

/** One email with its kept bodies (null when none was kept: preview off, or not sent yet). */
export const emailPreviewQuery = (emailId: string): Query<EmailPreview> => ({
  reads: [
    sql`SELECT e.id, e.to_address AS "to", e.template, e.subject, e.status, e.created_at AS createdAt, e.sent_at AS sentAt,
               p.text_body AS text, p.html_body AS html
        FROM emails e LEFT JOIN email_previews p ON p.email_id = e.id WHERE e.id = ${emailId}`,
  ],
  parse: ([rows]) => {
    const [row] = rowsOf<EmailPreview['email'] & { text: string | null; html: string | null }>(rows);
    if (!row) throw notFound('Email');
    const { text, html, ...email } = row;
    return { email, text, html };
  },
});

/** The inside of an email's HTML body (our own template's, escaped), to show within a console page. */
export function htmlBodyOf(html: string): string {
  const match = /<body>([\s\S]*)<\/body>/.exec(html);
  return match ? match[1] : '';
}
