import { sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { writeBatch } from '../../db/d1';
import { rowsOf } from '../../db/batch';
import { sha256Hex } from '../../lib/crypto';
import { addMinutes, isoNow } from '../../lib/time';
import { passwordResetEmail } from '../mail/notices';
import type { Mail } from '../mail/settings';
import { RESET_PATH, RESET_TTL_MS } from './password-resets';
import { newSessionToken } from './sessions';

// "Forgot password?": a reset link by email, of the same kind an operator makes (one use, 60 minutes, ends every
// session). The answer never says whether the address has an account, and neither does its time: every request does
// the same work, a token, the hash of the address, and one batch that writes the address's request row (its sliding
// log of the requests of the last hour let through, at most RESETS_PER_HOUR) whether or not an account has the
// address, and a link and its email, which are deleted again in that batch when they are a decoy (`decoyLink`). A link and its email are written only for an existing, enabled account whose row let this request through
// (more are silently not sent). After the answer, one queue message either way: the email's, or, when none was
// written, one naming the email that was not, with a link of the same length (the consumer finds no such email and
// drops it).

export const FORGOT_PASSWORD_ANSWER = 'If an account exists for that address, a reset link is on its way.';
export const RESETS_PER_HOUR = 3;
/** Rows of addresses nobody asked for in an hour that each request deletes: the table holds only the last hour. */
const STALE_ROWS_PER_REQUEST = 10;

/** Lower case as SQLite's NOCASE folds it (ASCII only), so the row is the address's whatever its letter case. */
const foldCase = (email: string) => email.replace(/[A-Z]/g, (c) => c.toLowerCase());

/**
 * The same rows for an address without a link as for one with: when no link was written (no such account, a disabled
 * one, or past its hourly limit), a decoy link (expired as it is made, so it could open nothing) and its email are
 * written and deleted again in the same batch, so both kinds of request write and delete the same rows and cost the
 * same (docs/security.md has the measurements). The decoy names the first account only because a link must name one;
 * nothing of it outlives the batch, and nothing is sent for it.
 */
function decoyLink(tokenHash: string, now: string) {
  const decoy = sql`SELECT 1 FROM password_resets WHERE token_hash = ${tokenHash} AND expires_at = created_at`;
  return {
    writes: [
      sql`INSERT INTO password_resets (user_id, token_hash, created_at, expires_at)
          SELECT min(id), ${tokenHash}, ${now}, ${now} FROM users
          HAVING min(id) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM password_resets WHERE token_hash = ${tokenHash})`,
    ],
    deletes: (emailIds: string[]) => [
      sql`DELETE FROM emails WHERE id IN (SELECT value FROM json_each(${JSON.stringify(emailIds)})) AND EXISTS (${decoy})`,
      sql`DELETE FROM password_resets WHERE token_hash = ${tokenHash} AND expires_at = created_at`,
    ],
  };
}

export async function requestPasswordReset(d1: Db, email: string, mail: Mail | undefined): Promise<void> {
  // Mail off: there is no way to deliver a link (the page tells the user to ask the operator).
  if (!mail) return;
  const now = isoNow();
  const hourAgo = addMinutes(now, -60);
  const { token, tokenHash } = await newSessionToken();
  const addressHash = await sha256Hex(foldCase(email));
  // This request in its address's log: the time (so the log can be cut at an hour) and a marker of its own.
  const entry = `${now} ${tokenHash.slice(0, 16)}`;
  const letThrough = sql`EXISTS (SELECT 1 FROM password_reset_requests r, json_each(r.recent) e WHERE r.address_hash = ${addressHash} AND e.value = ${entry})`;
  const link = `${mail.origin}${RESET_PATH}${token}`;
  const notice = passwordResetEmail(mail, tokenHash, link, now);
  const { reads } = await writeBatch(d1, {
    writes: [
      sql`DELETE FROM password_reset_requests WHERE address_hash IN (
            SELECT address_hash FROM password_reset_requests WHERE updated_at <= ${hourAgo} ORDER BY updated_at LIMIT ${STALE_ROWS_PER_REQUEST})`,
      sql`INSERT INTO password_reset_requests (address_hash, recent, updated_at) VALUES (${addressHash}, json_array(${entry}), ${now})
          ON CONFLICT (address_hash) DO UPDATE SET
            recent = CASE WHEN (SELECT count(*) FROM json_each(recent) WHERE value > ${hourAgo}) < ${RESETS_PER_HOUR}
                          THEN (SELECT json_group_array(value) FROM (SELECT value FROM json_each(recent) WHERE value > ${hourAgo} UNION ALL SELECT ${entry}))
                          ELSE recent END,
            updated_at = ${now}`,
      sql`INSERT INTO password_resets (user_id, token_hash, created_at, expires_at)
          SELECT u.id, ${tokenHash}, ${now}, ${isoNow(Date.parse(now) + RESET_TTL_MS)} FROM users u
          WHERE u.email = ${email} COLLATE NOCASE AND u.disabled_at IS NULL AND ${letThrough}`,
      ...decoyLink(tokenHash, now).writes,
      ...notice.writes,
      ...decoyLink(tokenHash, now).deletes(notice.ids),
    ],
    reads: [...notice.reads, sql`SELECT 1 FROM password_reset_requests WHERE address_hash = ${addressHash} AND updated_at = ${now}`],
    // The address's row, written by every request, says whether the batch committed (running it twice would count
    // the request twice).
    committed: ([, row]) => rowsOf(row).length > 0,
  });
  if (rowsOf(reads[0]).length > 0) notice.sent(reads[0]);
  // The same message as a real address's, link included (its token has no row: it opens nothing), so the enqueue and
  // the message are the same size either way. Without PUBLIC_BASE_URL a real address's email is recorded failed and
  // nothing is enqueued; the unknown address's message then carries no link.
  else mail.send(notice.ids.map((id) => (mail.origin === null ? { email_id: id } : { email_id: id, link })));
}
