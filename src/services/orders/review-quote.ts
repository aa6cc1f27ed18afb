import { isoNow } from '../../lib/time';
import type { Caller, Query } from '../caller';
import { productDetailQuery, type ProductDetail } from '../catalogue/browse';
import { pricedPurchase, type PricedPurchase } from '../catalogue/pricing';
import { quoteOf, type Quote } from './quotes';
import { rowsOf } from '../../db/batch';

// What the dashboard's review shows before "Confirm purchase": the product and the quote of its purchase now, read
// in the page's one batch from the same priced row the purchase's batch guards on (src/services/catalogue/pricing.ts), with
// the purchase's refusals (product, pack size, stock, coupon; not the balance). The confirmation carries the total
// as `expected_total`, so a price that moves in between is refused by the purchase itself (409 PRICE_CHANGED).

export interface ReviewedPurchase {
  product: ProductDetail;
  /** What `GET /orders/quote` answers for the same product, quantity and coupon now. */
  quote: Quote;
  /** The buyer's balance as the same read saw it (a short one is offered "Pay $X and buy"). */
  balanceCents: number;
  /** The variant quoted. */
  variantName: string | null;
}

export const reviewQuery = (caller: Caller, productId: number, quantity: number, coupon: string | null, variantId: number | null = null): Query<ReviewedPurchase> => {
  const product = productDetailQuery(productId);
  return {
    reads: [...product.reads, pricedPurchase({ userId: caller.userId, productId, variantId, quantity, coupon, now: isoNow() })],
    parse: ([productRows, pricedRows]) => {
      const detail = product.parse([productRows]);
      const priced = rowsOf<PricedPurchase>(pricedRows)[0];
      return { product: detail, quote: quoteOf(priced, productId, quantity), balanceCents: priced?.balance_cents ?? 0, variantName: priced?.variant_name ?? null };
    },
  };
};
