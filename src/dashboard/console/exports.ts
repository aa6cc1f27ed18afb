import { Hono } from 'hono';
import type { AppEnv } from '../../env';
import { csvHeaders } from '../../lib/csv';
import { DateRangeQuery } from '../../lib/date-range';
import { notFound } from '../../lib/errors';
import { requireOperatorSession } from '../../middleware/session';
import { queryAsOperator } from '../../services/caller';
import { EXPORTS, exportFileName, exportQuery, type ExportName } from '../../services/operator/exports';
import { parseForm } from '../forms';

// The console's "Export CSV" links: the admin API's CSV files (GET /admin/exports/*.csv) for an operator's session,
// proved in the export's own batch (one round trip). Another session gets 404, none goes to sign-in: the console's
// rules. The admin token is never handed to a browser.

const isExport = (name: string): name is ExportName => (EXPORTS as readonly string[]).includes(name);

export const consoleExports = new Hono<AppEnv>().get('/console/exports/:file', requireOperatorSession, async (c) => {
  const name = /^(\w+)\.csv$/.exec(c.req.param('file'))?.[1] ?? '';
  if (!isExport(name)) throw notFound('Page');
  const range = parseForm(DateRangeQuery, c.req.query());
  const [file] = await queryAsOperator(c.var.db, c.var.caller, [exportQuery(name, range)]);
  return c.body(file, 200, csvHeaders(exportFileName(name, range)));
});
