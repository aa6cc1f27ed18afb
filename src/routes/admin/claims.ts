import { createRoute } from '@hono/zod-openapi';
import { envelope, ok } from '../../lib/envelope';
import { paged, pagedEnvelope } from '../../lib/pagination';
import type { Context } from 'hono';
import type { AppEnv } from '../../env';
import { publishAfterResponse } from '../../middleware/publish-events';
import { mailFor } from '../../middleware/send-emails';
import { purgeSoldProducts } from '../../middleware/stock-cache';
import { ClaimsQuery, RejectBody } from '../../schemas/after-sale';
import { ADMIN_TOKEN_ACTOR } from '../../services/accounts/audit-log';
import { queryPlain } from '../../services/caller';
import { claimsQuery, resolveClaim, type Resolution } from '../../services/orders/claims';
import { AdminClaimSchema, Claim, presentAdminClaim, presentClaim } from '../orders/claim-representation';
import { createRouter, errorResponses, IdParams, jsonBody, jsonResponse } from '../openapi';

// Warranty claims behind the admin token (the console's Claims page is their twin). Each resolution is audited,
// emails the buyer (claim_resolved) and writes its event, in its one batch.

const security = [{ AdminBearer: [] }];
const tags = ['Admin'];
const resolved = envelope(Claim);

const ONCE = ' A claim is resolved once: a second resolution → 409 `CLAIM_RESOLVED`.';
const resolveRoute = (action: 'replace' | 'refund', summary: string, description: string) =>
  createRoute({
    method: 'post',
    path: `/claims/{id}/${action}`,
    operationId: `${action}Claim`,
    tags,
    summary,
    description: description + ONCE,
    security,
    request: { params: IdParams },
    responses: { 200: jsonResponse(resolved, 'The resolved claim'), ...errorResponses(400, 401, 404, 409, 422) },
  });

async function resolve(c: Context<AppEnv>, id: number, resolution: Resolution) {
  const { claim, productId } = await resolveClaim(c.var.db, ADMIN_TOKEN_ACTOR, id, resolution, mailFor(c), publishAfterResponse(c));
  if (resolution.action === 'replace') await purgeSoldProducts(c, [productId]);
  return claim;
}

export const adminClaimsRouter = createRouter()
  .openapi(
    createRoute({
      method: 'get',
      path: '/claims',
      operationId: 'listClaims',
      tags,
      summary: 'Warranty claims, newest first, optionally of one status',
      security,
      request: { query: ClaimsQuery },
      responses: { 200: jsonResponse(pagedEnvelope(AdminClaimSchema), 'A page of claims'), ...errorResponses(401, 422) },
    }),
    async (c) => {
      const { status, ...page } = c.req.valid('query');
      const [{ rows, total }] = await queryPlain(c.var.db, [claimsQuery(status, page)]);
      return c.json(paged(rows.map(presentAdminClaim), page, total), 200);
    },
  )
  .openapi(
    resolveRoute(
      'replace',
      'Replace the reported item with a fresh one of the product',
      "One batch: a fresh available item of the product takes the reported item's place in the order (the order's " +
        '`stock_items` show it at that index; the old one is revoked and listed in `GET /admin/revoked-items` as `replaced`). ' +
        'No item available → 400 `INSUFFICIENT_STOCK`, nothing changes.',
    ),
    async (c) => c.json(ok(presentClaim(await resolve(c, c.req.valid('param').id, { action: 'replace' })), 'Item replaced.'), 200),
  )
  .openapi(
    resolveRoute(
      'refund',
      "Refund the reported item's share of the order",
      "A `refund` transaction of one unit's share of what was paid (the order's `total_amount` / `quantity`, rounded down " +
        "to the cent), tied to the order (its `refunded_amount` grows); more than what is left of the order → 422 `errors.amount`.",
    ),
    async (c) => c.json(ok(presentClaim(await resolve(c, c.req.valid('param').id, { action: 'refund' })), 'Item refunded.'), 200),
  )
  .openapi(
    createRoute({
      method: 'post',
      path: '/claims/{id}/reject',
      operationId: 'rejectClaim',
      tags,
      summary: 'Reject the claim with a note for the buyer',
      description: 'The claim becomes `rejected` with the note as its `resolution`.' + ONCE,
      security,
      request: { params: IdParams, body: jsonBody(RejectBody) },
      responses: { 200: jsonResponse(resolved, 'The resolved claim'), ...errorResponses(401, 404, 409, 422) },
    }),
    async (c) => {
      const { note } = c.req.valid('json');
      return c.json(ok(presentClaim(await resolve(c, c.req.valid('param').id, { action: 'reject', note })), 'Claim rejected.'), 200);
    },
  );
