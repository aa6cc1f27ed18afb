import { Hono, type Context } from 'hono';
import type { AppEnv } from '../env';
import { PaginationQuery } from '../lib/pagination';
import { publicBaseUrl } from '../lib/public-base-url';
import { isoNow } from '../lib/time';
import { requireSession } from '../middleware/session';
import { queryAs } from '../services/caller';
import { earningsQuery, summaryQuery, type EarningView } from '../services/referrals/account';
import { referralLink } from '../services/referrals/codes';
import { settingsQuery } from '../services/referrals/settings';
import { transferEarnings } from '../services/referrals/transfers';
import { Alert, IdempotencyKey, Money, Pager, Stat, Status, When } from './components';
import { withDone } from './done-notices';
import { formHandler, parseForm, redirectOnce, sameOriginForm, type FormProblem } from './forms';
import { page } from './layout';
import { DataTable, type Column } from './tables';

// Referrals (docs/referrals.md): the user's link, the balances, the earnings, and "Move to wallet", which runs
// POST /user/referral/transfer's service under the form's idempotency key like the other money forms. The dashboard
// runs no script (CSP script-src 'none'): the link is a read-only field to select and copy, which works everywhere.

const EARNING_COLUMNS: Column<EarningView>[] = [
  { label: 'Order', cell: (e) => <a href={`/dashboard/orders/${e.orderId}`}>{e.orderNumber}</a> },
  { label: 'Amount', class: 'num', cell: (e) => <Money cents={e.amountCents} /> },
  { label: 'Status', cell: (e) => <Status value={e.kind === 'offset' ? `refund ${e.status}` : e.status} /> },
  { label: 'Available from', cell: (e) => <When iso={e.availableAt} /> },
  { label: 'Earned', cell: (e) => <When iso={e.createdAt} /> },
];

async function referralsPage(c: Context<AppEnv>, problem?: FormProblem) {
  const { caller } = c.var;
  const now = isoNow();
  const pageQuery = parseForm(PaginationQuery, { page: c.req.query('page') ?? '1' });
  const [summary, earnings, settings] = await queryAs(c.var.db, caller, [summaryQuery(caller.userId, now), earningsQuery(caller, pageQuery, now), settingsQuery]);
  const link = referralLink(publicBaseUrl(c.env) ?? new URL(c.req.url).origin, summary.code);
  return page(
    c,
    {
      title: 'Referrals',
      section: '/dashboard/referrals',
      children: (
        <>
          <section class="card" aria-labelledby="your-link">
            <h2 id="your-link">Your link</h2>
            {settings.percent > 0 ? (
              <p>
                Share it: whoever creates an account through it (or types your code <code>{summary.code}</code> when signing up) earns you{' '}
                {settings.percent}% of each order they pay for, held for at least {settings.holdDays} days and until the order can no longer be refunded.
              </p>
            ) : (
              <p class="muted">The shop's referral programme is off at the moment: your link still records who you bring.</p>
            )}
            <div class="field">
              <label for="referral-link">Link (select it and copy)</label>
              <input id="referral-link" type="text" readonly value={link} />
            </div>
            <p>
              <a href={link}>Open your link</a>
            </p>
          </section>
          <dl class="stats">
            <Stat label="Pending">
              <Money cents={summary.pendingCents} />
            </Stat>
            <Stat label="Available">
              <Money cents={summary.availableCents} />
            </Stat>
            <Stat label="Moved to wallet">
              <Money cents={summary.transferredCents} />
            </Stat>
          </dl>
          <section class="card" aria-labelledby="move">
            <h2 id="move">Move to wallet</h2>
            <Alert problem={problem} />
            <form method="post" action="/dashboard/referrals/transfer">
              <IdempotencyKey />
              <button type="submit">Move to wallet</button>
            </form>
            <p class="muted">
              Moves everything available, at least <Money cents={settings.minTransferCents} />, into your wallet as one transaction.
            </p>
          </section>
          <h2>Earnings</h2>
          <DataTable caption="Referral earnings, newest first" rows={earnings.rows} empty="No earnings yet: share your link." columns={EARNING_COLUMNS} />
          <Pager path="/dashboard/referrals" page={pageQuery.page} totalPages={Math.ceil(earnings.total / pageQuery.per_page)} />
        </>
      ),
    },
    problem?.status ?? 200,
  );
}

const MOVED = withDone('/dashboard/referrals', 'referrals_moved');

export const referralsPages = new Hono<AppEnv>()
  .get('/referrals', requireSession, (c) => referralsPage(c))
  .post(
    '/referrals/transfer',
    sameOriginForm,
    requireSession,
    formHandler(
      async (c, fields) =>
        redirectOnce(
          c,
          fields,
          {},
          async (claim) => {
            await transferEarnings(c.var.db, c.var.caller, claim);
            return MOVED;
          },
          () => MOVED,
        ),
      (c, _fields, problem) => referralsPage(c, problem),
    ),
  );
