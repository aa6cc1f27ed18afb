import { Hono } from 'hono';
import type { AppEnv } from '../../env';
import { PaginationQuery } from '../../lib/pagination';
import { requireOperatorSession } from '../../middleware/session';
import { auditLogQuery } from '../../services/audit-log';
import { queryAsOperator } from '../../services/caller';
import { Pager, When } from '../components';
import { parseForm } from '../forms';
import { page } from '../layout';
import { DataTable } from '../tables';

// The audit log (GET /admin/audit-log): every operator write, from here or the admin API, newest first.

const AUDIT = '/dashboard/console/audit';

/** A target's console page: `user:12` → the user's page. */
function targetLink(target: string) {
  const [kind, id] = target.split(':');
  const path = { user: 'users', product: 'products', deposit: 'deposits' }[kind];
  if (!path || !/^\d+$/.test(id ?? '')) return target;
  return <a href={kind === 'deposit' ? `/dashboard/console/deposits#deposit-${id}` : `/dashboard/console/${path}/${id}`}>{target}</a>;
}

/** Details as `key: value` pairs (a JSON object of what changed, never a secret). */
const describe = (details: string) =>
  Object.entries(JSON.parse(details) as Record<string, unknown>)
    .map(([key, value]) => `${key}: ${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join(', ');

export const consoleAudit = new Hono<AppEnv>().get('/console/audit', requireOperatorSession, async (c) => {
  const pageQuery = parseForm(PaginationQuery, { page: c.req.query('page') ?? '1' });
  const [{ rows, total }] = await queryAsOperator(c.var.db, c.var.caller, [auditLogQuery(pageQuery)]);
  return page(c, {
    title: 'Audit log',
    section: AUDIT,
    children: (
      <>
        <p class="muted">Every operator write, from this console (user:&lt;id&gt;) or the admin API (admin_token), newest first.</p>
        <DataTable
          caption="Audit log entries"
          rows={rows}
          empty="No operator write yet."
          columns={[
            { label: 'When', cell: (a) => <When iso={a.createdAt} /> },
            { label: 'Actor', cell: (a) => a.actor },
            { label: 'Action', cell: (a) => a.action },
            { label: 'Target', cell: (a) => targetLink(a.target) },
            { label: 'Details', cell: (a) => describe(a.details) },
          ]}
        />
        <Pager path={AUDIT} page={pageQuery.page} totalPages={Math.ceil(total / pageQuery.per_page)} />
      </>
    ),
  });
});
