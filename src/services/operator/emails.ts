import { sql } from 'drizzle-orm';
import { columnsOf, rowsOf } from '../../db/batch';
import { emails, type EmailRow } from '../../db/schema';
import { pageWindow } from '../../lib/pagination';
import type { EmailsFilter } from '../../schemas/emails';
import type { Query } from '../caller';

/** The email outbox, newest first, filtered by recipient, template and status (each optional). */
export const emailsQuery = (filter: EmailsFilter): Query<{ rows: Array<EmailRow & { hasPreview: number }>; total: number }> => {
  const { limit, offset } = pageWindow(filter);
  const where = sql.join(
    [
      sql`1 = 1`,
      ...(filter.to ? [sql`to_address = ${filter.to} COLLATE NOCASE`] : []),
      ...(filter.template ? [sql`template = ${filter.template}`] : []),
      ...(filter.status ? [sql`status = ${filter.status}`] : []),
    ],
    sql` AND `,
  );
  return {
    reads: [
      // hasPreview: its bodies were kept (EMAIL_PREVIEW, local development only).
      sql`SELECT ${columnsOf(emails)}, EXISTS (SELECT 1 FROM email_previews p WHERE p.email_id = emails.id) AS hasPreview
          FROM emails WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT ${limit} OFFSET ${offset}`,
      sql`SELECT count(*) AS total FROM emails WHERE ${where}`,
    ],
    parse: ([rows, total]) => ({ rows: rowsOf<EmailRow & { hasPreview: number }>(rows), total: rowsOf<{ total: number }>(total)[0].total }),
  };
};
