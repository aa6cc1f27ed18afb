import { sql, type SQL } from 'drizzle-orm';
import { columnsOf, rowsOf } from '../../db/batch';
import type { Db } from '../../db/client';
import { blocklist, type BlockRuleRow, type BlockType } from '../../db/schema';
import { ApiError, fieldError, notFound } from '../../lib/errors';
import { addressHex, ipRange, rangeTooWide } from '../../lib/ip';
import type { RequestPlace } from '../../lib/place';
import { pageWindow, type Page } from '../../lib/pagination';
import { isoNow } from '../../lib/time';
import { auditEntry, writeAsActor, type Actor } from './audit-log';
import { queryPlain, type Query } from '../caller';

// The shop's blocklist: rules by email, email domain, IP address or CIDR range (v4 or v6), country and network (ASN).
// A sign-up, deposit or purchase that matches one is refused inside its own batch (its creating statement is guarded
// by `NOT EXISTS (matching rules)`, and a read of the same batch names them), so a blocked request costs no extra round
// trip. The matched rules' hits are counted after the response.

export const BLOCKED_MESSAGE = 'This cannot be done from this account or place. Contact the shop.';

export const blocked = () => new ApiError('BLOCKED', BLOCKED_MESSAGE);

/**
 * An address as the rules see it, from SQL text `e`: `email` in lower case without a `+tag` in its local part (what an
 * `email` rule stores), `domain` in lower case. One place for both spellings, so a rule and an address always agree.
 */
const matchedAddress = (e: SQL) => {
  const at = sql`instr(${e}, '@')`;
  const local = sql`substr(${e}, 1, ${at} - 1)`;
  const plus = sql`instr(${local}, '+')`;
  return sql`lower(CASE WHEN ${plus} > 0 THEN substr(${local}, 1, ${plus} - 1) ELSE ${local} END || substr(${e}, ${at})) AS email,
             lower(substr(${e}, ${at} + 1)) AS domain`;
};

/** The accounts' addresses a check compares (`m.email`, `m.domain`): an account's own, or an address not yet stored. */
const accountAddress = (userId: SQL) => sql`SELECT ${matchedAddress(sql`u.email`)} FROM users u WHERE u.id = ${userId}`;
const givenAddress = (email: string) => sql`SELECT ${matchedAddress(sql`x.e`)} FROM (SELECT ${email} AS e) x`;

/**
 * The condition on `b` (an alias of blocklist) that a rule matches the address `m`: an `email` rule its address
 * whatever the case or `+tag`, an `email_domain` rule its domain, `*.example.com` every sub-domain and the domain itself.
 */
const emailRuleMatches = sql`((b.type = 'email' AND b.value = m.email)
    OR (b.type = 'email_domain' AND (b.value = m.domain
      OR (substr(b.value, 1, 2) = '*.' AND (m.domain = substr(b.value, 3) OR substr(m.domain, -length(b.value) + 1) = substr(b.value, 2))))))`;

/**
 * The condition on `b` that a rule matches the request's place. While any `ip` rule exists, an address that cannot be
 * read (`198.051.100.007`, `[::1]`, a zone id, a list, none at all) matches them all: the blocklist fails closed, as a
 * key's `allowed_ips` does. No place (a deposit's credit, made by no request) matches no place rule.
 */
function placeRuleMatches(place: RequestPlace | undefined): SQL {
  if (!place) return sql`0`;
  const ipHex = place.ip ? addressHex(place.ip) : null;
  return sql`((b.type = 'ip' AND (${ipHex} IS NULL OR ${ipHex} BETWEEN b.range_start AND b.range_end))
    OR (b.type = 'country' AND b.value = ${place.country})
    OR (b.type = 'asn' AND b.value = ${place.asn === null ? null : String(place.asn)}))`;
}

/** The ids of the rules an account (found by `userId`, SQL) matches from `place`. */
export const matchingRules = (userId: SQL, place: RequestPlace | undefined) =>
  sql`SELECT b.id FROM blocklist b, (${accountAddress(userId)}) m WHERE ${emailRuleMatches} OR ${placeRuleMatches(place)}`;

/** The ids of the rules a sign-up (an email not yet an account) matches from `place`. */
export const matchingRulesForEmail = (email: string, place: RequestPlace | undefined) =>
  sql`SELECT b.id FROM blocklist b, (${givenAddress(email)}) m WHERE ${emailRuleMatches} OR ${placeRuleMatches(place)}`;

/**
 * The ids of the rules an email change meets: an `email` or `email_domain` rule matching the account's address or the
 * new one (a blocked buyer cannot change their way out), and every `ip` rule when the client address cannot be read.
 */
export function matchingRulesForEmailChange(userId: SQL, newEmail: string, place: RequestPlace | undefined): SQL {
  const ipHex = place?.ip ? addressHex(place.ip) : null;
  const unreadable = place ? sql`(b.type = 'ip' AND ${ipHex} IS NULL)` : sql`0`;
  return sql`SELECT b.id FROM blocklist b, (${accountAddress(userId)} UNION ALL ${givenAddress(newEmail)}) m WHERE ${emailRuleMatches} OR ${unreadable}`;
}

/** From a batch's read of matching rules: remembers them on the place (hits counted later) and refuses. */
export function refuseIfBlocked(result: D1Result | undefined, place: RequestPlace | undefined): void {
  const ids = rowsOf<{ id: number }>(result).map((row) => row.id);
  if (ids.length === 0) return;
  if (place) place.blockedBy = ids;
  throw blocked();
}

/** After the response: each matched rule counts one hit. */
export async function countHits(d1: Db, ids: number[], now = isoNow()): Promise<void> {
  await d1
    .prepare('UPDATE blocklist SET hits = hits + 1, last_hit_at = ? WHERE id IN (SELECT value FROM json_each(?))')
    .bind(now, JSON.stringify(ids))
    .run();
}

/**
 * A rule's value as stored (the one spelling the matching compares with). The value's form was checked by its type's
 * pattern (src/schemas/after-sale.ts); an ip rule's range is computed here.
 */
export function normaliseRule(type: BlockType, value: string): { value: string; range: [string, string] | null } {
  switch (type) {
    case 'email': {
      // As an address is compared: lower case, no `+tag` (a rule on `a+x@example.com` is a rule on `a@example.com`).
      const at = value.lastIndexOf('@');
      return { value: `${value.slice(0, at).replace(/\+.*$/, '')}${value.slice(at)}`.toLowerCase(), range: null };
    }
    case 'email_domain':
      return { value: value.replace(/^@/, '').toLowerCase(), range: null };
    case 'ip': {
      const range = ipRange(value);
      if (!range) throw fieldError('value', 'value must be an IPv4 or IPv6 address or a CIDR range, e.g. 203.0.113.0/24');
      if (rangeTooWide(range)) throw fieldError('value', 'value may not be a range wider than /8 for IPv4 or /16 for IPv6: one rule must not close the shop');
      return { value: value.toLowerCase(), range };
    }
    case 'country':
      return { value: value.toUpperCase(), range: null };
    case 'asn':
      return { value: value.replace(/^AS/i, ''), range: null };
  }
}

export interface NewRule {
  type: BlockType;
  value: string;
  note: string | null;
}

/** Add a rule (audited): 422 `errors.value` for a value of the wrong form or a rule already on the list. */
export async function addRule(d1: Db, actor: Actor, rule: NewRule): Promise<BlockRuleRow> {
  const { value, range } = normaliseRule(rule.type, rule.value);
  const now = isoNow();
  const mine = sql`type = ${rule.type} AND value = ${value} AND created_at = ${now}`;
  const { reads } = await writeAsActor(d1, actor, {
    writes: [
      sql`INSERT INTO blocklist (type, value, range_start, range_end, note, created_at)
          SELECT ${rule.type}, ${value}, ${range?.[0] ?? null}, ${range?.[1] ?? null}, ${rule.note}, ${now}
          WHERE NOT EXISTS (SELECT 1 FROM blocklist WHERE type = ${rule.type} AND value = ${value})`,
      auditEntry(
        actor,
        {
          action: 'blocklist.added',
          target: sql`'blocklist:' || b.id`,
          details: sql`json_object('type', b.type, 'value', b.value, 'note', b.note)`,
          from: sql`FROM blocklist b WHERE ${mine}`,
        },
        now,
      ),
    ],
    reads: [sql`SELECT ${columnsOf(blocklist)} FROM blocklist WHERE type = ${rule.type} AND value = ${value}`],
    committed: ([row]) => rowsOf<BlockRuleRow>(row)[0]?.createdAt === now,
  });
  const [row] = rowsOf<BlockRuleRow>(reads[0]);
  if (!row || row.createdAt !== now) throw fieldError('value', `${value} is already on the blocklist (${rule.type}).`);
  return row;
}

/** Remove a rule (audited); 404 when there is no such rule. */
export async function removeRule(d1: Db, actor: Actor, id: number): Promise<void> {
  const now = isoNow();
  const { reads } = await writeAsActor(d1, actor, {
    writes: [
      auditEntry(
        actor,
        {
          action: 'blocklist.removed',
          target: sql`'blocklist:' || b.id`,
          details: sql`json_object('type', b.type, 'value', b.value, 'hits', b.hits)`,
          from: sql`FROM blocklist b WHERE b.id = ${id}`,
        },
        now,
      ),
      sql`DELETE FROM blocklist WHERE id = ${id}`,
    ],
    reads: [sql`SELECT target FROM audit_log WHERE action = 'blocklist.removed' AND target = ${`blocklist:${id}`} AND created_at = ${now}`],
    committed: ([row]) => rowsOf(row).length > 0,
  });
  if (rowsOf(reads[0]).length === 0) throw notFound('Blocklist rule');
}

export const blocklistQuery = (page: Page): Query<{ rows: BlockRuleRow[]; total: number }> => {
  const { limit, offset } = pageWindow(page);
  return {
    reads: [
      sql`SELECT ${columnsOf(blocklist)} FROM blocklist ORDER BY created_at DESC, id DESC LIMIT ${limit} OFFSET ${offset}`,
      sql`SELECT count(*) AS total FROM blocklist`,
    ],
    parse: ([rows, total]) => ({ rows: rowsOf<BlockRuleRow>(rows), total: rowsOf<{ total: number }>(total)[0].total }),
  };
};

export async function listRules(d1: Db, page: Page) {
  const [found] = await queryPlain(d1, [blocklistQuery(page)]);
  return found;
}
