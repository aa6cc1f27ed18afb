import { createRoute, z } from '@hono/zod-openapi';
import { readConfig } from '../../env';
import { envelope, ok } from '../../lib/envelope';
import { centsToAmount } from '../../lib/money';
import type { OrderRow } from '../../db/schema';
import { idempotent } from '../../middleware/idempotency';
import { catalogueChange, publishAfterResponse } from '../../middleware/publish-events';
import { mailFor } from '../../middleware/send-emails';
import { purgeSoldProducts } from '../../middleware/stock-cache';
import { createRouter, errorResponses, idempotencyKeyParameter, IdParams, idLinks, jsonBody, jsonResponse, needsScope } from '../openapi';
import { paged, pagedEnvelope, PaginationQuery } from '../../lib/pagination';
import { cancelOrder, getOrder, listOrders, orderExportFile, purchase, purchaseReplay, type OrderWithItems as PlacedOrder } from '../../services/orders/orders';
import { purchaseRequest, PurchaseBody, QuoteQuery } from '../../schemas/orders';
import { quotePurchase } from '../../services/orders/quotes';
import { Claim, presentClaim } from './claim-representation';
import { Order, OrderWithItems, presentOrder, presentOrderWithItems, presentQuote, Quote } from '../representations';

const ExportQuery = z.object({
  format: z.enum(['txt'], "format must be 'txt'").optional().openapi({ default: 'txt' }),
});

const tags = ['Orders'];

// Built from the shape (not by extending the named schema), so the document states the object's fields whole.
const OrderDetail = z.object({
  ...OrderWithItems.shape,
  claims: z.array(Claim).openapi({ description: "the order's warranty claims, oldest first (`POST /orders/{id}/items/{index}/report`)" }),
}).openapi('OrderDetail');

export const ordersRouter = createRouter()
  .openapi(
    createRoute({
      method: 'get',
      path: '/',
      operationId: 'listOrders',
      tags,
      summary: 'List orders, newest first',
      ...needsScope('read'),
      request: { query: PaginationQuery },
      responses: { 200: jsonResponse(pagedEnvelope(Order), 'A page of orders'), ...errorResponses(401, 422, 429) },
    }),
    async (c) => {
      const page = c.req.valid('query');
      const { rows, total } = await listOrders(c.var.db, c.var.caller, page);
      return c.json(paged(rows.map(presentOrder), page, total), 200);
    },
  )
  .openapi(
    createRoute({
      method: 'post',
      path: '/',
      operationId: 'createOrder',
      tags,
      summary: 'Buy a product: debits the wallet and delivers the items in the response',
      description:
        'Priced at this moment, in integer cents: the unit price is the volume tier with the largest `min_quantity` <= ' +
        '`quantity` (else the product\'s `price`), less the buyer\'s `discount_percent` (rounded half up to the cent); the ' +
        'subtotal is unit price x quantity; a `coupon` (any case) takes off `percent_off` % of the subtotal (rounded half ' +
        'up) or `amount_off`, at most the whole subtotal; `total_amount` is what is charged, never negative. A total of 0 ' +
        'is a free order: it needs no balance, and its `purchase` transaction (and a cancellation\'s `refund`) is 0. ' +
        'A coupon that is unknown, inactive, not started, expired, used up, used up by this buyer, for other products or ' +
        'whose `min_total` is above the subtotal → 400 `COUPON_INVALID` with `errors.coupon: [reason]`. With ' +
        '`expected_total`, any other total → 409 `PRICE_CHANGED` with `errors: { expected_total, total }`. Refusals ' +
        'charge nothing; the order is checked in this order: product, pack size, stock, coupon, expected total, balance ' +
        '(a key\'s daily spend limit, 403 `SPEND_LIMIT_REACHED`, is said before the balance).',
      ...needsScope('orders'),
      parameters: [idempotencyKeyParameter],
      request: { body: jsonBody(PurchaseBody) },
      responses: {
        201: jsonResponse(
          envelope(OrderWithItems),
          'Order created; items delivered',
          idLinks('/data/id', { getOrder: 'id', cancelOrder: 'id', exportOrder: 'id' }),
        ),
        ...errorResponses(400, 401, 403, 404, 409, 422, 429),
      },
    }),
    async (c) => {
      const body = c.req.valid('json');
      const placed = (order: PlacedOrder) => ({ status: 201 as const, body: ok(presentOrderWithItems(order), 'Order placed successfully.') });
      return idempotent(
        c,
        body,
        async (claim) => {
          const order = await purchase(c.var.db, c.var.caller, purchaseRequest(body), { ...catalogueChange(c, claim), mail: mailFor(c) });
          await purgeSoldProducts(c, [body.product_id]);
          return placed(order);
        },
        { related: purchaseReplay.related, render: (snapshot, related) => placed(purchaseReplay.load(snapshot, related)) },
      );
    },
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/quote',
      operationId: 'quoteOrder',
      tags,
      summary: 'Work out what a purchase would charge now, changing nothing',
      description:
        'The same pricing as `POST /orders` at this moment: the volume tier for the quantity, the buyer\'s discount, then ' +
        'the coupon. Answers the errors a purchase would (unknown or inactive product, pack size, stock, `COUPON_INVALID`) ' +
        'except the balance. Send its `total_amount` as `expected_total` to buy at exactly this price.',
      ...needsScope('read'),
      request: { query: QuoteQuery },
      responses: { 200: jsonResponse(envelope(Quote), 'The quote'), ...errorResponses(400, 401, 404, 422, 429) },
    }),
    async (c) => {
      const { product_id, quantity, coupon } = c.req.valid('query');
      return c.json(ok(presentQuote(await quotePurchase(c.var.db, c.var.caller, { productId: product_id, quantity, coupon }))), 200);
    },
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/{id}',
      operationId: 'getOrder',
      tags,
      summary: 'Get an order with its items and its warranty claims',
      ...needsScope('read'),
      request: { params: IdParams },
      responses: { 200: jsonResponse(envelope(OrderDetail), 'The order'), ...errorResponses(401, 404, 422, 429) },
    }),
    async (c) => {
      const found = await getOrder(c.var.db, c.var.caller, c.req.valid('param').id);
      return c.json(ok({ ...presentOrderWithItems(found), claims: (found.claims ?? []).map(presentClaim) }), 200);
    },
  )
  .openapi(
    createRoute({
      method: 'post',
      path: '/{id}/cancel',
      operationId: 'cancelOrder',
      tags,
      summary: 'Cancel a pending order; the full amount is refunded to the wallet',
      description:
        'Only a pending order of a product that was not final sale when it was bought (`cancellable: true` on the order) ' +
        'can be cancelled, before the scheduled job completes it (`ORDER_NOT_CANCELLABLE` otherwise). A buyer may make at ' +
        'most `MAX_CANCELS_PER_DAY` (default 5) cancellations in any 24 hours (`CANCEL_LIMIT_REACHED`, nothing refunded). ' +
        'The delivered items are revoked: they stay in the order and its export, and the operator deactivates them at the vendor.',
      ...needsScope('orders'),
      parameters: [idempotencyKeyParameter],
      request: { params: IdParams },
      responses: {
        200: jsonResponse(
          envelope(z.object({ refunded_amount: z.number(), order: Order })),
          'Cancelled and refunded',
        ),
        ...errorResponses(400, 401, 404, 422, 429),
      },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      // What this cancel refunded: the rest of the order (an order partly refunded before gets only the rest back).
      const cancelled = (order: OrderRow, refundedCents: number) => ({
        status: 200 as const,
        body: ok({ refunded_amount: centsToAmount(refundedCents), order: presentOrder(order) }, 'Order cancelled and refunded.'),
      });
      return idempotent(
        c,
        { order_id: id },
        async (claim) => {
          const { order, refundedCents } = await cancelOrder(c.var.db, c.var.caller, id, readConfig(c.env), claim, publishAfterResponse(c));
          await purgeSoldProducts(c, [order.productId]);
          return cancelled(order, refundedCents);
        },
        {
          render: (snapshot) => {
            const order = snapshot as OrderRow & { cancelRefundCents?: number };
            return cancelled(order, order.cancelRefundCents ?? order.totalAmountCents);
          },
        },
      );
    },
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/{id}/export',
      operationId: 'exportOrder',
      tags,
      summary: 'Export the stock items of an order as text, one per line',
      ...needsScope('read'),
      request: { params: IdParams, query: ExportQuery },
      responses: {
        200: { description: 'One stock item per line', content: { 'text/plain': { schema: z.string() } } },
        ...errorResponses(401, 404, 422, 429),
      },
    }),
    async (c) => {
      const file = orderExportFile(await getOrder(c.var.db, c.var.caller, c.req.valid('param').id));
      return c.text(file.text, 200, file.headers);
    },
  );
