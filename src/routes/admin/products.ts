import { createRoute, z } from '@hono/zod-openapi';
import type { ProductRow, VariantRow } from '../../db/schema';
import { envelope, ok } from '../../lib/envelope';
import { fieldError } from '../../lib/errors';
import { controlClass, optionalIdQuery } from '../../lib/validation';
import { createRouter, errorResponses, idempotencyKeyParameter, IdParams, idLinks, jsonBody, jsonResponse } from '../openapi';
import { idempotent } from '../../middleware/idempotency';
import { catalogueChange } from '../../middleware/publish-events';
import { purgeStock } from '../../middleware/stock-cache';
import { ProductBody, productInput, ProductsQuery, VariantBody, variantInput } from '../../schemas/operator';
import { createVariant, updateVariant, variantsQuery } from '../../services/catalogue/variants';
import { addStock, checkedUpload, createProduct, MAX_ITEM_LENGTH, MAX_ITEMS_PER_UPLOAD, updateProduct, type StockUpload } from '../../services/catalogue/products';
import { OPERATOR } from '../../services/idempotency';
import { ADMIN_TOKEN_ACTOR } from '../../services/accounts/audit-log';
import { AdminVariant, presentAdminVariant, presentProduct, Product } from '../representations';
import { queryPlain } from '../../services/caller';
import { catalogueProductQuery, catalogueQuery, type CatalogueProduct } from '../../services/operator/catalogue';

// Products for the operator: create and change them, upload their stock, and the catalogue as the operator sees it
// (units sold, inactive products included).

const security = [{ AdminBearer: [] }];
// Every admin POST/PATCH takes an Idempotency-Key in the operator's own key namespace.
const parameters = [idempotencyKeyParameter];
const asOperator = { owner: OPERATOR } as const;
const tags = ['Admin'];

// What `checkedUpload` enforces, as patterns for the document: an item once trimmed is at most MAX_ITEM_LENGTH
// characters with no line break and no control character (the tab included), and a blank one is skipped. Each input has one
// way to match (no runaway backtracking in the tools that evaluate them).
const ITEM_CHAR = `[^${controlClass()}]`;
const EDGE_CHAR = `[^\\s${controlClass()}]`;
const TRIMMED_ITEM = `${EDGE_CHAR}(?:${ITEM_CHAR}{0,${MAX_ITEM_LENGTH - 2}}${EDGE_CHAR})?`;
const TEXT_LINE = `[^\\S\\n]*(?:${TRIMMED_ITEM}[^\\S\\n]*)?`;

/** Names the variant filled (a text upload: `?variant_id=`); required when the product has several. */
const uploadVariantId = z
  .int('variant_id must be an integer')
  .min(1, 'variant_id must be a positive integer')
  .max(Number.MAX_SAFE_INTEGER, 'variant_id is too large')
  .optional()
  .openapi({ description: 'the variant the items are for: required when the product has several variants (a text upload: `?variant_id=`)' });

const StockUploadBody = z.object({
  variant_id: uploadVariantId,
  items: z
    .array(
      z.string('items must be strings').openapi({
        pattern: `^\\s*(?:${TRIMMED_ITEM}\\s*)?$`,
        description: `trimmed: at most ${MAX_ITEM_LENGTH} characters, no line break or other control character but tab; blank items are skipped`,
      }),
    )
    .max(MAX_ITEMS_PER_UPLOAD, `at most ${MAX_ITEMS_PER_UPLOAD} items per call`),
});

const StockUploadText = z.string().openapi({
  pattern: `^${TEXT_LINE}(?:\\n${TEXT_LINE})*$`,
  description: `one item per line, each trimmed (so CR LF line ends work): at most ${MAX_ITEMS_PER_UPLOAD} non-blank lines of at most ${MAX_ITEM_LENGTH} characters, no control character but tab`,
  example: 'CODE-1\nCODE-2',
});


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
  parameters,
  request: {
    params: IdParams,
    query: z.object({ variant_id: optionalIdQuery('variant_id').openapi({ description: 'a text upload: the variant the items are for' }) }),
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
      envelope(
        z.object({
          added: z.number().int(),
          skipped: z.number().int(),
          stock_count: z.number().int().openapi({ description: "the variant's available items after the upload (a product's one variant: the product's)" }),
        }),
      ),
      'Items added; duplicates skipped',
    ),
    ...errorResponses(401, 404, 413, 422),
  },
});

const CatalogueProductSchema = z.object({ ...Product.shape, units_sold: z.number().int() }).openapi('CatalogueProduct');
const presentCatalogueProduct = (origin: string) => (p: CatalogueProduct) => ({ ...presentProduct(p, origin), units_sold: p.unitsSold });
const AdminProductSchema = CatalogueProductSchema.extend({ variants: z.array(AdminVariant) }).openapi('AdminProduct');

export const adminProductsRouter = createRouter()
  .openapi(
    createRoute({
      method: 'post',
      path: '/products',
      operationId: 'createProduct',
      tags,
      summary: 'Create a product',
      security,
      parameters,
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
      const created = (product: ProductRow) => ({ status: 201 as const, body: ok(presentProduct(product, new URL(c.req.url).origin), 'Product created.') });
      return idempotent(
        c,
        body,
        async (claim) => {
          const product = await createProduct(c.var.db, ADMIN_TOKEN_ACTOR, { ...productInput(body), name: body.name, sku: body.sku, priceCents: body.price }, claim);
          await purgeStock(c, [product.id]);
          return created(product);
        },
        { ...asOperator, render: (snapshot) => created(snapshot as ProductRow) },
      );
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
      parameters,
      request: { params: IdParams, body: jsonBody(ProductBody.partial()) },
      responses: { 200: jsonResponse(envelope(Product), 'The product'), ...errorResponses(401, 404, 422) },
    }),
    async (c) => {
      const body = c.req.valid('json');
      const updated = (product: ProductRow) => ({ status: 200 as const, body: ok(presentProduct(product, new URL(c.req.url).origin), 'Product updated.') });
      return idempotent(
        c,
        body,
        async (claim) => {
          const product = await updateProduct(c.var.db, ADMIN_TOKEN_ACTOR, c.req.valid('param').id, productInput(body), catalogueChange(c, claim));
          await purgeStock(c, [product.id]);
          return updated(product);
        },
        { ...asOperator, render: (snapshot) => updated(snapshot as ProductRow) },
      );
    },
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/products/{id}',
      operationId: 'getAdminProduct',
      tags,
      summary: 'A product, active or not, with units sold and its variants',
      security,
      request: { params: IdParams },
      responses: { 200: jsonResponse(envelope(AdminProductSchema), 'The product'), ...errorResponses(401, 404, 422) },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const [product, variants] = await queryPlain(c.var.db, [catalogueProductQuery(id), variantsQuery(id)]);
      return c.json(ok({ ...presentCatalogueProduct(new URL(c.req.url).origin)(product), variants: variants.map(presentAdminVariant) }), 200);
    },
  )
  .openapi(
    createRoute({
      method: 'post',
      path: '/products/{id}/variants',
      operationId: 'createVariant',
      tags,
      summary: 'Add a variant to a product (at most 50; the product keeps its others, `Standard` included)',
      security,
      parameters,
      request: { params: IdParams, body: jsonBody(VariantBody) },
      responses: { 201: jsonResponse(envelope(AdminVariant), 'The variant'), ...errorResponses(401, 404, 422) },
    }),
    async (c) => {
      const body = c.req.valid('json');
      const { id } = c.req.valid('param');
      const created = (variant: VariantRow) => ({ status: 201 as const, body: ok(presentAdminVariant(variant), 'Variant created.') });
      return idempotent(
        c,
        { ...body, product_id: id },
        async (claim) => {
          const input = { ...variantInput(body), name: body.name, sku: body.sku, priceCents: body.price };
          const variant = await createVariant(c.var.db, ADMIN_TOKEN_ACTOR, id, input, catalogueChange(c, claim));
          await purgeStock(c, [id]);
          return created(variant);
        },
        { ...asOperator, render: (snapshot) => created(snapshot as VariantRow) },
      );
    },
  )
  .openapi(
    createRoute({
      method: 'patch',
      path: '/variants/{id}',
      operationId: 'updateVariant',
      tags,
      summary: 'Update a variant (a variant is never deleted: make it inactive)',
      security,
      parameters,
      request: { params: IdParams, body: jsonBody(VariantBody.partial()) },
      responses: { 200: jsonResponse(envelope(AdminVariant), 'The variant'), ...errorResponses(401, 404, 422) },
    }),
    async (c) => {
      const body = c.req.valid('json');
      const updated = (variant: VariantRow) => ({ status: 200 as const, body: ok(presentAdminVariant(variant), 'Variant updated.') });
      return idempotent(
        c,
        { ...body, variant_id: c.req.valid('param').id },
        async (claim) => {
          const variant = await updateVariant(c.var.db, ADMIN_TOKEN_ACTOR, c.req.valid('param').id, variantInput(body), catalogueChange(c, claim));
          await purgeStock(c, [variant.productId]);
          return updated(variant);
        },
        { ...asOperator, render: (snapshot) => updated(snapshot as VariantRow) },
      );
    },
  )
  .openapi(
    { ...addStockRoute, hide: true },
    async (c) => {
      const isText = (c.req.header('Content-Type') ?? '').toLowerCase().startsWith('text/plain');
      // Without a JSON content type the validated JSON is an empty object.
      const json = isText ? {} : (c.req.valid('json') as { items?: string[]; variant_id?: number });
      const raw = isText ? (await c.req.text()).split('\n') : json.items;
      if (raw === undefined) throw fieldError('items', 'items is required (or send a text/plain body)');
      const { id } = c.req.valid('param');
      const variantId = (isText ? c.req.valid('query').variant_id : json.variant_id) ?? null;
      const items = checkedUpload(raw);
      const added = (upload: StockUpload) => ({
        status: 201 as const,
        body: ok({ added: upload.added, skipped: upload.skipped, stock_count: upload.stockCount }, 'Stock added.'),
      });
      // The same items as JSON or as text are the same request.
      return idempotent(
        c,
        variantId === null ? { items } : { items, variant_id: variantId },
        async (claim) => {
          const upload = await addStock(c.var.db, ADMIN_TOKEN_ACTOR, id, items, catalogueChange(c, claim), variantId);
          await purgeStock(c, [id]);
          return added(upload);
        },
        { ...asOperator, render: (snapshot) => added(snapshot as StockUpload) },
      );
    },
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/products',
      operationId: 'listAllProducts',
      tags,
      summary: 'Every product, active or not, with stock count and units sold',
      security,
      request: { query: ProductsQuery },
      responses: { 200: jsonResponse(envelope(z.array(CatalogueProductSchema)), 'The products'), ...errorResponses(401, 422) },
    }),
    async (c) => {
      const { active } = c.req.valid('query');
      const [products] = await queryPlain(c.var.db, [catalogueQuery(active === undefined ? undefined : active === 'true')]);
      return c.json(ok(products.map(presentCatalogueProduct(new URL(c.req.url).origin))), 200);
    },
  );

adminProductsRouter.openAPIRegistry.registerPath({ ...addStockRoute, request: { ...addStockRoute.request, body: { ...addStockRoute.request.body, required: true } } });
