import { Hono } from 'hono';
import type { AppEnv } from '../env';
import { requireSession } from '../middleware/session';
import { getDashboard } from '../services/accounts/users';
import { HoldBanner, Money, Stat } from './components';
import { readConfig } from '../env';
import { page } from './layout';
import { OrdersTable, TransactionsTable } from './tables';

// The numbers of GET /user/dashboard, from the same service function.

export const overviewPage = new Hono<AppEnv>().get('/', requireSession, async (c) => {
  const d = await getDashboard(c.var.db, c.var.caller);
  return page(c, {
    title: 'Overview',
    section: '/dashboard',
    children: (
      <>
        {d.onHold ? <HoldBanner supportEmail={readConfig(c.env).supportEmail} /> : null}
        <dl class="stats">
          <Stat label="Balance">
            <Money cents={d.balanceCents} />
          </Stat>
          <Stat label="Total orders">{d.totalOrders}</Stat>
          <Stat label="Total spent">
            <Money cents={d.totalSpentCents} />
          </Stat>
          <Stat label="Pending orders">{d.pendingOrders}</Stat>
        </dl>
        <p>
          <a href="/dashboard/wallet">Fund your wallet</a> · <a href="/dashboard/shop">Go to the shop</a> · <a href="/dashboard/keys">Manage API keys</a>
        </p>
        <h2>Recent orders</h2>
        <OrdersTable orders={d.recentOrders} caption="Your five latest orders" />
        <h2>Recent transactions</h2>
        <TransactionsTable transactions={d.recentTransactions} caption="Your five latest wallet transactions" />
      </>
    ),
  });
});
