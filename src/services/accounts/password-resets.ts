import { sql, type SQL } from 'drizzle-orm';
import { rowsOf, toStatement } from '../../db/batch';
import type { Db } from '../../db/client';
import { writeBatch } from '../../db/d1';
import { hashPassword, sha256Hex } from '../../lib/crypto';
import { notFound } from '../../lib/errors';
import { isoNow } from '../../lib/time';
import { auditEntry, writeAsActor, type Actor } from './audit-log';
import { OPERATOR, recordClaim, type IdempotencyClaim } from '../idempotency';
import { passwordChangedEmail } from '../mail/notices';
import type { Mail } from '../mail/settings';
import { endSessionsOnPasswordChange, newSessionToken, SESSION_TOKEN_SHAPE } from './sessions';

// Password reset links an operator makes for a user (no email is sent yet): 256 random bits in the link, only their
// SHA-256 stored; one use, within RESET_TTL_MS; using one sets the password and ends every session of the user.
// Every link of a user is retired (`retireResetLinks`) in the batch of any change that should end them: one of them
// used, the password changed by any path, the email changed, the account disabled.

export const RESET_TTL_MS = 60 * 60_000;
export const RESET_PATH = '/dashboard/reset-password/';

export interface ResetLink {
  url: string;
  expiresAt: string;
}

/** What a replay of a link's creation renders from: the link sealed by the route (the database never holds it). */
export interface ResetLinkSnapshot {
  sealedUrl: string;
  expiresAt: string;
}

/**
 * A new link for `userId` (404 for an unknown user), audited in the same batch (the link itself never is). Under an
 * operator's Idempotency-Key the record keeps the link sealed by `seal`, as a user creation keeps its first key.
 */
export async function createPasswordReset(
  d1: Db,
  actor: Actor,
  userId: number,
  origin: string,
  idempotency?: { claim: IdempotencyClaim; seal: (url: string) => Promise<string> },
): Promise<ResetLink> {
  const now = isoNow();
  const expiresAt = isoNow(Date.parse(now) + RESET_TTL_MS);
  // The same 256-bit, URL-safe shape as a session token.
  const { token, tokenHash } = await newSessionToken();
  const url = `${origin}${RESET_PATH}${token}`;
  const snapshot = async ({ claim, seal }: NonNullable<typeof idempotency>) =>
    recordClaim(
      OPERATOR,
      claim,
      sql`SELECT id, json_object('sealedUrl', ${await seal(url)}, 'expiresAt', expires_at) AS snapshot FROM password_resets WHERE token_hash = ${tokenHash}`,
    );
  const { reads } = await writeAsActor(d1, actor, {
    writes: [
      sql`INSERT INTO password_resets (user_id, token_hash, created_at, expires_at) SELECT id, ${tokenHash}, ${now}, ${expiresAt} FROM users WHERE id = ${userId}`,
      ...(idempotency ? await snapshot(idempotency) : []),
      auditEntry(
        actor,
        {
          action: 'password_reset.created',
          target: sql`'user:' || user_id`,
          details: sql`json_object('expires_at', expires_at)`,
          from: sql`FROM password_resets WHERE token_hash = ${tokenHash}`,
        },
        now,
      ),
    ],
    reads: [sql`SELECT 1 FROM password_resets WHERE token_hash = ${tokenHash}`],
    committed: ([row]) => rowsOf(row).length > 0,
  });
  if (rowsOf(reads[0]).length === 0) throw notFound('User');
  return { url, expiresAt };
}

/**
 * The statement that retires every still-usable reset link of `userId` (SQL): each expires now, so its page is a 404
 * and it changes nothing. `when` is the change's own condition (only when this batch really changed the password...).
 */
export const retireResetLinks = (userId: SQL, now: string, when: SQL = sql`1`): SQL =>
  sql`UPDATE password_resets SET expires_at = ${now} WHERE user_id = ${userId} AND used_at IS NULL AND expires_at > ${now} AND ${when}`;

const usable = (tokenHash: string, now: string) => sql`token_hash = ${tokenHash} AND used_at IS NULL AND expires_at > ${now}`;

/** Whether a link can still be used (its page): one read. */
export async function resetLinkUsable(d1: Db, token: string): Promise<boolean> {
  if (!SESSION_TOKEN_SHAPE.test(token)) return false;
  const row = await toStatement(d1, sql`SELECT 1 AS ok FROM password_resets WHERE ${usable(await sha256Hex(token), isoNow())}`).first();
  return row !== null;
}

/**
 * Use a link: one batch sets the password (only while the link is usable), ends every session of the user, marks the
 * link used and retires the user's other links. An unknown, used or expired link changes nothing: 404.
 */
export async function resetPassword(d1: Db, token: string, password: string, mail?: Mail): Promise<void> {
  if (!SESSION_TOKEN_SHAPE.test(token)) throw notFound('Page');
  const tokenHash = await sha256Hex(token);
  const now = isoNow();
  const passwordHash = await hashPassword(password);
  const owner = sql`(SELECT user_id FROM password_resets WHERE ${usable(tokenHash, now)})`;
  const notice = passwordChangedEmail(mail, passwordHash, now);
  const { reads } = await writeBatch(d1, {
    writes: [
      sql`UPDATE users SET password_hash = ${passwordHash}, updated_at = ${now} WHERE id = ${owner}`,
      endSessionsOnPasswordChange(owner, passwordHash, null),
      sql`UPDATE password_resets SET used_at = ${now} WHERE ${usable(tokenHash, now)}
            AND EXISTS (SELECT 1 FROM users WHERE id = password_resets.user_id AND password_hash = ${passwordHash})`,
      retireResetLinks(sql`(SELECT user_id FROM password_resets WHERE token_hash = ${tokenHash} AND used_at = ${now})`, now),
      ...notice.writes,
    ],
    // The new hash is salted afresh: finding it means this very request wrote it.
    reads: [
      sql`SELECT 1 FROM users WHERE id = (SELECT user_id FROM password_resets WHERE token_hash = ${tokenHash}) AND password_hash = ${passwordHash}`,
      ...notice.reads,
    ],
    committed: ([row]) => rowsOf(row).length > 0,
  });
  if (rowsOf(reads[0]).length === 0) throw notFound('Page');
  notice.sent(reads[1]);
}
