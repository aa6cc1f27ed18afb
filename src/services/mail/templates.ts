import type { EmailTemplate } from '../../db/schema';
import { formatUsd } from '../../lib/money';
import { orderErrorReason } from '../../lib/order-errors';

// The messages. Each is a few plain paragraphs and at most one link, rendered twice: as text, and as plain HTML
// (every value escaped, no remote images, no tracking), signed with the shop's name. The fields come from the email's
// row (`data`, recorded in the batch of the effect); a link with a token comes only from the queue message. A
// receipt names what was bought, never the delivered items: those are credentials, shown by the dashboard and API.

export interface RenderedEmail {
  text: string;
  html: string;
}

interface Body {
  paragraphs: string[];
  link?: { label: string; url: string };
}

type Data = Record<string, unknown>;
const str = (data: Data, key: string) => String(data[key] ?? '');
const usd = (data: Data, key: string) => formatUsd(Number(data[key] ?? 0));

export const ALERT_KINDS = {
  low_stock: 'Low stock',
  payment: 'Payments that need a look',
  webhook_endpoint: 'Webhook endpoints that gave up',
} as const;
export type AlertKind = keyof typeof ALERT_KINDS;

/** The subject of each template (stored on the row: the console lists it). */
export const SUBJECTS = {
  password_reset: (shop: string) => `${shop}: reset your password`,
  order_receipt: (shop: string, orderNumber: string) => `${shop}: receipt for order ${orderNumber}`,
  deposit_credited: (shop: string) => `${shop}: deposit credited`,
  email_changed: (shop: string) => `${shop}: your email address was changed`,
  password_changed: (shop: string) => `${shop}: your password was changed`,
  email_verification: (shop: string) => `${shop}: confirm your email address`,
  operator_alert: (shop: string, kind: AlertKind) => `${shop} alert: ${ALERT_KINDS[kind]}`,
  claim_resolved: (shop: string) => `${shop}: your reported item`,
  order_refunded: (shop: string) => `${shop}: a refund to your wallet`,
  /** The order number is appended by the batch that records it (one statement for every operator). */
  claim_opened: (shop: string, orderNumber: string) => `${shop}: a buyer reported an item of order ${orderNumber}`,
} as const;

const CLAIM_DECISIONS: Record<string, (data: Data) => string> = {
  replaced: () => 'A new item replaces it in your order: open the order to see it.',
  refunded: (data) => `Its share of the order, ${usd(data, 'refund_cents')}, was refunded to your wallet.`,
  rejected: (data) => `The shop did not accept the report: ${str(data, 'note')}`,
};

const BODIES: Record<EmailTemplate, (data: Data, link: string | undefined) => Body> = {
  password_reset: (_, link) => ({
    paragraphs: [
      'Someone asked to reset the password of your account. If it was you, choose a new password with the link below: it works once, within 60 minutes, and signs out every session.',
      'If it was not you, ignore this email: your password stays as it is.',
    ],
    link: link ? { label: 'Choose a new password', url: link } : undefined,
  }),
  order_receipt: (data) => ({
    paragraphs: [
      `Thank you for your order ${str(data, 'order_number')}.`,
      [
        `Product: ${str(data, 'product_name')}`,
        `Quantity: ${str(data, 'quantity')}`,
        `Unit price: ${usd(data, 'unit_price_cents')}`,
        // The discount split: volume price and the buyer's discount, then the coupon with its code.
        `Discount (volume price and yours): ${formatUsd(Number(data.discount_cents ?? 0) - Number(data.coupon_amount_cents ?? 0))}`,
        ...(typeof data.coupon === 'string' ? [`Coupon ${data.coupon}: ${usd(data, 'coupon_amount_cents')}`] : []),
        `Total: ${usd(data, 'total_cents')}`,
        `Balance after: ${usd(data, 'balance_after_cents')}`,
      ].join('\n'),
      'Your items are in your order on the dashboard (they are never sent by email).',
    ],
    link: { label: 'View the order', url: str(data, 'order_url') },
  }),
  deposit_credited: (data) => ({
    paragraphs: [
      `Your deposit #${str(data, 'deposit_id')} of ${usd(data, 'amount_cents')} was credited.`,
      `Balance after: ${usd(data, 'balance_after_cents')}`,
      // A deposit that paid for an order: bought (its receipt comes apart), or not, and the money stays in the wallet.
      ...(typeof data.order_error === 'string'
        ? [`The order you paid for could not be made: ${orderErrorReason(data.order_error)}. Nothing was bought; the money is in your wallet, ready to use.`]
        : typeof data.order_number === 'string'
          ? [`Your order ${str(data, 'order_number')} was made with it.`]
          : []),
    ],
  }),
  email_changed: (data) => ({
    paragraphs: [
      `The email address of your account was changed to ${str(data, 'new_email_masked')} at ${str(data, 'changed_at')}.`,
      'Not you? Contact the shop right away.',
    ],
  }),
  password_changed: (data) => ({
    paragraphs: [
      `The password of your account was changed at ${str(data, 'changed_at')}, and your other sessions were signed out.`,
      'Not you? Use "Forgot password?" on the sign-in page and contact the shop.',
    ],
  }),
  email_verification: (_, link) => ({
    paragraphs: ['Confirm that this is your email address with the link below (it works once, within 24 hours). Until then you can sign in and look around, but not deposit or buy.'],
    link: link ? { label: 'Confirm my email address', url: link } : undefined,
  }),
  claim_resolved: (data) => ({
    paragraphs: [
      `The shop looked at the problem you reported with item ${str(data, 'item')} of order ${str(data, 'order_number')} (${str(data, 'product_name')}).`,
      (CLAIM_DECISIONS[str(data, 'status')] ?? (() => 'Open the order to see what was decided.'))(data),
    ],
    link: { label: 'View the order', url: str(data, 'order_url') },
  }),
  order_refunded: (data) => ({
    paragraphs: [
      `The shop refunded ${usd(data, 'amount_cents')} of your order ${str(data, 'order_number')} (${str(data, 'product_name')}) to your wallet.`,
      `Reason: ${str(data, 'reason')}`,
      [`Refunded so far: ${usd(data, 'refunded_cents')} of ${usd(data, 'total_cents')}`, `Balance after: ${usd(data, 'balance_after_cents')}`].join('\n'),
      'Your items stay yours.',
    ],
    link: { label: 'View the order', url: str(data, 'order_url') },
  }),
  claim_opened: (data) => ({
    paragraphs: [
      `${str(data, 'buyer_name')} <${str(data, 'buyer_email')}> reported item ${str(data, 'item')} of ${str(data, 'items')} of order ${str(data, 'order_number')} (${str(data, 'product_name')}).`,
      `Reason: ${str(data, 'reason')}`,
      'Decide on the console: replace the item, refund it, or reject the report.',
    ],
    link: { label: 'Open the claim', url: str(data, 'claim_url') },
  }),
  operator_alert: (data) => ({
    paragraphs: [
      `${ALERT_KINDS[data.kind as AlertKind] ?? 'Alert'} (${str(data, 'total')} since the last alert of this kind):`,
      (Array.isArray(data.lines) ? data.lines.map(String) : []).join('\n'),
      'Details are on the operator console.',
    ],
  }),
};

const escapeHtml = (value: string) =>
  value.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]!);

/** Text and HTML of an email from its row's fields (and, for a reset or verification, the link of its message). */
export function renderEmail(template: EmailTemplate, data: Data, shopName: string, link?: string, supportEmail?: string | null): RenderedEmail {
  const body = BODIES[template](data, link);
  const greeting = typeof data.name === 'string' && data.name ? `Hello ${data.name},` : 'Hello,';
  // The footer says where a buyer reaches the shop (SUPPORT_EMAIL), when the shop gives one.
  const signature = supportEmail ? `${shopName}\nQuestions? Write to ${supportEmail}` : shopName;
  const text = [greeting, ...body.paragraphs, ...(body.link ? [`${body.link.label}: ${body.link.url}`] : []), `-- \n${signature}`].join('\n\n');
  const paragraph = (p: string) => `<p>${escapeHtml(p).replaceAll('\n', '<br>')}</p>`;
  const html = [
    '<!doctype html><html><body>',
    paragraph(greeting),
    ...body.paragraphs.map(paragraph),
    ...(body.link ? [`<p><a href="${escapeHtml(body.link.url)}">${escapeHtml(body.link.label)}</a></p>`] : []),
    `<p>-- <br>${escapeHtml(signature).replaceAll('\n', '<br>')}</p>`,
    '</body></html>',
  ].join('\n');
  return { text, html };
}

/** `jane.doe@example.com` → `j***@example.com`: the old address learns where the account went, not the whole address. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  return at <= 0 ? '***' : `${email[0]}***${email.slice(at)}`;
}
