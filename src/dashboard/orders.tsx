import { Hono, type Context } from 'hono';
import { readConfig, type AppEnv } from '../env';
import { PaginationQuery } from '../lib/pagination';
import { requireSession } from '../middleware/session';
import { publishAfterResponse } from '../middleware/publish-events';
import { purgeStock } from '../middleware/stock-cache';
import { cancelOrder, getOrder, listOrders, orderExportFile } from '../services/orders';
import { Alert, IdempotencyKey, Pager } from './components';
import { formHandler, idFromPath, parseForm, redirectOnce, sameOriginForm, type FormProblem } from './forms';
import { page } from './layout';
import { OrderFacts, OrdersTable } from './tables';

// Orders: the API's list, detail (with the delivered items), text export and cancel, from the same service functions.

async function orderPage(c: Context<AppEnv>, orderId: number, problem?: FormProblem) {
  const { order, stockItems } = await getOrder(c.var.db, c.var.caller, orderId);
  return page(
    c,
    {
      title: `Order ${order.orderNumber}`,
      section: '/dashboard/orders',
      children: (
        <>
          <Alert problem={problem} />
          <section class="card">
            <OrderFacts order={order} />
            {order.status === 'pending' && (
              <form method="post" action={`/dashboard/orders/${order.id}/cancel`}>
                <IdempotencyKey />
                <button type="submit" class="danger">
                  Cancel order
                </button>
              </form>
            )}
          </section>
          <h2>Items</h2>
          {order.status === 'cancelled' && <p class="muted">This order was cancelled and refunded; its items were revoked.</p>}
          <ol class="items" aria-label="Delivered items">
            {stockItems.map((item) => (
              <li>{item}</li>
            ))}
          </ol>
          <p>
            <a href={`/dashboard/orders/${order.id}/export`} download>
              Export items as text
            </a>
          </p>
        </>
      ),
    },
    problem?.status ?? 200,
  );
}

export const ordersPages = new Hono<AppEnv>()
  .get('/orders', requireSession, async (c) => {
    const pageQuery = parseForm(PaginationQuery, { page: c.req.query('page') ?? '1' });
    const { rows, total } = await listOrders(c.var.db, c.var.caller, pageQuery);
    return page(c, {
      title: 'Orders',
      section: '/dashboard/orders',
      children: (
        <>
          <OrdersTable orders={rows} caption="Your orders, newest first" />
          <Pager path="/dashboard/orders" page={pageQuery.page} totalPages={Math.ceil(total / pageQuery.per_page)} />
        </>
      ),
    });
  })
  .get('/orders/:id', requireSession, (c) => orderPage(c, idFromPath(c.req.param('id'), 'Order')))
  .get('/orders/:id/export', requireSession, async (c) => {
    const file = orderExportFile(await getOrder(c.var.db, c.var.caller, idFromPath(c.req.param('id'), 'Order')));
    return c.text(file.text, 200, file.headers);
  })
  .post(
    '/orders/:id/cancel',
    sameOriginForm,
    requireSession,
    formHandler(
      async (c, fields) => {
        const orderId = idFromPath(c.req.param('id'), 'Order');
        const detail = `/dashboard/orders/${orderId}`;
        return redirectOnce(
          c,
          fields,
          { order_id: orderId },
          async (claim) => {
            const { order } = await cancelOrder(c.var.db, c.var.caller, orderId, readConfig(c.env), claim, publishAfterResponse(c));
            await purgeStock(c, [order.productId]);
            return detail;
          },
          () => detail,
        );
      },
      (c, _fields, problem) => orderPage(c, idFromPath(c.req.param('id'), 'Order'), problem),
    ),
  );
