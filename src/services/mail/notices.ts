import { sql, type SQL } from 'drizzle-orm';
import { emailsRecorded, newEmailId, recordEmail, recordedJobs, type EmailJob, type EmailRecord } from './outbox';
import { maskEmail, SUBJECTS } from './templates';
import type { Mail } from './settings';
import { PUBLIC_BASE_URL_UNSET } from '../../lib/public-base-url';

// The emails each effect records in its own batch: a service appends `writes` to its batch's statements (after its
// effect, which they read), `read` to its reads, and hands the result of that read to `sent` after the commit. While
// mail is off every plan is empty and the batch is exactly what it was.

export interface EmailPlan {
  /** The emails' ids, generated before the batch. */
  ids: string[];
  writes: SQL[];
  reads: SQL[];
  /** After the commit: enqueues the emails the batch recorded (`result`: the batch's result of `reads[0]`). */
  sent: (result: D1Result | undefined) => void;
}

const NO_EMAIL: EmailPlan = { ids: [], writes: [], reads: [], sent: () => {} };

export function plan(mail: Mail | undefined, now: string, emails: (mail: Mail) => Array<EmailRecord & { link?: string }>): EmailPlan {
  if (!mail) return NO_EMAIL;
  // Without PUBLIC_BASE_URL there is no link to give: such an email is recorded failed, never sent with a guessed host.
  const records = emails(mail).map((record) =>
    mail.origin === null && (record.carriesLink || record.linksToShop) ? { ...record, link: undefined, failed: PUBLIC_BASE_URL_UNSET } : record,
  );
  const jobs: EmailJob[] = records
    .filter((record) => record.failed === undefined)
    .map(({ id, link }) => (link ? { email_id: id, link } : { email_id: id }));
  return {
    ids: records.map((record) => record.id),
    writes: records.map((record) => recordEmail(record, now)),
    reads: [emailsRecorded(records.map((record) => record.id))],
    sent: (result) => mail.send(recordedJobs(result, jobs)),
  };
}

/** The buyer's receipt, from the order row as the batch wrote it (whatever total it computed); none when opted out. */
export const receiptEmail = (mail: Mail | undefined, orderNumber: string, now: string) =>
  plan(mail, now, ({ settings, origin }) => [
    {
      id: newEmailId(),
      template: 'order_receipt',
      subject: SUBJECTS.order_receipt(settings.shopName, orderNumber),
      from: sql`FROM orders o JOIN users u ON u.id = o.user_id
                LEFT JOIN wallet_transactions t ON t.order_id = o.id AND t.type = 'purchase'
                WHERE o.order_number = ${orderNumber} AND u.email_receipts = 1`,
      to: sql`u.email`,
      userId: sql`u.id`,
      data: sql`json_object('name', u.name, 'order_number', o.order_number, 'order_id', o.id, 'product_name', o.product_name,
                            'quantity', o.quantity, 'unit_price_cents', o.list_unit_price_cents,
                            'discount_cents', o.discount_amount_cents, 'coupon', o.coupon, 'coupon_amount_cents', o.coupon_amount_cents,
                            'total_cents', o.total_amount_cents,
                            'balance_after_cents', t.balance_after_cents, 'order_url', ${origin} || '/dashboard/orders/' || o.id)`,
      linksToShop: true,
    },
  ]);

/** An operator's refund of an order, from its ledger row (absent when this batch refunded nothing): amount and reason. */
export const orderRefundedEmail = (mail: Mail | undefined, operationId: string, reason: string, now: string) =>
  plan(mail, now, ({ settings, origin }) => [
    {
      id: newEmailId(),
      template: 'order_refunded',
      subject: SUBJECTS.order_refunded(settings.shopName),
      from: sql`FROM wallet_transactions t JOIN orders o ON o.id = t.order_id JOIN users u ON u.id = o.user_id WHERE t.operation_id = ${operationId}`,
      to: sql`u.email`,
      userId: sql`u.id`,
      data: sql`json_object('name', u.name, 'order_number', o.order_number, 'product_name', o.product_name, 'amount_cents', t.amount_cents,
                            'reason', ${reason}, 'refunded_cents', o.refunded_amount_cents, 'total_cents', o.total_amount_cents,
                            'balance_after_cents', t.balance_after_cents, 'order_url', ${origin} || '/dashboard/orders/' || o.id)`,
      linksToShop: true,
    },
  ]);

/** A deposit's credit, from the ledger row of `operationId` (absent when this batch credited nothing). */
export const depositCreditedEmail = (mail: Mail | undefined, operationId: string, now: string) =>
  plan(mail, now, ({ settings }) => [
    {
      id: newEmailId(),
      template: 'deposit_credited',
      subject: SUBJECTS.deposit_credited(settings.shopName),
      from: sql`FROM wallet_transactions t JOIN users u ON u.id = t.user_id JOIN deposits d ON d.id = t.deposit_id
                LEFT JOIN orders o ON o.id = d.order_id
                WHERE t.operation_id = ${operationId} AND t.type = 'deposit' AND u.email_receipts = 1`,
      to: sql`u.email`,
      userId: sql`u.id`,
      data: sql`json_object('name', u.name, 'deposit_id', t.deposit_id, 'amount_cents', t.amount_cents, 'balance_after_cents', t.balance_after_cents,
                            'order_number', o.order_number, 'order_error', d.order_error)`,
    },
  ]);

/**
 * The password changed, by any path: `user` selects the user by the new hash (salted afresh, so only the batch that
 * wrote it finds it).
 */
export const passwordChangedEmail = (mail: Mail | undefined, newPasswordHash: string, now: string) =>
  plan(mail, now, ({ settings }) => [
    {
      id: newEmailId(),
      template: 'password_changed',
      subject: SUBJECTS.password_changed(settings.shopName),
      from: sql`FROM users u WHERE u.password_hash = ${newPasswordHash}`,
      to: sql`u.email`,
      userId: sql`u.id`,
      data: sql`json_object('name', u.name, 'changed_at', ${now})`,
    },
  ]);

/**
 * To the old address, written BEFORE the change in the same batch (it reads the address being replaced): a change
 * that fails (the address is taken) rolls it back with the batch. Only a different address counts, not another
 * letter case of the same one.
 */
export const emailChangedEmail = (mail: Mail | undefined, userId: SQL, newEmail: string, now: string) =>
  plan(mail, now, ({ settings }) => [
    {
      id: newEmailId(),
      template: 'email_changed',
      subject: SUBJECTS.email_changed(settings.shopName),
      from: sql`FROM users u WHERE u.id = ${userId} AND NOT (u.email = ${newEmail} COLLATE NOCASE)`,
      to: sql`u.email`,
      userId: sql`u.id`,
      data: sql`json_object('name', u.name, 'new_email_masked', ${maskEmail(newEmail)}, 'changed_at', ${now})`,
    },
  ]);

/** A reset link for the account of the reset row `tokenHash` (absent when the request was not for a live account). */
export const passwordResetEmail = (mail: Mail | undefined, tokenHash: string, link: string, now: string) =>
  plan(mail, now, ({ settings }) => [
    {
      id: newEmailId(),
      template: 'password_reset',
      subject: SUBJECTS.password_reset(settings.shopName),
      from: sql`FROM password_resets r JOIN users u ON u.id = r.user_id WHERE r.token_hash = ${tokenHash}`,
      to: sql`u.email`,
      userId: sql`u.id`,
      data: sql`json_object('name', u.name)`,
      carriesLink: true,
      link,
    },
  ]);
