import { createRoute, z } from '@hono/zod-openapi';
import type { ProductRow } from '../db/schema';
import { envelope, ok } from '../lib/envelope';
import { fieldError } from '../lib/errors';
import { centsToAmount } from '../lib/money';
import { createRouter, errorResponses, IdParams, idLinks, jsonBody, jsonResponse } from './openapi';
import { purgeStock } from '../middleware/stock-cache';
import { trimmedText, usdAmount } from '../lib/validation';
import { addStock, createProduct, MAX_ITEMS_PER_UPLOAD, normaliseItems, updateProduct } from '../services/products';
import { markDepositPaid } from '../services/deposits';
import { createUser } from '../services/users';
import { adjustBalance } from '../services/wallet';
import { DepositStatus, finalSaleFlag, presentDepositStatus, presentTransaction, Transaction } from './representations';
import { presentProfile, userEmail, userName, UserProfileSchema } from './user';

const security = [{ AdminBearer: [] }];
const tags = ['Admin'];
const MAX_ITEM_LENGTH = 4096;
const MAX_PRICE_CENTS = 100_000_000;
const MAX_ADJUSTMENT_CENTS = 100_000_000;

const CreateUserBody = z.object({
  name: userName,
  email: userEmail,
  password: z.string().min(8, 'password must be at least 8 characters').max(200, 'password is too long'),
});

const AdjustmentBody = z.object({
  amount: usdAmount('amount', -MAX_ADJUSTMENT_CENTS, MAX_ADJUSTMENT_CENTS)
    .refine((cents) => cents !== 0, 'amount must not be zero')
    .openapi({ not: { const: 0 } }),
  description: trimmedText('description', 500),
});

const packSizes = z
  .array(z.int().min(1).max(1000), 'allowed_quantities must be an array of integers')
  .min(1, 'allowed_quantities must not be empty')
  .max(100)
  .nullable();

const ProductBody = z.object({
  name: trimmedText('name', 200),
  sku: trimmedText('sku', 100),
  category: trimmedText('category', 100).nullable().optional(),
  price: usdAmount('price', 1, MAX_PRICE_CENTS),
  allowed_quantities: packSizes.optional(),
  active: z.boolean('active must be a boolean').optional(),
  cancellable: z.boolean('cancellable must be a boolean').optional().openapi({
    description: 'default true; false makes the product final sale: its orders (from now on) can never be cancelled',
  }),
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
    cancellable: finalSaleFlag,
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
  cancellable: p.cancellable === 1,
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
  cancellable: body.cancellable,
});

// What `uploadItems` enforces, as patterns for the document: an item once trimmed is at most MAX_ITEM_LENGTH
// characters with no line break, and a blank one is skipped. Each input has one way to match (no runaway
// backtracking in the tools that evaluate them).
const TRIMMED_ITEM = `\\S(?:[^\\r\\n]{0,${MAX_ITEM_LENGTH - 2}}\\S)?`;
const TEXT_LINE = `[^\\S\\n]*(?:${TRIMMED_ITEM}[^\\S\\n]*)?`;

const StockUploadBody = z.object({
  items: z
    .array(
      z.string('items must be strings').openapi({
        pattern: `^\\s*(?:${TRIMMED_ITEM}\\s*)?$`,
        description: `trimmed: at most ${MAX_ITEM_LENGTH} characters, no line break; blank items are skipped`,
      }),
    )
    .max(MAX_ITEMS_PER_UPLOAD, `at most ${MAX_ITEMS_PER_UPLOAD} items per call`),
});

const StockUploadText = z.string().openapi({
  pattern: `^${TEXT_LINE}(?:\\n${TEXT_LINE})*$`,
  description: `one item per line, each trimmed (so CR LF line ends work): at most ${MAX_ITEMS_PER_UPLOAD} non-blank lines of at most ${MAX_ITEM_LENGTH} characters`,
  example: 'CODE-1\nCODE-2',
});

/** Upload items: validated here so JSON and text bodies obey the same limits. */
function uploadItems(raw: string[]): string[] {
  const items = normaliseItems(raw);
  if (items.length > MAX_ITEMS_PER_UPLOAD) throw fieldError('items', `at most ${MAX_ITEMS_PER_UPLOAD} items per call`);
  // Characters are code points, as JSON Schema counts them.
  if (items.some((item) => [...item].length > MAX_ITEM_LENGTH)) throw fieldError('items', `an item may be at most ${MAX_ITEM_LENGTH} characters`);
  if (items.some((item) => /[\r\n]/.test(item))) throw fieldError('items', 'an item may not contain line breaks');
  return items;
}

// zod-openapi runs the JSON validator on every request when a body is `required`, which would refuse text/plain
// uploads: the route validates with `required: false` (the handler refuses a missing body), and the document, which
// registers it separately below, says what the API does: the body is required.
const addStockRoute = createRoute({
  method: 'post',
  path: '/products/{id}/stock',
  operationId: 'addStock',
  tags,
  summary: 'Add stock items (JSON `items` or a text/plain body, one item per line)',
  security,
  request: {
    params: IdParams,
    body: {
      required: false,
      content: {
        'application/json': { schema: StockUploadBody },
        'text/plain': { schema: StockUploadText },
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
});

export const adminRouter = createRouter()
  .openapi(
    createRoute({
      method: 'post',
      path: '/users',
      operationId: 'createUser',
      tags,
      summary: 'Create a user and its first API key',
      security,
      request: { body: jsonBody(CreateUserBody) },
      responses: {
        201: jsonResponse(envelope(UserProfileSchema.extend({ api_key: z.string() })), 'The user and its first key', idLinks('/data/id', { adjustBalance: 'id' })),
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
      operationId: 'adjustBalance',
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
      operationId: 'createProduct',
      tags,
      summary: 'Create a product',
      security,
      request: { body: jsonBody(ProductBody) },
      responses: {
        201: jsonResponse(
          envelope(Product),
          'The product',
          idLinks('/data/id', { updateProduct: 'id', addStock: 'id', getStock: 'product_id', getStockBadge: 'product_id' }),
        ),
        ...errorResponses(401, 422),
      },
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
      operationId: 'updateProduct',
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
    { ...addStockRoute, hide: true },
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
      operationId: 'markDepositPaid',
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

adminRouter.openAPIRegistry.registerPath({ ...addStockRoute, request: { ...addStockRoute.request, body: { ...addStockRoute.request.body, required: true } } });
