import { Hono } from 'hono';
import type { AppEnv } from '../../env';
import { PaginationQuery } from '../../lib/pagination';
import { requireOperatorSession } from '../../middleware/session';
import { queryAsOperator } from '../../services/caller';
import { revokedItemsQuery } from '../../services/orders/revoked-items';
import { Pager, When } from '../components';
import { parseForm } from '../forms';
import { page } from '../layout';
import { DataTable } from '../tables';

// Items of cancelled orders (GET /admin/revoked-items): refunded after delivery, to deactivate at the vendor.

const REVOKED = '/dashboard/console/revoked-items';

export const consoleRevokedItems = new Hono<AppEnv>().get('/console/revoked-items', requireOperatorSession, async (c) => {
  const pageQuery = parseForm(PaginationQuery, { page: c.req.query('page') ?? '1' });
  const [{ rows, total }] = await queryAsOperator(c.var.db, c.var.caller, [revokedItemsQuery(undefined, pageQuery)]);
  return page(c, {
    title: 'Revoked items',
    section: REVOKED,
    children: (
      <>
        <p class="muted">Items of cancelled orders: the buyer was refunded after they were delivered. Deactivate each at its vendor.</p>
        <DataTable
          caption="Revoked items, newest first"
          rows={rows}
          empty="No item was revoked."
          columns={[
            { label: 'Item', cell: (r) => <code>{r.item}</code> },
            { label: 'SKU', cell: (r) => r.sku },
            { label: 'Order', cell: (r) => <a href={`/dashboard/console/orders/${r.orderId}`}>{r.orderNumber}</a> },
            { label: 'Revoked', cell: (r) => <When iso={r.revokedAt} /> },
          ]}
        />
        <Pager path={REVOKED} page={pageQuery.page} totalPages={Math.ceil(total / pageQuery.per_page)} />
      </>
    ),
  });
});
