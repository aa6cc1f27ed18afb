import { createRoute, z } from '@hono/zod-openapi';
import { envelope, ok } from '../../lib/envelope';
import { createRouter, errorResponses, jsonResponse } from '../openapi';
import { centsToAmount } from '../../lib/money';
import { SalesQuery } from '../../schemas/operator';
import { queryPlain } from '../../services/caller';
import { salesQuery, type SalesDay } from '../../services/operator/overview';

// The shop's sales by UTC day, for the operator.

const security = [{ AdminBearer: [] }];
const tags = ['Admin'];

const SalesDaySchema = z
  .object({
    date: z.string().openapi({ example: '2026-11-21', description: 'a UTC day' }),
    orders: z.number().int().openapi({ description: 'purchases that day' }),
    revenue: z.number().openapi({ description: 'USD paid for those purchases (gross: orders cancelled later included)' }),
    refunds: z.number().openapi({ description: 'USD refunded that day (cancellations)' }),
    deposits: z.number().openapi({ description: 'USD of deposits credited that day' }),
  })
  .openapi('SalesDay');
const presentSalesDay = (d: SalesDay) => ({
  date: d.date,
  orders: d.orders,
  revenue: centsToAmount(d.revenueCents),
  refunds: centsToAmount(d.refundsCents),
  deposits: centsToAmount(d.depositsCents),
});

export const adminStatsRouter = createRouter()
  .openapi(
    createRoute({
      method: 'get',
      path: '/stats/sales',
      operationId: 'getSalesStats',
      tags,
      summary: 'Sales per UTC day, oldest first, days without activity included',
      security,
      request: { query: SalesQuery },
      responses: { 200: jsonResponse(envelope(z.array(SalesDaySchema)), 'One row per day'), ...errorResponses(401, 422) },
    }),
    async (c) => {
      const [days] = await queryPlain(c.var.db, [salesQuery(c.req.valid('query').days)]);
      return c.json(ok(days.map(presentSalesDay)), 200);
    },
  );
