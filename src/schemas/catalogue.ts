import { z } from '@hono/zod-openapi';
import { PaginationQuery } from '../lib/pagination';

// The shop's query (the dashboard's /dashboard/shop and the public /shop): a category, a part of the name, a page.

const filterText = (field: string) =>
  z
    .string()
    .max(100, `${field} may not be greater than 100 characters`)
    .trim()
    .optional()
    .transform((v) => (v === '' ? undefined : v));

export const ShopQuery = PaginationQuery.pick({ page: true }).extend({
  category: filterText('category'),
  q: filterText('q'),
});
