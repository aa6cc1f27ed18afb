import { z } from '@hono/zod-openapi';

const pageNumber = (name: string, fallback: number, max: number) =>
  z
    .string()
    .regex(/^\d{1,9}$/, `${name} must be a positive integer`)
    .optional()
    .transform((v) => (v === undefined ? fallback : Number(v)))
    .pipe(z.number().int().min(1, `${name} must be at least 1`).max(max, `${name} must be at most ${max}`))
    .openapi({ type: 'integer', minimum: 1, maximum: max, default: fallback });

export const PaginationQuery = z.object({
  page: pageNumber('page', 1, 999_999_999),
  per_page: pageNumber('per_page', 20, 100),
});

export const PageMeta = z
  .object({
    current_page: z.number().int(),
    per_page: z.number().int(),
    total: z.number().int(),
    total_pages: z.number().int(),
  })
  .openapi('PageMeta');

export interface Page {
  page: number;
  per_page: number;
}

export const pageWindow = ({ page, per_page }: Page) => ({ limit: per_page, offset: (page - 1) * per_page });

export function paged<T>(data: T[], { page, per_page }: Page, total: number) {
  return {
    success: true as const,
    data,
    meta: { current_page: page, per_page, total, total_pages: Math.ceil(total / per_page) },
  };
}

export const pagedEnvelope = <T extends z.ZodType>(item: T) =>
  z.object({ success: z.literal(true), data: z.array(item), meta: PageMeta });
