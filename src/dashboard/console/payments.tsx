import { Hono, type Context } from 'hono';
import { readConfig, type AppEnv } from '../../env';
import { runAfterResponse } from '../../middleware/after-response';
import { requireOperatorSession } from '../../middleware/session';
import { queryAsOperator } from '../../services/caller';
import { checkConnection, gatewaysQuery, type ConnectionCheck } from '../../services/payments/health';
import { isGatewayName } from '../../services/payments/gateways';
import { recordVendorFailure } from '../../services/payments/vendor-failures';
import { Notice, When } from '../components';
import { sameOriginForm } from '../forms';
import { notFound } from '../../lib/errors';
import { page } from '../layout';
import { DataTable } from '../tables';

// The payment providers behind the three gateway slots (GET /admin/gateways): which is configured, whether it is
// available (or which setting it misses, by name), when it last notified, was last asked, last failed; and "Check
// connection" (POST /admin/gateways/{slot}/check), whose answer this page shows.

const PAYMENTS = '/dashboard/console/payments';

async function paymentsPage(c: Context<AppEnv>, check?: ConnectionCheck) {
  const [gateways] = await queryAsOperator(c.var.db, c.var.caller, [gatewaysQuery(readConfig(c.env))]);
  return page(c, {
    title: 'Payment providers',
    section: PAYMENTS,
    children: (
      <>
        {check &&
          (check.outcome === 'reachable' || check.outcome === 'no_vendor' ? (
            <Notice>{`${check.gateway} (${check.provider}): ${check.message}`}</Notice>
          ) : (
            <p class="alert" role="alert">{`${check.gateway} (${check.provider}): ${check.message}`}</p>
          ))}
        <p class="muted">Settings are read from the worker's configuration (GATEWAY_ONE_*, GATEWAY_TWO_*, GATEWAY_THREE_*); this page never shows a value.</p>
        <DataTable
          caption="Gateway slots and their payment providers"
          rows={gateways}
          empty=""
          rowId={(g) => `gateway-${g.gateway}`}
          columns={[
            { label: 'Slot', cell: (g) => g.gateway },
            { label: 'Provider', cell: (g) => g.provider },
            { label: 'Available', cell: (g) => (g.available ? 'yes' : <span class="mismatch">{`no: ${g.problem}`}</span>) },
            {
              label: 'Last notification',
              cell: (g) => (g.lastNotification ? <><When iso={g.lastNotification.at} />{` (${g.lastNotification.outcome})`}</> : <span class="muted">none yet</span>),
            },
            { label: 'Last lookup', cell: (g) => <When iso={g.lastLookupAt} /> },
            {
              label: 'Last vendor failure',
              cell: (g) => (g.lastFailure ? <><When iso={g.lastFailure.at} />{` (${g.lastFailure.purpose}: ${g.lastFailure.failure})`}</> : <span class="muted">none</span>),
            },
            {
              label: 'Actions',
              labelHidden: true,
              class: 'actions',
              cell: (g) =>
                g.available && g.provider !== 'generic' ? (
                  <form method="post" action={`${PAYMENTS}/${g.gateway}/check`} class="inline">
                    <button type="submit" class="secondary" aria-label={`Check connection of ${g.gateway}`}>
                      Check connection
                    </button>
                  </form>
                ) : null,
            },
          ]}
        />
      </>
    ),
  });
}

export const consolePayments = new Hono<AppEnv>()
  .get('/console/payments', requireOperatorSession, (c) => paymentsPage(c))
  .post('/console/payments/:slot/check', sameOriginForm, requireOperatorSession, async (c) => {
    const slot = c.req.param('slot');
    if (!isGatewayName(slot)) throw notFound('Page');
    // The operator is proved before the vendor is called (as "Ask the vendor" does): nobody else makes the worker call out.
    await queryAsOperator(c.var.db, c.var.caller, []);
    const check = await checkConnection(readConfig(c.env), slot);
    if (check.failure) runAfterResponse(c, recordVendorFailure(c.var.db, check.failure));
    return paymentsPage(c, check);
  });
