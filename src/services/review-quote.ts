import type { StockEntry } from './stock';

// What the dashboard's review shows before "Confirm purchase". The product's list price times the quantity, with no
// discount: the price rules (volume prices, a buyer's discount, coupons) and `expected_total` on the purchase are not
// part of this service yet. When they are, the review shows their quote instead, and the purchase batch compares the
// reviewed total with its own (a total that moved is refused, nothing bought).

export interface Quote {
  unitPriceCents: number;
  discountCents: number;
  totalCents: number;
}

export function listPriceQuote(product: Pick<StockEntry, 'priceCents'>, quantity: number): Quote {
  return { unitPriceCents: product.priceCents, discountCents: 0, totalCents: product.priceCents * quantity };
}
