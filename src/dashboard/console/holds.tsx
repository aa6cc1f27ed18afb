import { Hono, type Context } from 'hono';
import type { AppEnv } from '../../env';
import { requireOperatorSession } from '../../middleware/session';
import { HoldBody } from '../../schemas/after-sale';
import { setHold } from '../../services/accounts/holds';
import { operatorActor } from '../../services/accounts/audit-log';
import { queryAsOperator } from '../../services/caller';
import { userDetailQuery, type OperatorUser } from '../../services/operator/users';
import { ApiError } from '../../lib/errors';
import { Field, When } from '../components';
import { withDone } from '../done-notices';
import { idFromPath, parseForm, sameOriginForm } from '../forms';
import { AskFirst, confirmationPage, confirmPath } from './confirm';

// Holds on a user's page: "Put on hold" (with a reason) and "Lift hold", each through a confirmation, audited. A
// payment reversed at its vendor puts the account on hold by itself.

const USERS = '/dashboard/console/users';
const holdPath = (id: number) => `${USERS}/${id}/hold`;
const liftPath = (id: number) => `${USERS}/${id}/hold/lift`;

export function HoldSection({ user }: { user: OperatorUser }) {
  const held = (user.heldAt ?? null) !== null;
  return (
    <section class="card narrow" aria-labelledby="hold-heading">
      <h2 id="hold-heading">Hold</h2>
      {held ? (
        <>
          <p>
            <span class="mismatch">On hold</span>
            {' since '}
            <When iso={user.heldAt!} />
            {`: ${user.holdReason ?? ''}`}
          </p>
          <p class="muted">Deposits and purchases are refused (403 ACCOUNT_ON_HOLD); the user can still sign in and read.</p>
          <AskFirst action={liftPath(user.id)} label="Lift hold" />
        </>
      ) : (
        <form method="get" action={confirmPath(holdPath(user.id))}>
          <Field name="reason" label="Reason" required maxlength={200} />
          <p class="muted">While on hold, the account's deposits and purchases are refused; reads still work.</p>
          <button type="submit" class="danger">
            Put on hold
          </button>
        </form>
      )}
    </section>
  );
}

const userId = (c: Context<AppEnv>) => idFromPath(c.req.param('id'), 'User');

export const consoleHolds = new Hono<AppEnv>()
  .get('/console/users/:id/hold/confirm', requireOperatorSession, async (c) => {
    const reason = c.req.query('reason') ?? '';
    const id = userId(c);
    try {
      parseForm(HoldBody, { reason });
    } catch (err) {
      if (err instanceof ApiError) return c.redirect(`${USERS}/${id}`, 303);
      throw err;
    }
    const [user] = await queryAsOperator(c.var.db, c.var.caller, [userDetailQuery(id)]);
    return confirmationPage(c, {
      title: `Put ${user.name}'s account on hold?`,
      section: USERS,
      effect: `From now on the deposits and purchases of ${user.name} <${user.email}> are refused until you lift the hold; they can still sign in and see their orders. Reason kept on the account and the audit log: "${reason.trim()}".`,
      action: holdPath(id),
      fields: { reason },
      back: `${USERS}/${id}`,
      danger: true,
    });
  })
  .get('/console/users/:id/hold/lift/confirm', requireOperatorSession, async (c) => {
    const [user] = await queryAsOperator(c.var.db, c.var.caller, [userDetailQuery(userId(c))]);
    return confirmationPage(c, {
      title: `Lift the hold on ${user.name}'s account?`,
      section: USERS,
      effect: `${user.name} <${user.email}> may deposit and buy again at once.`,
      action: liftPath(user.id),
      back: `${USERS}/${user.id}`,
    });
  })
  .post('/console/users/:id/hold', sameOriginForm, requireOperatorSession, async (c) => {
    const id = userId(c);
    const form = await c.req.parseBody();
    const { reason } = parseForm(HoldBody, { reason: typeof form.reason === 'string' ? form.reason : '' });
    await setHold(c.var.db, operatorActor(c.var.caller), id, reason);
    return c.redirect(withDone(`${USERS}/${id}`, 'account_held'), 303);
  })
  .post('/console/users/:id/hold/lift', sameOriginForm, requireOperatorSession, async (c) => {
    const id = userId(c);
    await setHold(c.var.db, operatorActor(c.var.caller), id, null);
    return c.redirect(withDone(`${USERS}/${id}`, 'hold_lifted'), 303);
  });
