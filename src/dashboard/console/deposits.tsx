import { Hono, type Context } from 'hono';
import { readConfig, type AppEnv } from '../../env';
import { ApiError } from '../../lib/errors';
import { runAfterResponse } from '../../middleware/after-response';
import { publishAfterResponse } from '../../middleware/publish-events';
import { requireOperatorSession } from '../../middleware/session';
import { DepositsQuery, RefreshDepositBody } from '../../schemas/operator';
import { operatorActor } from '../../services/accounts/audit-log';
import { queryAsOperator } from '../../services/caller';
import { markDepositPaid } from '../../services/payments/deposits';
import type { GatewayOutcome } from '../../services/payments/gateway-events';
import { GATEWAYS } from '../../services/payments/gateways';
import { depositWithBuyerQuery, operatorDepositsQuery, type OperatorDeposit } from '../../services/operator/deposits';
import type { Buyer } from '../../services/operator/users';
import { vendorFailureOf } from '../../services/payments/gateways/vendor-http';
import { recordVendorFailure } from '../../services/payments/vendor-failures';
import { lookupGateway, refreshDeposit } from '../../services/payments/vendor-notifications';
import { Field, Money, Notice, Pager, Status, When } from '../components';
import { idFromPath, parseForm, readForm, sameOriginForm } from '../forms';
import { withDone } from '../done-notices';
import { page } from '../layout';
import { DataTable } from '../tables';
import { mailFor } from '../../middleware/send-emails';
import { AskFirst, confirmationPage } from './confirm';
import { DateFilter, ExportLink } from './filters';
import { Person } from './person';

// Deposits of every user, each with the gateway events received for it (mismatches marked) and when its vendor was
// last asked, "Mark paid" on a pending one (the admin API's mark-paid: credits once, audited) and "Ask the vendor" on
// a real provider's deposit that is not paid (the admin API's refresh: the vendor's answer applied as its
// notification would be). The table is the dashboard's stacked one: on a phone nothing scrolls sideways.

const DEPOSITS = '/dashboard/console/deposits';
const STATUSES = ['pending', 'paid', 'failed', 'expired'] as const;

/**
 * The one-line notice after "Ask the vendor" (`?asked=<id>&outcome=<outcome>`): the URL names only the deposit and
 * one of these fixed sentences (any other value shows none); the row itself shows the deposit as stored.
 */
const ASKED: Partial<Record<GatewayOutcome, string>> = {
  credited: 'the vendor says it is paid; credited to the wallet.',
  closed: 'the vendor says it failed or expired; closed, nothing credited.',
  duplicate: 'the answer changes nothing; the deposit was already settled.',
  amount_mismatch: 'the vendor reports a different amount; nothing credited (see its gateway events).',
  in_progress: 'not paid yet at the vendor; nothing changed.',
};

function askedNotice({ asked, outcome }: Record<string, string | undefined>): string | null {
  const words = outcome !== undefined && Object.hasOwn(ASKED, outcome) ? ASKED[outcome as GatewayOutcome] : undefined;
  return words && /^[1-9]\d{0,14}$/.test(asked ?? '') ? `Asked the vendor about deposit #${asked}: ${words}` : null;
}

function DepositActions({ deposit, askable }: { deposit: OperatorDeposit; askable: boolean }) {
  const describedBy = `deposit-label-${deposit.id}`;
  return (
    <>
      {deposit.status === 'pending' && <AskFirst action={markPaidPath(deposit.id)} label="Mark paid" describedBy={describedBy} />}
      {askable && deposit.status !== 'paid' && (
        <form method="post" action={`${DEPOSITS}/${deposit.id}/refresh`} class="inline">
          {deposit.provider === 'nowpayments' && (
            // For a payment whose notifications never arrived: NOWPayments is looked up by its payment id.
            <Field name="payment_id" label="Vendor payment id" idPrefix={`deposit-${deposit.id}`} maxlength={64} autocomplete="off" />
          )}
          <button type="submit" class="secondary" aria-describedby={describedBy}>
            Ask the vendor
          </button>
        </form>
      )}
    </>
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

/** Why "Ask the vendor" changed nothing: no vendor to ask (422), or the vendor cannot tell (503). */
interface Refusal {
  status: 422 | 503;
  message: string;
}

/** The deposits page (its query's filters and page), with the refusal of an "Ask the vendor" post when there is one. */
async function depositsPage(c: Context<AppEnv>, refusal?: Refusal) {
  const { status, gateway, user_id: userId, from, to, ...pageQuery } = parseForm(DepositsQuery, c.req.query());
  const range = { from, to };
  const [{ rows, total }] = await queryAsOperator(c.var.db, c.var.caller, [operatorDepositsQuery({ status, gateway, userId, ...range }, pageQuery)]);
  const config = readConfig(c.env);
  const notice = refusal ? null : askedNotice(c.req.query());
  const filter = (s?: string, g?: string) =>
    `${DEPOSITS}?${new URLSearchParams({ ...(s ? { status: s } : {}), ...(g ? { gateway: g } : {}), ...(from ? { from } : {}), ...(to ? { to } : {}) })}`;
  return page(
    c,
    {
      title: 'Deposits',
      section: DEPOSITS,
      children: (
        <>
          {notice && <Notice>{notice}</Notice>}
          {refusal && (
            <p class="alert" role="alert">
              {refusal.message}
            </p>
          )}
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
          <DateFilter action={DEPOSITS} range={range} keep={{ status, gateway }}>
            <ExportLink name="deposits" range={range} />
            {/* The ledger has no console list of its own: its file sits with the money coming in. */}
            <ExportLink name="transactions" range={range} label="Export wallet transactions CSV" />
          </DateFilter>
          <DataTable
            caption="Deposits with their gateway events"
            rows={rows}
            empty="No deposits."
            rowId={(d) => `deposit-${d.id}`}
            columns={[
              {
                label: 'Deposit',
                cell: (d) => (
                  <>
                    <span id={`deposit-label-${d.id}`}>{`#${d.id}`}</span>{' '}
                    <span class="muted">{d.provider === 'generic' ? d.gateway : `${d.gateway} (${d.provider})`}</span> <When iso={d.createdAt} />
                  </>
                ),
              },
              { label: 'User', cell: (d) => <Person id={d.userId} name={d.userName} email={d.userEmail} /> },
              { label: 'Amount', class: 'num', cell: (d) => <Money cents={d.amountCents} /> },
              { label: 'Status', cell: (d) => <Status value={d.status} /> },
              { label: 'Vendor asked', cell: (d) => <When iso={d.lastCheckedAt} /> },
              { label: 'Gateway events', cell: (d) => <GatewayEvents deposit={d} /> },
              { label: 'Actions', labelHidden: true, class: 'actions', cell: (d) => <DepositActions deposit={d} askable={lookupGateway(config, d) !== null} /> },
            ]}
          />
          <Pager path={DEPOSITS} page={pageQuery.page} totalPages={Math.ceil(total / pageQuery.per_page)} query={{ status, gateway, ...range }} />
        </>
      ),
    },
    refusal?.status ?? 200,
  );
}

const markPaidPath = (id: number) => `${DEPOSITS}/${id}/mark-paid`;
const person = (d: Buyer) => `${d.userName} <${d.userEmail}>`;

const unreachable = (id: number) =>
  `Deposit #${id}: the payment provider could not be reached, so nothing was changed. Try again in a minute; the scheduled job also asks it on its own.`;

export const consoleDeposits = new Hono<AppEnv>()
  .get('/console/deposits', requireOperatorSession, (c) => depositsPage(c))
  .get('/console/deposits/:id/mark-paid/confirm', requireOperatorSession, async (c) => {
    const [deposit] = await queryAsOperator(c.var.db, c.var.caller, [depositWithBuyerQuery(idFromPath(c.req.param('id'), 'Deposit'))]);
    const back = `${DEPOSITS}#deposit-${deposit.id}`;
    // Only a pending deposit can be marked paid: for any other the list says why (its status), nothing to confirm.
    if (deposit.status !== 'pending') return c.redirect(back, 303);
    return confirmationPage(c, {
      title: `Mark deposit #${deposit.id} paid?`,
      section: DEPOSITS,
      effect: (
        <>
          {'This credits '}
          <Money cents={deposit.amountCents} />
          {` to the wallet of ${person(deposit)} now, once, and marks deposit #${deposit.id} (${deposit.gateway}) paid. Do it only when the money has arrived: a credit is not undone by cancelling.`}
        </>
      ),
      action: markPaidPath(deposit.id),
      back,
    });
  })
  .post('/console/deposits/:id/mark-paid', sameOriginForm, requireOperatorSession, async (c) => {
    const id = idFromPath(c.req.param('id'), 'Deposit');
    // No idempotency record: a session that is not an operator's must write nothing, and the credit is keyed on the
    // deposit itself (`manual-<id>`), so a second post credits nothing and its notice says so.
    const { credited } = await markDepositPaid(c.var.db, operatorActor(c.var.caller), id, undefined, publishAfterResponse(c), mailFor(c));
    return c.redirect(withDone(`${DEPOSITS}#deposit-${id}`, credited ? 'deposit_paid' : 'deposit_already_paid'), 303);
  })
  .post('/console/deposits/:id/refresh', sameOriginForm, requireOperatorSession, async (c) => {
    const id = idFromPath(c.req.param('id'), 'Deposit');
    // The refresh proves no session of its own: the operator is proved before the vendor is asked or anything written.
    await queryAsOperator(c.var.db, c.var.caller, []);
    const typed = (await readForm(c)).payment_id?.trim();
    try {
      const { payment_id: paymentId } = parseForm(RefreshDepositBody, typed ? { payment_id: typed } : {});
      const options = { paymentId, actor: operatorActor(c.var.caller), mail: mailFor(c) };
      const { outcome } = await refreshDeposit(c.var.db, readConfig(c.env), id, options, undefined, publishAfterResponse(c));
      return c.redirect(`${DEPOSITS}?${new URLSearchParams({ asked: String(id), outcome })}#deposit-${id}`, 303);
    } catch (err) {
      // No vendor to ask (a generic slot's deposit), or the vendor cannot tell: the page again, nothing changed.
      if (!(err instanceof ApiError) || (err.code !== 'VALIDATION_FAILED' && err.code !== 'GATEWAY_UNAVAILABLE')) throw err;
      const failure = vendorFailureOf(err);
      if (failure) runAfterResponse(c, recordVendorFailure(c.var.db, failure)); // for the payments page
      for (const [name, value] of Object.entries(err.headers ?? {})) c.header(name, value);
      if (err.code === 'GATEWAY_UNAVAILABLE') return depositsPage(c, { status: 503, message: unreachable(id) });
      return depositsPage(c, { status: 422, message: Object.values(err.errors ?? {}).flat().join(' ') });
    }
  });
