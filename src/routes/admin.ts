import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { DepositRow, ProductRow, TransactionRow } from '../db/schema';
import { readConfig, type AppEnv } from '../env';
import { hmacSha256Hex, openSealed, sealText } from '../lib/crypto';
import { envelope, ok } from '../lib/envelope';
import { fieldError } from '../lib/errors';
import { controlClass } from '../lib/validation';
import { createRouter, errorResponses, idempotencyKeyParameter, IdParams, idLinks, jsonBody, jsonResponse } from './openapi';
import { idempotent } from '../middleware/idempotency';
import { catalogueChange, publishAfterResponse } from '../middleware/publish-events';
import { purgeStock } from '../middleware/stock-cache';
import { AdjustmentBody, ProductBody, productInput, RefreshDepositBody } from '../schemas/operator';
import { CreateUserBody } from '../schemas/users';
import { addStock, checkedUpload, createProduct, MAX_ITEM_LENGTH, MAX_ITEMS_PER_UPLOAD, updateProduct, type StockUpload } from '../services/products';
import { markDepositPaid, type CreditSnapshot } from '../services/deposits';
import { refreshDeposit, type LookupResult } from '../services/vendor-payments';
import { GATEWAY_OUTCOMES } from '../db/schema';
import { OPERATOR } from '../services/idempotency';
import { createUser, type UserCreationSnapshot, type UserProfile } from '../services/users';
import { adjustBalance } from '../services/wallet';
import { ADMIN_TOKEN_ACTOR } from '../services/audit-log';
import { Deposit, DepositStatus, lastCheckedAt, presentDeposit, presentDepositStatus, presentProduct, presentTransaction, Product, Transaction } from './representations';
import { presentProfile, UserProfileSchema } from './user';
import { mailFor } from '../middleware/send-emails';

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

const StockUploadBody = z.object({
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

/**
 * The first API key of a user created under an Idempotency-Key (or a password reset link) is kept for its replay
 * sealed (AES-GCM) under the admin token and that Idempotency-Key: the database never holds it in clear, and only the operator who sent both reads it.
 * (A replay under another token never gets here: the request hash covers the password through an HMAC under the token.)
 */
export function operatorSealing(c: Context<AppEnv>, purpose: string) {
  const secret = `${c.env.ADMIN_TOKEN}\n${c.req.header('Idempotency-Key')}`;
  return {
    seal: (secretText: string) => sealText(secret, purpose, secretText),
    open: async (sealed: string) => {
      const secretText = await openSealed(secret, purpose, sealed);
      if (secretText === null) throw new Error(`The sealed ${purpose} of an idempotency record cannot be opened: the record was altered.`);
      return secretText;
    },
  };
}

export const adminRouter = createRouter()
  .openapi(
    createRoute({
      method: 'post',
      path: '/users',
      operationId: 'createUser',
      tags,
      summary: 'Create a user and its first API key',
      security,
      parameters,
      request: { body: jsonBody(CreateUserBody) },
      responses: {
        201: jsonResponse(envelope(UserProfileSchema.extend({ api_key: z.string() })), 'The user and its first key', idLinks('/data/id', { adjustBalance: 'id' })),
        ...errorResponses(401, 422),
      },
    }),
    async (c) => {
      const body = c.req.valid('json');
      const sealing = operatorSealing(c, 'admin-user-first-api-key');
      const created = (user: UserProfile, apiKey: string) => ({ status: 201 as const, body: ok({ ...presentProfile(user), api_key: apiKey }, 'User created.') });
      // The request is remembered by a hash; the password enters it only through an HMAC under the admin token.
      const request = { ...body, password: await hmacSha256Hex(c.env.ADMIN_TOKEN ?? '', body.password) };
      return idempotent(
        c,
        request,
        async (claim) => {
          const { user, apiKey } = await createUser(c.var.db, ADMIN_TOKEN_ACTOR, body, claim && { claim, seal: sealing.seal });
          return created(user, apiKey);
        },
        { ...asOperator, render: async (snapshot) => created(snapshot as UserProfile, await sealing.open((snapshot as UserCreationSnapshot).sealedApiKey)) },
      );
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
      parameters,
      request: { params: IdParams, body: jsonBody(AdjustmentBody) },
      responses: { 201: jsonResponse(envelope(Transaction), 'The adjustment transaction'), ...errorResponses(400, 401, 404, 422) },
    }),
    async (c) => {
      const body = c.req.valid('json');
      const adjusted = (transaction: TransactionRow) => ({ status: 201 as const, body: ok(presentTransaction(transaction), 'Balance adjusted.') });
      return idempotent(
        c,
        body,
        async (claim) => adjusted(await adjustBalance(c.var.db, ADMIN_TOKEN_ACTOR, c.req.valid('param').id, body.amount, body.description, claim, publishAfterResponse(c))),
        { ...asOperator, render: (snapshot) => adjusted(snapshot as TransactionRow) },
      );
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
    { ...addStockRoute, hide: true },
    async (c) => {
      const isText = (c.req.header('Content-Type') ?? '').toLowerCase().startsWith('text/plain');
      // Without a JSON content type the validated JSON is an empty object.
      const raw = isText ? (await c.req.text()).split('\n') : (c.req.valid('json') as { items?: string[] }).items;
      if (raw === undefined) throw fieldError('items', 'items is required (or send a text/plain body)');
      const { id } = c.req.valid('param');
      const items = checkedUpload(raw);
      const added = (upload: StockUpload) => ({
        status: 201 as const,
        body: ok({ added: upload.added, skipped: upload.skipped, stock_count: upload.stockCount }, 'Stock added.'),
      });
      // The same items as JSON or as text are the same request.
      return idempotent(
        c,
        { items },
        async (claim) => {
          const upload = await addStock(c.var.db, ADMIN_TOKEN_ACTOR, id, items, catalogueChange(c, claim));
          await purgeStock(c, [id]);
          return added(upload);
        },
        { ...asOperator, render: (snapshot) => added(snapshot as StockUpload) },
      );
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
      parameters,
      request: { params: IdParams },
      responses: { 200: jsonResponse(envelope(DepositStatus), 'The deposit, paid'), ...errorResponses(401, 404, 422) },
    }),
    async (c) => {
      const confirmed = ({ deposit, credited }: { deposit: DepositRow; credited: boolean | CreditSnapshot['credited'] }) => ({
        status: 200 as const,
        body: ok(presentDepositStatus(deposit), credited ? 'Deposit credited to the wallet.' : 'Deposit was already paid.'),
      });
      return idempotent(
        c,
        {},
        async (claim) => confirmed(await markDepositPaid(c.var.db, ADMIN_TOKEN_ACTOR, c.req.valid('param').id, claim, publishAfterResponse(c), mailFor(c))),
        { ...asOperator, render: (snapshot) => confirmed(snapshot as CreditSnapshot) },
      );
    },
  );

const RefreshedDeposit = z
  .object({
    deposit: Deposit.extend({
      reference: z.string().nullable(),
      last_checked_at: lastCheckedAt,
    }),
    vendor_status: z.string().nullable().openapi({ description: "the vendor's status as received; null when it has none yet" }),
    outcome: z.enum(GATEWAY_OUTCOMES).openapi({ description: '`duplicate`: already credited (or closed); `in_progress`: nothing to apply yet' }),
  })
  .openapi('RefreshedDeposit');

const presentRefresh = ({ deposit, vendorStatus, outcome }: LookupResult) => ({
  deposit: { ...presentDeposit(deposit), reference: deposit.reference, last_checked_at: deposit.lastCheckedAt },
  vendor_status: vendorStatus,
  outcome,
});

adminRouter.openapi(
  createRoute({
    method: 'post',
    path: '/deposits/{id}/refresh',
    operationId: 'refreshDeposit',
    tags,
    summary: "Ask the deposit's payment provider what happened to it, and apply the answer",
    description:
      "Asks the vendor's own API (10 s at most) and applies its answer as a verified notification with that status " +
      'would be applied: paid credits exactly once, a paid amount under the deposit less 1 % is `amount_mismatch`. The ' +
      'vendor asked is the one the deposit was made with, even after its slot changed provider. A deposit of a generic ' +
      'slot, or whose provider is no longer configured, has no vendor to ask: 422. `payment_id` (NOWPayments only, else ' +
      "422) is used for this lookup and stored when the vendor's answer names this deposit; another deposit's payment: " +
      '422, nothing changes. The vendor cannot be reached or answers about another deposit: 503 `GATEWAY_UNAVAILABLE`, ' +
      'nothing changes. A refresh that credits or closes the deposit is on the audit log (`deposit.refreshed`).',
    security,
    parameters,
    request: { params: IdParams, body: jsonBody(RefreshDepositBody) },
    responses: { 200: jsonResponse(envelope(RefreshedDeposit), 'The deposit as after the answer'), ...errorResponses(401, 404, 422) },
  }),
  async (c) => {
    const answered = (result: LookupResult) => ({ status: 200 as const, body: ok(presentRefresh(result)) });
    const body = c.req.valid('json');
    const options = { paymentId: body.payment_id, actor: ADMIN_TOKEN_ACTOR, mail: mailFor(c) };
    return idempotent(
      c,
      body,
      async (claim) => answered(await refreshDeposit(c.var.db, readConfig(c.env), c.req.valid('param').id, options, claim, publishAfterResponse(c))),
      { ...asOperator, render: (snapshot) => answered(snapshot as LookupResult) },
    );
  },
);

adminRouter.openAPIRegistry.registerPath({ ...addStockRoute, request: { ...addStockRoute.request, body: { ...addStockRoute.request.body, required: true } } });
