import { Hono } from 'hono';
import type { AppEnv } from '../../env';
import { requireOperatorSession } from '../../middleware/session';
import { OrdersQuery } from '../../schemas/operator';
import { queryAsOperator } from '../../services/caller';
import { orderDetailQuery, ordersQuery } from '../../services/operator-orders';
import { Money, Pager, SearchForm, Status, When } from '../components';
import { idFromPath, parseForm } from '../forms';
import { page } from '../layout';
import { DateFilter, ExportLink } from './filters';
import { Person } from './person';
import { DataTable, OrderFacts } from '../tables';

// Every user's orders, each with its buyer's name and email: found by an order-number prefix or part of the buyer's
// email or the product's name, within a range of days (exported as CSV), and one order with its items and its buyer.

const ORDERS = '/dashboard/console/orders';

export const consoleOrders = new Hono<AppEnv>()
  .get('/console/orders', requireOperatorSession, async (c) => {
    const { q, user_id: userId, status, from, to, ...pageQuery } = parseForm(OrdersQuery, c.req.query());
    const search = q === '' ? undefined : q;
    const range = { from, to };
    const [{ rows, total }] = await queryAsOperator(c.var.db, c.var.caller, [ordersQuery({ q: search, userId, status, ...range }, pageQuery)]);
    return page(c, {
      title: 'Orders',
      section: ORDERS,
      children: (
        <>
          <SearchForm action={ORDERS} value={search} hint="The start of an order number (ORD-…), or part of a buyer's email or of a product's name." />
          <DateFilter action={ORDERS} range={range} keep={{ q: search, status }}>
            <ExportLink name="orders" range={range} />
          </DateFilter>
          <DataTable
            caption={search ? `Orders matching ${search}` : 'Every order, newest first'}
            rows={rows}
            empty={search ? 'No order matches.' : 'No orders yet.'}
            columns={[
              { label: 'Order', cell: (o) => <a href={`${ORDERS}/${o.id}`}>{o.orderNumber}</a> },
              { label: 'Buyer', cell: (o) => <Person id={o.userId} name={o.userName} email={o.userEmail} /> },
              { label: 'Product', cell: (o) => o.productName },
              { label: 'Total', class: 'num', cell: (o) => <Money cents={o.totalAmountCents} /> },
              { label: 'Status', cell: (o) => <Status value={o.status} /> },
              { label: 'Placed', cell: (o) => <When iso={o.createdAt} /> },
            ]}
          />
          <Pager path={ORDERS} page={pageQuery.page} totalPages={Math.ceil(total / pageQuery.per_page)} query={{ q: search, status, ...range }} />
        </>
      ),
    });
  })
  .get('/console/orders/:id', requireOperatorSession, async (c) => {
    const [{ order, stockItems, user }] = await queryAsOperator(c.var.db, c.var.caller, [orderDetailQuery(idFromPath(c.req.param('id'), 'Order'))]);
    return page(c, {
      title: `Order ${order.orderNumber}`,
      section: ORDERS,
      children: (
        <>
          <section class="card">
            <OrderFacts
              order={order}
              before={
                <>
                  <dt>Buyer</dt>
                  <dd>
                    <a href={`/dashboard/console/users/${user.id}`}>{`${user.name} <${user.email}>`}</a>
                  </dd>
                </>
              }
              product={<a href={`/dashboard/console/products/${order.productId}`}>{order.productName}</a>}
            />
          </section>
          <h2>Items</h2>
          {order.status === 'cancelled' && <p class="muted">Cancelled and refunded; these items were revoked.</p>}
          <ol class="items" aria-label="Delivered items">
            {stockItems.map((item) => (
              <li>{item}</li>
            ))}
          </ol>
        </>
      ),
    });
  });
