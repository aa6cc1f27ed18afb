import { Hono, type Context } from 'hono';
import type { AppEnv } from '../../env';
import { DOCUMENT_TYPES } from '../../db/schema';
import { DateRangeQuery } from '../../lib/date-range';
import { requireOperatorSession } from '../../middleware/session';
import { AdminDocumentsQuery, InvoicingSettingsBody, TAX_MODES } from '../../schemas/documents';
import { operatorActor } from '../../services/accounts/audit-log';
import { queryAsOperator } from '../../services/caller';
import { allDocumentsQuery, anyDocumentQuery, presentDocument } from '../../services/documents/documents';
import { invoicingSettingsQuery, settingsFromBody, updateInvoicingSettings } from '../../services/documents/settings';
import { Alert, Field, Pager, Select, TextArea } from '../components';
import { documentPageHtml } from '../document-page';
import { DOCUMENT_TITLES, DocumentsTable } from '../documents';
import { withDone } from '../done-notices';
import { formHandler, idFromPath, parseForm, sameOriginForm, type FormFields, type FormProblem } from '../forms';
import { page } from '../layout';
import { exportHref, ListFilter } from './filters';

// The console's documents (GET /admin/documents, the CSV export /admin/exports/documents.csv) and the seller's
// invoicing settings (GET/PUT /admin/settings/invoicing), for an operator's session: one round trip a page.

const DOCUMENTS = '/dashboard/console/documents';
const INVOICING = '/dashboard/console/invoicing';

export const consoleDocuments = new Hono<AppEnv>()
  .get('/console/documents', requireOperatorSession, async (c) => {
    const { from, to, type, user_id: userId, ...pageQuery } = parseForm(AdminDocumentsQuery.extend(DateRangeQuery.shape), c.req.query());
    const range = { from, to };
    const [{ rows, total }] = await queryAsOperator(c.var.db, c.var.caller, [allDocumentsQuery(pageQuery, { type, userId, range })]);
    return page(c, {
      title: 'Documents',
      section: DOCUMENTS,
      children: (
        <>
          <p class="muted">
            Every invoice, receipt and credit note, newest first, as issued (they never change). <a href={INVOICING}>Invoicing settings</a> decide
            what the next ones say.
          </p>
          <ListFilter
            action={DOCUMENTS}
            range={range}
            keep={{ user_id: userId === undefined ? undefined : String(userId) }}
            after={<Select name="type" label="Type" options={[{ value: '', label: 'All' }, ...DOCUMENT_TYPES.map((t) => ({ value: t, label: DOCUMENT_TITLES[t] }))]} value={type ?? ''} />}
          >
            <a href={exportHref('documents', range)}>Export CSV</a>
          </ListFilter>
          <p class="totals">{`${total} document(s)`}</p>
          <DocumentsTable rows={rows} caption="Documents" href={(d) => `${DOCUMENTS}/${d.id}`} />
          <Pager path={DOCUMENTS} page={pageQuery.page} totalPages={Math.ceil(total / pageQuery.per_page)} query={{ ...range, type, user_id: userId === undefined ? undefined : String(userId) }} />
        </>
      ),
    });
  })
  .get('/console/documents/:id', requireOperatorSession, async (c) => {
    const [row] = await queryAsOperator(c.var.db, c.var.caller, [anyDocumentQuery(idFromPath(c.req.param('id'), 'Document'))]);
    return c.html(await documentPageHtml(presentDocument(row), { test: false, back: DOCUMENTS }));
  })
  .get('/console/invoicing', requireOperatorSession, (c) => invoicingPage(c, {}))
  .post(
    '/console/invoicing',
    sameOriginForm,
    requireOperatorSession,
    formHandler(
      async (c, fields) => {
        const body = parseForm(InvoicingSettingsBody, invoicingInput(fields));
        await updateInvoicingSettings(c.var.db, operatorActor(c.var.caller), settingsFromBody(body));
        return c.redirect(withDone(INVOICING, 'invoicing_saved'), 303);
      },
      (c, fields, problem) => invoicingPage(c, { values: fields, problem }, problem.status),
    ),
  );

const blankIsNull = (value: string | undefined) => (value === undefined || value.trim() === '' ? null : value);

/** "DE 19" lines as the settings' rates: a line that is not "<country> <percent>" is kept so the schema names it. */
function ratesFrom(text: string): Record<string, unknown> {
  const rates: Record<string, unknown> = {};
  for (const line of text.split(/\r?\n/).map((l) => l.trim()).filter(Boolean)) {
    const [country, percent] = line.split(/[\s:=]+/);
    rates[(country ?? '').toUpperCase()] = percent !== undefined && /^\d+(\.\d+)?$/.test(percent) ? Number(percent) : percent;
  }
  return rates;
}

const invoicingInput = (fields: FormFields) => ({
  legal_name: fields.legal_name,
  address: (fields.address ?? '').split(/\r?\n/).filter((line) => line.trim() !== ''),
  country: blankIsNull(fields.country)?.trim().toUpperCase() ?? null,
  tax_id: blankIsNull(fields.tax_id),
  tax_mode: fields.tax_mode,
  vat_rates: ratesFrom(fields.vat_rates ?? ''),
});

async function invoicingPage(c: Context<AppEnv>, { values, problem }: { values?: FormFields; problem?: FormProblem }, status: 200 | FormProblem['status'] = 200) {
  const [settings] = await queryAsOperator(c.var.db, c.var.caller, [invoicingSettingsQuery]);
  const shown = values ?? {
    legal_name: settings.legalName,
    address: settings.address.join('\n'),
    country: settings.country ?? '',
    tax_id: settings.taxId ?? '',
    tax_mode: settings.taxMode,
    vat_rates: Object.entries(settings.vatRates)
      .map(([country, bp]) => `${country} ${bp / 100}`)
      .join('\n'),
  };
  return page(
    c,
    {
      title: 'Invoicing',
      section: INVOICING,
      children: (
        <section class="card narrow" aria-labelledby="invoicing-heading">
          <h2 id="invoicing-heading">The seller on every document</h2>
          <p class="muted">
            Documents issued from now on name these details; those already issued keep theirs. VAT: prices include it, at the rate of the buyer's
            country (their billing country, else where they buy from); a business buyer with a VAT id in another country pays no VAT (reverse charge).
          </p>
          <Alert problem={problem} />
          <form method="post" action={INVOICING}>
            <Field name="legal_name" label="Legal name" value={shown.legal_name} problem={problem} required maxlength={200} />
            <TextArea name="address" label="Address (one line each, at most 6)" rows={4} value={shown.address} problem={problem} />
            <Field name="country" label="Country (ISO code, e.g. DE)" value={shown.country} problem={problem} maxlength={2} />
            <Field name="tax_id" label="Tax id" value={shown.tax_id} problem={problem} maxlength={50} />
            <Select name="tax_mode" label="Tax" options={TAX_MODES.map((m) => ({ value: m, label: m === 'none' ? 'No tax on documents' : 'VAT included in prices' }))} value={shown.tax_mode} problem={problem} />
            <TextArea name="vat_rates" label="VAT rates (one country a line: DE 19)" rows={6} value={shown.vat_rates} problem={problem} />
            <button type="submit">Save invoicing settings</button>
          </form>
        </section>
      ),
    },
    status,
  );
}
