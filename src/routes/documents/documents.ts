import { createRoute, z } from '@hono/zod-openapi';
import { documentPageHtml } from '../../dashboard/document-page';
import { dashboardSecureHeaders } from '../../dashboard/index';
import { DOCUMENT_TYPES } from '../../db/schema';
import { envelope, ok } from '../../lib/envelope';
import { paged, pagedEnvelope } from '../../lib/pagination';
import { BillingBody, DocumentsQuery } from '../../schemas/documents';
import { queryAs } from '../../services/caller';
import { documentQuery, documentsQuery, presentDocument } from '../../services/documents/documents';
import { billingFromBody, billingQuery, presentBilling, updateBilling } from '../../services/documents/settings';
import { createRouter, errorResponses, IdParams, jsonBody, jsonResponse, needsScope } from '../openapi';

// GET /documents, /documents/{id}, /documents/{id}/html: the caller's invoices, receipts and credit notes
// (src/services/documents/). GET/PUT /user/billing: the buyer's details the next documents name.

const tags = ['Documents'];

const lines = z.array(z.string());
const Party = { address: lines, country: z.string().nullable() };

export const DocumentSchema = z
  .object({
    id: z.number().int(),
    type: z.enum(DOCUMENT_TYPES),
    number: z.string().openapi({ example: 'INV-000001' }),
    issued_at: z.string().openapi({ format: 'date-time' }),
    order_id: z.number().int().nullable(),
    deposit_id: z.number().int().nullable(),
    corrects: z.string().nullable().openapi({ description: 'credit notes: the number of the invoice corrected' }),
    seller: z.object({ legal_name: z.string(), ...Party, tax_id: z.string().nullable() }),
    buyer: z.object({ name: z.string(), company: z.string().nullable(), ...Party, vat_id: z.string().nullable(), email: z.string() }),
    lines: z.array(z.object({ description: z.string(), quantity: z.number().int(), unit_amount: z.number(), amount: z.number() })),
    net_amount: z.number(),
    tax_rate: z.number().openapi({ description: 'percent' }),
    tax_amount: z.number(),
    total_amount: z.number(),
    currency: z.literal('USD'),
    tax_note: z.string().nullable(),
    evidence: z.object({ billing_country: z.string().nullable(), ip_country: z.string().nullable() }),
  })
  .openapi('Document');

export const BillingSchema = z
  .object({ name: z.string(), company: z.string().nullable(), address: lines, country: z.string().nullable(), vat_id: z.string().nullable() })
  .openapi('BillingDetails');

export const documentsRouter = createRouter()
  .openapi(
    createRoute({
      method: 'get',
      path: '/',
      operationId: 'listDocuments',
      tags,
      summary: 'Your invoices, receipts and credit notes, newest first',
      ...needsScope('read'),
      request: { query: DocumentsQuery },
      responses: { 200: jsonResponse(pagedEnvelope(DocumentSchema), 'A page of documents'), ...errorResponses(401, 403, 422, 429) },
    }),
    async (c) => {
      const { type, ...page } = c.req.valid('query');
      const [{ rows, total }] = await queryAs(c.var.db, c.var.caller, [documentsQuery(c.var.caller, page, { type })]);
      return c.json(paged(rows.map(presentDocument), page, total), 200);
    },
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/{id}',
      operationId: 'getDocument',
      tags,
      summary: 'One of your documents',
      ...needsScope('read'),
      request: { params: IdParams },
      responses: { 200: jsonResponse(envelope(DocumentSchema), 'The document'), ...errorResponses(401, 403, 404, 422, 429) },
    }),
    async (c) => {
      const [row] = await queryAs(c.var.db, c.var.caller, [documentQuery(c.var.caller, c.req.valid('param').id)]);
      return c.json(ok(presentDocument(row)), 200);
    },
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/{id}/html',
      operationId: 'getDocumentHtml',
      tags,
      summary: 'One of your documents as a page that prints to PDF (A4; marked TEST in test mode)',
      ...needsScope('read'),
      // An HTML page: the dashboard's Content-Security-Policy and frame refusal.
      middleware: [needsScope('read').middleware, dashboardSecureHeaders] as const,
      request: { params: IdParams },
      responses: { 200: { description: 'The page', content: { 'text/html': { schema: z.string() } } }, ...errorResponses(401, 403, 404, 422, 429) },
    }),
    async (c) => {
      const [row] = await queryAs(c.var.db, c.var.caller, [documentQuery(c.var.caller, c.req.valid('param').id)]);
      return c.html(await documentPageHtml(presentDocument(row), { test: c.var.mode === 'test' }), 200);
    },
  );

export const billingRouter = createRouter()
  .openapi(
    createRoute({
      method: 'get',
      path: '/billing',
      operationId: 'getBilling',
      tags,
      summary: 'Your billing details (until set: your account name)',
      ...needsScope('account'),
      responses: { 200: jsonResponse(envelope(BillingSchema), 'The billing details'), ...errorResponses(401, 403, 429) },
    }),
    async (c) => {
      const [billing] = await queryAs(c.var.db, c.var.caller, [billingQuery(c.var.caller)]);
      return c.json(ok(presentBilling(billing)), 200);
    },
  )
  .openapi(
    createRoute({
      method: 'put',
      path: '/billing',
      operationId: 'updateBilling',
      tags,
      summary: 'Replace your billing details (named on documents issued from now on; issued ones never change)',
      ...needsScope('account'),
      request: { body: jsonBody(BillingBody) },
      responses: { 200: jsonResponse(envelope(BillingSchema), 'Updated'), ...errorResponses(401, 403, 422, 429) },
    }),
    async (c) => {
      const billing = await updateBilling(c.var.db, c.var.caller, billingFromBody(c.req.valid('json')));
      return c.json(ok(presentBilling(billing), 'Billing details updated.'), 200);
    },
  );
