import { createRoute, z } from '@hono/zod-openapi';
import { EMAIL_TEMPLATES, type EmailRow } from '../../db/schema';
import { paged, pagedEnvelope } from '../../lib/pagination';
import { EMAIL_STATUSES, EmailsQuery } from '../../schemas/emails';
import { queryPlain } from '../../services/caller';
import { emailsQuery } from '../../services/operator/emails';
import { createRouter, errorResponses, jsonResponse } from '../openapi';

// The email outbox for the operator (behind the admin token): what was sent, what waits, what failed and why. No
// body and no link is stored, so none is shown.

const timestamp = z.string().openapi({ format: 'date-time' });

const EmailSchema = z
  .object({
    id: z.string(),
    to: z.string(),
    template: z.enum(EMAIL_TEMPLATES),
    subject: z.string(),
    status: z.enum(EMAIL_STATUSES),
    attempts: z.number().int(),
    message_id: z.string().nullable(),
    error: z.string().nullable(),
    created_at: timestamp,
    sent_at: timestamp.nullable(),
  })
  .openapi('Email');

const presentEmail = (e: EmailRow) => ({
  id: e.id,
  to: e.toAddress,
  template: e.template,
  subject: e.subject,
  status: e.status,
  attempts: e.attempts,
  message_id: e.messageId,
  error: e.error,
  created_at: e.createdAt,
  sent_at: e.sentAt,
});

export const adminEmailsRouter = createRouter().openapi(
  createRoute({
    method: 'get',
    path: '/emails',
    operationId: 'listEmails',
    tags: ['Admin'],
    summary: 'Emails sent, queued and failed, newest first',
    security: [{ AdminBearer: [] }],
    request: { query: EmailsQuery },
    responses: { 200: jsonResponse(pagedEnvelope(EmailSchema), 'A page of emails'), ...errorResponses(401, 422) },
  }),
  async (c) => {
    const filter = c.req.valid('query');
    const [{ rows, total }] = await queryPlain(c.var.db, [emailsQuery(filter)]);
    return c.json(paged(rows.map(presentEmail), filter, total), 200);
  },
);
