import { createRoute, z } from '@hono/zod-openapi';
import { createRouter, errorResponses, jsonResponse } from '../openapi';
import { AUDIT_ACTIONS, type AuditRow } from '../../db/schema';
import { paged, pagedEnvelope } from '../../lib/pagination';
import { AuditLogQuery } from '../../schemas/operator';
import { auditLogQuery } from '../../services/accounts/audit-log';
import { queryPlain } from '../../services/caller';

// The audit log: every operator write, newest first.

const security = [{ AdminBearer: [] }];
const tags = ['Admin'];
const timestamp = z.string().openapi({ format: 'date-time' });

const AuditEntry = z
  .object({
    id: z.number().int(),
    actor: z.string().openapi({ description: '`admin_token`, or `user:<id>` of the operator whose console session made the change', example: 'user:1' }),
    action: z.enum(AUDIT_ACTIONS),
    target: z.string().openapi({ example: 'user:42', description: '`user:<id>`, `product:<id>`, `deposit:<id>` or `order:<id>`' }),
    details: z.record(z.string(), z.unknown()).openapi({ description: 'what changed; never a password, key, token or stock item' }),
    created_at: timestamp,
  })
  .openapi('AuditEntry');
export const presentAuditEntry = (a: AuditRow) => ({
  id: a.id,
  actor: a.actor,
  action: a.action,
  target: a.target,
  details: JSON.parse(a.details) as Record<string, unknown>,
  created_at: a.createdAt,
});

export const adminAuditLogRouter = createRouter()
  .openapi(
    createRoute({
      method: 'get',
      path: '/audit-log',
      operationId: 'listAuditLog',
      tags,
      summary: 'Every operator write (console or admin API), newest first; `from`/`to`: UTC days, inclusive',
      security,
      request: { query: AuditLogQuery },
      responses: { 200: jsonResponse(pagedEnvelope(AuditEntry), 'A page of entries'), ...errorResponses(401, 422) },
    }),
    async (c) => {
      const { from, to, ...page } = c.req.valid('query');
      const [{ rows, total }] = await queryPlain(c.var.db, [auditLogQuery(page, { from, to })]);
      return c.json(paged(rows.map(presentAuditEntry), page, total), 200);
    },
  );
