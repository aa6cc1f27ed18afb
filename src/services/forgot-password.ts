import { sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import { writeBatch } from '../db/d1';
import { rowsOf } from '../db/batch';
import { addMinutes, isoNow } from '../lib/time';
import { passwordResetEmail } from './email-notices';
import type { Mail } from './mail';
import { RESET_PATH, RESET_TTL_MS } from './password-resets';
import { newSessionToken } from './sessions';

// "Forgot password?": a reset link by email, of the same kind an operator makes (one use, 60 minutes, ends every
// session). The answer never says whether the address has an account, so the work is the same either way: a token
// is made and one batch runs; it writes a link and its email only for an existing, enabled account that has had fewer
// than RESETS_PER_HOUR reset emails in the last hour (more are silently not sent).

export const FORGOT_PASSWORD_ANSWER = 'If an account exists for that address, a reset link is on its way.';
export const RESETS_PER_HOUR = 3;

export async function requestPasswordReset(d1: Db, email: string, mail: Mail | undefined): Promise<void> {
  // Mail off: there is no way to deliver a link (the page tells the user to ask the operator).
  if (!mail) return;
  const now = isoNow();
  const { token, tokenHash } = await newSessionToken();
  const notice = passwordResetEmail(mail, tokenHash, `${mail.origin}${RESET_PATH}${token}`, now);
  const recentResets = sql`(SELECT count(*) FROM emails e
    WHERE e.to_address = u.email COLLATE NOCASE AND e.template = 'password_reset' AND e.created_at > ${addMinutes(now, -60)})`;
  const { reads } = await writeBatch(d1, {
    writes: [
      sql`INSERT INTO password_resets (user_id, token_hash, created_at, expires_at)
          SELECT u.id, ${tokenHash}, ${now}, ${isoNow(Date.parse(now) + RESET_TTL_MS)} FROM users u
          WHERE u.email = ${email} COLLATE NOCASE AND u.disabled_at IS NULL AND ${recentResets} < ${RESETS_PER_HOUR}`,
      ...notice.writes,
    ],
    reads: notice.reads,
    // Nothing written (no account, or over the limit) and a lost commit look alike: running it again is harmless.
    committed: ([recorded]) => rowsOf(recorded).length > 0,
  });
  notice.sent(reads[0]);
}
