import { createRoute, z } from '@hono/zod-openapi';
import type { ProductRow } from '../db/schema';
import { envelope, ok } from '../lib/envelope';
import { fieldError } from '../lib/errors';
import { centsToAmount } from '../lib/money';
import { createRouter, errorResponses, IdParams, jsonBody, jsonResponse } from '../lib/openapi';
import { purgeStock } from '../middleware/stock-cache';
import { usdAmount } from '../lib/validation';
import { addStock, createProduct, MAX_ITEMS_PER_UPLOAD, normaliseItems, updateProduct } from '../services/products';
import { markDepositPaid } from '../services/deposits';
import { createUser } from '../services/users';
import { adjustBalance } from '../services/wallet';
import { DepositStatus, presentDepositStatus, presentTransaction, Transaction } from './representations';
import { presentProfile, userEmail, userName, UserProfileSchema } from './user';

const security = [{ AdminBearer: [] }];
const tags = ['Admin'];
const MAX_ITEM_LENGTH = 4096;
const MAX_PRICE_CENTS = 100_000_000;
const MAX_ADJUSTMENT_CENTS = 100_000_000;

export const CreateUserBody = z.object({
  name: userName,
  email: userEmail,
  password: z.string().min(8, 'password must be at least 8 characters').max(200, 'password is too long'),
});

const AdjustmentBody = z.object({
  amount: usdAmount('amount', -MAX_ADJUSTMENT_CENTS, MAX_ADJUSTMENT_CENTS).refine((cents) => cents !== 0, 'amount must not be zero'),
  description: z.string().trim().min(1, 'description is required').max(500, 'description is too long'),
});

const packSizes = z
  .array(z.int().min(1).max(1000), 'allowed_quantities must be an array of integers')
  .min(1, 'allowed_quantities must not be empty')
  .max(100)
  .nullable();

const ProductBody = z.object({
  name: z.string().trim().min(1, 'name is required').max(200),
  sku: z.string().trim().min(1, 'sku is required').max(100),
  category: z.string().trim().min(1).max(100).nullable().optional(),
  price: usdAmount('price', 1, MAX_PRICE_CENTS),
  allowed_quantities: packSizes.optional(),
  active: z.boolean('active must be a boolean').optional(),
});

const Product = z
  .object({
    id: z.number().int(),
    name: z.string(),
    sku: z.string(),
    category: z.string().nullable(),
    price: z.number(),
    allowed_quantities: z.array(z.number().int()).nullable(),
    active: z.boolean(),
    stock_count: z.number().int(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi('Product');

const presentProduct = (p: ProductRow) => ({
  id: p.id,
  name: p.name,
  sku: p.sku,
  category: p.category,
  price: centsToAmount(p.priceCents),
  allowed_quantities: p.allowedQuantities === null ? null : (JSON.parse(p.allowedQuantities) as number[]),
  active: p.active === 1,
  stock_count: p.stockCount,
  created_at: p.createdAt,
  updated_at: p.updatedAt,
});

const productInput = (body: Partial<z.output<typeof ProductBody>>) => ({
  name: body.name,
  sku: body.sku,
  category: body.category,
  priceCents: body.price,
  allowedQuantities: body.allowed_quantities,
  active: body.active,
});

const StockUploadBody = z.object({
  items: z.array(z.string('items must be strings')).max(MAX_ITEMS_PER_UPLOAD, `at most ${MAX_ITEMS_PER_UPLOAD} items per call`),
});

/** Upload items: validated here so JSON and text bodies obey the same limits. */
function uploadItems(raw: string[]): string[] {
  const items = normaliseItems(raw);
  if (items.length > MAX_ITEMS_PER_UPLOAD) throw fieldError('items', `at most ${MAX_ITEMS_PER_UPLOAD} items per call`);
  if (items.some((item) => item.length > MAX_ITEM_LENGTH)) throw fieldError('items', `an item may be at most ${MAX_ITEM_LENGTH} characters`);
  if (items.some((item) => /[\r\n]/.test(item))) throw fieldError('items', 'an item may not contain line breaks');
  return items;
}

export const adminRouter = createRouter()
  .openapi(
    createRoute({
      method: 'post',
      path: '/users',
      tags,
      summary: 'Create a user and its first API key',
      security,
      request: { body: jsonBody(CreateUserBody) },
      responses: {
        201: jsonResponse(envelope(UserProfileSchema.extend({ api_key: z.string() })), 'The user and its first key'),
        ...errorResponses(401, 422),
      },
    }),
    async (c) => {
      const { user, apiKey } = await createUser(c.var.db, c.req.valid('json'));
      return c.json(ok({ ...presentProfile(user), api_key: apiKey }, 'User created.'), 201);
    },
  )
  .openapi(
    createRoute({
      method: 'post',
      path: '/users/{id}/balance-adjustments',
      tags,
      summary: 'Credit (positive) or debit (negative) a wallet',
      security,
      request: { params: IdParams, body: jsonBody(AdjustmentBody) },
      responses: { 201: jsonResponse(envelope(Transaction), 'The adjustment transaction'), ...errorResponses(400, 401, 404, 422) },
    }),
    async (c) => {
      const { amount, description } = c.req.valid('json');
      const transaction = await adjustBalance(c.var.db, c.req.valid('param').id, amount, description);
      return c.json(ok(presentTransaction(transaction), 'Balance adjusted.'), 201);
    },
  )
  .openapi(
    createRoute({
      method: 'post',
      path: '/products',
      tags,
      summary: 'Create a product',
      security,
      request: { body: jsonBody(ProductBody) },
      responses: { 201: jsonResponse(envelope(Product), 'The product'), ...errorResponses(401, 422) },
    }),
    async (c) => {
      const body = c.req.valid('json');
      const product = await createProduct(c.var.db, { ...productInput(body), name: body.name, sku: body.sku, priceCents: body.price });
      await purgeStock(c, [product.id]);
      return c.json(ok(presentProduct(product), 'Product created.'), 201);
    },
  )
  .openapi(
    createRoute({
      method: 'patch',
      path: '/products/{id}',
      tags,
      summary: 'Update a product',
      security,
      request: { params: IdParams, body: jsonBody(ProductBody.partial()) },
      responses: { 200: jsonResponse(envelope(Product), 'The product'), ...errorResponses(401, 404, 422) },
    }),
    async (c) => {
      const product = await updateProduct(c.var.db, c.req.valid('param').id, productInput(c.req.valid('json')));
      await purgeStock(c, [product.id]);
      return c.json(ok(presentProduct(product), 'Product updated.'), 200);
    },
  )
  .openapi(
    createRoute({
      method: 'post',
      path: '/products/{id}/stock',
      tags,
      summary: 'Add stock items (JSON `items` or a text/plain body, one item per line)',
      security,
      request: {
        params: IdParams,
        body: {
          required: false,
          content: {
            'application/json': { schema: StockUploadBody },
            'text/plain': { schema: z.string().openapi({ example: 'CODE-1\nCODE-2' }) },
          },
        },
      },
      responses: {
        201: jsonResponse(
          envelope(z.object({ added: z.number().int(), skipped: z.number().int(), stock_count: z.number().int() })),
          'Items added; duplicates skipped',
        ),
        ...errorResponses(401, 404, 413, 422),
      },
    }),
    async (c) => {
      const isText = (c.req.header('Content-Type') ?? '').toLowerCase().startsWith('text/plain');
      // Without a JSON content type the validated JSON is an empty object.
      const raw = isText ? (await c.req.text()).split('\n') : (c.req.valid('json') as { items?: string[] }).items;
      if (raw === undefined) throw fieldError('items', 'items is required (or send a text/plain body)');
      const result = await addStock(c.var.db, c.req.valid('param').id, uploadItems(raw));
      await purgeStock(c, [c.req.valid('param').id]);
      return c.json(ok({ added: result.added, skipped: result.skipped, stock_count: result.stockCount }, 'Stock added.'), 201);
    },
  )
  .openapi(
    createRoute({
      method: 'post',
      path: '/deposits/{id}/mark-paid',
      tags,
      summary: 'Confirm a deposit as paid (credits the wallet exactly once, like the webhook)',
      security,
      request: { params: IdParams },
      responses: { 200: jsonResponse(envelope(DepositStatus), 'The deposit, paid'), ...errorResponses(401, 404, 422) },
    }),
    async (c) => {
      const { deposit, credited } = await markDepositPaid(c.var.db, c.req.valid('param').id);
      return c.json(ok(presentDepositStatus(deposit), credited ? 'Deposit credited to the wallet.' : 'Deposit was already paid.'), 200);
    },
  );
