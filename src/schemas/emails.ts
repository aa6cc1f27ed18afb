import { z } from '@hono/zod-openapi';
import { EMAIL_TEMPLATES } from '../db/schema';
import { PaginationQuery } from '../lib/pagination';

// The operator's list of sent and pending emails (GET /admin/emails and the console's Emails page).

export const EMAIL_STATUSES = ['queued', 'sent', 'failed'] as const;

/** An empty filter (the console's "any" choice) is no filter. */
const emptyIsAbsent = (value: unknown) => (value === '' ? undefined : value);

export const EmailsQuery = PaginationQuery.extend({
  to: z.preprocess(emptyIsAbsent, z.string().trim().max(254, 'to is too long').optional()).openapi({
    type: 'string',
    description: 'the recipient address (exact, case-insensitive)',
  }),
  template: z.preprocess(emptyIsAbsent, z.enum(EMAIL_TEMPLATES, `template must be one of ${EMAIL_TEMPLATES.join(', ')}`).optional()).openapi({
    type: 'string',
    enum: [...EMAIL_TEMPLATES],
  }),
  status: z.preprocess(emptyIsAbsent, z.enum(EMAIL_STATUSES, `status must be one of ${EMAIL_STATUSES.join(', ')}`).optional()).openapi({
    type: 'string',
    enum: [...EMAIL_STATUSES],
  }),
});
export type EmailsFilter = z.output<typeof EmailsQuery>;
