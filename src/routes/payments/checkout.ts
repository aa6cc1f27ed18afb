import { Hono, type ExecutionContext as HonoExecutionContext } from 'hono';
import { NONCE, secureHeaders } from 'hono/secure-headers';
import { readConfig, type AppEnv } from '../../env';
import { notFound } from '../../lib/errors';
import { formatUsd } from '../../lib/money';
import { findDeposit } from '../../services/payments/deposits';
import { findGateway, isGatewayName } from '../../services/payments/gateways';
import { sameOriginOnly } from '../../middleware/same-origin';
import type { DepositRow } from '../../db/schema';
import { STATIC_ASSETS } from '../../generated/static-assets';

// Development-only stand-in for a gateway's hosted checkout (served when DEV_CHECKOUT=true). Its buttons make the
// server sign a webhook with the gateway's secret and deliver it to the service's own webhook route, exactly as the
// gateway would: the secret never reaches the browser.

type Dispatch = (request: Request, env: AppEnv['Bindings'], ctx: HonoExecutionContext) => Response | Promise<Response>;

const escapeHtml = (value: string) =>
  value.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]!);

function checkoutPage(deposit: DepositRow, nonce: string): string {
  const amount = escapeHtml(formatUsd(deposit.amountCents));
  const method = escapeHtml(deposit.cryptoCurrency ? `${deposit.gateway} (${deposit.cryptoCurrency})` : deposit.gateway);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Checkout: deposit #${deposit.id}</title>
<link rel="icon" href="${STATIC_ASSETS['icon.svg']}" type="image/svg+xml">
<style nonce="${nonce}">
  body { font: 16px/1.5 system-ui, sans-serif; max-width: 28rem; margin: 3rem auto; padding: 0 1rem; color: #1a1a1a; }
  .card { border: 1px solid #ddd; border-radius: 12px; padding: 1.5rem; }
  .amount { font-size: 2rem; font-weight: 700; margin: 0.25rem 0 1rem; }
  dl { display: grid; grid-template-columns: auto 1fr; gap: 0.25rem 1rem; }
  dt { color: #666; }
  button { font: inherit; padding: 0.6rem 1.4rem; border-radius: 8px; border: 0; cursor: pointer; margin-right: 0.5rem; }
  #pay { background: #0a7d38; color: white; }
  #fail { background: #eee; }
  button:disabled { opacity: 0.5; cursor: default; }
  .note { color: #666; font-size: 0.85rem; }
</style>
</head>
<body>
<main class="card">
  <p>Development checkout</p>
  <h1 class="amount" id="amount">${amount}</h1>
  <dl>
    <dt>Deposit</dt><dd>#${deposit.id}</dd>
    <dt>Gateway</dt><dd>${method}</dd>
    <dt>Status</dt><dd id="status">${escapeHtml(deposit.status)}</dd>
    <dt>Expires in</dt><dd id="countdown" data-expires-at="${escapeHtml(deposit.expiresAt)}"></dd>
  </dl>
  <p>
    <button id="pay" type="button">Pay ${amount}</button>
    <button id="fail" type="button">Fail</button>
  </p>
  <p id="result" role="status" aria-live="polite"></p>
  <p class="note">Local stand-in for the payment gateway: the buttons send the gateway's signed webhook.</p>
  ${
    deposit.orderProductId !== null
      ? `<p><a id="continue" href="/dashboard/wallet/deposits/${deposit.id}">Continue to your order</a></p>`
      : '<p><a href="/dashboard/wallet">Back to your wallet</a></p>'
  }
</main>
<script nonce="${nonce}">
  const countdown = document.getElementById('countdown');
  const expiresAt = Date.parse(countdown.dataset.expiresAt);
  const status = document.getElementById('status');
  const tick = () => {
    if (status.textContent !== 'pending') return (countdown.textContent = '—');
    const left = Math.max(0, Math.round((expiresAt - Date.now()) / 1000));
    countdown.textContent = left > 0 ? Math.floor(left / 60) + 'm ' + String(left % 60).padStart(2, '0') + 's' : 'expired';
  };
  tick();
  setInterval(tick, 1000);
  const buttons = [document.getElementById('pay'), document.getElementById('fail')];
  const settle = (done) => buttons.forEach((b) => (b.disabled = done));
  settle(${deposit.status === 'pending' || deposit.status === 'expired' ? 'false' : 'true'});
  async function send(outcome) {
    settle(true);
    const res = await fetch(location.pathname + '/' + outcome, { method: 'POST' });
    const body = await res.json();
    document.getElementById('result').textContent = body.success ? (body.message || 'Done.') : body.error;
    if (body.data && body.data.status) status.textContent = body.data.status;
    tick();
    settle(body.success ? true : false);
    // A deposit that pays for an order: once paid, the buyer goes on to the order (or the wallet saying why not).
    const next = document.getElementById('continue');
    if (body.success && outcome === 'pay' && next) location.assign(next.href);
  }
  document.getElementById('pay').addEventListener('click', () => send('pay'));
  document.getElementById('fail').addEventListener('click', () => send('fail'));
</script>
</body>
</html>`;
}

const depositIdOf = (raw: string) => {
  if (!/^[1-9]\d{0,14}$/.test(raw)) throw notFound('Deposit');
  return Number(raw);
};

// The page pays any deposit with the gateway's real secret: it must never be reachable on a deployed worker, even
// with DEV_CHECKOUT=true set by mistake. A deployed worker is only ever reached under its own host name.
const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1']);

/**
 * The dashboard's frame protection (no other page may frame it, so none can trick a click on "Pay"), and a policy
 * that runs only this page's own inline script and style (a nonce per response) and lets it fetch only this origin.
 */
const checkoutHeaders = secureHeaders({
  contentSecurityPolicy: {
    defaultSrc: ["'none'"],
    scriptSrc: [NONCE],
    styleSrc: [NONCE],
    imgSrc: ["'self'"],
    connectSrc: ["'self'"],
    baseUri: ["'none'"],
    formAction: ["'none'"],
    frameAncestors: ["'none'"],
  },
  referrerPolicy: 'same-origin',
  xFrameOptions: 'DENY',
});

export function createCheckoutRouter(dispatch: Dispatch) {
  const router = new Hono<AppEnv>();
  router.use('*', checkoutHeaders);
  router.use('*', async (c, next) => {
    if (!readConfig(c.env).devCheckout || !LOCAL_HOSTS.has(new URL(c.req.url).hostname)) throw notFound('Checkout');
    await next();
  });
  router.get('/:id', async (c) =>
    c.html(checkoutPage(await findDeposit(c.env.DB, depositIdOf(c.req.param('id'))), c.get('secureHeadersNonce') ?? '')),
  );
  // Another web page must not be able to pay or fail a deposit through the developer's browser: a post of any
  // Content-Type needs the page's own Origin or `Sec-Fetch-Site: same-origin`.
  router.post('/:id/:outcome{pay|fail}', sameOriginOnly, async (c) => {
    const deposit = await findDeposit(c.env.DB, depositIdOf(c.req.param('id')));
    // Only the generic adapter has a stand-in checkout: a real provider's deposit is paid on the vendor's page.
    const gateway = isGatewayName(deposit.gateway) ? findGateway(deposit.gateway, readConfig(c.env)) : null;
    if (gateway?.provider !== 'generic') throw notFound('Gateway');
    const signed = await gateway.generic.signWebhook(
      {
        depositId: deposit.id,
        status: c.req.param('outcome') === 'pay' ? 'paid' : 'failed',
        amountCents: deposit.amountCents,
        transactionId: `checkout_${crypto.randomUUID()}`,
      },
      Date.now(),
    );
    const webhook = new Request(new URL(`/api/v2/webhooks/${gateway.name}`, c.req.url), { method: 'POST', ...signed });
    const response = await dispatch(webhook, c.env, c.executionCtx);
    return new Response(response.body, { status: response.status, headers: { 'Content-Type': 'application/json' } });
  });
  return router;
}
