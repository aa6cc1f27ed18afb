import { z } from '@hono/zod-openapi';
import { Hono, type Context } from 'hono';
import { NONCE, secureHeaders } from 'hono/secure-headers';
import type { AppEnv } from '../../env';
import { resilient } from '../../db/d1';
import type { DepositRow } from '../../db/schema';
import { notFound } from '../../lib/errors';
import { formatUsd } from '../../lib/money';
import { sameOriginOnly } from '../../middleware/same-origin';
import { publishAfterResponse } from '../../middleware/publish-events';
import { userCaller } from '../../services/caller';
import { TEST_PAY_TOKEN } from '../../services/payments/gateways/test';
import { findTestDeposit, settleTestDeposit, type TestOutcome } from '../../services/sandbox/deposits';
import { STATIC_ASSETS } from '../../generated/static-assets';
import { ErrorBody } from '../../lib/envelope';
import { jsonResponse, type createRouter } from '../openapi';

// The test gateway's payment page, `<PUBLIC_BASE_URL>/test/pay/<token>` (a sandbox deposit's payment_url): what
// a real vendor's hosted checkout is in live, with three buttons, "Pay", "Pay less" (half the amount: a mismatch,
// nothing credited) and "Fail". Plain forms posting to the page itself, applied exactly as the API's
// `POST /api/v2/test/deposits/{id}/pay | fail` are. It exists only where SANDBOX_DB is bound, and reaches only the
// sandbox: it pays test money, never real.

const escapeHtml = (value: string) =>
  value.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]!);

const CHOICES: Record<string, { outcome: TestOutcome; label: string; half?: boolean }> = {
  pay: { outcome: 'pay', label: 'Pay' },
  pay_less: { outcome: 'pay', label: 'Pay less', half: true },
  fail: { outcome: 'fail', label: 'Fail' },
};

function testPayPage(deposit: DepositRow, token: string, nonce: string, result?: string): string {
  const amount = escapeHtml(formatUsd(deposit.amountCents));
  const open = deposit.status === 'pending' || deposit.status === 'expired';
  const button = (choice: string) =>
    `<form method="post" action="/test/pay/${token}"><input type="hidden" name="choice" value="${choice}"><button type="submit" id="${choice}"${open ? '' : ' disabled'}>${CHOICES[choice].label}</button></form>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Test payment: deposit #${deposit.id}</title>
<link rel="icon" href="${STATIC_ASSETS['icon.svg']}" type="image/svg+xml">
<style nonce="${nonce}">
  body { font: 16px/1.5 system-ui, sans-serif; max-width: 28rem; margin: 3rem auto; padding: 0 1rem; color: #1a1a1a; }
  .card { border: 2px dashed #b26b00; border-radius: 12px; padding: 1.5rem; }
  .badge { display: inline-block; background: #b26b00; color: white; border-radius: 4px; padding: 0 0.5rem; font-size: 0.85rem; }
  .amount { font-size: 2rem; font-weight: 700; margin: 0.25rem 0 1rem; }
  dl { display: grid; grid-template-columns: auto 1fr; gap: 0.25rem 1rem; }
  dt { color: #666; }
  form { display: inline; }
  button { font: inherit; padding: 0.6rem 1.4rem; border-radius: 8px; border: 0; cursor: pointer; margin: 0 0.5rem 0.5rem 0; background: #eee; }
  #pay { background: #0a7d38; color: white; }
  button:disabled { opacity: 0.5; cursor: default; }
</style>
</head>
<body>
<main class="card">
  <p><span class="badge">TEST MODE</span> No real money moves here.</p>
  <h1 class="amount">${amount}</h1>
  <dl>
    <dt>Deposit</dt><dd>#${deposit.id}</dd>
    <dt>Gateway</dt><dd>${escapeHtml(deposit.gateway)} (test)</dd>
    <dt>Status</dt><dd id="status">${escapeHtml(deposit.status)}</dd>
  </dl>
  <p>${button('pay')}${button('pay_less')}${button('fail')}</p>
  ${result ? `<p id="result" role="status">${escapeHtml(result)}</p>` : ''}
</main>
</body>
</html>`;
}

/** A policy for a page of forms posting to itself: its own style only, no script, not framed. */
const pageHeaders = secureHeaders({
  contentSecurityPolicy: {
    defaultSrc: ["'none'"],
    styleSrc: [NONCE],
    imgSrc: ["'self'"],
    baseUri: ["'none'"],
    formAction: ["'self'"],
    frameAncestors: ["'none'"],
  },
  referrerPolicy: 'same-origin',
  xFrameOptions: 'DENY',
});

/** A test deposit of the sandbox by its page's token, or 404 (no sandbox here, a malformed or unknown token). */
async function testDeposit(c: Context<AppEnv>): Promise<{ deposit: DepositRow; token: string }> {
  const token = c.req.param('token') ?? '';
  return { deposit: await findTestDeposit(c.var.db, token), token };
}

export const testPayRouter = new Hono<AppEnv>()
  .use('*', pageHeaders)
  .use('*', async (c, next) => {
    if (!c.env.SANDBOX_DB) throw notFound('Page');
    c.set('mode', 'test');
    c.set('db', resilient(c.env.SANDBOX_DB).withSession('first-primary') as unknown as D1DatabaseSession);
    c.header('Cache-Control', 'no-store');
    await next();
  })
  .get('/:token', async (c) => {
    const { deposit, token } = await testDeposit(c);
    return c.html(testPayPage(deposit, token, c.get('secureHeadersNonce') ?? ''));
  })
  // Another web page must not pay or fail a deposit through a tester's browser: same origin only.
  .post('/:token', sameOriginOnly, async (c) => {
    const { deposit, token } = await testDeposit(c);
    // Whatever was posted: a body that is no form is no choice.
    const form = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
    const choice = CHOICES[typeof form.choice === 'string' ? form.choice : ''];
    if (!choice) return c.html(testPayPage(deposit, token, c.get('secureHeadersNonce') ?? '', 'Choose Pay, Pay less or Fail.'), 422);
    const amountCents = choice.half ? Math.max(1, Math.floor(deposit.amountCents / 2)) : undefined;
    const { deposit: after } = await settleTestDeposit(c.var.db, userCaller(deposit.userId), deposit.id, choice.outcome, { amountCents, publish: publishAfterResponse(c) });
    const result = after.status === 'paid' ? 'Paid: the test wallet is credited.' : after.status === 'failed' ? 'The payment failed.' : `Paid ${formatUsd(amountCents ?? 0)}: less than the deposit, nothing credited.`;
    return c.html(testPayPage(after, token, c.get('secureHeadersNonce') ?? '', result));
  });

const html = (description: string) => ({ description, content: { 'text/html': { schema: { type: 'string' as const } } } });

/** The page in the OpenAPI document, beside the other pages outside the API. */
export function registerTestPayDocs(app: ReturnType<typeof createRouter>) {
  const tags = ['Pages'];
  const params = z.object({ token: z.string().regex(TEST_PAY_TOKEN).openapi({ description: "the token of the deposit's payment_url (a deposit id opens nothing)" }) });
  const notServed = { 404: jsonResponse(ErrorBody, 'Unknown test deposit, or no test mode (SANDBOX_DB unbound)') };
  app.openAPIRegistry.registerPath({
    method: 'get',
    path: '/test/pay/{token}',
    operationId: 'getTestPaymentPage',
    tags,
    summary: "Test mode: the test gateway's payment page (a sandbox deposit's payment_url)",
    request: { params },
    responses: { 200: html('The page, with Pay, Pay less and Fail'), ...notServed },
  });
  app.openAPIRegistry.registerPath({
    method: 'post',
    path: '/test/pay/{token}',
    operationId: 'submitTestPayment',
    tags,
    summary: "Test mode: the payment page's buttons (form field `choice`: pay, pay_less, fail)",
    description: "Only from the page itself: a post without the page's own `Origin` (or `Sec-Fetch-Site: same-origin`) is a 403.",
    request: { params },
    responses: {
      200: html('The page again, with what happened'),
      403: jsonResponse(ErrorBody, 'Another origin (FORBIDDEN)'),
      413: jsonResponse(ErrorBody, 'Body too large (`PAYLOAD_TOO_LARGE`)'),
      422: html('No choice made'),
      ...notServed,
    },
  });
}
