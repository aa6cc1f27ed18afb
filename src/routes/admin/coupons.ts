import { createRoute, z } from '@hono/zod-openapi';
import { envelope, ok } from '../../lib/envelope';
import { centsToAmount } from '../../lib/money';
import { paged, pagedEnvelope, PaginationQuery } from '../../lib/pagination';
import { idempotent } from '../../middleware/idempotency';
import { couponInput, CreateCouponBody, UpdateCouponBody } from '../../schemas/coupons';
import { ADMIN_TOKEN_ACTOR } from '../../services/accounts/audit-log';
import { queryPlain } from '../../services/caller';
import { couponQuery, couponsQuery, createCoupon, updateCoupon, type Coupon } from '../../services/orders/coupons';
import { OPERATOR } from '../../services/idempotency';
import { createRouter, errorResponses, idempotencyKeyParameter, IdParams, idLinks, jsonBody, jsonResponse } from '../openapi';

// Coupons behind the admin token (the console's coupons page is their twin). Writes are on the audit log.

const security = [{ AdminBearer: [] }];
const tags = ['Admin'];
const parameters = [idempotencyKeyParameter];
const asOperator = { owner: OPERATOR } as const;
const money = z.number().openapi({ description: 'USD' });

export const CouponSchema = z
  .object({
    id: z.number().int(),
    code: z.string().openapi({ example: 'SPRING-10' }),
    percent_off: z.number().int().nullable(),
    amount_off: money.nullable(),
    min_total: money.nullable(),
    starts_at: z.string().nullable().openapi({ format: 'date-time' }),
    expires_at: z.string().nullable().openapi({ format: 'date-time' }),
    max_redemptions: z.number().int().nullable(),
    max_per_user: z.number().int().nullable(),
    product_ids: z.array(z.number().int()).nullable(),
    variant_ids: z.array(z.number().int()).nullable().openapi({ description: 'the variants it is narrowed to; null = every variant' }),
    active: z.boolean(),
    redemptions: z.number().int().openapi({ description: 'orders placed with it (a cancellation does not give one back)' }),
    created_at: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('Coupon');

const amountOrNull = (cents: number | null) => (cents === null ? null : centsToAmount(cents));

export const presentCoupon = (c: Coupon) => ({
  id: c.id,
  code: c.code,
  percent_off: c.percentOff,
  amount_off: amountOrNull(c.amountOffCents),
  min_total: amountOrNull(c.minTotalCents),
  starts_at: c.startsAt,
  expires_at: c.expiresAt,
  max_redemptions: c.maxRedemptions,
  max_per_user: c.maxPerUser,
  product_ids: c.productIds === null ? null : (JSON.parse(c.productIds) as number[]),
  variant_ids: c.variantIds === null || c.variantIds === undefined ? null : (JSON.parse(c.variantIds) as number[]),
  active: c.active === 1,
  redemptions: c.redemptions,
  created_at: c.createdAt,
});

const RULES =
  'A coupon is used by `POST /orders` with `coupon` (any case): a `percent_off` coupon takes that percent of the subtotal off ' +
  '(rounded half up), an `amount_off` coupon that amount (at most the whole subtotal: a 100 % coupon, or an amount at ' +
  'least the subtotal, makes the order free). Exactly one of the two. It is ' +
  'refused (400 `COUPON_INVALID`) when inactive, before `starts_at`, from `expires_at`, after `max_redemptions` orders, ' +
  'after `max_per_user` orders of the buyer, for a product not in `product_ids`, or when `min_total` is above the subtotal.';

export const adminCouponsRouter = createRouter()
  .openapi(
    createRoute({
      method: 'post',
      path: '/coupons',
      operationId: 'createCoupon',
      tags,
      summary: 'Create a coupon',
      description: `${RULES} A code already taken (whatever its case) → 422 \`errors.code\`.`,
      security,
      parameters,
      request: { body: jsonBody(CreateCouponBody) },
      responses: {
        201: jsonResponse(envelope(CouponSchema), 'The coupon', idLinks('/data/id', { getCoupon: 'id', updateCoupon: 'id' })),
        ...errorResponses(401, 422),
      },
    }),
    async (c) => {
      const body = c.req.valid('json');
      const created = (coupon: Coupon) => ({ status: 201 as const, body: ok(presentCoupon(coupon), 'Coupon created.') });
      return idempotent(
        c,
        body,
        async (claim) => created(await createCoupon(c.var.db, ADMIN_TOKEN_ACTOR, { ...couponInput(body), code: body.code }, claim)),
        { ...asOperator, render: (snapshot) => created(snapshot as Coupon) },
      );
    },
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/coupons',
      operationId: 'listCoupons',
      tags,
      summary: 'Coupons, newest first',
      security,
      request: { query: PaginationQuery },
      responses: { 200: jsonResponse(pagedEnvelope(CouponSchema), 'A page of coupons'), ...errorResponses(401, 422) },
    }),
    async (c) => {
      const page = c.req.valid('query');
      const [{ rows, total }] = await queryPlain(c.var.db, [couponsQuery(page)]);
      return c.json(paged(rows.map(presentCoupon), page, total), 200);
    },
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/coupons/{id}',
      operationId: 'getCoupon',
      tags,
      summary: 'A coupon with its redemptions',
      security,
      request: { params: IdParams },
      responses: { 200: jsonResponse(envelope(CouponSchema), 'The coupon'), ...errorResponses(401, 404, 422) },
    }),
    async (c) => {
      const [coupon] = await queryPlain(c.var.db, [couponQuery(c.req.valid('param').id)]);
      return c.json(ok(presentCoupon(coupon)), 200);
    },
  )
  .openapi(
    createRoute({
      method: 'patch',
      path: '/coupons/{id}',
      operationId: 'updateCoupon',
      tags,
      summary: 'Change a coupon: any field but its code',
      description: `${RULES} Sending \`percent_off\` or \`amount_off\` switches the coupon to that kind.`,
      security,
      parameters,
      request: { params: IdParams, body: jsonBody(UpdateCouponBody) },
      responses: { 200: jsonResponse(envelope(CouponSchema), 'The coupon'), ...errorResponses(401, 404, 422) },
    }),
    async (c) => {
      const body = c.req.valid('json');
      const updated = (coupon: Coupon) => ({ status: 200 as const, body: ok(presentCoupon(coupon), 'Coupon updated.') });
      return idempotent(
        c,
        body,
        async (claim) => updated(await updateCoupon(c.var.db, ADMIN_TOKEN_ACTOR, c.req.valid('param').id, couponInput(body), claim)),
        { ...asOperator, render: (snapshot) => updated(snapshot as Coupon) },
      );
    },
  );
