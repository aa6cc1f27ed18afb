import { mailFor } from '../middleware/send-emails';
import { Hono, type Context } from 'hono';
import type { ClaimRow, OrderRow } from '../db/schema';
import type { AppEnv } from '../env';
import { formatUsd } from '../lib/money';
import { requireSession } from '../middleware/session';
import { ItemIndex, ReportBody } from '../schemas/after-sale';
import { reportItem } from '../services/orders/claims';
import { formHandler, idFromPath, parseForm, sameOriginForm, type FormProblem } from './forms';

// "Report a problem" by each delivered item of an order within its product's warranty: the API's report, the same
// service function; the order's page shows each item's claim and what the shop decided.

const DECIDED: Record<ClaimRow['status'], (claim: ClaimRow) => string> = {
  open: () => 'Problem reported: the shop is looking at it.',
  replaced: () => 'Replaced: the item above is the new one.',
  refunded: (claim) => `Refunded ${formatUsd(claim.refundCents ?? 0)} to your wallet.`,
  rejected: (claim) => `Report not accepted: ${claim.resolution ?? ''}`,
};

const withinWarranty = (order: OrderRow, warrantyHours: number, nowMs = Date.now()) =>
  order.status !== 'cancelled' && warrantyHours > 0 && Date.parse(order.createdAt) + warrantyHours * 3_600_000 > nowMs;

interface ItemProblemProps {
  order: OrderRow;
  index: number;
  claims: ClaimRow[];
  warrantyHours: number;
}

/** Under an item: its latest claim's state, or "Report a problem" while the order is within its warranty. */
export function ItemProblem({ order, index, claims, warrantyHours }: ItemProblemProps) {
  const latest = claims.filter((claim) => claim.itemIndex === index).at(-1);
  // After a replacement the new item may be reported in its turn.
  if (latest && latest.status !== 'replaced') return <p class="muted">{DECIDED[latest.status](latest)}</p>;
  const decided = latest && <p class="muted">{DECIDED[latest.status](latest)}</p>;
  if (!withinWarranty(order, warrantyHours)) return decided ?? null;
  return (
    <>
      {decided}
      <details class="report">
        <summary>Report a problem</summary>
        <form method="post" action={`/dashboard/orders/${order.id}/items/${index}/report`}>
          <label for={`reason-${index}`}>What is wrong with this item?</label>
          <textarea id={`reason-${index}`} name="reason" required maxlength={500} rows={3} />
          <button type="submit">Send report</button>
        </form>
      </details>
    </>
  );
}

/** The report form's route; a refusal (past the warranty, already reported) shows the order's page with it. */
export const reportPages = (orderPage: (c: Context<AppEnv>, orderId: number, problem: FormProblem) => Promise<Response>) =>
  new Hono<AppEnv>().post(
    '/orders/:id/items/:index/report',
    sameOriginForm,
    requireSession,
    formHandler(
      async (c, fields) => {
        const orderId = idFromPath(c.req.param('id'), 'Order');
        const { index } = parseForm(ItemIndex, { index: c.req.param('index') ?? '' });
        const { reason } = parseForm(ReportBody, fields);
        await reportItem(c.var.db, c.var.caller, orderId, index, reason, mailFor(c));
        return c.redirect(`/dashboard/orders/${orderId}?notice=reported`, 303);
      },
      (c, _fields, problem) => orderPage(c, idFromPath(c.req.param('id'), 'Order'), problem),
    ),
  );
