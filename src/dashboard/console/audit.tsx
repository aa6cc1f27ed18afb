import { Hono } from 'hono';
import type { AppEnv } from '../../env';
import { requireOperatorSession } from '../../middleware/session';
import { AuditLogQuery } from '../../schemas/operator';
import { auditLogQuery, type AuditEntryRow } from '../../services/accounts/audit-log';
import { queryAsOperator } from '../../services/caller';
import { Pager, When } from '../components';
import { parseForm } from '../forms';
import { page } from '../layout';
import { DataTable } from '../tables';
import { DateFilter } from './filters';
import { Person } from './person';

// The audit log (GET /admin/audit-log): every operator write, from here or the admin API, newest first.

const AUDIT = '/dashboard/console/audit';

/** A target's console page: `user:12` → the user's page (users, products, deposits, orders, coupons). */
function targetLink(target: string) {
  const [kind, id] = target.split(':');
  const path = { user: 'users', product: 'products', deposit: 'deposits', order: 'orders', coupon: 'coupons' }[kind];
  if (!path || !/^\d+$/.test(id ?? '')) return target;
  return <a href={kind === 'deposit' ? `/dashboard/console/deposits#deposit-${id}` : `/dashboard/console/${path}/${id}`}>{target}</a>;
}

/** The operator by name and email (`user:<id>`), or the admin API's token. */
function actorOf(entry: AuditEntryRow) {
  const id = /^user:(\d+)$/.exec(entry.actor)?.[1];
  return id === undefined ? entry.actor : <Person id={Number(id)} name={entry.actorName} email={entry.actorEmail} />;
}

/** Details as `key: value` pairs (a JSON object of what changed, never a secret). */
const describe = (details: string) =>
  Object.entries(JSON.parse(details) as Record<string, unknown>)
    .map(([key, value]) => `${key}: ${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join(', ');

export const consoleAudit = new Hono<AppEnv>().get('/console/audit', requireOperatorSession, async (c) => {
  const { from, to, ...pageQuery } = parseForm(AuditLogQuery, c.req.query());
  const range = { from, to };
  const [{ rows, total }] = await queryAsOperator(c.var.db, c.var.caller, [auditLogQuery(pageQuery, range)]);
  return page(c, {
    title: 'Audit log',
    section: AUDIT,
    children: (
      <>
        <p class="muted">Every operator write, from this console (by the operator named) or the admin API (admin_token), newest first.</p>
        <DateFilter action={AUDIT} range={range} />
        <DataTable
          caption="Audit log entries"
          rows={rows}
          empty="No operator write yet."
          columns={[
            { label: 'When', cell: (a) => <When iso={a.createdAt} /> },
            { label: 'Actor', cell: (a) => actorOf(a) },
            { label: 'Action', cell: (a) => a.action },
            { label: 'Target', cell: (a) => targetLink(a.target) },
            // Long values (hashes, a product's JSON) wrap inside the cell instead of widening the table.
            { label: 'Details', class: 'wrap', cell: (a) => describe(a.details) },
          ]}
        />
        <Pager path={AUDIT} page={pageQuery.page} totalPages={Math.ceil(total / pageQuery.per_page)} query={range} />
      </>
    ),
  });
});
