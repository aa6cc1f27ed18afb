import { Notice } from './components';

// The one-line notice a page shows after a form sent the browser to it (`?done=<name>`): the URL names only which
// notice, its words are fixed here (no amount or name travels in a URL, and a crafted link can state nothing false
// beyond "this was done"); any other value shows none.
//
// Every form that changes something ends on a page with one of these. A new form: add its line to DONE and answer
// `c.redirect(withDone(path, 'its_name'), 303)` (or return `withDone(...)` from `redirectOnce`); `page()` in
// ../layout.tsx shows it on any page, console or dashboard. test/operator/console/notices.test.ts checks each one.

const DONE = {
  product_created: 'Product created. Upload its stock below.',
  product_saved: 'Product saved.',
  balance_adjusted: 'Balance adjusted: the transaction is listed below and on the audit log.',
  account_disabled: 'Account disabled: its API keys and sessions no longer work.',
  account_enabled: 'Account enabled: its API keys and sign-in work again.',
  deposit_paid: 'Deposit marked paid: its amount is credited to the wallet, once.',
  deposit_already_paid: 'The deposit was already paid: nothing was credited again.',
  order_cancelled: 'Order cancelled: its total is refunded to the buyer\'s wallet and its items are revoked.',
  coupon_created: 'Coupon created: buyers can use it now if it is active and within its dates.',
  coupon_saved: 'Coupon saved.',
  discount_saved: 'Discount saved: it applies to this user\'s next purchases.',
  image_uploaded: 'Image uploaded: the shop and the product card show it now.',
  image_removed: 'Image removed: the shop shows a neutral placeholder.',
  item_deleted: 'Item deleted: it is no longer in stock and can never be sold.',
  item_not_deleted: 'Nothing was deleted: that item was sold or deleted meanwhile.',
  password_reset: 'Your new password is set and your other sessions were signed out: sign in with it.',
  profile_saved: 'Profile saved.',
  billing_saved: 'Billing details saved: your next documents name them.',
  invoicing_saved: 'Invoicing settings saved: documents issued from now on use them.',
  claim_replaced: 'Item replaced: the buyer sees the new item in the order and was emailed.',
  claim_refunded: "Item refunded: its share of the order is credited to the buyer's wallet, once.",
  claim_rejected: 'Claim rejected: the buyer was emailed your note.',
  order_refunded: "Refund made: the amount is credited to the buyer's wallet, once, and the order shows it.",
  account_held: 'Account on hold: its deposits and purchases are refused until you lift the hold.',
  hold_lifted: 'Hold lifted: the account may deposit and buy again.',
  rule_added: 'Rule added: matching sign-ups, deposits and purchases are refused.',
  rule_removed: 'Rule removed.',
  password_changed: 'Password changed; your sessions on other devices were signed out.',
  referrals_moved: 'Your available referral earnings are in your wallet: one commission transaction, listed on the Wallet page.',
  referral_settings_saved: 'Referral settings saved: they apply to orders bought from now on.',
  referrals_off: "Referrals switched off for this user: nothing more is earned, and earnings still held were reversed.",
  referrals_on: 'Referrals switched on for this user: their next referred orders earn again.',
} as const;

export type DoneName = keyof typeof DONE;

/** `path` with the notice to show (before any `#fragment`). */
export function withDone(path: string, name: DoneName): string {
  const [target, fragment] = path.split('#');
  return `${target}${target.includes('?') ? '&' : '?'}done=${name}${fragment === undefined ? '' : `#${fragment}`}`;
}

export function DoneNotice({ name }: { name?: string }) {
  return name !== undefined && Object.hasOwn(DONE, name) ? <Notice>{DONE[name as DoneName]}</Notice> : null;
}
