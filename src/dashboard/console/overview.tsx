import { Hono } from 'hono';
import { readConfig, type AppEnv } from '../../env';
import { requireOperatorSession } from '../../middleware/session';
import { queryAsOperator } from '../../services/caller';
import { lowStockQuery } from '../../services/operator/catalogue';
import { attentionQuery, salesQuery } from '../../services/operator/overview';
import { Money, When } from '../components';
import { page } from '../layout';
import { DataTable } from '../tables';
import { Person } from './person';
import { SalesChart, SalesTable, SalesTotals } from './sales-chart';

// The console's overview: sales of the last 30 days, and what needs the operator: low stock, open mismatches,
// pending deposits, failing webhook endpoints. One batch, the session's operator proof first.

const CHART_DAYS = 30;

export const consoleOverview = new Hono<AppEnv>().get('/console', requireOperatorSession, async (c) => {
  const threshold = readConfig(c.env).lowStockThreshold;
  const [sales, lowStock, attention] = await queryAsOperator(c.var.db, c.var.caller, [salesQuery(CHART_DAYS), lowStockQuery(threshold), attentionQuery()]);
  return page(c, {
    title: 'Console',
    section: '/dashboard/console',
    children: (
      <>
        <SalesTotals days={sales} />
        <h2>Sales, last {CHART_DAYS} days</h2>
        <SalesChart days={sales} />
        <h2>{`Low stock (at or below ${threshold})`}</h2>
        <DataTable
          caption="Products with low stock"
          rows={lowStock}
          empty="Every active product has more stock than that."
          columns={[
            { label: 'Product', cell: (p) => <a href={`/dashboard/console/products/${p.id}`}>{p.name}</a> },
            { label: 'SKU', cell: (p) => p.sku },
            { label: 'Stock', class: 'num', cell: (p) => p.stockCount },
          ]}
        />
        <h2>Open amount mismatches and reversals</h2>
        <DataTable
          caption="Gateway events to reconcile"
          rows={attention.openMismatches}
          empty="Nothing to reconcile."
          columns={[
            { label: 'Deposit', cell: (e) => <a href={`/dashboard/console/deposits#deposit-${e.depositId}`}>{`#${e.depositId}`}</a> },
            { label: 'Outcome', cell: (e) => <span class="mismatch">{e.outcome}</span> },
            { label: 'Amount paid', class: 'num', cell: (e) => <Money cents={e.amountCents} /> },
            { label: 'Gateway', cell: (e) => e.gateway },
            { label: 'Received', cell: (e) => <When iso={e.receivedAt} /> },
          ]}
        />
        <h2>{`Pending deposits (${attention.pendingDepositsTotal})`}</h2>
        <DataTable
          caption="Pending deposits"
          rows={attention.pendingDeposits}
          empty="No deposit is waiting for payment."
          columns={[
            { label: 'Deposit', cell: (d) => `#${d.id}` },
            { label: 'User', cell: (d) => <Person id={d.userId} name={d.userName} email={d.userEmail} /> },
            { label: 'Amount', class: 'num', cell: (d) => <Money cents={d.amountCents} /> },
            { label: 'Gateway', cell: (d) => d.gateway },
            { label: 'Expires', cell: (d) => <When iso={d.expiresAt} /> },
          ]}
        />
        <p>
          <a href="/dashboard/console/deposits?status=pending">All pending deposits</a>
        </p>
        <h2>Failing webhook endpoints (last 24 hours)</h2>
        <DataTable
          caption="Webhook endpoints with failed deliveries"
          rows={attention.failingEndpoints}
          empty="No delivery failed in the last 24 hours."
          columns={[
            { label: 'Endpoint', cell: (e) => e.url },
            { label: 'User', cell: (e) => <a href={`/dashboard/console/users/${e.userId}`}>{`#${e.userId}`}</a> },
            { label: 'Failures', class: 'num', cell: (e) => e.failures },
            { label: 'Last failure', cell: (e) => <When iso={e.lastFailureAt} /> },
          ]}
        />
        <h2>Sales per day</h2>
        <SalesTable days={sales} />
      </>
    ),
  });
});
