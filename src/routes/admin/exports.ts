import { createRoute, z } from '@hono/zod-openapi';
import { csvHeaders } from '../../lib/csv';
import { DateRangeQuery } from '../../lib/date-range';
import { queryPlain } from '../../services/caller';
import { EXPORT_MAX_ROWS, EXPORTS, exportFileName, exportQuery, type ExportName } from '../../services/operator/exports';
import { createRouter, errorResponses } from '../openapi';

// GET /admin/exports/{orders,deposits,transactions}.csv: mounted under the admin prefix (src/app.ts), so the admin
// bearer token guards it. The console's "Export CSV" links reach the same files through the operator's session
// (src/dashboard/console/exports.ts).

const FILES = EXPORTS.map((name) => `${name}.csv` as const);

export const adminExportsRouter = createRouter().openapi(
  createRoute({
    method: 'get',
    path: '/exports/{file}',
    operationId: 'exportCsv',
    tags: ['Admin'],
    summary: 'Orders, deposits or the wallet ledger as a CSV file (oldest first), within `from`/`to` (UTC days, inclusive)',
    description:
      'RFC 4180 CSV with a header row; money as decimals (`-4.99`), timestamps ISO 8601 UTC; never a stock item. A cell ' +
      "starting with `=`, `+`, `-`, `@`, a tab or a carriage return is written with a leading `'` so no spreadsheet runs " +
      `it as a formula (a plain number stays a number). At most ${EXPORT_MAX_ROWS.toLocaleString('en-US')} rows a file: a range with more is a 422 (export shorter ranges).`,
    security: [{ AdminBearer: [] }],
    request: {
      params: z.object({ file: z.enum(FILES, `file must be one of ${FILES.join(', ')}`).openapi({ param: { name: 'file', in: 'path' } }) }),
      query: DateRangeQuery,
    },
    responses: {
      200: { description: 'The CSV file', content: { 'text/csv': { schema: z.string() } } },
      ...errorResponses(401, 422),
    },
  }),
  async (c) => {
    const name = c.req.valid('param').file.replace(/\.csv$/, '') as ExportName;
    const range = c.req.valid('query');
    const [file] = await queryPlain(c.var.db, [exportQuery(name, range)]);
    return c.body(file, 200, csvHeaders(exportFileName(name, range)));
  },
);
