import { sql, type SQL } from 'drizzle-orm';
import { rowsOf } from '../../db/batch';
import type { Db } from '../../db/client';
import { writeBatch } from '../../db/d1';
import { sha256Hex } from '../../lib/crypto';
import { ApiError } from '../../lib/errors';
import { addMinutes, isoNow } from '../../lib/time';
import { writeAs, type Caller } from '../caller';
import { newEmailId, type EmailRecord } from '../mail/outbox';
import { plan, type EmailPlan } from '../mail/notices';
import { SUBJECTS } from '../mail/templates';
import type { Mail } from '../mail/settings';
import { newSessionToken, SESSION_TOKEN_SHAPE } from './sessions';

// EMAIL_VERIFICATION=required: an account made by sign-up (or whose email changed) is unverified until the link sent
// to its address is opened (24 hours, one use). Until then its deposit and purchase batches create nothing, refused
// inside the batch (still one round trip) and explained by a read of the same batch: 403 EMAIL_NOT_VERIFIED.

export const VERIFICATION_PATH = '/dashboard/verify-email/';
const VERIFICATION_TTL_MINUTES = 24 * 60;
export const VERIFICATIONS_PER_HOUR = 3;

export const verificationRequired = (mail: Mail | undefined) => mail?.settings.verificationRequired === true;

/** What a deposit or purchase batch adds: a condition on its creating statement, and the read that explains it. */
export interface VerificationGate {
  /** SQL true when the user may deposit and buy. */
  allows: SQL;
  reads: SQL[];
  /** Throws EMAIL_NOT_VERIFIED when the batch's read says the user is unverified (the batch created nothing). */
  check: (result: D1Result | undefined) => void;
}

const OPEN_GATE: VerificationGate = { allows: sql`1`, reads: [], check: () => {} };

export function verificationGate(mail: Mail | undefined, userId: SQL): VerificationGate {
  if (!verificationRequired(mail)) return OPEN_GATE;
  return {
    allows: sql`EXISTS (SELECT 1 FROM users WHERE id = ${userId} AND email_verified = 1)`,
    reads: [sql`SELECT email_verified AS emailVerified FROM users WHERE id = ${userId}`],
    check: (result) => {
      if (rowsOf<{ emailVerified: number }>(result)[0]?.emailVerified === 0) {
        throw new ApiError('EMAIL_NOT_VERIFIED', 'Confirm your email address first: open the link we emailed you, or send a new one from your profile.');
      }
    },
  };
}

/**
 * A new link for the user `userId` selects (and an email to their current address), written in the caller's batch
 * after the account (or its new address) exists; at most VERIFICATIONS_PER_HOUR an hour per address.
 */
export async function verificationEmail(mail: Mail, userId: SQL, now: string): Promise<EmailPlan> {
  const { token, tokenHash } = await newSessionToken();
  const recent = sql`(SELECT count(*) FROM emails e
    WHERE e.to_address = u.email COLLATE NOCASE AND e.template = 'email_verification' AND e.created_at > ${addMinutes(now, -60)})`;
  const link: EmailRecord & { link: string } = {
    id: newEmailId(),
    template: 'email_verification',
    subject: SUBJECTS.email_verification(mail.settings.shopName),
    from: sql`FROM email_verifications v JOIN users u ON u.id = v.user_id WHERE v.token_hash = ${tokenHash}`,
    to: sql`u.email`,
    userId: sql`u.id`,
    data: sql`json_object('name', u.name)`,
    carriesLink: true,
    link: `${mail.origin}${VERIFICATION_PATH}${token}`,
  };
  const email = plan(mail, now, () => [link]);
  return {
    ...email,
    writes: [
      sql`INSERT INTO email_verifications (user_id, email, token_hash, created_at, expires_at)
          SELECT u.id, u.email, ${tokenHash}, ${now}, ${addMinutes(now, VERIFICATION_TTL_MINUTES)} FROM users u
          WHERE u.id = ${userId} AND u.email_verified = 0 AND ${recent} < ${VERIFICATIONS_PER_HOUR}`,
      ...email.writes,
    ],
  };
}

/** "Resend verification email": a new link while unverified (3 an hour; more are silently not sent). */
export async function resendVerification(d1: Db, caller: Caller, mail: Mail | undefined): Promise<void> {
  if (!verificationRequired(mail)) return;
  const email = await verificationEmail(mail!, caller.userId, isoNow());
  const [recorded] = await writeAs(d1, caller, { writes: email.writes, reads: email.reads, committed: () => true });
  email.sent(recorded);
}

/**
 * Open a link: one batch marks the user verified when the link is unused, not expired and for the address the
 * account still has, and uses the link. Whether it worked: false for anything else.
 */
export async function verifyEmail(d1: Db, token: string): Promise<boolean> {
  if (!SESSION_TOKEN_SHAPE.test(token)) return false;
  const tokenHash = await sha256Hex(token);
  const now = isoNow();
  const usable = sql`token_hash = ${tokenHash} AND used_at IS NULL AND expires_at > ${now}`;
  const { reads } = await writeBatch(d1, {
    writes: [
      sql`UPDATE users SET email_verified = 1
          WHERE id = (SELECT user_id FROM email_verifications WHERE ${usable})
            AND email = (SELECT email FROM email_verifications WHERE ${usable})`,
      sql`UPDATE email_verifications SET used_at = ${now} WHERE ${usable}
            AND EXISTS (SELECT 1 FROM users u WHERE u.id = email_verifications.user_id AND u.email = email_verifications.email AND u.email_verified = 1)`,
    ],
    reads: [sql`SELECT 1 FROM email_verifications WHERE token_hash = ${tokenHash} AND used_at = ${now}`],
    committed: ([used]) => rowsOf(used).length > 0,
  });
  return rowsOf(reads[0]).length > 0;
}
