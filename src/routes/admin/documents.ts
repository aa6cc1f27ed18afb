import { createRoute, z } from '@hono/zod-openapi';
import { envelope, ok } from '../../lib/envelope';
import { paged, pagedEnvelope } from '../../lib/pagination';
import { AdminDocumentsQuery, InvoicingSettingsBody } from '../../schemas/documents';
import { ADMIN_TOKEN_ACTOR } from '../../services/accounts/audit-log';
import { queryPlain } from '../../services/caller';
import { allDocumentsQuery, presentDocument } from '../../services/documents/documents';
import { invoicingSettingsQuery, presentInvoicingSettings, settingsFromBody, updateInvoicingSettings } from '../../services/documents/settings';
import { createRouter, errorResponses, jsonBody, jsonResponse } from '../openapi';
import { DocumentSchema } from '../documents/documents';

// The operator's documents: every document (GET /admin/documents; the CSV is /admin/exports/documents.csv) and the
// seller's invoicing settings (GET/PUT /admin/settings/invoicing).

const tags = ['Admin'];
const security = [{ AdminBearer: [] }];

const InvoicingSettingsSchema = z
  .object({
    legal_name: z.string(),
    address: z.array(z.string()),
    country: z.string().nullable(),
    tax_id: z.string().nullable(),
    tax_mode: z.enum(['none', 'vat']),
    vat_rates: z.record(z.string(), z.number()).openapi({ description: 'percent by buyer country' }),
  })
  .openapi('InvoicingSettings');

const AdminDocument = z.object({ ...DocumentSchema.shape, user_id: z.number().int() }).openapi('AdminDocument');

export const adminDocumentsRouter = createRouter()
  .openapi(
    createRoute({
      method: 'get',
      path: '/documents',
      operationId: 'listAllDocuments',
      tags,
      summary: 'Every invoice, receipt and credit note, newest first (filters: type, user_id)',
      security,
      request: { query: AdminDocumentsQuery },
      responses: { 200: jsonResponse(pagedEnvelope(AdminDocument), 'A page of documents'), ...errorResponses(401, 422) },
    }),
    async (c) => {
      const { type, user_id: userId, ...page } = c.req.valid('query');
      const [{ rows, total }] = await queryPlain(c.var.db, [allDocumentsQuery(page, { type, userId })]);
      return c.json(paged(rows.map((row) => ({ ...presentDocument(row), user_id: row.userId })), page, total), 200);
    },
  )
  .openapi(
    createRoute({
      method: 'get',
      path: '/settings/invoicing',
      operationId: 'getInvoicingSettings',
      tags,
      summary: "The seller's invoicing settings, as the next document will name them",
      security,
      responses: { 200: jsonResponse(envelope(InvoicingSettingsSchema), 'The settings'), ...errorResponses(401) },
    }),
    async (c) => {
      const [settings] = await queryPlain(c.var.db, [invoicingSettingsQuery]);
      return c.json(ok(presentInvoicingSettings(settings)), 200);
    },
  )
  .openapi(
    createRoute({
      method: 'put',
      path: '/settings/invoicing',
      operationId: 'updateInvoicingSettings',
      tags,
      summary: "Replace the seller's invoicing settings (documents already issued never change)",
      description:
        '`tax_mode` `none` (default): no tax on any document. `vat`: prices include VAT at `vat_rates[buyer country]` (0 where none is ' +
        "set); `country` is then required. A buyer with a `vat_id` in another country than the seller's: reverse charge. Audited " +
        '(`settings.invoicing_updated`).',
      security,
      request: { body: jsonBody(InvoicingSettingsBody) },
      responses: { 200: jsonResponse(envelope(InvoicingSettingsSchema), 'Updated'), ...errorResponses(401, 422) },
    }),
    async (c) => {
      const body = c.req.valid('json');
      const settings = await updateInvoicingSettings(c.var.db, ADMIN_TOKEN_ACTOR, settingsFromBody(body));
      return c.json(ok(presentInvoicingSettings(settings), 'Invoicing settings updated.'), 200);
    },
  );
