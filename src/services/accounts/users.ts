import { sql, type SQL } from 'drizzle-orm';
import { columnsOf, rowsOf } from '../../db/batch';
import type { Db } from '../../db/client';
import { writeBatch } from '../../db/d1';
import { isCheckViolation, isUniqueViolation } from '../../db/errors';
import { orders, walletTransactions, type OrderRow, type TransactionRow } from '../../db/schema';
import { hashPassword, verifyPassword } from '../../lib/crypto';
import { fieldError } from '../../lib/errors';
import { isoNow } from '../../lib/time';
import { insertKeyUnderLimit, issueKey } from './keys';
import { queryAs, readAs, writeAs, type Caller, type Query } from '../caller';
import type { RequestPlace } from '../../lib/place';
import { matchingRulesForEmail, matchingRulesForEmailChange, refuseIfBlocked } from './blocklist';
import { OPERATOR, recordClaim, type IdempotencyClaim } from '../idempotency';
import { endSessionsOnPasswordChange, insertSession, lastSeenStatement, sessionOpened, type SessionToken } from './sessions';
import { auditEntry, writeAsActor, type Actor } from './audit-log';
import { emailChangedEmail, passwordChangedEmail } from '../mail/notices';
import { verificationEmail, verificationRequired } from './email-verification';
import type { Mail } from '../mail/settings';
import { retireResetLinks } from './password-resets';
import { ALL_SCOPES } from '../../lib/scopes';
import { keptCount } from './counts';

/**
 * A per-user limit, applied by the caller's route (the platform's Rate Limiting binding): resolves when `userId` may
 * go on, throws (429 RATE_LIMITED) when it may not. The services call it once the credential is proved, before work.
 */
export type UserThrottle = (userId: number) => Promise<void>;

export interface UserProfile {
  id: number;
  name: string;
  email: string;
  balanceCents: number;
  createdAt: string;
  emailReceipts: number;
  emailVerified: number;
  /** A reseller's discount on every unit price, 0..90. */
  discountPercent: number;
  /** The referrer's code, or null. */
  referredBy: string | null;
  /** Set while the account is on hold (absent from snapshots stored before holds were shown). */
  heldAt?: string | null;
}

// Emails are unique case-insensitively (COLLATE NOCASE); a concurrent duplicate surfaces as the index violation.
const emailTaken = () => fieldError('email', 'The email has already been taken.');

/**
 * `users.referred_by` of a new account: SQL for the referrer's id, NULL, or 0 for a code nobody has, which the column's
 * CHECK refuses (src/services/referrals/codes.ts builds it; the routes hand it in, so accounts need not know referrals).
 */
export type ReferredBy = SQL;
const unknownReferralCode = () => fieldError('referral_code', 'No user has this referral code.');

/** The creation's constraint failures as the 422s they stand for; anything else as it is. */
function creationError(err: unknown): unknown {
  if (isUniqueViolation(err, 'users.email')) return emailTaken();
  if (isCheckViolation(err, 'referred_by')) return unknownReferralCode();
  return err;
}

const profileOf = (userId: SQL | number) =>
  sql`SELECT id, name, email, balance_cents AS balanceCents, created_at AS createdAt, email_receipts AS emailReceipts,
             email_verified AS emailVerified, discount_percent AS discountPercent, held_at AS heldAt,
             (SELECT r.referral_code FROM users r WHERE r.id = users.referred_by) AS referredBy FROM users WHERE id = ${userId}`;

/**
 * An operator's Idempotency-Key claim on a user creation. Only a hash of an API key is ever stored, so the replay
 * snapshot keeps the new key sealed by `seal` (the route's encryption, under a secret the database does not hold).
 */
export interface UserCreationClaim {
  claim: IdempotencyClaim;
  seal: (apiKey: string) => Promise<string>;
}

/** What a replay of a user creation renders from: the profile as created and its first key, sealed. */
export interface UserCreationSnapshot extends UserProfile {
  sealedApiKey: string;
}

/** Operator creation of a user together with its first API key, in one batch. */
export async function createUser(
  d1: Db,
  actor: Actor,
  input: { name: string; email: string; password: string },
  idempotency?: UserCreationClaim,
  referredBy: ReferredBy = sql`NULL`,
) {
  const now = isoNow();
  const issued = await issueKey();
  const passwordHash = await hashPassword(input.password);
  // The user is found by its first key's hash, generated here: unique, and known before the batch.
  const ownerOfKey = sql`(SELECT user_id FROM api_keys WHERE key_hash = ${issued.keyHash})`;
  const snapshot = async ({ claim, seal }: UserCreationClaim) =>
    recordClaim(
      OPERATOR,
      claim,
      sql`SELECT p.id, json_object('id', p.id, 'name', p.name, 'email', p.email, 'balanceCents', p.balanceCents,
                                   'createdAt', p.createdAt, 'discountPercent', p.discountPercent, 'referredBy', p.referredBy, 'sealedApiKey', ${await seal(issued.key)}) AS snapshot
          FROM (${profileOf(ownerOfKey)}) AS p`,
    );
  try {
    const { reads } = await writeAsActor(d1, actor, {
      writes: [
        sql`INSERT INTO users (name, email, password_hash, balance_cents, created_at, updated_at, referred_by)
            VALUES (${input.name}, ${input.email}, ${passwordHash}, 0, ${now}, ${now}, ${referredBy})`,
        insertKeyUnderLimit(sql`last_insert_rowid()`, 'Default key', issued, now),
        ...(idempotency ? await snapshot(idempotency) : []),
        auditEntry(
          actor,
          {
            action: 'user.created',
            target: sql`'user:' || id`,
            details: sql`json_object('name', name, 'email', email)`,
            from: sql`FROM users WHERE id = ${ownerOfKey}`,
          },
          now,
        ),
      ],
      reads: [profileOf(ownerOfKey)],
      committed: ([user]) => rowsOf(user).length > 0,
    });
    const [user] = rowsOf<UserProfile>(reads[0]);
    return { user, apiKey: issued.key };
  } catch (err) {
    throw creationError(err);
  }
}

/**
 * Self-service sign-up (dashboard): balance 0 and no API key; the user's first session opens in the same batch. With
 * EMAIL_VERIFICATION=required the account starts unverified and its verification email is recorded in the batch.
 */
export async function signUp(
  d1: Db,
  input: { name: string; email: string; password: string },
  session: SessionToken,
  mail?: Mail,
  place?: RequestPlace,
  referredBy: ReferredBy = sql`NULL`,
): Promise<void> {
  const now = isoNow();
  const passwordHash = await hashPassword(input.password);
  // The new account, found by its email and its salted hash (unique to this request): nothing when the INSERT was
  // refused by the blocklist, so no session or email goes to anyone.
  const newUser = sql`(SELECT id FROM users WHERE email = ${input.email} AND password_hash = ${passwordHash})`;
  const verify = verificationRequired(mail) ? await verificationEmail(mail!, newUser, now) : undefined;
  const rules = matchingRulesForEmail(input.email, place);
  try {
    const { reads } = await writeBatch(d1, {
      writes: [
        sql`INSERT INTO users (name, email, password_hash, balance_cents, created_at, updated_at, email_verified, referred_by, signup_ip, signup_country)
            SELECT ${input.name}, ${input.email}, ${passwordHash}, 0, ${now}, ${now}, ${verify ? 0 : 1}, ${referredBy}, ${place?.ip ?? null}, ${place?.country ?? null}
            WHERE NOT EXISTS (${rules})`,
        lastSeenStatement(newUser, place),
        insertSession(newUser, session.tokenHash, now),
        ...(verify?.writes ?? []),
      ],
      reads: [sessionOpened(session.tokenHash), rules, ...(verify?.reads ?? [])],
      committed: ([opened]) => rowsOf(opened).length > 0,
    });
    if (rowsOf(reads[0]).length === 0) refuseIfBlocked(reads[1], place);
    verify?.sent(reads[2]);
  } catch (err) {
    throw creationError(err);
  }
}

/** The caller's profile as a query (a page reads more in the same batch: the profile page's billing details). */
export const profileQuery = (caller: Caller): Query<UserProfile> => ({
  reads: [profileOf(caller.userId)],
  parse: ([user]) => rowsOf<UserProfile>(user)[0],
});

export async function getProfile(d1: Db, caller: Caller): Promise<UserProfile> {
  const [profile] = await queryAs(d1, caller, [profileQuery(caller)]);
  return profile;
}

/** The limits a profile change may meet: email changes, and checks of the current password (shared with changePassword). */
export interface ProfileThrottles {
  emailChange: UserThrottle;
  passwordCheck: UserThrottle;
}

/**
 * Whether the caller's API key is restricted (fewer than all six scopes, a spend limit, an IP list or an expiry): such
 * a key changes the account's email only with the current password. NULL for a caller without a key.
 */
const restrictedKey = (caller: Caller) =>
  caller.keyId
    ? sql`(SELECT scopes <> ${ALL_SCOPES} OR spend_limit_cents IS NOT NULL OR ip_ranges IS NOT NULL OR expires_at IS NOT NULL
           FROM api_keys WHERE id = ${caller.keyId})`
    : sql`NULL`;

/**
 * A new email answers "taken" when another account has it, so email changes are limited per user (`emailChange`,
 * before the write). Changing the email with a restricted API key, or in the dashboard (a session), takes the current
 * password (`current_password`: missing or wrong → 422; its checks limited by `passwordCheck` before any hashing), and
 * the write is guarded on the password hash just verified. The user is known only once a batch has proved the
 * credential: a request that changes the email makes two round trips (prove and compare, then write), one that only
 * renames makes one. A changed email retires the account's reset links in the same batch.
 */
export async function updateProfile(
  d1: Db,
  caller: Caller,
  changes: { name?: string; email?: string; email_receipts?: boolean; current_password?: string },
  throttles: ProfileThrottles,
  mail?: Mail,
  /** Test mode: the sandbox's email is the live account's, read-only (a new address → 422 on `email`). */
  { emailReadOnly = false }: { emailReadOnly?: boolean } = {},
): Promise<UserProfile> {
  let verifiedHash: string | null = null;
  if (changes.email !== undefined) {
    const [current] = await readAs(d1, caller, [
      sql`SELECT email = ${changes.email} COLLATE NOCASE AS same, password_hash AS passwordHash, ${restrictedKey(caller)} AS restricted
          FROM users WHERE id = ${caller.userId}`,
    ]);
    const row = rowsOf<{ same: number; passwordHash: string; restricted: number | null }>(current)[0];
    // The same address again (the dashboard's form always sends it), or in other letter case, asks nothing of others.
    if (row && !row.same) {
      if (emailReadOnly) throw fieldError('email', 'Change your email with a live key.');
      const needsPassword = !caller.keyId || row.restricted === 1;
      if (needsPassword && !changes.current_password) {
        throw fieldError('current_password', caller.keyId ? 'current_password is required to change the email with a restricted API key' : 'current_password is required to change the email');
      }
      await throttles.emailChange(caller.proved!.userId);
      if (needsPassword) {
        await throttles.passwordCheck(caller.proved!.userId);
        if (!(await verifyPassword(changes.current_password!, row.passwordHash))) throw fieldError('current_password', 'The current password is incorrect.');
        verifiedHash = row.passwordHash;
      }
    }
  }
  // An email change meets the blocklist (the account's address and the new one, an unreadable client address).
  const rules = changes.email === undefined ? null : matchingRulesForEmailChange(caller.userId, changes.email, caller.place);
  // With a verified password, every statement acts only while the password is still the one verified; with a new
  // email, only while no rule refuses it (the same address in other letters changes nothing the rules see).
  const guards = [
    ...(verifiedHash === null ? [] : [sql`password_hash = ${verifiedHash}`]),
    ...(rules ? [sql`(email = ${changes.email} COLLATE NOCASE OR NOT EXISTS (${rules}))`] : []),
  ];
  const user = guards.length === 0 ? caller.userId : sql`(SELECT id FROM users WHERE id = ${caller.userId} AND ${sql.join(guards, sql` AND `)})`;
  const now = isoNow();
  const assignments = [
    ...(changes.name === undefined ? [] : [sql`name = ${changes.name}`]),
    ...(changes.email === undefined ? [] : [sql`email = ${changes.email}`]),
    ...(changes.email_receipts === undefined ? [] : [sql`email_receipts = ${changes.email_receipts ? 1 : 0}`]),
    sql`updated_at = ${now}`,
  ];
  const notice = changes.email === undefined ? undefined : emailChangedEmail(mail, user, changes.email, now);
  // With verification required, a new address is unverified until its own link is opened: links sent before the
  // change no longer verify, even one for an address the account comes back to (A → B → A).
  const verify = changes.email !== undefined && verificationRequired(mail) ? await verificationEmail(mail!, user, now) : undefined;
  const changed = sql`EXISTS (SELECT 1 FROM emails WHERE id = ${notice?.ids[0] ?? null})`;
  const reverify = verify
    ? [
        sql`UPDATE users SET email_verified = 0 WHERE id = ${caller.userId} AND email = ${changes.email} AND updated_at = ${now} AND ${changed}`,
        sql`UPDATE email_verifications SET expires_at = ${now} WHERE user_id = ${caller.userId} AND used_at IS NULL AND expires_at > ${now} AND ${changed}`,
      ]
    : [];
  // Before the UPDATE, while the old address can still be compared (a refused change rolls it back with the batch).
  const retire =
    changes.email === undefined
      ? []
      : [retireResetLinks(user, now, sql`EXISTS (SELECT 1 FROM users WHERE id = ${user} AND NOT (email = ${changes.email} COLLATE NOCASE))`)];
  try {
    const [profile, updated, ...emailResults] = await writeAs(d1, caller, {
      writes: [
        ...(notice?.writes ?? []),
        ...retire,
        sql`UPDATE users SET ${sql.join(assignments, sql`, `)} WHERE id = ${user}`,
        ...reverify,
        ...(verify?.writes ?? []),
      ],
      reads: [
        profileOf(caller.userId),
        sql`SELECT 1 FROM users WHERE id = ${caller.userId} AND updated_at = ${now}`,
        ...(notice?.reads ?? []),
        ...(verify?.reads ?? []),
        ...(rules ? [rules] : []),
      ],
      committed: ([, row]) => rowsOf(row).length > 0,
    });
    if (rules && rowsOf(updated).length === 0) refuseIfBlocked(emailResults.at(-1), caller.place);
    if (verifiedHash !== null && rowsOf(updated).length === 0) throw fieldError('current_password', 'The password was changed concurrently; try again.');
    notice?.sent(emailResults[0]);
    verify?.sent(emailResults[notice?.reads.length ?? 0]);
    return rowsOf<UserProfile>(profile)[0];
  } catch (err) {
    if (isUniqueViolation(err, 'users.email')) throw emailTaken();
    throw err;
  }
}

/**
 * Two round trips, an exception to one per request: the stored hash is read and verified (PBKDF2 runs in the
 * worker, not in SQL), then replaced by a write guarded on the hash just verified, so a concurrent change is not
 * silently overwritten. The same batch ends the user's dashboard sessions: all of them (the API), or all but the one
 * whose token hash is `keepSession` (the dashboard keeps the session that made the change). Between the two, the
 * check of the current password is limited per user (`throttle`): a leaked key or cookie is no fast password oracle.
 */
export async function changePassword(
  d1: Db,
  caller: Caller,
  change: { current: string; next: string; keepSession?: string },
  throttle: UserThrottle,
  mail?: Mail,
): Promise<void> {
  const { current, next, keepSession = null } = change;
  const [stored] = await readAs(d1, caller, [sql`SELECT password_hash AS passwordHash FROM users WHERE id = ${caller.userId}`]);
  const [user] = rowsOf<{ passwordHash: string }>(stored);
  await throttle(caller.proved!.userId);
  if (!(await verifyPassword(current, user.passwordHash))) {
    throw fieldError('current_password', 'The current password is incorrect.');
  }
  const nextHash = await hashPassword(next);
  const now = isoNow();
  const notice = passwordChangedEmail(mail, nextHash, now);
  const [changed, noticeResult] = await writeAs(d1, caller, {
    writes: [
      sql`UPDATE users SET password_hash = ${nextHash}, updated_at = ${now} WHERE id = ${caller.userId} AND password_hash = ${user.passwordHash}`,
      endSessionsOnPasswordChange(caller.userId, nextHash, keepSession),
      retireResetLinks(caller.userId, now, sql`EXISTS (SELECT 1 FROM users WHERE id = ${caller.userId} AND password_hash = ${nextHash})`),
      ...notice.writes,
    ],
    // The new hash is salted afresh: finding it means this very request wrote it.
    reads: [sql`SELECT 1 FROM users WHERE id = ${caller.userId} AND password_hash = ${nextHash}`, ...notice.reads],
    committed: ([row]) => rowsOf(row).length > 0,
  });
  if (rowsOf(changed).length === 0) throw fieldError('current_password', 'The password was changed concurrently; try again.');
  notice.sent(noticeResult);
}

const RECENT = 5;

export async function getDashboard(d1: Db, caller: Caller) {
  const [user, stats, recentOrders, recentTransactions] = await readAs(d1, caller, [
    sql`SELECT balance_cents AS balanceCents, held_at IS NOT NULL AS onHold FROM users WHERE id = ${caller.userId}`,
    // Kept, not counted: one row however long the history.
    sql`SELECT ${keptCount(caller.userId, 'orders_count')} AS totalOrders, ${keptCount(caller.userId, 'spent_cents')} AS totalSpentCents,
               ${keptCount(caller.userId, 'pending_orders')} AS pendingOrders`,
    sql`SELECT ${columnsOf(orders)} FROM orders WHERE user_id = ${caller.userId} ORDER BY created_at DESC, id DESC LIMIT ${RECENT}`,
    sql`SELECT ${columnsOf(walletTransactions)} FROM wallet_transactions WHERE user_id = ${caller.userId}
        ORDER BY created_at DESC, id DESC LIMIT ${RECENT}`,
  ]);
  const [balance] = rowsOf<{ balanceCents: number; onHold: number }>(user);
  const [totals] = rowsOf<{ totalOrders: number; totalSpentCents: number; pendingOrders: number }>(stats);
  return {
    balanceCents: balance.balanceCents,
    onHold: balance.onHold === 1,
    ...totals,
    recentOrders: rowsOf<OrderRow>(recentOrders),
    recentTransactions: rowsOf<TransactionRow>(recentTransactions),
  };
}
