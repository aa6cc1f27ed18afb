import { Hono, type Context } from 'hono';
import { readConfig, type AppEnv } from '../../env';
import type { DateRange } from '../../lib/date-range';
import { publishAfterResponse } from '../../middleware/publish-events';
import { requireOperatorSession } from '../../middleware/session';
import { OrdersQuery } from '../../schemas/operator';
import { queryAsOperator } from '../../services/caller';
import { OPERATOR } from '../../services/idempotency';
import { cancelOrderAsOperator } from '../../services/operator/cancel';
import { orderDetailQuery, ordersQuery } from '../../services/operator/orders';
import { Alert, Money, Pager, Status, WarrantyEnds, When } from '../components';
import { withDone } from '../done-notices';
import { formHandler, idFromPath, parseForm, redirectOnce, sameOriginForm, type FormProblem } from '../forms';
import { page } from '../layout';
import { AskFirst, confirmationPage } from './confirm';
import { consoleRefunds, RefundSection } from './order-refund';
import type { FormFields } from '../forms';
import { ExportLink, ListFilter } from './filters';
import { Person } from './person';
import { DataTable, OrderFacts } from '../tables';

// Every user's orders, each with its buyer's name and email: found by an order-number prefix or part of the buyer's
// email or the product's name, within a range of days (exported as CSV), and one order with its items and its buyer.

const ORDERS = '/dashboard/console/orders';
const STATUS_CHOICES = [['', 'Any'], ['pending', 'Pending'], ['completed', 'Completed'], ['cancelled', 'Cancelled']] as const;

/** The one filter form: search, from, to and status, applied together ("Apply"); the CSV link carries the days. */
function OrdersFilter({ search, status, range, userId }: { search?: string; status?: string; range: DateRange; userId?: number }) {
  return (
    <ListFilter
      action={ORDERS}
      range={range}
      keep={{ user_id: userId?.toString() }}
      before={
        <div class="field">
          <label for="filter-q">Search</label>
          <input id="filter-q" name="q" type="search" value={search} maxlength={254} aria-describedby="filter-hint" />
        </div>
      }
      after={
        <div class="field">
          <label for="filter-status">Status</label>
          <select id="filter-status" name="status">
            {STATUS_CHOICES.map(([value, label]) => (
              <option value={value} selected={(status ?? '') === value}>
                {label}
              </option>
            ))}
          </select>
        </div>
      }
      hint="Search: the start of an order number (ORD-…), or part of a buyer's email or of a product's name. Days are UTC, inclusive."
    >
      <ExportLink name="orders" range={range} />
    </ListFilter>
  );
}

export const consoleOrders = new Hono<AppEnv>()
  .route('/', consoleRefunds((c, id, problem, values) => orderPage(c, id, problem, values)))
  .get('/console/orders', requireOperatorSession, async (c) => {
    // The filter form sends every field; an empty one (status "Any", no day) is no filter.
    const filled = Object.fromEntries(Object.entries(c.req.query()).filter(([, value]) => value !== ''));
    const { q, user_id: userId, status, from, to, ...pageQuery } = parseForm(OrdersQuery, filled);
    const search = q === '' ? undefined : q;
    const range = { from, to };
    const [{ rows, total, revenueCents }] = await queryAsOperator(c.var.db, c.var.caller, [ordersQuery({ q: search, userId, status, ...range }, pageQuery)]);
    const filtered = search !== undefined || userId !== undefined || status !== undefined || from !== undefined || to !== undefined;
    return page(c, {
      title: 'Orders',
      section: ORDERS,
      children: (
        <>
          <OrdersFilter search={search} status={status} range={range} userId={userId} />
          <p class="totals" role="status" aria-label="Filtered totals">
            {`${total.toLocaleString('en-US')} ${total === 1 ? 'order' : 'orders'}${filtered ? ' match' : ' in all'}, revenue `}
            <Money cents={revenueCents} />
            {' (cancelled orders excluded).'}
          </p>
          <DataTable
            caption={filtered ? 'Orders matching the filter, newest first' : 'Every order, newest first'}
            rows={rows}
            empty={filtered ? 'No order matches.' : 'No orders yet.'}
            columns={[
              { label: 'Order', cell: (o) => <a href={`${ORDERS}/${o.id}`}>{o.orderNumber}</a> },
              { label: 'Buyer', cell: (o) => <Person id={o.userId} name={o.userName} email={o.userEmail} /> },
              { label: 'Product', cell: (o) => o.productName },
              { label: 'Total', class: 'num', cell: (o) => <Money cents={o.totalAmountCents} /> },
              { label: 'Refunded', class: 'num', cell: (o) => (o.refundedAmountCents > 0 ? <Money cents={o.refundedAmountCents} /> : '') },
              { label: 'Status', cell: (o) => <Status value={o.status} /> },
              { label: 'Placed', cell: (o) => <When iso={o.createdAt} /> },
            ]}
          />
          <Pager path={ORDERS} page={pageQuery.page} totalPages={Math.ceil(total / pageQuery.per_page)} query={{ q: search, status, user_id: userId?.toString(), ...range }} />
        </>
      ),
    });
  })
  .get('/console/orders/:id', requireOperatorSession, (c) => orderPage(c, idFromPath(c.req.param('id'), 'Order')))
  .get('/console/orders/:id/cancel/confirm', requireOperatorSession, async (c) => {
    const [{ order, stockItems, user }] = await queryAsOperator(c.var.db, c.var.caller, [orderDetailQuery(idFromPath(c.req.param('id'), 'Order'))]);
    // Only a pending order can be cancelled: for any other its page says why (its status), nothing to confirm.
    if (order.status !== 'pending') return c.redirect(`${ORDERS}/${order.id}`, 303);
    return confirmationPage(c, {
      title: `Cancel order ${order.orderNumber}?`,
      section: ORDERS,
      effect: (
        <>
          {`This cancels order ${order.orderNumber} of ${user.name} <${user.email}> and refunds `}
          <Money cents={order.totalAmountCents} />
          {` to their wallet now, once. Its ${stockItems.length} delivered item(s) are revoked: they stay visible in the order, are never resold, and are listed under Revoked items to deactivate at the vendor.`}
        </>
      ),
      action: cancelPath(order.id),
      back: `${ORDERS}/${order.id}`,
      danger: true,
    });
  })
  .post(
    '/console/orders/:id/cancel',
    sameOriginForm,
    requireOperatorSession,
    formHandler(
      async (c, fields) => {
        const id = idFromPath(c.req.param('id'), 'Order');
        const landing = withDone(`${ORDERS}/${id}`, 'order_cancelled');
        return redirectOnce(
          c,
          fields,
          { order_id: id },
          async (claim) => {
            await cancelOrderAsOperator(c.var.db, c.var.caller, id, readConfig(c.env), claim, publishAfterResponse(c));
            return landing;
          },
          () => landing,
          OPERATOR,
        );
      },
      (c, _fields, problem) => orderPage(c, idFromPath(c.req.param('id'), 'Order'), problem),
    ),
  );

const cancelPath = (id: number) => `${ORDERS}/${id}/cancel`;

/** One order with its items and its buyer; "Cancel order" on a pending one; the refusal of a cancel when there is one. */
async function orderPage(c: Context<AppEnv>, id: number, problem?: FormProblem, values?: FormFields) {
  const [{ order, stockItems, user }] = await queryAsOperator(c.var.db, c.var.caller, [orderDetailQuery(id)]);
  return page(
    c,
    {
      title: `Order ${order.orderNumber}`,
      section: ORDERS,
      children: (
        <>
          <Alert problem={problem} />
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
            <WarrantyEnds order={order} />
            {order.status === 'pending' && order.cancellable === 1 && <AskFirst action={cancelPath(order.id)} label="Cancel order" class="danger" />}
          </section>
          <RefundSection order={order} values={values} problem={problem} />
          <h2>Items</h2>
          {order.status === 'cancelled' && <p class="muted">Cancelled and refunded; these items were revoked.</p>}
          <ol class="items" aria-label="Delivered items">
            {stockItems.map((item) => (
              <li>{item}</li>
            ))}
          </ol>
        </>
      ),
    },
    problem?.status ?? 200,
  );
}
