import { z } from '@hono/zod-openapi';
import { amountToCents, centsToAmount } from './money';

/** A USD amount as exact cents: a JSON number with at most two decimals within [minCents, maxCents]. */
export const usdAmount = (field: string, minCents: number, maxCents: number) =>
  z
    .number(`${field} must be a number`)
    .transform((amount, ctx) => {
      const cents = amountToCents(amount);
      if (cents === null) {
        ctx.addIssue({ code: 'custom', message: `${field} must have at most 2 decimal places` });
        return z.NEVER;
      }
      if (cents < minCents || cents > maxCents) {
        const range = `${centsToAmount(minCents).toFixed(2)} and ${centsToAmount(maxCents).toFixed(2)}`;
        ctx.addIssue({ code: 'custom', message: `${field} must be between ${range}` });
        return z.NEVER;
      }
      return cents;
    })
    .openapi({ type: 'number', minimum: centsToAmount(minCents), maximum: centsToAmount(maxCents), multipleOf: 0.01 });

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
