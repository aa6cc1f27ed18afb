import { Hono, type Context } from 'hono';
import type { OrderRow } from '../../db/schema';
import type { AppEnv } from '../../env';
import { ApiError, type FieldErrors } from '../../lib/errors';
import { requireOperatorSession } from '../../middleware/session';
import { publishAfterResponse } from '../../middleware/publish-events';
import { mailFor } from '../../middleware/send-emails';
import { RefundBody } from '../../schemas/after-sale';
import { operatorActor } from '../../services/accounts/audit-log';
import { queryAsOperator } from '../../services/caller';
import { OPERATOR } from '../../services/idempotency';
import { orderDetailQuery } from '../../services/operator/orders';
import { refundOrder } from '../../services/orders/refunds';
import { Field, Money } from '../components';
import { withDone } from '../done-notices';
import { formHandler, idFromPath, parseForm, plainNumber, redirectOnce, requireFormKey, sameOriginForm, type FormFields, type FormProblem } from '../forms';
import { confirmationPage, confirmPath } from './confirm';

// "Refund" on a console order page: part or all of an order that is not cancelled, through a confirmation page, once
// (the confirmation's idempotency key), never more than what is left of it.

const ORDERS = '/dashboard/console/orders';
const refundPath = (id: number) => `${ORDERS}/${id}/refund`;

export function RefundSection({ order, values, problem }: { order: OrderRow; values?: FormFields; problem?: FormProblem }) {
  if (order.status === 'cancelled') return null;
  const left = order.totalAmountCents - order.refundedAmountCents;
  return (
    <section class="card narrow" aria-labelledby="refund-heading">
      <h2 id="refund-heading">Refund</h2>
      <p>
        {'Refunded so far '}
        <Money cents={order.refundedAmountCents} />
        {' of '}
        <Money cents={order.totalAmountCents} />
        {'; at most '}
        <Money cents={left} />
        {' more. The items stay the buyer\'s.'}
      </p>
      {left > 0 && (
        <form method="get" action={confirmPath(refundPath(order.id))}>
          <Field name="amount" label="Amount" value={values?.amount} problem={problem} inputmode="decimal" required />
          <Field name="reason" label="Reason" value={values?.reason} problem={problem} required maxlength={200} />
          <button type="submit">Refund</button>
        </form>
      )}
    </section>
  );
}

const bodyOf = (fields: FormFields) => parseForm(RefundBody, { amount: plainNumber(fields.amount ?? ''), reason: fields.reason }, ['amount']);

/** The console routes of refunds; `orderPage` shows a refused form again on the order's page. */
export const consoleRefunds = (orderPage: (c: Context<AppEnv>, id: number, problem?: FormProblem, values?: FormFields) => Promise<Response>) =>
  new Hono<AppEnv>()
    .get('/console/orders/:id/refund/confirm', requireOperatorSession, async (c) => {
      const id = idFromPath(c.req.param('id'), 'Order');
      const fields = { amount: c.req.query('amount') ?? '', reason: c.req.query('reason') ?? '' };
      let body;
      try {
        body = bodyOf(fields);
      } catch (err) {
        if (!(err instanceof ApiError) || err.code !== 'VALIDATION_FAILED') throw err;
        return orderPage(c, id, { status: 422, code: err.code, message: err.message, fields: (err.errors ?? {}) as FieldErrors }, fields);
      }
      const [{ order, user }] = await queryAsOperator(c.var.db, c.var.caller, [orderDetailQuery(id)]);
      return confirmationPage(c, {
        title: `Refund order ${order.orderNumber}?`,
        section: ORDERS,
        effect: (
          <>
            {'This refunds '}
            <Money cents={body.amount} />
            {` of order ${order.orderNumber} to the wallet of ${user.name} <${user.email}> now, once, with the reason "${body.reason}". The order shows it as refunded; its items stay the buyer's.`}
          </>
        ),
        action: refundPath(id),
        fields,
        back: `${ORDERS}/${id}`,
        danger: true,
      });
    })
    .post(
      '/console/orders/:id/refund',
      sameOriginForm,
      requireOperatorSession,
      formHandler(
        async (c, fields) => {
          const id = idFromPath(c.req.param('id'), 'Order');
          requireFormKey(fields);
          const body = bodyOf(fields);
          const landing = withDone(`${ORDERS}/${id}`, 'order_refunded');
          return redirectOnce(
            c,
            fields,
            { order_id: id, ...body },
            async (claim) => {
              await refundOrder(c.var.db, operatorActor(c.var.caller), id, body.amount, body.reason, claim, { mail: mailFor(c), publish: publishAfterResponse(c) });
              return landing;
            },
            () => landing,
            OPERATOR,
          );
        },
        (c, fields, problem) => orderPage(c, idFromPath(c.req.param('id'), 'Order'), problem, fields),
      ),
    );
