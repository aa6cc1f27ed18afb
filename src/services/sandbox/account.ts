import { sql, type SQL } from 'drizzle-orm';
import { walletMovement } from '../ledger';

// A user's account in the test-mode sandbox: the same id as the live account (so a live key or a dashboard session
// can reach it without a lookup), created on first need by the batch that needs it, and funded with test money.

/** What a sandbox wallet starts with, and what a reset puts back: $1,000.00, one `adjustment` "Test money". */
export const TEST_MONEY_CENTS = 100_000;
export const TEST_MONEY_DESCRIPTION = 'Test money';

/** The live account's fields the sandbox copies when it first needs the user. */
export interface LiveAccount {
  id: number;
  name: string;
  email: string;
  discount_percent: number;
}

/** The live account's row, read in the live batch that proves the caller. */
export const liveAccountRead = (userId: SQL) => sql`SELECT id, name, email, discount_percent FROM users WHERE id = ${userId}`;

/** What a sandbox account whose address moved to another live account is given: its own, unique, never delivered. */
const placeholderEmail = (id: SQL) => sql`'moved-' || ${id} || '@sandbox.invalid'`;

/**
 * Statements for a sandbox batch: the user (same id, no password: the sandbox has no sign-in; no receipts: it sends
 * no email) unless it exists, then its test money, written only while its ledger is empty, so concurrent first uses
 * fund it once. The sandbox's email is the live one's: another sandbox account holding it (a live email moved
 * between accounts, or a sandbox set before emails were read-only there) gives it up first, so a user always gets
 * a sandbox account, and an existing one takes the live address again.
 */
export function sandboxAccountStatements(account: LiveAccount, now: string, operationId: string): SQL[] {
  return [
    sql`UPDATE users SET email = ${placeholderEmail(sql`id`)} WHERE email = ${account.email} AND id <> ${account.id}`,
    sql`INSERT OR IGNORE INTO users (id, name, email, password_hash, balance_cents, created_at, updated_at, role, email_receipts, email_verified, discount_percent)
        VALUES (${account.id}, ${account.name}, ${account.email}, '!', 0, ${now}, ${now}, 'user', 0, 1, ${account.discount_percent})`,
    sql`UPDATE users SET email = ${account.email} WHERE id = ${account.id} AND email <> ${account.email}`,
    ...testMoney(account.id, now, operationId, sql`NOT EXISTS (SELECT 1 FROM wallet_transactions WHERE user_id = ${account.id})`),
  ];
}

/** The test money's ledger row and balance change, applied when `when` holds. */
export function testMoney(userId: number | SQL, now: string, operationId: string, when: SQL): SQL[] {
  return walletMovement({
    userId,
    type: 'adjustment',
    operationId,
    now,
    source: sql`SELECT ${TEST_MONEY_CENTS} AS amount, ${TEST_MONEY_DESCRIPTION} AS description, NULL AS order_id, NULL AS deposit_id WHERE ${when}`,
  });
}
