import { createRoute, z } from '@hono/zod-openapi';
import type { BlockRuleRow } from '../../db/schema';
import { BLOCK_TYPES } from '../../db/schema';
import { envelope, messageEnvelope, ok } from '../../lib/envelope';
import { paged, pagedEnvelope, PaginationQuery } from '../../lib/pagination';
import { BlockRuleBody } from '../../schemas/after-sale';
import { addRule, listRules, removeRule } from '../../services/accounts/blocklist';
import { ADMIN_TOKEN_ACTOR } from '../../services/accounts/audit-log';
import { createRouter, errorResponses, IdParams, jsonBody, jsonResponse } from '../openapi';

// The shop's blocklist behind the admin token (the console's Blocklist page is its twin).

export const BlockRule = z
  .object({
    id: z.number().int(),
    type: z.enum(BLOCK_TYPES),
    value: z.string().openapi({ description: 'as matched: emails and domains in lower case, countries in upper case, AS numbers as digits' }),
    note: z.string().nullable(),
    hits: z.number().int().openapi({ description: 'refused sign-ups, deposits and purchases that matched it' }),
    last_hit_at: z.string().nullable().openapi({ format: 'date-time' }),
    created_at: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('BlockRule');

export const presentRule = (r: BlockRuleRow) => ({
  id: r.id,
  type: r.type,
  value: r.value,
  note: r.note,
  hits: r.hits,
  last_hit_at: r.lastHitAt,
  created_at: r.createdAt,
});

const security = [{ AdminBearer: [] }];
const tags = ['Admin'];

export const adminBlocklistRouter = createRouter()
  .openapi(
    createRoute({
      method: 'get',
      path: '/blocklist',
      operationId: 'listBlocklist',
      tags,
      summary: 'Blocklist rules, newest first',
      security,
      request: { query: PaginationQuery },
      responses: { 200: jsonResponse(pagedEnvelope(BlockRule), 'A page of rules'), ...errorResponses(401, 422) },
    }),
    async (c) => {
      const page = c.req.valid('query');
      const { rows, total } = await listRules(c.var.db, page);
      return c.json(paged(rows.map(presentRule), page, total), 200);
    },
  )
  .openapi(
    createRoute({
      method: 'post',
      path: '/blocklist',
      operationId: 'addBlocklistRule',
      tags,
      summary: 'Add a blocklist rule',
      description:
        'A dashboard sign-up, a deposit or a purchase matching a rule (the account\'s email or its domain, the client ' +
        "address, Cloudflare's country or network of the request) answers 403 `BLOCKED` and changes nothing. `ip` takes an " +
        'address or a CIDR range, v4 or v6; `country` an ISO 3166 alpha-2 code; `asn` a number. An invalid value, or a rule ' +
        'already on the list → 422 `errors.value`. Audited (`blocklist.added`).',
      security,
      request: { body: jsonBody(BlockRuleBody) },
      responses: { 201: jsonResponse(envelope(BlockRule), 'The rule'), ...errorResponses(401, 422) },
    }),
    async (c) => {
      const body = c.req.valid('json');
      const rule = await addRule(c.var.db, ADMIN_TOKEN_ACTOR, { type: body.type, value: body.value, note: body.note ?? null });
      return c.json(ok(presentRule(rule), 'Rule added.'), 201);
    },
  )
  .openapi(
    createRoute({
      method: 'delete',
      path: '/blocklist/{id}',
      operationId: 'removeBlocklistRule',
      tags,
      summary: 'Remove a blocklist rule',
      description: 'Audited (`blocklist.removed`, with the rule and its hits).',
      security,
      request: { params: IdParams },
      responses: { 200: jsonResponse(messageEnvelope, 'Removed'), ...errorResponses(401, 404, 422) },
    }),
    async (c) => {
      await removeRule(c.var.db, ADMIN_TOKEN_ACTOR, c.req.valid('param').id);
      return c.json({ success: true as const, message: 'Rule removed.' }, 200);
    },
  );
