import { isoNow } from '../lib/time';
import type { Caller, Query } from './caller';
import { productDetailQuery, type ProductDetail } from './catalogue';
import { pricedPurchase, sellableRefusal, type PricedPurchase } from './pricing';
import { rowsOf } from '../db/batch';

// What the dashboard's review shows before "Confirm purchase": the product and the quote of its purchase now, read
// in the page's one batch from the same priced row the purchase's batch guards on (src/services/pricing.ts), with
// the purchase's refusals (product, pack size, stock, coupon; not the balance). The confirmation carries the total
// as `expected_total`, so a price that moves in between is refused by the purchase itself (409 PRICE_CHANGED).

export interface ReviewedPurchase {
  product: ProductDetail;
  quantity: number;
  /** The product's list price, per unit. */
  listUnitPriceCents: number;
  /** All that is taken off the list price times the quantity: volume price, the buyer's discount, the coupon. */
  discountCents: number;
  totalCents: number;
  /** The coupon's code as stored, or null. */
  coupon: string | null;
}

export const reviewQuery = (caller: Caller, productId: number, quantity: number, coupon: string | null): Query<ReviewedPurchase> => {
  const product = productDetailQuery(productId);
  return {
    reads: [...product.reads, pricedPurchase({ userId: caller.userId, productId, quantity, coupon, now: isoNow() })],
    parse: ([productRows, pricedRows]) => {
      const detail = product.parse([productRows]);
      const priced = rowsOf<PricedPurchase>(pricedRows)[0];
      const refusal = sellableRefusal(priced, quantity);
      if (refusal) throw refusal;
      const listUnitPriceCents = priced.list_unit_price as number;
      const totalCents = priced.total as number;
      return { product: detail, quantity, listUnitPriceCents, discountCents: listUnitPriceCents * quantity - totalCents, totalCents, coupon: priced.coupon_code };
    },
  };
};
