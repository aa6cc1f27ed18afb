import { z } from '@hono/zod-openapi';
import { EMAIL_TEMPLATES } from '../db/schema';
import { PaginationQuery } from '../lib/pagination';

// The operator's list of sent and pending emails (GET /admin/emails and the console's Emails page).

export const EMAIL_STATUSES = ['queued', 'sent', 'failed'] as const;

export const EmailsQuery = PaginationQuery.extend({
  to: z.string().max(254, 'to is too long').optional().openapi({ description: 'the recipient address (exact, case-insensitive)' }),
  template: z.enum(EMAIL_TEMPLATES, `template must be one of ${EMAIL_TEMPLATES.join(', ')}`).optional(),
  status: z.enum(EMAIL_STATUSES, `status must be one of ${EMAIL_STATUSES.join(', ')}`).optional(),
});
export type EmailsFilter = z.output<typeof EmailsQuery>;
