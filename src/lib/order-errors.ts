// Why the order a deposit paid for could not be bought when the deposit was credited: the error code stored on the
// deposit (`order_error`), in words for a person (the dashboard, the deposit_credited email).

const REASONS: Record<string, string> = {
  INSUFFICIENT_STOCK: 'there was not enough stock left',
  PRICE_CHANGED: 'the price changed',
  PRODUCT_UNAVAILABLE: 'the product is no longer for sale',
  NOT_FOUND: 'the product no longer exists',
  INVALID_PACK_SIZE: 'that quantity is no longer sold',
  COUPON_INVALID: 'the coupon could no longer be used',
  SPEND_LIMIT_REACHED: "it would pass the API key's daily spend limit",
  INSUFFICIENT_BALANCE: 'the wallet did not cover the total',
  EMAIL_NOT_VERIFIED: 'the email address is not confirmed yet',
  ACCOUNT_ON_HOLD: 'the account is on hold',
  BLOCKED: 'it cannot be done from this account or place',
  UNAUTHORIZED: 'the API key that asked for it was revoked or expired, or the account is disabled',
  DEPOSIT_EXPIRED: 'the payment arrived after the deposit expired',
};

/** "the price changed", for an `order_error` code (a code not known here is named as it is). */
export const orderErrorReason = (code: string) => REASONS[code] ?? `of ${code}`;
