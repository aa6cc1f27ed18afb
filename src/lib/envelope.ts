import { z } from '@hono/zod-openapi';
import { ERROR_STATUS, type ErrorCode } from './errors';

/** Success envelope of the contract: `{ success: true, message?, data }`. */
export function ok<T>(data: T, message?: string) {
  return message === undefined ? { success: true as const, data } : { success: true as const, message, data };
}

export const envelope = <T extends z.ZodType>(data: T) =>
  z.object({ success: z.literal(true), message: z.string().optional(), data });

export const messageEnvelope = z.object({ success: z.literal(true), message: z.string() });

export const ErrorBody = z
  .object({
    success: z.literal(false),
    error: z.string().openapi({ example: 'Insufficient wallet balance.' }),
    code: z.enum(Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]]).openapi({ example: 'INSUFFICIENT_BALANCE', description: 'the machine code: the same code always comes with the same HTTP status' }),
    errors: z.record(z.string(), z.unknown()).optional(),
  })
  .openapi('Error');

export function errorBody(code: ErrorCode, error: string, errors?: Record<string, unknown>) {
  return errors === undefined ? { success: false as const, error, code } : { success: false as const, error, code, errors };
}

/**
 * The success envelope around data already rendered as JSON text (by SQLite): the bytes `JSON.stringify` writes for
 * `{ ...ok(data), ...extra }`, without parsing the data back.
 */
export function okJsonText(dataJson: string, extra: Record<string, string> = {}): string {
  const tail = Object.entries(extra).map(([name, value]) => `,${JSON.stringify(name)}:${JSON.stringify(value)}`);
  return `{"success":true,"data":${dataJson}${tail.join('')}}`;
}
