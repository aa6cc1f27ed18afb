import { createRoute, z } from '@hono/zod-openapi';
import { envelope, ok } from '../../lib/envelope';
import { createRouter, errorResponses, IdParams, jsonResponse } from '../openapi';
import type { OrderRow } from '../../db/schema';
import { paged, pagedEnvelope } from '../../lib/pagination';
import { OrdersQuery } from '../../schemas/operator';
import { queryPlain } from '../../services/caller';
import { orderDetailQuery, ordersQuery } from '../../services/operator/orders';
import { Order, OrderWithItems, presentOrder } from '../representations';

// Every user's orders for the operator, a page at a time or one with its items.

const security = [{ AdminBearer: [] }];
const tags = ['Admin'];
const emptyToUndefined = (q: string | undefined) => (q === '' ? undefined : q);

// Built from the shapes (not by extending the named schemas), so the document states each object's fields whole.
const OperatorOrder = z.object({ ...Order.shape, user_id: z.number().int() }).openapi('OperatorOrder');
const OperatorOrderWithItems = z.object({ ...OrderWithItems.shape, user_id: z.number().int() }).openapi('OperatorOrderWithItems');
const presentOperatorOrder = (o: OrderRow) => ({ ...presentOrder(o), user_id: o.userId });

export const adminOrdersRouter = createRouter()
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
  );
