import { STATIC_ASSETS } from '../generated/static-assets';
import { formatUsd } from '../lib/money';
import type { DocumentView } from '../services/documents/documents';

// A document as a page that prints cleanly to PDF from any browser (A4, see `.document` in assets/dashboard/app.css):
// the seller, the buyer, the lines and the totals, nothing else; the links back are not printed. Shared by the API
// (`GET /documents/{id}/html`, with the key) and the dashboard (`/dashboard/documents/{id}`, with a session).

const TITLES = { invoice: 'Invoice', receipt: 'Receipt', credit_note: 'Credit note' } as const;

const usd = (amount: number) => formatUsd(Math.round(amount * 100));
const percent = (rate: number) => `${rate.toFixed(2).replace(/\.?0+$/, '')} %`;

function Party({ heading, lines }: { heading: string; lines: (string | null | undefined)[] }) {
  return (
    <section class="party">
      <h2>{heading}</h2>
      {lines.filter((l): l is string => Boolean(l)).map((l) => (
        <div>{l}</div>
      ))}
    </section>
  );
}

export interface DocumentPageOptions {
  /** Test mode: the page is marked TEST. */
  test: boolean;
  /** Where "Back" leads on screen (the dashboard's list); none for the API's page. */
  back?: string;
}

export async function documentPageHtml(doc: DocumentView, { test, back }: DocumentPageOptions): Promise<string> {
  const title = `${TITLES[doc.type]} ${doc.number}`;
  const page = (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{test ? `TEST ${title}` : title}</title>
        <link rel="stylesheet" href={STATIC_ASSETS['app.css']} />
        {/* Without it a browser asks for /favicon.ico, a 404 in the console of every printed document. */}
        <link rel="icon" href={STATIC_ASSETS['icon.svg']} type="image/svg+xml" />
      </head>
      <body class="document-body">
        {back && (
          <nav class="no-print" aria-label="Document">
            <a href={back}>Back to documents</a> · Print this page or save it as PDF from your browser.
          </nav>
        )}
        <main class="document">
          {test && <p class="test-mark">TEST — issued in test mode, not a real document</p>}
          <header class="document-head">
            <h1>{title}</h1>
            <dl>
              <dt>Number</dt>
              <dd>{doc.number}</dd>
              <dt>Date</dt>
              <dd>{doc.issued_at.slice(0, 10)}</dd>
              {doc.corrects && (
                <>
                  <dt>Corrects invoice</dt>
                  <dd>{doc.corrects}</dd>
                </>
              )}
            </dl>
          </header>
          <div class="parties">
            <Party heading="From" lines={[doc.seller.legal_name, ...doc.seller.address, doc.seller.country, doc.seller.tax_id && `Tax id: ${doc.seller.tax_id}`]} />
            <Party
              heading="To"
              lines={[doc.buyer.name, doc.buyer.company, ...doc.buyer.address, doc.buyer.country, doc.buyer.vat_id && `VAT id: ${doc.buyer.vat_id}`, doc.buyer.email]}
            />
          </div>
          <table class="document-lines">
            <thead>
              <tr>
                <th>Description</th>
                <th class="num">Quantity</th>
                <th class="num">Unit price</th>
                <th class="num">Amount</th>
              </tr>
            </thead>
            <tbody>
              {doc.lines.map((line) => (
                <tr>
                  <td>{line.description}</td>
                  <td class="num">{String(line.quantity)}</td>
                  <td class="num">{usd(line.unit_amount)}</td>
                  <td class="num">{usd(line.amount)}</td>
                </tr>
              ))}
            </tbody>
            <tfoot>
              <tr>
                <th colspan={3}>Net</th>
                <td class="num">{usd(doc.net_amount)}</td>
              </tr>
              <tr>
                <th colspan={3}>{`Tax ${percent(doc.tax_rate)}`}</th>
                <td class="num">{usd(doc.tax_amount)}</td>
              </tr>
              <tr class="total">
                <th colspan={3}>{doc.type === 'credit_note' ? 'Total credited' : doc.type === 'receipt' ? 'Total received' : 'Total'}</th>
                <td class="num">{`${usd(doc.total_amount)} ${doc.currency}`}</td>
              </tr>
            </tfoot>
          </table>
          {doc.tax_note && <p class="tax-note">{doc.tax_note}</p>}
          {doc.type === 'invoice' && <p class="paid-note">Paid from the wallet balance. Prices include tax.</p>}
        </main>
      </body>
    </html>
  );
  return `<!doctype html>${await page.toString()}`;
}
