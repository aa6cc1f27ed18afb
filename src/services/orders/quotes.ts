import type { Db } from '../../db/client';
import { rowsOf } from '../../db/batch';
import { isoNow } from '../../lib/time';
import { readAs, type Caller } from '../caller';
import { pricedPurchase, sellableRefusal, type PricedPurchase } from '../catalogue/pricing';

export interface QuoteRequest {
  productId: number;
  variantId?: number | null;
  quantity: number;
  /** As the client sent it, any case; null or absent = none. */
  coupon?: string | null;
}

/** What a purchase would charge now, in cents (the order's own fields). */
export interface Quote {
  productId: number;
  variantId: number;
  quantity: number;
  listUnitPriceCents: number;
  unitPriceCents: number;
  discountAmountCents: number;
  /** The coupon's code as stored (upper case), or null. */
  coupon: string | null;
  totalAmountCents: number;
}

/**
 * A purchase worked out without buying: the same priced row the purchase's batch guards on (src/services/catalogue/pricing.ts),
 * read in one round trip, with the purchase's refusals (product, pack size, stock, coupon) but not the balance.
 */
export async function quotePurchase(d1: Db, caller: Caller, { productId, variantId, quantity, coupon }: QuoteRequest): Promise<Quote> {
  const [result] = await readAs(d1, caller, [pricedPurchase({ userId: caller.userId, productId, variantId, quantity, coupon: coupon ?? null, now: isoNow() })]);
  return quoteOf(rowsOf<PricedPurchase>(result)[0], productId, quantity);
}

/** The quote a `pricedPurchase` row stands for, or the purchase's refusal (thrown); the dashboard's review uses it too. */
export function quoteOf(priced: PricedPurchase, productId: number, quantity: number): Quote {
  const refusal = sellableRefusal(priced, quantity);
  if (refusal) throw refusal;
  const listUnitPriceCents = priced.list_unit_price as number;
  const totalAmountCents = priced.total as number;
  return {
    productId,
    variantId: priced.variant_id as number,
    quantity,
    listUnitPriceCents,
    unitPriceCents: priced.unit_price as number,
    discountAmountCents: listUnitPriceCents * quantity - totalAmountCents,
    coupon: priced.coupon_code,
    totalAmountCents,
  };
}
