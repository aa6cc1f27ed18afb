import { sql, type SQL } from 'drizzle-orm';
import { BASE62, randomBase62 } from '../../lib/crypto';
import type { EventType } from '../../db/schema';
import type { Publish } from '../events/log';
import { variantsOf, type VariantOverride } from './stock';
import type { IdempotencyClaim } from '../idempotency';

// Catalogue events (`product.restocked`, `product.price_changed`, `product.unavailable`) are shop-wide: every user
// with an endpoint subscribed to the type BY NAME ("*" means the user's own account events only, so no existing
// endpoint starts receiving them unasked) gets their own event, in their log and in the outbox, written by one
// INSERT ... SELECT in the batch of the change. Their snapshot is the product's public stock entry (plus the
// previous price for a price change), rendered by src/routes/events/events.ts. The entry's image_url is absolute, as in
// public stock: the origin of the request that made the change is written into the snapshot, since a delivery (a
// queue consumer) has no request to take one from. Each is about one variant (`data.variant_id`, in the snapshot as
// `variantId`); the entry is the product's.

export type CatalogueEventType = Extract<EventType, `product.${string}`>;

// 8 digits hold any user id below 62^8 (2e14), and every power of 62 they use is an exact JS integer.
const USER_DIGITS = 8;

/** A user id as 8 base62 digits in SQL, so one batch's events get distinct ids from one random prefix. */
const base62Of = (id: SQL) =>
  sql.join(
    Array.from({ length: USER_DIGITS }, (_, i) => sql`substr(${BASE62}, (${id} / ${sql.raw(String(62 ** (USER_DIGITS - 1 - i)))}) % 62 + 1, 1)`),
    sql` || `,
  );

export interface CatalogueEvent {
  type: CatalogueEventType;
  /** `evt_` and 16 random base62 characters: each subscriber's event id adds its user id (8 base62 digits). */
  idPrefix: string;
  now: string;
  /** The service's origin as the change's request reached it: image URLs in the snapshot start with it. */
  origin: string;
}

export const newCatalogueEvent = (type: CatalogueEventType, now: string, origin: string): CatalogueEvent => ({
  type,
  idPrefix: `evt_${randomBase62(16)}`,
  now,
  origin,
});

/** What a route gives a service whose change may write catalogue events. */
export interface CatalogueChange {
  origin: string;
  claim?: IdempotencyClaim;
  publish?: Publish;
}

/** The product as its public stock entry (field names of src/services/catalogue/stock.ts's StockEntry), from columns of `p`. */
export interface ProductColumns {
  name: SQL;
  sku: SQL;
  stockCount: SQL;
  priceCents: SQL;
  cancellable: SQL;
  /** The volume tiers' JSON after the change, when a change sets them (else the row's). */
  volumePrices?: SQL;
  /** The variant a change not yet written changes, as it will be (the entry's `variants`). */
  variantAfter?: VariantOverride;
}

export const currentColumns: ProductColumns = {
  name: sql`p.name`,
  sku: sql`p.sku`,
  stockCount: sql`p.stock_count`,
  priceCents: sql`p.price_cents`,
  cancellable: sql`p.cancellable`,
};

/**
 * The event for each subscriber, about product `productId` (read as `p`) when `when` holds (SQL over `p`). `columns`
 * give the entry as it is after the change (a statement placed before its change passes the new values).
 */
export function recordCatalogueEvent(
  event: CatalogueEvent,
  productId: number | SQL,
  when: SQL,
  columns: ProductColumns = currentColumns,
  previousPriceCents?: SQL,
  /** The variant the change is about (its event's `data.variant_id`). */
  variantId?: SQL,
): SQL {
  const snapshot = sql`json_object('productId', p.id, 'productName', ${columns.name}, 'sku', ${columns.sku}, 'stockCount', ${columns.stockCount},
    'priceCents', ${columns.priceCents}, 'cancellable', ${columns.cancellable}, 'category', p.category, 'imageUrl', ${`${event.origin}/media/`} || p.image,
    'allowedQuantities', p.allowed_quantities, 'warrantyHours', p.warranty_hours, 'volumePrices', ${columns.volumePrices ?? sql`p.volume_prices`},
    'variants', json(${variantsOf(sql`p.id`, columns.variantAfter)})${variantId ? sql`, 'variantId', ${variantId}` : sql``}${previousPriceCents ? sql`, 'previousPriceCents', ${previousPriceCents}` : sql``})`;
  return sql`
    INSERT INTO events (id, user_id, type, object_id, snapshot, created_at, enqueued_at)
    SELECT ${event.idPrefix} || ${base62Of(sql`w.user_id`)}, w.user_id, ${event.type}, p.id, ${snapshot}, ${event.now}, NULL
    FROM products p JOIN webhook_endpoints w ON w.deleted_at IS NULL
    WHERE p.id = ${productId} AND ${when} AND EXISTS (SELECT 1 FROM json_each(w.events) WHERE value = ${event.type})
    GROUP BY w.user_id`;
}

/** A read for the end of the batch: the ids of the event's copies (all in the outbox), for the request to publish. */
export const catalogueEventIds = (event: CatalogueEvent) =>
  sql`SELECT id FROM events WHERE id BETWEEN ${event.idPrefix} AND ${`${event.idPrefix}zzzzzzzz`}`;
