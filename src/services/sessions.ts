import { sql, type SQL } from 'drizzle-orm';
import { changesOf, runBatch, toStatement } from '../db/batch';
import type { Db } from '../db/client';
import { decoyPasswordHash, sha256Hex, verifyPassword } from '../lib/crypto';
import { isoNow } from '../lib/time';

// Dashboard sessions: the browser holds 256 random bits, the table only their SHA-256 (a fast hash is enough for a
// secret that long). A session ends after SESSION_IDLE_MS without use, SESSION_ABSOLUTE_MS after sign-in at the
// latest, at sign-out, and when its user's password changes.

export const SESSION_IDLE_MS = 7 * 24 * 3_600_000;
export const SESSION_ABSOLUTE_MS = 30 * 24 * 3_600_000;
// The idle expiry slides forward at most once a minute per session, so a signed-in page is not a write per request.
const REFRESH_RESOLUTION_MS = 60_000;
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

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

/**
 * The INSERT that opens a session for `owner`, a scalar SQL expression that is NULL when nobody may sign in (a user
 * id guarded on the password hash just verified, or a brand-new user found by email within its creation batch).
 */
export function insertSession(owner: SQL, tokenHash: string, now: string): SQL {
  return sql`
    INSERT INTO sessions (user_id, token_hash, created_at, idle_expires_at, expires_at)
    SELECT owner.id, ${tokenHash}, ${now}, ${later(now, SESSION_IDLE_MS)}, ${later(now, SESSION_ABSOLUTE_MS)}
    FROM (SELECT ${owner} AS id) AS owner WHERE owner.id IS NOT NULL`;
}

/** The one statement that authenticates a dashboard request (written to lead a request's own batch). */
export function sessionLookup(tokenHash: string, now: string): SQL {
  return sql`SELECT id, user_id AS userId, idle_expires_at AS idleExpiresAt FROM sessions
             WHERE token_hash = ${tokenHash} AND idle_expires_at > ${now} AND expires_at > ${now}`;
}

export interface ActiveSession {
  id: number;
  userId: number;
  /** Set when the idle expiry is due to slide: the caller runs it after the response (waitUntil). */
  touch?: () => Promise<unknown>;
}

/** The live session a cookie value stands for, or null (malformed, unknown, expired or ended). */
export async function findSession(d1: Db, token: string, nowMs = Date.now()): Promise<ActiveSession | null> {
  if (!TOKEN_SHAPE.test(token)) return null;
  const now = isoNow(nowMs);
  const row = await toStatement(d1, sessionLookup(await sha256Hex(token), now)).first<{ id: number; userId: number; idleExpiresAt: string }>();
  if (!row) return null;
  const idleExpiresAt = later(now, SESSION_IDLE_MS);
  const due = Date.parse(row.idleExpiresAt) <= nowMs + SESSION_IDLE_MS - REFRESH_RESOLUTION_MS;
  const touch = due
    ? () => toStatement(d1, sql`UPDATE sessions SET idle_expires_at = min(${idleExpiresAt}, expires_at) WHERE id = ${row.id}`).run()
    : undefined;
  return { id: row.id, userId: row.userId, touch };
}

/**
 * Email and password to a new session, or null. A wrong password and an unknown email take the same path: one read,
 * one PBKDF2 (against a decoy hash when there is no such user), the same null.
 */
export async function signIn(d1: Db, email: string, password: string): Promise<SessionToken | null> {
  const user = await d1
    .prepare('SELECT id, password_hash FROM users WHERE email = ?')
    .bind(email)
    .first<{ id: number; password_hash: string }>();
  const matches = await verifyPassword(password, user?.password_hash ?? decoyPasswordHash());
  if (!user || !matches) return null;
  const session = await newSessionToken();
  // Guarded on the hash just verified: a password changed in between opens no session with the old one.
  const owner = sql`(SELECT id FROM users WHERE id = ${user.id} AND password_hash = ${user.password_hash})`;
  const [inserted] = await runBatch(d1, [insertSession(owner, session.tokenHash, isoNow())]);
  return changesOf(inserted) === 1 ? session : null;
}

export async function endSession(d1: Db, token: string): Promise<void> {
  if (TOKEN_SHAPE.test(token)) await d1.prepare('DELETE FROM sessions WHERE token_hash = ?').bind(await sha256Hex(token)).run();
}

/**
 * Appended to a password change's batch: ends the user's sessions (all of them, or all but `keepSessionId`), only
 * when the change happened, i.e. when the new hash (random salt: unique) is in place.
 */
export function endSessionsOnPasswordChange(userId: number, newPasswordHash: string, keepSessionId: number | null): SQL {
  return sql`
    DELETE FROM sessions WHERE user_id = ${userId} AND id IS NOT ${keepSessionId}
      AND EXISTS (SELECT 1 FROM users WHERE id = ${userId} AND password_hash = ${newPasswordHash})`;
}

/** Scheduled job: forget ended sessions (the idle expiry is never after the absolute one), a bounded batch per run. */
export async function deleteExpiredSessions(d1: Db, now: string, limit: number): Promise<number> {
  const result = await toStatement(
    d1,
    sql`DELETE FROM sessions WHERE id IN (SELECT id FROM sessions WHERE idle_expires_at <= ${now} ORDER BY idle_expires_at LIMIT ${limit})`,
  ).run();
  return result.meta.changes;
}
