import type { DepositRow, OrderRow, TransactionRow } from '../db/schema';
import { Money, Status, When } from './components';

// The lists several pages show. Narrow screens scroll a table sideways inside its frame; the page itself never does.

export function OrdersTable({ orders, caption }: { orders: OrderRow[]; caption: string }) {
  if (orders.length === 0) return <p class="empty">No orders yet. The shop is one click away.</p>;
  return (
    <div class="table-wrap">
      <table>
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Order</th>
            <th scope="col">Product</th>
            <th scope="col" class="num">Quantity</th>
            <th scope="col" class="num">Total</th>
            <th scope="col">Status</th>
            <th scope="col" class="hide-narrow">Placed</th>
          </tr>
        </thead>
        <tbody>
          {orders.map((o) => (
            <tr>
              <td>
                <a href={`/dashboard/orders/${o.id}`}>{o.orderNumber}</a>
              </td>
              <td>{o.productName}</td>
              <td class="num">{o.quantity}</td>
              <td class="num">
                <Money cents={o.totalAmountCents} />
              </td>
              <td>
                <Status value={o.status} />
              </td>
              <td class="hide-narrow">
                <When iso={o.createdAt} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function TransactionsTable({ transactions, caption }: { transactions: TransactionRow[]; caption: string }) {
  if (transactions.length === 0) return <p class="empty">No wallet transactions yet.</p>;
  return (
    <div class="table-wrap">
      <table>
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Description</th>
            <th scope="col" class="num">Amount</th>
            <th scope="col" class="num">Balance after</th>
            <th scope="col" class="hide-narrow">Date</th>
          </tr>
        </thead>
        <tbody>
          {transactions.map((t) => (
            <tr>
              <td>
                {t.description} <span class="muted">{`(${t.type})`}</span>
              </td>
              <td class="num">
                <Money cents={t.amountCents} />
              </td>
              <td class="num">
                <Money cents={t.balanceAfterCents} />
              </td>
              <td class="hide-narrow">
                <When iso={t.createdAt} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function DepositsTable({ deposits }: { deposits: DepositRow[] }) {
  if (deposits.length === 0) return <p class="empty">No deposits yet.</p>;
  return (
    <div class="table-wrap">
      <table>
        <caption class="visually-hidden">Deposits</caption>
        <thead>
          <tr>
            <th scope="col">Deposit</th>
            <th scope="col" class="num">Amount</th>
            <th scope="col" class="hide-narrow">Method</th>
            <th scope="col">Status</th>
            <th scope="col" class="hide-narrow">Created</th>
          </tr>
        </thead>
        <tbody>
          {deposits.map((d) => (
            <tr>
              <td>
                {`#${d.id}`}
                {d.status === 'pending' && d.paymentUrl && (
                  <>
                    {' '}
                    <a href={d.paymentUrl}>Pay now</a>
                  </>
                )}
              </td>
              <td class="num">
                <Money cents={d.amountCents} />
              </td>
              <td class="hide-narrow">{d.cryptoCurrency ? `${d.gateway} (${d.cryptoCurrency})` : d.gateway}</td>
              <td>
                <Status value={d.status} />
              </td>
              <td class="hide-narrow">
                <When iso={d.createdAt} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
