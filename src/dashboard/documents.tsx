import { Hono } from 'hono';
import type { AppEnv } from '../env';
import { DOCUMENT_TYPES, type DocumentType } from '../db/schema';
import { requireSession } from '../middleware/session';
import { DocumentsQuery } from '../schemas/documents';
import { queryAs } from '../services/caller';
import { documentQuery, documentsQuery, presentDocument, type DocumentWithCorrects } from '../services/documents/documents';
import { Money, Pager, When } from './components';
import { documentPageHtml } from './document-page';
import { idFromPath, parseForm } from './forms';
import { page } from './layout';
import { DataTable } from './tables';

// The buyer's documents for the books: the list (GET /documents) and each document as its printable page
// (GET /documents/{id}/html), for a session. One round trip a page.

export const DOCUMENT_TITLES: Record<DocumentType, string> = { invoice: 'Invoice', receipt: 'Receipt', credit_note: 'Credit note' };

export const documentPath = (id: number) => `/dashboard/documents/${id}`;

/** A list of documents (the dashboard's, an order's page, the console's), each opening its page. */
export function DocumentsTable({ rows, caption, href = (d) => documentPath(d.id) }: { rows: DocumentWithCorrects[]; caption: string; href?: (d: DocumentWithCorrects) => string }) {
  return (
    <DataTable
      caption={caption}
      rows={rows}
      empty="No documents yet: an invoice comes with each order, a receipt with each top-up, a credit note with each refund."
      columns={[
        { label: 'Number', cell: (d) => <a href={href(d)}>{d.number}</a> },
        { label: 'Type', cell: (d) => DOCUMENT_TITLES[d.type] },
        { label: 'Issued', cell: (d) => <When iso={d.issuedAt} /> },
        { label: 'Corrects', cell: (d) => d.correctsNumber ?? '' },
        { label: 'Total', class: 'num', cell: (d) => <Money cents={d.totalAmountCents} /> },
      ]}
    />
  );
}

export const documentsPages = new Hono<AppEnv>()
  .get('/documents', requireSession, async (c) => {
    const type = c.req.query('type');
    const query = parseForm(DocumentsQuery, { page: c.req.query('page') ?? '1', ...(type ? { type } : {}) });
    const [{ rows, total }] = await queryAs(c.var.db, c.var.caller, [documentsQuery(c.var.caller, query, { type: query.type })]);
    return page(c, {
      title: 'Documents',
      section: '/dashboard/documents',
      children: (
        <>
          <nav class="filters" aria-label="Document types">
            <a href="/dashboard/documents" aria-current={query.type ? undefined : 'page'}>
              All
            </a>
            {DOCUMENT_TYPES.map((t) => (
              <>
                {' · '}
                <a href={`/dashboard/documents?type=${t}`} aria-current={query.type === t ? 'page' : undefined}>
                  {`${DOCUMENT_TITLES[t]}s`}
                </a>
              </>
            ))}
          </nav>
          <DocumentsTable rows={rows} caption="Your documents, newest first" />
          <Pager path="/dashboard/documents" page={query.page} totalPages={Math.ceil(total / query.per_page)} query={{ type: query.type }} />
        </>
      ),
    });
  })
  .get('/documents/:id', requireSession, async (c) => {
    const [row] = await queryAs(c.var.db, c.var.caller, [documentQuery(c.var.caller, idFromPath(c.req.param('id'), 'Document'))]);
    return c.html(await documentPageHtml(presentDocument(row), { test: false, back: '/dashboard/documents' }));
  });
