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
 * Free text, stored trimmed. The limits apply to the text as sent, so the document's maxLength is exact, and it may
 * not be blank: the pattern `\S` asks for one character that trimming keeps (JavaScript's `\s` is exactly what
 * String.prototype.trim removes).
 */
export const trimmedText = (field: string, max: number) =>
  z
    .string(`${field} must be a string`)
    .max(max, `${field} may not be greater than ${max} characters`)
    .regex(/\S/, `${field} may not be blank`)
    .trim();

/**
 * Characters no text a person types may hold (contract, "Human text"): C0 and C1 controls, DEL, and the bidirectional
 * controls that make a name display reversed in the console or a spreadsheet. Line feeds are allowed in `humanText`.
 */
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
const CONTROL_CHARACTERS_BUT_LF = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

/** A one-line text a person types (a name, a category, a code): `trimmedText` without control characters. */
export const humanLine = (field: string, max: number) =>
  z
    .string(`${field} must be a string`)
    .max(max, `${field} may not be greater than ${max} characters`)
    .regex(/\S/, `${field} may not be blank`)
    .refine((text) => !CONTROL_CHARACTERS.test(text), `${field} may not contain control characters`)
    .trim();

/** A text of several lines (a description, a note): line feeds kept (CR LF stored as LF), no other control character. */
export const humanText = (field: string, max: number) =>
  z
    .string(`${field} must be a string`)
    .max(max, `${field} may not be greater than ${max} characters`)
    .regex(/\S/, `${field} may not be blank`)
    .transform((text) => text.replace(/\r\n/g, '\n'))
    .refine((text) => !CONTROL_CHARACTERS_BUT_LF.test(text), `${field} may not contain control characters other than line feeds`)
    .transform((text) => text.trim());

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
