import { Hono } from 'hono';
import type { AppEnv } from '../../env';
import { publishAfterResponse } from '../../middleware/publish-events';
import { requireOperatorSession } from '../../middleware/session';
import { DepositsQuery } from '../../schemas/operator';
import { operatorActor } from '../../services/audit-log';
import { queryAsOperator } from '../../services/caller';
import { markDepositPaid } from '../../services/deposits';
import { GATEWAYS } from '../../services/gateways';
import { operatorDepositsQuery, type OperatorDeposit } from '../../services/operator-deposits';
import { Money, Pager, Status, When } from '../components';
import { idFromPath, parseForm, sameOriginForm } from '../forms';
import { page } from '../layout';

// Deposits of every user, each with the gateway events received for it (mismatches marked), "Mark paid" on a pending
// one (the admin API's mark-paid: credits once, audited). A deposit's actions sit together in one cell, where a later
// "Ask the vendor" (POST /admin/deposits/{id}/refresh) belongs beside "Mark paid".

const DEPOSITS = '/dashboard/console/deposits';
const STATUSES = ['pending', 'paid', 'failed', 'expired'] as const;

function DepositActions({ deposit }: { deposit: OperatorDeposit }) {
  if (deposit.status !== 'pending') return null;
  return (
    <form method="post" action={`${DEPOSITS}/${deposit.id}/mark-paid`} class="inline">
      <button type="submit" class="secondary" aria-describedby={`deposit-label-${deposit.id}`}>
        Mark paid
      </button>
    </form>
  );
}

function GatewayEvents({ deposit }: { deposit: OperatorDeposit }) {
  if (deposit.events.length === 0) return <span class="muted">none</span>;
  return (
    <ul>
      {deposit.events.map((e) => (
        <li class={e.outcome === 'amount_mismatch' ? 'mismatch' : undefined}>
          {`${e.status} `}
          <Money cents={e.amountCents} />
          {` → ${e.outcome} `}
          <When iso={e.receivedAt} />
        </li>
      ))}
    </ul>
  );
}

export const consoleDeposits = new Hono<AppEnv>()
  .get('/console/deposits', requireOperatorSession, async (c) => {
    const { status, gateway, user_id: userId, ...pageQuery } = parseForm(DepositsQuery, c.req.query());
    const [{ rows, total }] = await queryAsOperator(c.var.db, c.var.caller, [operatorDepositsQuery({ status, gateway, userId }, pageQuery)]);
    const filter = (s?: string, g?: string) => `${DEPOSITS}?${new URLSearchParams({ ...(s ? { status: s } : {}), ...(g ? { gateway: g } : {}) })}`;
    return page(c, {
      title: 'Deposits',
      section: DEPOSITS,
      children: (
        <>
          <nav aria-label="Filter deposits" class="row">
            <a href={DEPOSITS} aria-current={!status && !gateway ? 'page' : undefined}>
              All
            </a>
            {STATUSES.map((s) => (
              <a href={filter(s, gateway)} aria-current={s === status ? 'page' : undefined}>
                {s}
              </a>
            ))}
            {GATEWAYS.map((g) => (
              <a href={filter(status, g)} aria-current={g === gateway ? 'page' : undefined}>
                {g}
              </a>
            ))}
          </nav>
          {rows.length === 0 ? (
            <p class="empty">No deposits.</p>
          ) : (
            <div class="table-wrap">
              <table>
                <caption class="visually-hidden">Deposits with their gateway events</caption>
                <thead>
                  <tr>
                    <th scope="col">Deposit</th>
                    <th scope="col">User</th>
                    <th scope="col" class="num">Amount</th>
                    <th scope="col">Status</th>
                    <th scope="col">Gateway events</th>
                    <th scope="col">
                      <span class="visually-hidden">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {rows.map((d) => (
                    <tr id={`deposit-${d.id}`}>
                      <td>
                        <span id={`deposit-label-${d.id}`}>{`#${d.id}`}</span>
                        <br />
                        <span class="muted">{d.gateway}</span> <When iso={d.createdAt} />
                      </td>
                      <td>
                        <a href={`/dashboard/console/users/${d.userId}`}>{`#${d.userId}`}</a>
                      </td>
                      <td class="num">
                        <Money cents={d.amountCents} />
                      </td>
                      <td>
                        <Status value={d.status} />
                      </td>
                      <td>
                        <GatewayEvents deposit={d} />
                      </td>
                      <td>
                        <DepositActions deposit={d} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          <Pager path={DEPOSITS} page={pageQuery.page} totalPages={Math.ceil(total / pageQuery.per_page)} query={{ status, gateway }} />
        </>
      ),
    });
  })
  .post('/console/deposits/:id/mark-paid', sameOriginForm, requireOperatorSession, async (c) => {
    const id = idFromPath(c.req.param('id'), 'Deposit');
    await markDepositPaid(c.var.db, operatorActor(c.var.caller), id, undefined, publishAfterResponse(c));
    return c.redirect(`${DEPOSITS}#deposit-${id}`, 303);
  });
