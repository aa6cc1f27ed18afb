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
// address. A link and its email are written only for an existing, enabled account whose row let this request through
// (more are silently not sent). After the answer, one queue message either way: the email's, or, when none was
// written, one naming the email that was not (the consumer finds no such email and drops it).

export const FORGOT_PASSWORD_ANSWER = 'If an account exists for that address, a reset link is on its way.';
export const RESETS_PER_HOUR = 3;
/** Rows of addresses nobody asked for in an hour that each request deletes: the table holds only the last hour. */
const STALE_ROWS_PER_REQUEST = 10;

/** Lower case as SQLite's NOCASE folds it (ASCII only), so the row is the address's whatever its letter case. */
const foldCase = (email: string) => email.replace(/[A-Z]/g, (c) => c.toLowerCase());

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
  const notice = passwordResetEmail(mail, tokenHash, `${mail.origin}${RESET_PATH}${token}`, now);
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
      ...notice.writes,
    ],
    reads: [...notice.reads, sql`SELECT 1 FROM password_reset_requests WHERE address_hash = ${addressHash} AND updated_at = ${now}`],
    // The address's row, written by every request, says whether the batch committed (running it twice would count
    // the request twice).
    committed: ([, row]) => rowsOf(row).length > 0,
  });
  if (rowsOf(reads[0]).length > 0) notice.sent(reads[0]);
  else mail.send(notice.ids.map((id) => ({ email_id: id })));
}
