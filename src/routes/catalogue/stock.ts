import { createRoute, z } from '@hono/zod-openapi';
import { cors } from 'hono/cors';
import { etag, RETAINED_304_HEADERS } from 'hono/etag';
import type { Context } from 'hono';
import type { AppEnv } from '../../env';
import { sha256Hex } from '../../lib/crypto';
import { stockBadgeSvg } from '../../lib/badge';
import { envelope, ok, okJsonText } from '../../lib/envelope';
import { limitByClientIp } from '../../middleware/rate-limit';
import { publicCaching, stockCache } from '../../middleware/stock-cache';
import { createRouter, errorResponses, ID_TEXT, jsonResponse, MAX_PATH_ID, pathId } from '../openapi';
import { checkStockJson, getStock, listStockJson, stockByCategoryJson } from '../../services/catalogue/stock';
import { presentStockDetail, StockDetail, StockEntry } from '../representations';

const MAX_CHECK_IDS = 50;

const CheckQuery = z.object({
  ids: z
    .string()
    .transform((raw, ctx) => {
      const parts = raw.split(',').map((p) => p.trim());
      if (parts.some((p) => !ID_TEXT.test(p))) {
        ctx.addIssue({ code: 'custom', message: 'ids must be a comma-separated list of positive integers' });
        return z.NEVER;
      }
      const ids = parts.map(Number);
      if (ids.length > MAX_CHECK_IDS) ctx.addIssue({ code: 'custom', message: `at most ${MAX_CHECK_IDS} ids` });
      if (new Set(ids).size !== ids.length) ctx.addIssue({ code: 'custom', message: 'ids must be distinct' });
      return ids;
    })
    // Documented as what it is: a list, sent comma-separated (`ids=1,2,3`).
    .openapi({
      param: { style: 'form', explode: false },
      type: 'array',
      items: { type: 'integer', minimum: 1, maximum: MAX_PATH_ID },
      minItems: 1,
      maxItems: MAX_CHECK_IDS,
      uniqueItems: true,
      description: `product ids, 1..${MAX_CHECK_IDS} distinct, comma-separated`,
      example: [1, 2, 3],
    }),
});

const BulkCheckEntry = z
  .object({ product_id: z.number().int(), stock_count: z.number().int(), in_stock: z.boolean() })
  .openapi('StockCheckEntry');

const CategoryEntry = z
  .object({ category: z.string(), total_products: z.number().int(), total_stock: z.number().int() })
  .openapi('StockCategory');

/** A 200 whose JSON body SQLite rendered: sent as it is (the cached copy is the same bytes). */
const jsonText = (c: Context<AppEnv>, body: string) => c.body(body, 200, { 'Content-Type': 'application/json' });

const tags = ['Stock'];
const notModified = { 304: { description: 'Not modified (If-None-Match matched the ETag)' } };
const responses404 = { ...notModified, ...errorResponses(404, 422, 429) };

// A 304 keeps the CORS header: the etag middleware would otherwise strip it and browsers could not read the 304.
const etagKeepingCors = etag({ retainedHeaders: [...RETAINED_304_HEADERS, 'access-control-allow-origin'] });

const publicStock = createRouter();
publicStock.use('*', cors({ origin: '*', allowMethods: ['GET', 'HEAD', 'OPTIONS'], maxAge: 86400 }), limitByClientIp, stockCache, etagKeepingCors, publicCaching);

export const stockRouter = publicStock
  .openapi(
    createRoute({
      method: 'get',
      path: '/',
      operationId: 'listStock',
      tags,
      summary: 'Stock of every active product',
      responses: {
        200: jsonResponse(envelope(z.array(StockEntry)).extend({ timestamp: z.string() }), 'All active products'),
        ...notModified,
        ...errorResponses(429),
      },
    }),
    async (c) => {
      const data = await listStockJson(c.var.db, new URL(c.req.url).origin);
      // The ETag covers the entries, not the per-response timestamp, so If-None-Match can match (weak: same data).
      // One pass over the text SQLite rendered; no counter row that every purchase would have to update.
      c.header('ETag', `W/"${await sha256Hex(data)}"`);
      return jsonText(c, okJsonText(data, { timestamp: new Date().toISOString() }));
    },
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/check',
      operationId: 'checkStock',
      tags,
      summary: 'Bulk stock check',
      request: { query: CheckQuery },
      responses: { 200: jsonResponse(envelope(z.array(BulkCheckEntry)), 'Counts in the order asked'), ...notModified, ...errorResponses(422, 429) },
    }),
    async (c) => {
      return jsonText(c, okJsonText(await checkStockJson(c.var.db, c.req.valid('query').ids)));
    },
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/categories',
      operationId: 'listStockCategories',
      tags,
      summary: 'Stock per category',
      responses: { 200: jsonResponse(envelope(z.array(CategoryEntry)), 'Categories'), ...notModified, ...errorResponses(429) },
    }),
    async (c) => {
      return jsonText(c, okJsonText(await stockByCategoryJson(c.var.db)));
    },
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/{product_id}',
      operationId: 'getStock',
      tags,
      summary: 'Stock of one product',
      request: { params: z.object({ product_id: pathId('product_id') }) },
      responses: { 200: jsonResponse(envelope(StockDetail), 'The product'), ...responses404 },
    }),
    async (c) => c.json(ok(presentStockDetail(await getStock(c.var.db, c.req.valid('param').product_id), new URL(c.req.url).origin)), 200),
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/{product_id}/badge.svg',
      operationId: 'getStockBadge',
      tags,
      summary: 'Embeddable SVG stock badge ("in stock: 1,234" / "out of stock")',
      request: { params: z.object({ product_id: pathId('product_id') }) },
      responses: {
        200: { description: 'SVG badge', content: { 'image/svg+xml': { schema: z.string() } } },
        ...responses404,
      },
    }),
    async (c) => {
      const entry = await getStock(c.var.db, c.req.valid('param').product_id);
      return c.body(stockBadgeSvg(entry.stockCount), 200, { 'Content-Type': 'image/svg+xml; charset=utf-8' });
    },
  );
