// The pricing formulas, written again from their description in docs/prices.md, as the reference the purchase's SQL
// (src/services/catalogue/pricing.ts) is tested against. Deliberately not the same code: plain integer steps, no SQL.

export interface Tier {
  minQuantity: number;
  priceCents: number;
}

export type ReferenceCoupon = { percentOff: number } | { amountOffCents: number } | null;

export interface PricingCase {
  priceCents: number;
  tiers: Tier[];
  discountPercent: number;
  coupon: ReferenceCoupon;
  quantity: number;
}

/** n / 100 rounded half up (a half cent rounds up), for n >= 0: the quotient, plus one when the remainder is 50 or more. */
export function hundredthHalfUp(n: number): number {
  const quotient = Math.floor(n / 100);
  return n % 100 >= 50 ? quotient + 1 : quotient;
}

export function referencePrice({ priceCents, tiers, discountPercent, coupon, quantity }: PricingCase) {
  let tierPrice = priceCents;
  let best = 0;
  for (const tier of tiers) {
    if (tier.minQuantity <= quantity && tier.minQuantity > best) {
      best = tier.minQuantity;
      tierPrice = tier.priceCents;
    }
  }
  // A tier never charges more than the product's price.
  tierPrice = Math.min(tierPrice, priceCents);
  const unitPrice = hundredthHalfUp(tierPrice * (100 - discountPercent));
  const subtotal = unitPrice * quantity;
  let deduction = 0;
  if (coupon && 'percentOff' in coupon) deduction = hundredthHalfUp(subtotal * coupon.percentOff);
  // An amount coupon takes at most the whole subtotal: a total is never negative, and may be 0 (a free order).
  if (coupon && 'amountOffCents' in coupon) deduction = Math.min(coupon.amountOffCents, subtotal);
  const total = subtotal - deduction;
  return { listUnitPrice: priceCents, unitPrice, subtotal, total, discountAmount: priceCents * quantity - total };
}
