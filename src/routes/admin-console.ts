import { createRoute, z } from '@hono/zod-openapi';
import { AUDIT_ACTIONS, type AuditRow, type DepositRow, type OrderRow } from '../db/schema';
import { envelope, ok } from '../lib/envelope';
import { centsToAmount } from '../lib/money';
import { paged, pagedEnvelope } from '../lib/pagination';
import { idempotent } from '../middleware/idempotency';
import { AuditLogQuery, DepositsQuery, OrdersQuery, ProductsQuery, SalesQuery, UpdateUserBody, USER_ROLES, UsersQuery } from '../schemas/operator';
import { ADMIN_TOKEN_ACTOR, auditLogQuery } from '../services/audit-log';
import { queryPlain } from '../services/caller';
import { OPERATOR } from '../services/idempotency';
import { catalogueQuery, type CatalogueProduct } from '../services/operator-catalogue';
import { operatorDepositsQuery, type OperatorDeposit } from '../services/operator-deposits';
import { orderDetailQuery, ordersQuery } from '../services/operator-orders';
import { salesQuery, type SalesDay } from '../services/operator-overview';
import { updateUser, usersQuery, userDetailQuery, type OperatorUser, type OperatorUserDetail } from '../services/operator-users';
import { createPasswordReset, type ResetLink, type ResetLinkSnapshot } from '../services/password-resets';
import { operatorSealing } from './admin';
import { createRouter, errorResponses, idempotencyKeyParameter, IdParams, jsonBody, jsonResponse } from './openapi';
import { Deposit, discountPercent, lastCheckedAt, Order, OrderWithItems, presentDeposit, presentOrder, presentProduct, Product } from './representations';

// The operator console's JSON twin (behind the admin token): reads of any user's data, each one D1 round trip, and
// the user changes and reset links the console makes. Every write is on the audit log (src/services/audit-log.ts).

const security = [{ AdminBearer: [] }];
const tags = ['Admin'];
const timestamp = z.string().openapi({ format: 'date-time' });

const OperatorUserSchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    email: z.string(),
    role: z.enum(USER_ROLES),
    disabled: z.boolean(),
    balance: z.number(),
    created_at: timestamp,
    discount_percent: discountPercent,
    on_hold: z.boolean().openapi({ description: 'true: deposits and purchases are refused (403 ACCOUNT_ON_HOLD) until the hold is lifted' }),
    hold_reason: z.string().nullable(),
  })
  .openapi('OperatorUser');

const OperatorUserDetailSchema = z.object({ ...OperatorUserSchema.shape, orders_count: z.number().int(), total_spent: z.number() }).openapi('OperatorUserDetail');

const presentUser = (u: OperatorUser) => ({
  id: u.id,
  name: u.name,
  email: u.email,
  role: u.role,
  disabled: u.disabledAt !== null,
  balance: centsToAmount(u.balanceCents),
  created_at: u.createdAt,
  discount_percent: u.discountPercent,
  on_hold: (u.heldAt ?? null) !== null,
  hold_reason: u.holdReason ?? null,
});

const presentUserDetail = (u: OperatorUserDetail) => ({ ...presentUser(u), orders_count: u.ordersCount, total_spent: centsToAmount(u.totalSpentCents) });

// Built from the shapes (not by extending the named schemas), so the document states each object's fields whole.
const OperatorOrder = z.object({ ...Order.shape, user_id: z.number().int() }).openapi('OperatorOrder');
const OperatorOrderWithItems = z.object({ ...OrderWithItems.shape, user_id: z.number().int() }).openapi('OperatorOrderWithItems');
const presentOperatorOrder = (o: OrderRow) => ({ ...presentOrder(o), user_id: o.userId });

const CatalogueProductSchema = z.object({ ...Product.shape, units_sold: z.number().int() }).openapi('CatalogueProduct');
const presentCatalogueProduct = (origin: string) => (p: CatalogueProduct) => ({ ...presentProduct(p, origin), units_sold: p.unitsSold });

const OperatorDepositSchema = z.object({
  ...Deposit.shape,
  user_id: z.number().int(),
  reference: z.string().nullable().openapi({ description: 'the deposit\'s own reference, generated before its batch (null for deposits made before references existed)' }),
  last_checked_at: lastCheckedAt,
}).openapi('OperatorDeposit');
const presentOperatorDeposit = (d: DepositRow | OperatorDeposit) => ({ ...presentDeposit(d), user_id: d.userId, reference: d.reference, last_checked_at: d.lastCheckedAt });

const SalesDaySchema = z
  .object({
    date: z.string().openapi({ example: '2026-11-21', description: 'a UTC day' }),
    orders: z.number().int().openapi({ description: 'purchases that day' }),
    revenue: z.number().openapi({ description: 'USD paid for those purchases (gross: orders cancelled later included)' }),
    refunds: z.number().openapi({ description: 'USD refunded that day (cancellations)' }),
    deposits: z.number().openapi({ description: 'USD of deposits credited that day' }),
  })
  .openapi('SalesDay');
const presentSalesDay = (d: SalesDay) => ({
  date: d.date,
  orders: d.orders,
  revenue: centsToAmount(d.revenueCents),
  refunds: centsToAmount(d.refundsCents),
  deposits: centsToAmount(d.depositsCents),
});

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

const ResetLinkSchema = z
  .object({
    url: z.string().openapi({ format: 'uri', description: '<origin>/dashboard/reset-password/<token>: shown once, works once, for 60 minutes' }),
    expires_at: timestamp,
  })
  .openapi('PasswordResetLink');

const emptyToUndefined = (q: string | undefined) => (q === '' ? undefined : q);

export const adminConsoleRouter = createRouter()
  .openapi(
    createRoute({
      method: 'get',
      path: '/users',
      operationId: 'listUsers',
      tags,
      summary: 'Users, newest first; `q`: part of a name or email; `email`: exactly that address',
      security,
      request: { query: UsersQuery },
      responses: { 200: jsonResponse(pagedEnvelope(OperatorUserSchema), 'A page of users'), ...errorResponses(401, 422) },
    }),
    async (c) => {
      const { q, email, ...page } = c.req.valid('query');
      const [{ rows, total }] = await queryPlain(c.var.db, [usersQuery({ q: emptyToUndefined(q), email }, page)]);
      return c.json(paged(rows.map(presentUser), page, total), 200);
    },
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/users/{id}',
      operationId: 'getUser',
      tags,
      summary: 'A user with orders count and total spent',
      security,
      request: { params: IdParams },
      responses: { 200: jsonResponse(envelope(OperatorUserDetailSchema), 'The user'), ...errorResponses(401, 404, 422) },
    }),
    async (c) => {
      const [user] = await queryPlain(c.var.db, [userDetailQuery(c.req.valid('param').id)]);
      return c.json(ok(presentUserDetail(user)), 200);
    },
  )
  .openapi(
    createRoute({
      method: 'patch',
      path: '/users/{id}',
      operationId: 'updateUser',
      tags,
      summary: 'Change a user: name, email, role (`operator` opens the console), disabled (refused everywhere, nothing deleted)',
      security,
      parameters: [idempotencyKeyParameter],
      request: { params: IdParams, body: jsonBody(UpdateUserBody) },
      responses: { 200: jsonResponse(envelope(OperatorUserDetailSchema), 'The user'), ...errorResponses(401, 404, 422) },
    }),
    async (c) => {
      const body = c.req.valid('json');
      const updated = (user: OperatorUserDetail) => ({ status: 200 as const, body: ok(presentUserDetail(user), 'User updated.') });
      return idempotent(
        c,
        body,
        async (claim) => updated(await updateUser(c.var.db, ADMIN_TOKEN_ACTOR, c.req.valid('param').id, body, claim)),
        { owner: OPERATOR, render: (snapshot) => updated(snapshot as OperatorUserDetail) },
      );
    },
  )
  .openapi(
    createRoute({
      method: 'post',
      path: '/users/{id}/password-reset',
      operationId: 'createPasswordReset',
      tags,
      summary: 'A password reset link for the user (shown once; one use within 60 minutes; ends all their sessions)',
      security,
      parameters: [idempotencyKeyParameter],
      request: { params: IdParams },
      responses: { 201: jsonResponse(envelope(ResetLinkSchema), 'The link'), ...errorResponses(401, 404, 422) },
    }),
    async (c) => {
      // A replay answers the same link: the record keeps it sealed under the admin token and the Idempotency-Key.
      const sealing = operatorSealing(c, 'password-reset-link');
      const created = (link: ResetLink) => ({ status: 201 as const, body: ok({ url: link.url, expires_at: link.expiresAt }, 'Password reset link created.') });
      return idempotent(
        c,
        {},
        async (claim) =>
          created(await createPasswordReset(c.var.db, ADMIN_TOKEN_ACTOR, c.req.valid('param').id, new URL(c.req.url).origin, claim && { claim, seal: sealing.seal })),
        {
          owner: OPERATOR,
          render: async (snapshot) => {
            const { sealedUrl, expiresAt } = snapshot as ResetLinkSnapshot;
            return created({ url: await sealing.open(sealedUrl), expiresAt });
          },
        },
      );
    },
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/orders',
      operationId: 'listAllOrders',
      tags,
      summary: "Every user's orders, newest first; `q`: an order-number prefix, part of the buyer's email or of the product name; `from`/`to`: UTC days, inclusive",
      security,
      request: { query: OrdersQuery },
      responses: { 200: jsonResponse(pagedEnvelope(OperatorOrder), 'A page of orders'), ...errorResponses(401, 422) },
    }),
    async (c) => {
      const { q, user_id: userId, status, from, to, ...page } = c.req.valid('query');
      const [{ rows, total }] = await queryPlain(c.var.db, [ordersQuery({ q: emptyToUndefined(q), userId, status, from, to }, page)]);
      return c.json(paged(rows.map(presentOperatorOrder), page, total), 200);
    },
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/orders/{id}',
      operationId: 'getAnyOrder',
      tags,
      summary: 'Any order with its delivered items and its user',
      security,
      request: { params: IdParams },
      responses: { 200: jsonResponse(envelope(OperatorOrderWithItems), 'The order'), ...errorResponses(401, 404, 422) },
    }),
    async (c) => {
      const [{ order, stockItems }] = await queryPlain(c.var.db, [orderDetailQuery(c.req.valid('param').id)]);
      return c.json(ok({ ...presentOperatorOrder(order), stock_items: stockItems }), 200);
    },
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/products',
      operationId: 'listAllProducts',
      tags,
      summary: 'Every product, active or not, with stock count and units sold',
      security,
      request: { query: ProductsQuery },
      responses: { 200: jsonResponse(envelope(z.array(CatalogueProductSchema)), 'The products'), ...errorResponses(401, 422) },
    }),
    async (c) => {
      const { active } = c.req.valid('query');
      const [products] = await queryPlain(c.var.db, [catalogueQuery(active === undefined ? undefined : active === 'true')]);
      return c.json(ok(products.map(presentCatalogueProduct(new URL(c.req.url).origin))), 200);
    },
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/deposits',
      operationId: 'listAllDeposits',
      tags,
      summary: "Every user's deposits, newest first; `from`/`to`: UTC days, inclusive",
      security,
      request: { query: DepositsQuery },
      responses: { 200: jsonResponse(pagedEnvelope(OperatorDepositSchema), 'A page of deposits'), ...errorResponses(401, 422) },
    }),
    async (c) => {
      const { status, gateway, user_id: userId, from, to, ...page } = c.req.valid('query');
      const [{ rows, total }] = await queryPlain(c.var.db, [operatorDepositsQuery({ status, gateway, userId, from, to }, page)]);
      return c.json(paged(rows.map(presentOperatorDeposit), page, total), 200);
    },
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/stats/sales',
      operationId: 'getSalesStats',
      tags,
      summary: 'Sales per UTC day, oldest first, days without activity included',
      security,
      request: { query: SalesQuery },
      responses: { 200: jsonResponse(envelope(z.array(SalesDaySchema)), 'One row per day'), ...errorResponses(401, 422) },
    }),
    async (c) => {
      const [days] = await queryPlain(c.var.db, [salesQuery(c.req.valid('query').days)]);
      return c.json(ok(days.map(presentSalesDay)), 200);
    },
  )
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
