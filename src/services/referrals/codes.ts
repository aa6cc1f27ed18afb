import { sql, type SQL } from 'drizzle-orm';

// Attribution: a new account records the user whose code brought it, in the INSERT that creates it (never later).
// Every user's code is written by the database itself (the trigger of migration 0033), whatever path creates them.

/** What a typed code may look like (16 hex digits, any letter case); anything else is no user's code. */
export const REFERRAL_CODE = /^[0-9A-Fa-f]{16}$/;

/** The cookie /r/<code> sets (first-party, 30 days): the dashboard's sign-up reads it. */
export const REFERRAL_COOKIE = 'ref';
export const REFERRAL_COOKIE_DAYS = 30;

/** The link a referrer shares: `origin` is PUBLIC_BASE_URL (the request's origin while it is unset). */
export const referralLink = (origin: string, code: string) => `${origin}/r/${code}`;

/** A code as stored: upper case. */
export const canonicalCode = (code: string) => code.trim().toUpperCase();

/**
 * An email as one mailbox: the local part without its `+tag` and dots, both parts lower case ("A.n+x@Ex.com" and
 * "an@ex.com" are the same person). Used only to refuse a self-referral, never to store.
 */
export function normalisedEmail(email: string): string {
  const at = email.indexOf('@');
  if (at < 0) return email.toLowerCase();
  const local = email.slice(0, at).split('+')[0].replaceAll('.', '');
  return `${local}@${email.slice(at + 1)}`.toLowerCase();
}

/** `normalisedEmail` in SQL, of an email column. */
export function normalisedEmailSql(email: SQL): SQL {
  // SQLite has no "last @": an address has one (the validator's pattern), so instr finds it.
  const local = sql`substr(${email}, 1, instr(${email}, '@') - 1)`;
  const untagged = sql`CASE WHEN instr(${local}, '+') > 0 THEN substr(${local}, 1, instr(${local}, '+') - 1) ELSE ${local} END`;
  return sql`lower(replace(${untagged}, '.', '') || substr(${email}, instr(${email}, '@')))`;
}

/**
 * The value of `users.referred_by` for a new account with `email`, brought by `code`: the code's owner, or NULL when
 * no code was given or the owner is the new account itself once emails are normalised (no referral is recorded). With
 * `strict` (a code the person typed, or the operator sent), a code nobody has becomes 0, which the column's CHECK
 * refuses, so the creation fails whole and answers 422 `errors.referral_code` in the same round trip; a code from
 * the cookie is only a hint: unknown, it records nothing.
 */
export function referredByValue(code: string | null | undefined, email: string, strict: boolean): SQL {
  if (!code) return sql`NULL`;
  const wanted = canonicalCode(code);
  const owner = sql`(SELECT id FROM users WHERE referral_code = ${wanted} AND ${normalisedEmailSql(sql`email`)} <> ${normalisedEmail(email)})`;
  if (!strict) return owner;
  return sql`coalesce(${owner}, CASE WHEN EXISTS (SELECT 1 FROM users WHERE referral_code = ${wanted}) THEN NULL ELSE 0 END)`;
}
