import type { Child } from 'hono/jsx';
import type { DepositRow, OrderRow, TransactionRow } from '../db/schema';
import { addMinutes, isoNow } from '../lib/time';
import { orderErrorReason } from '../lib/order-errors';
import { Money, Status, When } from './components';

// The lists the pages show. On a phone (app.css, under 40rem) each row is stacked: one line per column, its label
// (`data-label`) before its value (one span, so the label and the value are the line's two parts), so every column, the row's buttons included, is on screen without scrolling
// sideways. The explicit roles keep the table's semantics for screen readers once its display is no longer a
// table's. The caption is for screen readers: a visible heading names each table.

export interface Column<Row> {
  label: string;
  /** The label is for screen readers only (a column of buttons). */
  labelHidden?: boolean;
  /** Right-aligned figures (on wide screens); `wrap`: long text that breaks anywhere, so the table keeps its width. */
  class?: 'num' | 'actions' | 'wrap';
  cell: (row: Row) => Child;
}

interface DataTableProps<Row> {
  caption: string;
  rows: Row[];
  empty: string;
  columns: Column<Row>[];
  /** Each row's element id, for links to one row (`#deposit-12`). */
  rowId?: (row: Row) => string;
}

export function DataTable<Row>({ caption, rows, empty, columns, rowId }: DataTableProps<Row>) {
  if (rows.length === 0) return <p class="empty">{empty}</p>;
  return (
    <div class="table-wrap">
      <table class="stacked" role="table">
        <caption class="visually-hidden">{caption}</caption>
        <thead role="rowgroup">
          <tr role="row">
            {columns.map((column) => (
              <th scope="col" role="columnheader" class={column.class}>
                {column.labelHidden ? <span class="visually-hidden">{column.label}</span> : column.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody role="rowgroup">
          {rows.map((row) => (
            <tr role="row" id={rowId?.(row)}>
              {columns.map((column) => (
                <td role="cell" class={column.class} data-label={column.labelHidden ? undefined : column.label}>
                  <span>{column.cell(row)}</span>
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

const orderColumns = (link: (id: number) => string, holdHours?: number): Column<OrderRow>[] => [
  { label: 'Order', cell: (o) => <a href={link(o.id)}>{o.orderNumber}</a> },
  { label: 'Product', cell: (o) => o.productName },
  { label: 'Quantity', class: 'num', cell: (o) => o.quantity },
  { label: 'Total', class: 'num', cell: (o) => <Money cents={o.totalAmountCents} /> },
  { label: 'Status', cell: (o) => (holdHours === undefined ? <Status value={o.status} /> : <OrderStatusLine order={o} holdHours={holdHours} />) },
  { label: 'Placed', cell: (o) => <When iso={o.createdAt} /> },
];

interface OrdersTableProps {
  /** The buyer's own list: statuses in words (see `OrderStatusLine`). */
  holdHours?: number;
  orders: OrderRow[];
  caption: string;
  /** Each order's page: the user's own (default), or the console's. */
  link?: (id: number) => string;
  empty?: string;
}

export const OrdersTable = ({ orders, caption, link = (id) => `/dashboard/orders/${id}`, empty = 'No orders yet. The shop is one click away.', holdHours }: OrdersTableProps) => (
  <DataTable caption={caption} rows={orders} empty={empty} columns={orderColumns(link, holdHours)} />
);

const TRANSACTION_COLUMNS: Column<TransactionRow>[] = [
  {
    label: 'Description',
    cell: (t) => (
      <>
        {t.description} <span class="muted">{`(${t.type})`}</span>
      </>
    ),
  },
  { label: 'Amount', class: 'num', cell: (t) => <Money cents={t.amountCents} /> },
  { label: 'Balance after', class: 'num', cell: (t) => <Money cents={t.balanceAfterCents} /> },
  { label: 'Date', cell: (t) => <When iso={t.createdAt} /> },
];

export const TransactionsTable = ({ transactions, caption }: { transactions: TransactionRow[]; caption: string }) => (
  <DataTable caption={caption} rows={transactions} empty="No wallet transactions yet." columns={TRANSACTION_COLUMNS} />
);

const DEPOSIT_COLUMNS: Column<DepositRow>[] = [
  {
    label: 'Deposit',
    cell: (d) => (
      <>
        {`#${d.id}`}
        {d.status === 'pending' && d.paymentUrl && (
          <>
            {' '}
            <a href={d.paymentUrl}>Pay now</a>
          </>
        )}
      </>
    ),
  },
  { label: 'Amount', class: 'num', cell: (d) => <Money cents={d.amountCents} /> },
  { label: 'Method', cell: (d) => (d.cryptoCurrency ? `${d.gateway} (${d.cryptoCurrency})` : d.gateway) },
  { label: 'Status', cell: (d) => <Status value={d.status} /> },
  { label: 'Order', cell: (d) => <DepositOrder deposit={d} /> },
  { label: 'Created', cell: (d) => <When iso={d.createdAt} /> },
];

/** What became of the order a deposit paid for: a link to it, why it could not be made, or that it waits for the payment. */
export const DepositOrder = ({ deposit: d }: { deposit: DepositRow }) => {
  if (d.orderId !== null && d.orderId !== undefined) return <a href={`/dashboard/orders/${d.orderId}`}>{`Order #${d.orderId}`}</a>;
  if (d.orderError) return <span>{`Not made: ${orderErrorReason(d.orderError)}`}</span>;
  if (d.orderProductId !== null && d.orderProductId !== undefined) return <span class="muted">{d.status === 'pending' ? 'Made when paid' : 'None'}</span>;
  return <span class="muted">—</span>;
};

export const DepositsTable = ({ deposits }: { deposits: DepositRow[] }) => (
  <DataTable caption="Deposits" rows={deposits} empty="No deposits yet." columns={DEPOSIT_COLUMNS} />
);

/**
 * An order's status as a buyer reads it (the API keeps pending / completed / cancelled): "Delivered · can be cancelled
 * until <time>" while it may be cancelled (pending, not final sale, within the hold period), "Delivered" otherwise,
 * "Cancelled · refunded $X".
 */
export const OrderStatusLine = ({ order, holdHours }: { order: OrderRow; holdHours: number }) => {
  if (order.status === 'cancelled') {
    return (
      <span class="status status-cancelled">
        Cancelled · refunded <Money cents={order.totalAmountCents} />
      </span>
    );
  }
  const until = addMinutes(order.createdAt, 60 * holdHours);
  if (order.status === 'pending' && order.cancellable === 1 && until > isoNow()) {
    return (
      <span class="status status-pending">
        Delivered · can be cancelled until <When iso={until} />
      </span>
    );
  }
  return <span class="status status-completed">Delivered</span>;
};

/**
 * An order's facts (its page, the user's or the console's); `before` adds rows on top (the console's buyer). With
 * `holdHours` (the buyer's pages), the status is said in words (`OrderStatusLine`).
 */
export const OrderFacts = ({ order, before, product, holdHours }: { order: OrderRow; before?: Child; product?: Child; holdHours?: number }) => (
  <dl class="facts">
    {before}
    <dt>Product</dt>
    <dd>{product ?? order.productName}</dd>
    <dt>Quantity</dt>
    <dd>{order.quantity}</dd>
    <dt>Unit price</dt>
    <dd>
      <Money cents={order.unitPriceCents} />
    </dd>
    {order.discountAmountCents > 0 && (
      <>
        <dt>List price</dt>
        <dd>
          <Money cents={order.listUnitPriceCents} />
        </dd>
        {/* The discount split: volume price and the buyer's discount, then the coupon with its code. */}
        {order.discountAmountCents - (order.couponAmountCents ?? 0) > 0 && (
          <>
            <dt>Volume price and discount</dt>
            <dd>
              <Money cents={order.discountAmountCents - (order.couponAmountCents ?? 0)} />
            </dd>
          </>
        )}
        {order.coupon !== null && (
          <>
            <dt>{`Coupon ${order.coupon}`}</dt>
            <dd>
              <Money cents={order.couponAmountCents ?? 0} />
            </dd>
          </>
        )}
      </>
    )}
    <dt>Total</dt>
    <dd>
      <Money cents={order.totalAmountCents} />
    </dd>
    <dt>Status</dt>
    <dd>
      {holdHours === undefined ? <Status value={order.status} /> : <OrderStatusLine order={order} holdHours={holdHours} />}
      {order.cancellable === 0 && ' (final sale)'}
    </dd>
    <dt>Placed</dt>
    <dd>
      <When iso={order.createdAt} />
    </dd>
  </dl>
);
