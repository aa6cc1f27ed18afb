import { z } from '@hono/zod-openapi';
import { InexactNumber } from './exact-json';
import { amountToCents, centsToAmount } from './money';

/**
 * A USD amount as exact cents: a JSON number with at most two decimals within [minCents, maxCents], as written. A
 * number whose text a double cannot hold (src/lib/exact-json.ts) is refused for what its text says, never rounded.
 */
export const usdAmount = (field: string, minCents: number, maxCents: number) => {
  const tooPrecise = `${field} must have at most 2 decimal places`;
  const outOfRange = `${field} must be between ${centsToAmount(minCents).toFixed(2)} and ${centsToAmount(maxCents).toFixed(2)}`;
  return z
    .number({
      error: (issue) =>
        issue.input instanceof InexactNumber ? (issue.input.hasFraction ? tooPrecise : outOfRange) : `${field} must be a number`,
    })
    .transform((amount, ctx) => {
      const cents = amountToCents(amount);
      if (cents === null) {
        ctx.addIssue({ code: 'custom', message: tooPrecise });
        return z.NEVER;
      }
      if (cents < minCents || cents > maxCents) {
        ctx.addIssue({ code: 'custom', message: outOfRange });
        return z.NEVER;
      }
      return cents;
    })
    .openapi({ type: 'number', minimum: centsToAmount(minCents), maximum: centsToAmount(maxCents), multipleOf: 0.01 });
};

/**
 * Characters no text a person types may hold (contract, "Human text"): C0 and C1 controls, DEL, the bidirectional
 * controls that make a name display reversed in the console or a spreadsheet, and the invisible ones a name made of
 * nothing, or a line break nobody sees, hides in (zero-width space, non-joiner and joiner, word joiner, byte order
 * mark, line and paragraph separators).
 */
const CONTROL_RANGES: Array<[number, number]> = [
  [0x00, 0x1f],
  [0x7f, 0x9f],
  [0x200b, 0x200d],
  [0x2028, 0x2029],
  [0x202a, 0x202e],
  [0x2060, 0x2060],
  [0x2066, 0x2069],
  [0xfeff, 0xfeff],
];
const hex = (codePoint: number) => `\\u${codePoint.toString(16).padStart(4, '0')}`;

/**
 * Those characters as the body of a regular expression's character class (`[${controlClass()}]`), less the ones in
 * `allowed` (a description's line feed, a stock item's tab): one definition for every validator and its pattern.
 */
export function controlClass(allowed = ''): string {
  const kept = new Set([...allowed].map((ch) => ch.codePointAt(0)));
  const parts: string[] = [];
  for (const [from, to] of CONTROL_RANGES) {
    let start: number | null = null;
    for (let cp = from; cp <= to + 1; cp++) {
      const refused = cp <= to && !kept.has(cp);
      if (refused && start === null) start = cp;
      if (!refused && start !== null) {
        parts.push(start === cp - 1 ? hex(start) : `${hex(start)}-${hex(cp - 1)}`);
        start = null;
      }
    }
  }
  return parts.join('');
}

/** What JavaScript's `\s` (and so `trim()`) matches beyond the controls: the spaces a name may start or end with. */
const SPACES = ' \\u00a0\\u1680\\u2000-\\u200a\\u202f\\u205f\\u3000';
const CONTROL = new RegExp(`[${controlClass()}]`);
const CONTROL_BUT_LF = new RegExp(`[${controlClass('\n')}]`);
/** Something visible: a text made only of spaces and invisible characters is blank. */
const VISIBLE = new RegExp(`[^\\s${controlClass()}]`);

/**
 * The document's pattern of each, the whole rule in one unambiguous expression (spaces, then the first character
 * that trimming keeps, then the rest): no control character, not blank. A text may send CR LF, stored as LF.
 */
const HUMAN_LINE_PATTERN = `^[${SPACES}]*[^\\s${controlClass()}][^${controlClass()}]*$`;
const HUMAN_TEXT_PATTERN = `^(?:[${SPACES}\\n]|\\r\\n)*[^\\s${controlClass()}](?:[^${controlClass('\n')}]|\\r\\n)*$`;

/**
 * A one-line text a person types (a name, a category, a code), stored trimmed: at most `max` characters as sent (so
 * the document's maxLength is exact), not blank, no control character.
 */
export const humanLine = (field: string, max: number) =>
  z
    .string(`${field} must be a string`)
    .max(max, `${field} may not be greater than ${max} characters`)
    .regex(VISIBLE, `${field} may not be blank`)
    .refine((text) => !CONTROL.test(text), `${field} may not contain control characters (line breaks, tabs, escapes, direction marks, invisible characters)`)
    .trim()
    .openapi({ pattern: HUMAN_LINE_PATTERN });

/** A text of several lines (a description, a note): line feeds kept (CR LF stored as LF), no other control character. */
export const humanText = (field: string, max: number) =>
  z
    .string(`${field} must be a string`)
    .max(max, `${field} may not be greater than ${max} characters`)
    .regex(VISIBLE, `${field} may not be blank`)
    .transform((text) => text.replace(/\r\n/g, '\n'))
    .refine((text) => !CONTROL_BUT_LF.test(text), `${field} may not contain control characters other than line feeds (nor invisible characters)`)
    .transform((text) => text.trim())
    .openapi({ pattern: HUMAN_TEXT_PATTERN });

/** Kept for imports written before `humanLine`: every one-line text is human text. */
export const trimmedText = humanLine;

/**
 * An email address as zod's `z.email()` checks it, with the pattern in the document: JSON Schema's `format: email`
 * is looser (it accepts `0@com`, which this refuses).
 */
export const emailAddress = (field: string) =>
  z
    .string(`${field} must be a string`)
    .max(254, `${field} is too long`)
    .regex(z.regexes.email, `${field} must be a valid email address`);

/** An id as written in a URL or a query: 1..MAX_PATH_ID, digits only, no leading zero. */
export const ID_TEXT = /^[1-9]\d{0,14}$/;
export const MAX_PATH_ID = 999_999_999_999_999;

/** An optional id in a query string (`?user_id=`): a 422 unless well-formed, never coerced. */
export const optionalIdQuery = (name: string) =>
  z
    .string()
    .regex(ID_TEXT, `${name} must be a positive integer, at most ${MAX_PATH_ID}`)
    .transform(Number)
    .optional()
    .openapi({ type: 'integer', minimum: 1, maximum: MAX_PATH_ID });

/**
 * An `Idempotency-Key`: 1..255 printable ASCII characters. HTTP strips spaces around a header value, so a key
 * neither starts nor ends with one.
 */
export const IDEMPOTENCY_KEY = /^[\x21-\x7e](?:[\x20-\x7e]{0,253}[\x21-\x7e])?$/;

/**
 * `confirmation` must repeat `field`; the mismatch is reported on `reportOn`, and only once every field is valid on
 * its own (a confirmation of an invalid value says nothing new).
 */
export const withConfirmation = <T extends z.ZodObject>(schema: T, field: string, confirmation: string, reportOn: string): T =>
  schema.refine((body: Record<string, unknown>) => body[field] === body[confirmation], {
    path: [reportOn],
    message: `The ${field} confirmation does not match.`,
    when: (payload) => payload.issues.length === 0,
  });
