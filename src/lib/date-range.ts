import { z } from '@hono/zod-openapi';

// `from` / `to` of the operator's lists and exports: whole UTC days, both inclusive. A day is a calendar date
// (2026-02-30 is refused, not rolled over); the SQL compares ISO timestamps, so a range is two string bounds.

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** A real calendar day: month 13, day 00 or 32 parse to no date at all, and 02-30 to another day than the one written. */
function isCalendarDay(day: string): boolean {
  if (!DAY.test(day)) return false;
  const ms = Date.parse(`${day}T00:00:00.000Z`);
  return Number.isFinite(ms) && new Date(ms).toISOString().startsWith(day);
}

export const utcDay = (name: string, description: string) =>
  z
    .string()
    .refine(isCalendarDay, `${name} must be a UTC date written YYYY-MM-DD`)
    .optional()
    .openapi({ format: 'date', example: '2026-11-01', description });

export const DateRangeQuery = z.object({
  from: utcDay('from', 'the first UTC day included (YYYY-MM-DD)'),
  to: utcDay('to', 'the last UTC day included (YYYY-MM-DD)'),
});

export interface DateRange {
  from?: string;
  to?: string;
}

/** The range as ISO timestamp bounds: `since` inclusive, `before` exclusive (the day after `to`). */
export function timestampBounds({ from, to }: DateRange): { since?: string; before?: string } {
  const dayAfter = (day: string) => new Date(Date.parse(`${day}T00:00:00.000Z`) + 86_400_000).toISOString();
  return { since: from === undefined ? undefined : `${from}T00:00:00.000Z`, before: to === undefined ? undefined : dayAfter(to) };
}
