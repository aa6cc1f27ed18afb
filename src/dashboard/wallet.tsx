import { Hono, type Context } from 'hono';
import { publicBaseUrl } from '../lib/public-base-url';
import { readConfig, type AppEnv } from '../env';
import { PaginationQuery } from '../lib/pagination';
import { requireSession } from '../middleware/session';
import { vendorInvoiceThrottle } from '../middleware/rate-limit';
import { DepositBody } from '../schemas/wallet';
import type { DepositRow } from '../db/schema';
import { queryAs } from '../services/caller';
import { createDeposit, depositQuery, depositsQuery, getDeposit } from '../services/payments/deposits';
import { orderErrorReason } from '../lib/order-errors';
import { afterPayment } from './shop';
import { availableGateways, CRYPTO_CURRENCIES, DEFAULT_CRYPTO_CURRENCY, type GatewayOffer } from '../services/payments/gateways';
import { balanceQuery, transactionsQuery } from '../services/payments/wallet';
import { Alert, Field, IdempotencyKey, Money, Notice, Pager, Select, Stat } from './components';
import { formHandler, idFromPath, parseForm, redirectOnce, sameOriginForm, type FormFields, type FormProblem } from './forms';
import { page } from './layout';
import { DepositsTable, TransactionsTable } from './tables';
import { mailFor } from '../middleware/send-emails';

// The wallet: balance, ledger and deposits (the API's lists, one `page` for both), and "Add funds", which creates a
// deposit exactly like POST /wallet/deposit and sends the browser to its payment page.

const paymentPage = (deposit: DepositRow) => deposit.paymentUrl ?? '/dashboard/wallet';

/** Only slots that take deposits now, named by what the buyer pays with. */
const gatewayOption = ({ gateway, kind }: GatewayOffer, index: number, offers: GatewayOffer[]) => {
  const word = kind === 'crypto' ? 'Crypto' : 'Card';
  const numbered = offers.filter((o) => o.kind === kind).length > 1;
  return { value: gateway, label: numbered ? `${word} (${offers.slice(0, index + 1).filter((o) => o.kind === kind).length})` : word };
};

interface WalletView {
  values?: FormFields;
  problem?: FormProblem;
}

/**
 * The wallet after a payment (`?deposit=<id>`, where the checkout sends the buyer back): what became of that deposit,
 * worded from the deposit as stored (the URL names only which one, so a crafted link states nothing false).
 */
function depositNotice(deposit: DepositRow | null) {
  if (!deposit) return null;
  if (deposit.status === 'pending') {
    return deposit.orderProductId !== null ? `Deposit #${deposit.id} is waiting for its payment; your order is made as soon as it arrives.` : `Deposit #${deposit.id} is waiting for its payment.`;
  }
  if (deposit.status !== 'paid') return `Deposit #${deposit.id} was not paid (${deposit.status}); nothing was charged.`;
  if (deposit.orderError) {
    return `Deposit #${deposit.id} was credited, but the order could not be made: ${orderErrorReason(deposit.orderError)}. Nothing was bought; the money is in your wallet.`;
  }
  return `Deposit #${deposit.id} was credited.`;
}

const DEPOSIT_ID = /^[1-9]\d{0,14}$/;

async function walletPage(c: Context<AppEnv>, { values, problem }: WalletView, status: 200 | FormProblem['status'] = 200) {
  const { caller } = c.var;
  const pageQuery = parseForm(PaginationQuery, { page: c.req.query('page') ?? '1' });
  const asked = c.req.query('deposit');
  const [balanceCents, transactions, deposits, paid] = await queryAs(c.var.db, caller, [
    balanceQuery(caller),
    transactionsQuery(caller, pageQuery),
    depositsQuery(caller, pageQuery),
    depositQuery(caller, asked && DEPOSIT_ID.test(asked) ? Number(asked) : null),
  ]);
  const notice = problem ? null : depositNotice(paid);
  const totalPages = Math.ceil(Math.max(transactions.total, deposits.total) / pageQuery.per_page);
  return page(
    c,
    {
      title: 'Wallet',
      section: '/dashboard/wallet',
      children: (
        <>
          {notice && <Notice>{notice}</Notice>}
          <dl class="stats">
            <Stat label="Balance">
              <Money cents={balanceCents} />
            </Stat>
          </dl>
          <section class="card" aria-labelledby="add-funds">
            <h2 id="add-funds">Add funds</h2>
            <Alert problem={problem} />
            <form method="post" action="/dashboard/wallet/deposit">
              <IdempotencyKey />
              <Field name="amount" label="Amount" value={values?.amount} problem={problem} inputmode="decimal" required />
              <Select
                name="gateway"
                label="Payment method"
                options={availableGateways(readConfig(c.env)).map(gatewayOption)}
                value={values?.gateway}
                problem={problem}
              />
              <Select
                name="crypto_currency"
                label="Crypto currency (crypto methods only)"
                options={CRYPTO_CURRENCIES}
                value={values?.crypto_currency ?? DEFAULT_CRYPTO_CURRENCY}
                problem={problem}
              />
              <button type="submit">Add funds</button>
            </form>
            <p class="muted">Amounts from $1.00 to $10,000.00. You will be sent to the payment page.</p>
          </section>
          <h2>Transactions</h2>
          <TransactionsTable transactions={transactions.rows} caption="Wallet transactions, newest first" />
          <h2>Deposits</h2>
          <DepositsTable deposits={deposits.rows} />
          <Pager path="/dashboard/wallet" page={pageQuery.page} totalPages={totalPages} />
        </>
      ),
    },
    status,
  );
}

export const walletPages = new Hono<AppEnv>()
  .get('/wallet', requireSession, (c) => walletPage(c, {}))
  // Where a checkout sends the buyer back: the order the deposit bought, else the wallet saying what happened.
  .get('/wallet/deposits/:id', requireSession, async (c) => {
    const deposit = await getDeposit(c.var.db, c.var.caller, idFromPath(c.req.param('id'), 'Deposit'));
    return c.redirect(afterPayment(deposit), 303);
  })
  .post(
    '/wallet/deposit',
    sameOriginForm,
    requireSession,
    formHandler(
      async (c, fields) => {
        const body = parseForm(DepositBody, fields, ['amount']);
        const request = { amountCents: body.amount, gateway: body.gateway, cryptoCurrency: body.crypto_currency, origin: publicBaseUrl(c.env), beforeVendorCall: vendorInvoiceThrottle(c) };
        return redirectOnce(
          c,
          fields,
          body,
          async (claim) => paymentPage(await createDeposit(c.var.db, readConfig(c.env), c.var.caller, request, claim, mailFor(c))),
          paymentPage,
        );
      },
      (c, fields, problem) => walletPage(c, { values: fields, problem }, problem.status),
    ),
  );
