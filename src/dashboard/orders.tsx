import { Hono, type Context } from 'hono';
import { DocumentsTable } from './documents';
import { readConfig, type AppEnv } from '../env';
import { PaginationQuery } from '../lib/pagination';
import { requireSession } from '../middleware/session';
import { publishAfterResponse } from '../middleware/publish-events';
import { purgeSoldProducts } from '../middleware/stock-cache';
import { cancelOrder, getOrder, listOrders, orderExportFile } from '../services/orders/orders';
import { ItemProblem, reportPages } from './report-problem';
import type { OrderRow } from '../db/schema';
import { formatUsd } from '../lib/money';
import { Alert, Money, Notice, Pager, WarrantyEnds } from './components';
import { AskFirst, confirmationPage } from './console/confirm';
import { formHandler, idFromPath, parseForm, redirectOnce, sameOriginForm, type FormProblem } from './forms';
import { page } from './layout';
import { OrderFacts, OrdersTable } from './tables';

// Orders: the API's list, detail (with the delivered items), text export and cancel, from the same service functions.

/**
 * The one-line notice an order's page shows after Buy or Cancel sent the browser there (`?notice=charged|refunded`).
 * The URL names only which notice; its words and amount come from the order as stored, and "refunded" shows only on a
 * cancelled order. So a crafted link can make the page say nothing but a fact about the user's own order (another
 * user's order is a 404): no amount, no secret, no made-up outcome ever travels in a URL.
 */
const NOTICES = {
  charged: (order: OrderRow) => `Charged ${formatUsd(order.totalAmountCents)}`,
  refunded: (order: OrderRow) => (order.status === 'cancelled' ? `Refunded ${formatUsd(order.totalAmountCents)}` : null),
  reported: () => 'Problem reported: the shop will look at it and email you what it decided.',
};
type NoticeName = keyof typeof NOTICES;
const isNoticeName = (name: string | undefined): name is NoticeName => name !== undefined && Object.hasOwn(NOTICES, name);

const cancelPath = (orderId: number) => `/dashboard/orders/${orderId}/cancel`;

/** The cancel's confirmation: what it will do, in words, from the order as stored; showing it changes nothing. */
async function cancelConfirmation(c: Context<AppEnv>, orderId: number) {
  const { order } = await getOrder(c.var.db, c.var.caller, orderId);
  if (order.status !== 'pending' || order.cancellable !== 1) return c.redirect(orderPath(order.id), 303);
  return confirmationPage(c, {
    title: `Cancel order ${order.orderNumber}?`,
    section: '/dashboard/orders',
    effect: (
      <>
        {`Cancel order ${order.orderNumber} (${order.quantity} × ${order.productName}): `}
        <Money cents={order.totalAmountCents} />
        {` goes back to your wallet, and the ${order.quantity === 1 ? 'item is' : `${order.quantity} items are`} revoked (they stop working).`}
      </>
    ),
    action: cancelPath(order.id),
    back: orderPath(order.id),
    danger: true,
  });
}

/** An order's page, with the notice a form's outcome asks for. */
export const orderPath = (orderId: number, notice?: NoticeName) => `/dashboard/orders/${orderId}${notice ? `?notice=${notice}` : ''}`;

async function orderPage(c: Context<AppEnv>, orderId: number, problem?: FormProblem) {
  const { order, stockItems, claims = [], warrantyHours = 0, documents = [] } = await getOrder(c.var.db, c.var.caller, orderId, { withDocuments: true });
  const noticeName = problem ? undefined : c.req.query('notice');
  // "reported" is said only of an order with an open claim: a crafted link states nothing false.
  const reported = noticeName === 'reported' && claims.some((claim) => claim.status === 'open');
  const notice = isNoticeName(noticeName) && (noticeName !== 'reported' || reported) ? NOTICES[noticeName](order) : null;
  return page(
    c,
    {
      title: `Order ${order.orderNumber}`,
      section: '/dashboard/orders',
      children: (
        <>
          {notice && <Notice>{notice}</Notice>}
          <Alert problem={problem} />
          <section class="card">
            <OrderFacts order={order} holdHours={readConfig(c.env).orderHoldHours} />
            <WarrantyEnds order={order} />
            {order.status !== 'cancelled' && order.refundedAmountCents > 0 && <p>{`Refunded by the shop: ${formatUsd(order.refundedAmountCents)}`}</p>}
            {order.status === 'pending' && order.cancellable === 0 && <p class="muted">Final sale: this order cannot be cancelled.</p>}
            {/* Cancelling asks first (the console's confirmation pattern): the confirmation page posts the cancel. */}
            {order.status === 'pending' && order.cancellable === 1 && <AskFirst action={cancelPath(order.id)} label="Cancel order" class="danger" />}
          </section>
          <h2>Items</h2>
          {order.status === 'cancelled' && <p class="muted">This order was cancelled and refunded; its items were revoked.</p>}
          <ol class="items" aria-label="Delivered items">
            {stockItems.map((item, index) => (
              <li>
                {item}
                <ItemProblem order={order} index={index} claims={claims} warrantyHours={warrantyHours} />
              </li>
            ))}
          </ol>
          <p>
            <a href={`/dashboard/orders/${order.id}/export`} download>
              Export items as text
            </a>
          </p>
          <h2>Documents</h2>
          <DocumentsTable rows={documents} caption="This order's invoice and credit notes" />
        </>
      ),
    },
    problem?.status ?? 200,
  );
}

export const ordersPages = new Hono<AppEnv>()
  .route('/', reportPages(orderPage))
  .get('/orders', requireSession, async (c) => {
    const pageQuery = parseForm(PaginationQuery, { page: c.req.query('page') ?? '1' });
    const { rows, total } = await listOrders(c.var.db, c.var.caller, pageQuery);
    return page(c, {
      title: 'Orders',
      section: '/dashboard/orders',
      children: (
        <>
          <OrdersTable orders={rows} caption="Your orders, newest first" holdHours={readConfig(c.env).orderHoldHours} />
          <Pager path="/dashboard/orders" page={pageQuery.page} totalPages={Math.ceil(total / pageQuery.per_page)} />
        </>
      ),
    });
  })
  .get('/orders/:id', requireSession, (c) => orderPage(c, idFromPath(c.req.param('id'), 'Order')))
  .get('/orders/:id/cancel/confirm', requireSession, (c) => cancelConfirmation(c, idFromPath(c.req.param('id'), 'Order')))
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
        const detail = orderPath(orderId, 'refunded');
        return redirectOnce(
          c,
          fields,
          { order_id: orderId },
          async (claim) => {
            const { order } = await cancelOrder(c.var.db, c.var.caller, orderId, readConfig(c.env), claim, publishAfterResponse(c));
            await purgeSoldProducts(c, [order.productId]);
            return detail;
          },
          () => detail,
        );
      },
      (c, _fields, problem) => orderPage(c, idFromPath(c.req.param('id'), 'Order'), problem),
    ),
  );
