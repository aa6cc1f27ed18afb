import { createRoute, z } from '@hono/zod-openapi';
import { EVENT_TYPES, type DeliveryRow, type EventRow, type EventType } from '../../db/schema';
import { envelope, ok } from '../../lib/envelope';
import { centsToAmount } from '../../lib/money';
import { createRouter, errorResponses, jsonResponse, needsScope } from '../openapi';
import { paged, pagedEnvelope, PaginationQuery } from '../../lib/pagination';
import { EVENT_ID_SHAPE, getEvent, listEvents } from '../../services/events/log';
import { Claim, presentClaim } from '../orders/claim-representation';
import { ProductEventObject, Deposit, Order, presentProductEventObject, presentDeposit, presentOrder, presentTransaction, Transaction } from '../representations';

const timestamp = z.string().openapi({ format: 'date-time' });

export const Event = z
  .object({
    id: z.string().openapi({ example: 'evt_4eC39HqLyjWDarjtT1zdp7dc' }),
    type: z.enum(EVENT_TYPES),
    livemode: z.boolean().openapi({ description: 'false for an event of test mode (a sk_test_ key\'s sandbox)' }),
    created_at: timestamp,
    data: z.object({
      object: z.union([Order, Deposit, Transaction, ProductEventObject, Claim]).openapi({
        description:
          'The claim (order.item_replaced, order.item_refunded, order.claim_rejected), the order (other order.*; for order.refunded as refunded, its refunded_amount including this refund), deposit (deposit.*) or wallet transaction (balance.adjusted) as the API renders it elsewhere, right after the change; for product.* the public stock entry (with previous_price on product.price_changed)',
      }),
      variant_id: z.number().int().nullable().optional().openapi({ description: 'product.* only: the variant the change is about' }),
      amount: z.number().optional().openapi({ description: 'order.refunded only: USD refunded by this refund' }),
      reason: z.string().optional().openapi({ description: "order.refunded only: the operator's reason for this refund" }),
    }),
  })
  .openapi('Event');

/** An event as its webhook delivers it (the signed JSON body). */
export type WebhookEvent = z.infer<typeof Event>;

const Delivery = z
  .object({
    endpoint_id: z.number().int(),
    attempt: z.number().int().openapi({ description: '1 for the first delivery' }),
    status_code: z.number().int().nullable().openapi({ description: 'null when no HTTP answer came (network error, timeout)' }),
    error: z.string().nullable(),
    at: timestamp,
  })
  .openapi('WebhookDelivery');

const EventWithDeliveries = Event.extend({ deliveries: z.array(Delivery) }).openapi('EventWithDeliveries');

const presenters: Record<EventType, (row: never) => z.infer<typeof Event>['data']['object']> = {
  'order.created': presentOrder,
  'order.cancelled': presentOrder,
  'order.completed': presentOrder,
  'deposit.paid': presentDeposit,
  'deposit.failed': presentDeposit,
  'deposit.expired': presentDeposit,
  'balance.adjusted': presentTransaction,
  'order.item_replaced': presentClaim,
  'order.item_refunded': presentClaim,
  'order.claim_rejected': presentClaim,
  'order.refunded': presentOrder,
  'product.restocked': presentProductEventObject,
  'product.price_changed': presentProductEventObject,
  'product.unavailable': presentProductEventObject,
};

/**
 * The event with its object rendered from the row snapshot by the resource's own presenter. `livemode` is not stored:
 * it is which database the event lives in (false in the sandbox).
 */
export const presentEvent = (e: EventRow, livemode = true): WebhookEvent => ({
  id: e.id,
  type: e.type,
  livemode,
  created_at: e.createdAt,
  data: dataOf(e.type, JSON.parse(e.snapshot) as Record<string, unknown>),
});

/** A catalogue event names its variant beside the product's entry (null for one written before variants). */
const dataOf = (type: EventType, snapshot: Record<string, unknown>): WebhookEvent['data'] => {
  const object = presenters[type](snapshot as never);
  if (type.startsWith('product.')) return { object, variant_id: (snapshot.variantId as number | undefined) ?? null };
  // order.refunded: which refund this is (an order may be refunded several times), beside the order as it left it.
  if (type === 'order.refunded') {
    return { object, amount: centsToAmount((snapshot.refundCents as number | undefined) ?? 0), reason: (snapshot.refundReason as string | undefined) ?? '' };
  }
  return { object };
};

const presentDelivery = (d: DeliveryRow) => ({
  endpoint_id: d.endpointId,
  attempt: d.attempt,
  status_code: d.statusCode,
  error: d.error,
  at: d.at,
});

const EventsQuery = PaginationQuery.extend({
  type: z.enum(EVENT_TYPES, `type must be one of ${EVENT_TYPES.join(', ')}`).optional(),
});

const EventParams = z.object({
  id: z
    .string()
    .regex(EVENT_ID_SHAPE, 'id must be an event id (evt_ followed by 24 letters and digits)')
    .openapi({ param: { name: 'id', in: 'path' }, example: 'evt_4eC39HqLyjWDarjtT1zdp7dc' }),
});

const tags = ['Events'];

export const eventsRouter = createRouter()
  .openapi(
    createRoute({
      method: 'get',
      path: '/',
      operationId: 'listEvents',
      tags,
      summary: 'The last 30 days of events about your orders, deposits and balance, newest first',
      ...needsScope('read'),
      request: { query: EventsQuery },
      responses: { 200: jsonResponse(pagedEnvelope(Event), 'A page of events'), ...errorResponses(401, 422, 429) },
    }),
    async (c) => {
      const { type, ...page } = c.req.valid('query');
      const { rows, total } = await listEvents(c.var.db, c.var.caller, page, type);
      return c.json(paged(rows.map((row) => presentEvent(row, c.var.mode !== 'test')), page, total), 200);
    },
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/{id}',
      operationId: 'getEvent',
      tags,
      summary: 'One event with its webhook delivery attempts (newest first)',
      ...needsScope('read'),
      request: { params: EventParams },
      responses: { 200: jsonResponse(envelope(EventWithDeliveries), 'The event'), ...errorResponses(401, 404, 422, 429) },
    }),
    async (c) => {
      const { event, deliveries } = await getEvent(c.var.db, c.var.caller, c.req.valid('param').id);
      return c.json(ok({ ...presentEvent(event, c.var.mode !== 'test'), deliveries: deliveries.map(presentDelivery) }), 200);
    },
  );
