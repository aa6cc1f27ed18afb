import { sql, type SQL } from 'drizzle-orm';
import { rowsOf, toStatement } from '../../db/batch';
import { addressHex } from '../../lib/ip';
import type { RequestPlace } from '../../lib/place';
import type { Db } from '../../db/client';
import { writeBatch } from '../../db/d1';
import { decoyPasswordHash, sha256Hex, verifyPassword } from '../../lib/crypto';
import { isoNow } from '../../lib/time';
import type { Caller } from '../caller';

// Dashboard sessions: the browser holds 256 random bits, the table only their SHA-256 (a fast hash is enough for a
// secret that long). A session ends after SESSION_IDLE_MS without use, SESSION_ABSOLUTE_MS after sign-in at the
// latest, at sign-out, and when its user's password changes.

export const SESSION_IDLE_MS = 7 * 24 * 3_600_000;
/** An operator's session ends after an hour without use (the console moves money). */
export const OPERATOR_IDLE_MS = 60 * 60_000;
export const SESSION_ABSOLUTE_MS = 30 * 24 * 3_600_000;
// The idle expiry slides forward at most once a minute per session, so a signed-in page is not a write per request.
const REFRESH_RESOLUTION_MS = 60_000;
export const SESSION_TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

export interface SessionToken {
  /** Goes to the browser only (the cookie). */
  token: string;
  tokenHash: string;
}

export async function newSessionToken(): Promise<SessionToken> {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  const token = btoa(String.fromCharCode(...bytes)).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
  return { token, tokenHash: await sha256Hex(token) };
}

const later = (now: string, ms: number) => new Date(Date.parse(now) + ms).toISOString();

const live = (tokenHash: string, now: string) => sql`token_hash = ${tokenHash} AND idle_expires_at > ${now} AND expires_at > ${now}`;

/**
 * The session's user may act: not disabled, and an operator's session was used within the last hour. last_used_at
 * moves at most once a REFRESH_RESOLUTION_MS, so the hour counts from at most that long before the last use.
 */
const userMayAct = (now: string) => sql`
  EXISTS (SELECT 1 FROM users u WHERE u.id = sessions.user_id AND u.disabled_at IS NULL
            AND (u.role <> 'operator' OR sessions.last_used_at > ${isoNow(Date.parse(now) - OPERATOR_IDLE_MS - REFRESH_RESOLUTION_MS)}))`;

/**
 * A dashboard session as the caller of a page's batch, exactly like an API key (src/services/caller.ts): the proof
 * leads the batch, the user id is a subquery on the token's hash, NULL once the session expired or ended. The proof
 * also says the user's role, so the console's check travels in the same batch.
 */
export function sessionCaller(tokenHash: string, now = isoNow()): Caller {
  const valid = sql`${live(tokenHash, now)} AND ${userMayAct(now)}`;
  const role = sql`(SELECT role FROM users WHERE users.id = sessions.user_id)`;
  return {
    userId: sql`(SELECT user_id FROM sessions WHERE ${valid})`,
    // An operator's proof also counts the claims waiting, for the console's nav (on claims_status_created).
    proof: sql`SELECT user_id AS userId, id AS credentialId, last_used_at AS lastUsedAt, ${role} AS role,
                      CASE WHEN ${role} = 'operator' THEN (SELECT count(*) FROM claims WHERE status = 'open') END AS openClaims
               FROM sessions WHERE ${valid}`,
  };
}

/** How often an API key's use refreshes where its user was last seen (the same address is written at most this often). */
const SEEN_RESOLUTION_MS = 60_000;

/**
 * Where a user was last seen signed in (a dashboard sign-in or an API key's use): the client address (and its 32 hex
 * digits, for an ip rule's preview), Cloudflare's country and the time. Written at most once a minute from the same
 * address. `userId` is SQL (a guarded id: NULL writes nothing).
 */
export function lastSeenStatement(userId: SQL | number, place: RequestPlace | undefined, nowMs = Date.now()): SQL {
  const ip = place?.ip ?? null;
  const now = isoNow(nowMs);
  return sql`UPDATE users SET last_seen_ip = ${ip}, last_seen_ip_hex = ${ip === null ? null : addressHex(ip)}, last_seen_country = ${place?.country ?? null},
                              last_seen_at = ${now}
             WHERE id = ${userId} AND (last_seen_at IS NULL OR last_seen_at <= ${isoNow(nowMs - SEEN_RESOLUTION_MS)} OR last_seen_ip IS NOT ${ip})`;
}


/**
 * The INSERT that opens a session for `owner`, a scalar SQL expression that is NULL when nobody may sign in (a user
 * id guarded on the password hash just verified, or a brand-new user found by email within its creation batch).
 */
export function insertSession(owner: SQL, tokenHash: string, now: string): SQL {
  return sql`
    INSERT INTO sessions (user_id, token_hash, created_at, last_used_at, idle_expires_at, expires_at)
    SELECT owner.id, ${tokenHash}, ${now}, ${now}, ${later(now, SESSION_IDLE_MS)}, ${later(now, SESSION_ABSOLUTE_MS)}
    FROM (SELECT ${owner} AS id) AS owner WHERE owner.id IS NOT NULL`;
}

/** Reads whether a session was opened: the token is random, so its row exists only if this very request wrote it. */
export const sessionOpened = (tokenHash: string) => sql`SELECT 1 FROM sessions WHERE token_hash = ${tokenHash}`;

/**
 * Email and password to a new session, or null. A wrong password and an unknown email take the same path: one read,
 * one PBKDF2 (against a decoy hash when there is no such user), the same null.
 */
/** A new session, and whether its user is an operator (who lands on the console). */
export async function signIn(d1: Db, email: string, password: string, place?: RequestPlace): Promise<(SessionToken & { operator: boolean }) | null> {
  // A disabled user takes the unknown email's path: refused with the same message, after the same work.
  const user = await toStatement(d1, sql`SELECT id, password_hash AS passwordHash, role FROM users WHERE email = ${email} AND disabled_at IS NULL`).first<{
    id: number;
    passwordHash: string;
    role: string;
  }>();
  const matches = await verifyPassword(password, user?.passwordHash ?? decoyPasswordHash());
  if (!user || !matches) return null;
  const session = await newSessionToken();
  // Guarded on the hash just verified: a password changed in between opens no session with the old one.
  const owner = sql`(SELECT id FROM users WHERE id = ${user.id} AND password_hash = ${user.passwordHash} AND disabled_at IS NULL)`;
  const { reads } = await writeBatch(d1, {
    writes: [insertSession(owner, session.tokenHash, isoNow()), lastSeenStatement(sql`(SELECT user_id FROM sessions WHERE token_hash = ${session.tokenHash})`, place)],
    reads: [sessionOpened(session.tokenHash)],
    committed: ([opened]) => rowsOf(opened).length > 0,
  });
  return rowsOf(reads[0]).length > 0 ? { ...session, operator: user.role === 'operator' } : null;
}

export async function endSession(d1: Db, token: string): Promise<void> {
  if (!SESSION_TOKEN_SHAPE.test(token)) return;
  const tokenHash = await sha256Hex(token);
  await writeBatch(d1, {
    writes: [sql`DELETE FROM sessions WHERE token_hash = ${tokenHash}`],
    reads: [sessionOpened(tokenHash)],
    committed: ([row]) => rowsOf(row).length === 0,
  });
}

/**
 * Appended to a password change's batch: ends the user's sessions (all of them, or all but the one whose token hash
 * is `keep`), only when the change happened, i.e. when the new hash (random salt: unique) is in place.
 */
export function endSessionsOnPasswordChange(userId: SQL, newPasswordHash: string, keep: string | null): SQL {
  return sql`
    DELETE FROM sessions WHERE user_id = ${userId} AND token_hash IS NOT ${keep}
      AND EXISTS (SELECT 1 FROM users WHERE id = ${userId} AND password_hash = ${newPasswordHash})`;
}

/**
 * After a page the session authenticated: slide its idle expiry (never past the absolute one) when it was last used
 * over a minute ago.
 */
export function touchSession(d1: Db, tokenHash: string, lastUsedAt: string | null, nowMs = Date.now()): Promise<unknown> | null {
  if (lastUsedAt !== null && Date.parse(lastUsedAt) > nowMs - REFRESH_RESOLUTION_MS) return null;
  const now = isoNow(nowMs);
  return toStatement(
    d1,
    sql`UPDATE sessions SET last_used_at = ${now}, idle_expires_at = min(${later(now, SESSION_IDLE_MS)}, expires_at)
        WHERE ${live(tokenHash, now)} AND last_used_at <= ${isoNow(nowMs - REFRESH_RESOLUTION_MS)}`,
  ).run();
}

/** Scheduled job: forget ended sessions (the idle expiry is never after the absolute one), a bounded batch per run. */
export async function deleteExpiredSessions(d1: Db, now: string, limit: number): Promise<number> {
  const result = await toStatement(
    d1,
    sql`DELETE FROM sessions WHERE id IN (SELECT id FROM sessions WHERE idle_expires_at <= ${now} ORDER BY idle_expires_at LIMIT ${limit})`,
  ).run();
  return result.meta.changes;
}
