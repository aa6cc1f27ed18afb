import { Hono, type Context } from 'hono';
import type { TransactionRow } from '../../db/schema';
import type { AppEnv } from '../../env';
import { disabledAlsoInSandbox } from '../../middleware/mode';
import { publishAfterResponse } from '../../middleware/publish-events';
import { requireOperatorSession } from '../../middleware/session';
import { AdjustmentBody, UpdateUserBody, UsersQuery } from '../../schemas/operator';
import { operatorActor } from '../../services/accounts/audit-log';
import { queryAsOperator } from '../../services/caller';
import { OPERATOR } from '../../services/idempotency';
import { isWholeEmail, updateUser, userActivityQuery, userDetailQuery, usersQuery } from '../../services/operator/users';
import { createPasswordReset, type ResetLink } from '../../services/accounts/password-resets';
import { adjustBalance } from '../../services/payments/wallet';
import { Alert, Field, Money, Notice, Pager, SearchForm, When } from '../components';
import { ApiError, type FieldErrors } from '../../lib/errors';
import { formHandler, idFromPath, parseForm, plainNumber, redirectOnce, requireFormKey, sameOriginForm, type FormFields, type FormProblem } from '../forms';
import { withDone } from '../done-notices';
import { page } from '../layout';
import { DataTable, DepositsTable, OrdersTable, TransactionsTable } from '../tables';
import { AskFirst, confirmationPage, confirmPath } from './confirm';
import { consoleHolds, HoldSection } from './holds';

// Users: search by email or name, and one user's page with what support needs: balance adjustment (idempotent, like
// the admin API's), disable/enable, a password reset link (shown once, in the answer to its form).

const USERS = '/dashboard/console/users';
const userPath = (id: number) => `${USERS}/${id}`;

interface UserView {
  values?: FormFields;
  problem?: FormProblem;
  resetLink?: ResetLink;
}

async function userPage(c: Context<AppEnv>, userId: number, { values, problem, resetLink }: UserView = {}) {
  const [user, activity] = await queryAsOperator(c.var.db, c.var.caller, [userDetailQuery(userId), userActivityQuery(userId)]);
  const disabled = user.disabledAt !== null;
  return page(
    c,
    {
      title: user.name,
      section: USERS,
      children: (
        <>
          {resetLink && (
            <section class="card" aria-labelledby="reset-link">
              <h2 id="reset-link">Password reset link</h2>
              <Notice>Copy this link now and send it to the user. It will not be shown again.</Notice>
              <code class="secret">{resetLink.url}</code>
              <p class="muted">
                Works once, until <When iso={resetLink.expiresAt} />; using it signs the user out everywhere.
              </p>
            </section>
          )}
          <section class="card">
            <dl class="facts">
              <dt>Email</dt>
              <dd>{user.email}</dd>
              <dt>Role</dt>
              <dd>{user.role}</dd>
              <dt>Account</dt>
              <dd>{disabled ? <span class="mismatch">disabled</span> : user.heldAt ? <span class="mismatch">On hold</span> : 'enabled'}</dd>
              <dt>Balance</dt>
              <dd>
                <Money cents={user.balanceCents} />
              </dd>
              <dt>Orders</dt>
              <dd>{`${user.ordersCount} (spent `}<Money cents={user.totalSpentCents} />)</dd>
              <dt>Member since</dt>
              <dd>
                <When iso={user.createdAt} />
              </dd>
            </dl>
          </section>
          <section class="card narrow" aria-labelledby="adjust-heading">
            <h2 id="adjust-heading">Adjust balance</h2>
            <Alert problem={problem} />
            <form method="get" action={confirmPath(`${userPath(user.id)}/balance`)}>
              <Field name="amount" label="Amount" value={values?.amount} problem={problem} inputmode="decimal" required />
              <p class="muted">Positive credits the wallet, negative debits it (never below zero).</p>
              <Field name="description" label="Description" value={values?.description} problem={problem} required maxlength={500} />
              <button type="submit">Adjust balance</button>
            </form>
          </section>
          <section class="card narrow" aria-labelledby="discount-heading">
            <h2 id="discount-heading">Discount</h2>
            <form method="post" action={`${userPath(user.id)}/discount`}>
              <Field name="discount_percent" label="Discount %" value={values?.discount_percent ?? String(user.discountPercent)} problem={problem} inputmode="numeric" required />
              <p class="muted">Taken off every unit price this user pays (after volume prices), 0 to 90.</p>
              <button type="submit">Save discount</button>
            </form>
          </section>
          <HoldSection user={user} />
          <section class="card" aria-labelledby="access-heading">
            <h2 id="access-heading">Access</h2>
            <div class="row">
              {disabled ? (
                <form method="post" action={`${userPath(user.id)}/enable`} class="inline">
                  <button type="submit">Enable account</button>
                </form>
              ) : (
                <AskFirst action={`${userPath(user.id)}/disable`} label="Disable account" class="danger" />
              )}
              <form method="post" action={`${userPath(user.id)}/password-reset`} class="inline">
                <button type="submit" class="secondary">
                  Create password reset link
                </button>
              </form>
            </div>
            <p class="muted">A disabled account's keys and sessions stop working at once; nothing of it is deleted.</p>
          </section>
          <h2>Transactions</h2>
          <TransactionsTable transactions={activity.transactions} caption="Latest wallet transactions" />
          <h2>Orders</h2>
          <OrdersTable orders={activity.orders} caption="Latest orders" link={(id) => `/dashboard/console/orders/${id}`} empty="No orders yet." />
          <h2>Deposits</h2>
          <DepositsTable deposits={activity.deposits} />
        </>
      ),
    },
    problem?.status ?? 200,
  );
}

const pathUserId = (c: Context<AppEnv>) => idFromPath(c.req.param('id'), 'User');

/** Disable or enable: the PATCH /admin/users/{id} of the console, audited; 303 back to the user. */
const setDisabled = (disabled: boolean) => async (c: Context<AppEnv>) => {
  const id = pathUserId(c);
  await disabledAlsoInSandbox(c, { disabled }, await updateUser(c.var.db, operatorActor(c.var.caller), id, { disabled }));
  return c.redirect(withDone(userPath(id), disabled ? 'account_disabled' : 'account_enabled'), 303);
};

export const consoleUsers = new Hono<AppEnv>()
  .route('/', consoleHolds)
  .get('/console/users', requireOperatorSession, async (c) => {
    const { q, ...pageQuery } = parseForm(UsersQuery, c.req.query());
    const search = q === '' ? undefined : q;
    // A whole address is looked up exactly (through the index); anything else searches names and emails.
    const onHold = c.req.query('on_hold') === '1';
    const filter = { ...(search !== undefined && isWholeEmail(search) ? { email: search } : { q: search }), onHold };
    const [{ rows, total }] = await queryAsOperator(c.var.db, c.var.caller, [usersQuery(filter, pageQuery)]);
    return page(c, {
      title: 'Users',
      section: USERS,
      children: (
        <>
          <SearchForm action={USERS} value={search} hint="A whole email address finds exactly that user; any other text searches names and emails." />
          <nav aria-label="Users by account state" class="row">
            <a href={USERS} aria-current={onHold ? undefined : 'page'} class={onHold ? 'button secondary' : 'button'}>
              {onHold ? 'All users' : 'All users (shown)'}
            </a>
            <a href={`${USERS}?on_hold=1`} aria-current={onHold ? 'page' : undefined} class={onHold ? 'button' : 'button secondary'}>
              {onHold ? 'On hold (shown)' : 'On hold'}
            </a>
          </nav>
          <DataTable
            caption={`${onHold ? 'Users on hold' : 'Users'}${search ? ` matching ${search}` : ''}, newest first`}
            rows={rows}
            empty={search ? 'No user matches.' : 'No users yet.'}
            columns={[
              { label: 'Name', cell: (u) => <a href={userPath(u.id)}>{u.name}</a> },
              { label: 'Email', cell: (u) => u.email },
              { label: 'Role', cell: (u) => u.role },
              { label: 'Account', cell: (u) => (u.disabledAt !== null ? 'disabled' : u.heldAt ? <span class="mismatch">On hold</span> : 'enabled') },
              { label: 'Balance', class: 'num', cell: (u) => <Money cents={u.balanceCents} /> },
            ]}
          />
          <Pager path={USERS} page={pageQuery.page} totalPages={Math.ceil(total / pageQuery.per_page)} query={{ q: search, ...(onHold ? { on_hold: '1' } : {}) }} />
        </>
      ),
    });
  })
  .get('/console/users/:id', requireOperatorSession, (c) => userPage(c, pathUserId(c)))
  .post(
    '/console/users/:id/balance',
    sameOriginForm,
    requireOperatorSession,
    formHandler(
      async (c, fields) => {
        const id = pathUserId(c);
        requireFormKey(fields);
        const body = parseForm(AdjustmentBody, { ...fields, amount: plainNumber(fields.amount) }, ['amount']);
        return redirectOnce<TransactionRow>(
          c,
          fields,
          body,
          async (claim) => {
            await adjustBalance(c.var.db, operatorActor(c.var.caller), id, body.amount, body.description, claim, publishAfterResponse(c));
            return withDone(userPath(id), 'balance_adjusted');
          },
          (transaction) => withDone(userPath(transaction.userId), 'balance_adjusted'),
          OPERATOR,
        );
      },
      (c, fields, problem) => userPage(c, pathUserId(c), { values: fields, problem }),
    ),
  )
  .post(
    '/console/users/:id/discount',
    sameOriginForm,
    requireOperatorSession,
    formHandler(
      async (c, fields) => {
        const id = pathUserId(c);
        const { discount_percent } = parseForm(UpdateUserBody.pick({ discount_percent: true }).required(), fields, ['discount_percent']);
        await updateUser(c.var.db, operatorActor(c.var.caller), id, { discount_percent });
        return c.redirect(withDone(userPath(id), 'discount_saved'), 303);
      },
      (c, fields, problem) => userPage(c, pathUserId(c), { values: fields, problem }),
    ),
  )
  .get('/console/users/:id/balance/confirm', requireOperatorSession, async (c) => {
    const id = pathUserId(c);
    const fields = { amount: c.req.query('amount') ?? '', description: c.req.query('description') ?? '' };
    let body;
    try {
      body = parseForm(AdjustmentBody, { ...fields, amount: plainNumber(fields.amount) }, ['amount']);
    } catch (err) {
      // The form's own refusal, as a post of it would show it: the user's page with the messages, nothing changed.
      if (!(err instanceof ApiError) || err.code !== 'VALIDATION_FAILED') throw err;
      return userPage(c, id, { values: fields, problem: { status: 422, code: err.code, message: err.message, fields: (err.errors ?? {}) as FieldErrors } });
    }
    const [user] = await queryAsOperator(c.var.db, c.var.caller, [userDetailQuery(id)]);
    const credit = body.amount > 0;
    return confirmationPage(c, {
      title: credit ? `Credit ${user.name}'s wallet?` : `Debit ${user.name}'s wallet?`,
      section: USERS,
      effect: (
        <>
          {credit ? 'This credits ' : 'This debits '}
          <Money cents={Math.abs(body.amount)} />
          {` ${credit ? 'to' : 'from'} the wallet of ${user.name} <${user.email}> (balance now `}
          <Money cents={user.balanceCents} />
          {', then '}
          <Money cents={user.balanceCents + body.amount} />
          {`), with the description "${body.description}", on their ledger and the audit log.`}
        </>
      ),
      action: `${userPath(id)}/balance`,
      fields,
      back: userPath(id),
      danger: !credit,
    });
  })
  .get('/console/users/:id/disable/confirm', requireOperatorSession, async (c) => {
    const [user] = await queryAsOperator(c.var.db, c.var.caller, [userDetailQuery(pathUserId(c))]);
    return confirmationPage(c, {
      title: `Disable ${user.name}'s account?`,
      section: USERS,
      effect: `This disables the account of ${user.name} <${user.email}>: their API keys and dashboard sessions stop working at once and they cannot sign in. Nothing of theirs is deleted; "Enable account" restores access.`,
      action: `${userPath(user.id)}/disable`,
      back: userPath(user.id),
      danger: true,
    });
  })
  .post('/console/users/:id/disable', sameOriginForm, requireOperatorSession, setDisabled(true))
  .post('/console/users/:id/enable', sameOriginForm, requireOperatorSession, setDisabled(false))
  .post('/console/users/:id/password-reset', sameOriginForm, requireOperatorSession, async (c) => {
    const id = pathUserId(c);
    const resetLink = await createPasswordReset(c.var.db, operatorActor(c.var.caller), id, new URL(c.req.url).origin);
    return userPage(c, id, { resetLink });
  });
