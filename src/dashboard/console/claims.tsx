import { Hono, type Context } from 'hono';
import type { AppEnv } from '../../env';
import { publishAfterResponse } from '../../middleware/publish-events';
import { mailFor } from '../../middleware/send-emails';
import { requireOperatorSession } from '../../middleware/session';
import { purgeSoldProducts } from '../../middleware/stock-cache';
import { ClaimsQuery, RejectBody } from '../../schemas/after-sale';
import { operatorActor } from '../../services/accounts/audit-log';
import { queryAsOperator } from '../../services/caller';
import { claimDetailQuery, claimsQuery, resolveClaim, type AdminClaim, type Resolution } from '../../services/orders/claims';
import { notFound } from '../../lib/errors';
import { confirmationPage } from './confirm';
import { Alert, Money, Pager, Status, When } from '../components';
import { withDone } from '../done-notices';
import { formHandler, idFromPath, parseForm, requireFormKey, sameOriginForm, type FormProblem } from '../forms';
import { page } from '../layout';
import { DataTable } from '../tables';

// Warranty claims: the buyers' reports, open ones first in view, each resolved once with Replace (a fresh item of the
// product takes the reported one's place), Refund (one unit's share) or Reject (with a note the buyer reads). The
// nav shows how many wait.

const CLAIMS = '/dashboard/console/claims';
const STATUS_FILTERS = ['open', 'replaced', 'refunded', 'rejected'] as const;

/** "Item 2 of 3": the API's `index` + 1, said so. */
const itemOf = (claim: AdminClaim) => `Item ${claim.itemIndex + 1} of ${claim.orderQuantity}`;

const Buyer = ({ claim }: { claim: AdminClaim }) => (
  <>
    <a href={`/dashboard/console/users/${claim.userId}`}>{claim.buyerName}</a>
    <br />
    <span class="muted">{claim.buyerEmail}</span>
  </>
);

function Decision({ claim }: { claim: AdminClaim }) {
  if (claim.status !== 'open') {
    return (
      <>
        <Status value={claim.status} />
        {claim.refundCents !== null && (
          <>
            {' '}
            <Money cents={claim.refundCents} />
          </>
        )}
        {claim.resolution && <p class="muted">{claim.resolution}</p>}
      </>
    );
  }
  return (
    <a href={`${CLAIMS}/${claim.id}`} class="button">
      Decide
    </a>
  );
}

/** The three decisions of an open claim: each opens its confirmation page (a POST: the note travels in the body). */
function DecisionForms({ claim }: { claim: AdminClaim }) {
  const base = `${CLAIMS}/${claim.id}`;
  return (
    <div class="stack">
      <form method="post" action={`${base}/replace/confirm`} class="inline">
        <button type="submit">Replace</button> <span class="muted">a fresh item of the product takes this one's place</span>
      </form>
      <form method="post" action={`${base}/refund/confirm`} class="inline">
        <button type="submit" class="secondary">
          Refund item
        </button>{' '}
        <span class="muted">
          gives <Money cents={claim.shareCents} /> back to the buyer's wallet
        </span>
      </form>
      <form method="post" action={`${base}/reject/confirm`}>
        <label for={`note-${claim.id}`}>Note for the buyer (they read it)</label>
        <input id={`note-${claim.id}`} name="note" required maxlength={500} />
        <button type="submit" class="danger">
          Reject
        </button>
      </form>
    </div>
  );
}

async function claimsPage(c: Context<AppEnv>, problem?: FormProblem) {
  const { status, ...pageQuery } = parseForm(ClaimsQuery, { status: 'open', ...c.req.query() });
  const [{ rows, total }] = await queryAsOperator(c.var.db, c.var.caller, [claimsQuery(status, pageQuery)]);
  return page(
    c,
    {
      title: 'Claims',
      section: CLAIMS,
      children: (
        <>
          <Alert problem={problem} />
          <nav aria-label="Claims by status" class="row">
            {STATUS_FILTERS.map((s) => (
              <a href={`${CLAIMS}?status=${s}`} aria-current={s === status ? 'page' : undefined} class={s === status ? 'button' : 'button secondary'}>
                {s === status ? `${s} (shown)` : s}
              </a>
            ))}
          </nav>
          <DataTable
            caption={`Claims: ${status}`}
            rows={rows}
            empty={status === 'open' ? 'No claim waits for a decision.' : `No ${status} claims.`}
            columns={[
              { label: 'Reported', cell: (claim) => <When iso={claim.createdAt} /> },
              { label: 'Buyer', cell: (claim) => <Buyer claim={claim} /> },
              { label: 'Order', cell: (claim) => <a href={`/dashboard/console/orders/${claim.orderId}`}>{claim.orderNumber}</a> },
              { label: 'Product', cell: (claim) => claim.productName },
              { label: 'Item', cell: (claim) => itemOf(claim) },
              { label: 'Earlier claims', class: 'num', cell: (claim) => claim.earlierClaims },
              { label: 'Refund item gives', class: 'num', cell: (claim) => <Money cents={claim.shareCents} /> },
              { label: 'Reason', cell: (claim) => claim.reason },
              { label: 'Decision', cell: (claim) => <Decision claim={claim} /> },
            ]}
          />
          <Pager path={CLAIMS} page={pageQuery.page} totalPages={Math.ceil(total / pageQuery.per_page)} query={{ status }} />
        </>
      ),
    },
    problem?.status ?? 200,
  );
}

/** One claim: everything the owner decides on, and the decisions (an open claim). */
async function claimPage(c: Context<AppEnv>, id: number, problem?: FormProblem) {
  const [claim] = await queryAsOperator(c.var.db, c.var.caller, [claimDetailQuery(id)]);
  if (!claim) throw notFound('Claim');
  return page(
    c,
    {
      title: `Claim on order ${claim.orderNumber}`,
      section: CLAIMS,
      children: (
        <>
          <Alert problem={problem} />
          <section class="card">
            <dl class="facts">
              <dt>Buyer</dt>
              <dd>
                <Buyer claim={claim} />
              </dd>
              <dt>Order</dt>
              <dd>
                <a href={`/dashboard/console/orders/${claim.orderId}`}>{claim.orderNumber}</a> · {claim.productName}
              </dd>
              <dt>Item</dt>
              <dd>
                {itemOf(claim)} <span class="muted">(the API's index {claim.itemIndex})</span>
              </dd>
              <dt>Reported item</dt>
              <dd>
                <code class="secret">{claim.item ?? ''}</code>
              </dd>
              {claim.replacement && (
                <>
                  <dt>Replaced with</dt>
                  <dd>
                    <code class="secret">{claim.replacement}</code>
                  </dd>
                </>
              )}
              <dt>Reason</dt>
              <dd>{claim.reason}</dd>
              <dt>Reported</dt>
              <dd>
                <When iso={claim.createdAt} />
              </dd>
              <dt>Earlier claims by this buyer</dt>
              <dd>{claim.earlierClaims}</dd>
              <dt>Status</dt>
              <dd>
                {claim.status === 'open' ? <Status value="open" /> : <Decision claim={claim} />}
              </dd>
            </dl>
          </section>
          {claim.status === 'open' && <DecisionForms claim={claim} />}
          <p>
            <a href={CLAIMS}>All open claims</a>
          </p>
        </>
      ),
    },
    problem?.status ?? 200,
  );
}

const CONFIRM_TEXT = {
  replace: (claim: AdminClaim) => `Replace ${itemOf(claim).toLowerCase()} of order ${claim.orderNumber} (${claim.productName}) for ${claim.buyerName} <${claim.buyerEmail}>? A fresh item of the product takes its place in the order now; the reported item is revoked. The buyer is emailed.`,
  refund: (claim: AdminClaim) => `Refund ${itemOf(claim).toLowerCase()} of order ${claim.orderNumber} to the wallet of ${claim.buyerName} <${claim.buyerEmail}>? This gives back one unit's share, ${(claim.shareCents / 100).toFixed(2)} USD, now, once. The buyer is emailed.`,
  reject: (claim: AdminClaim) => `Reject the report of ${itemOf(claim).toLowerCase()} of order ${claim.orderNumber} by ${claim.buyerName} <${claim.buyerEmail}>? The buyer is emailed your note.`,
} as const;

/** The confirmation page of a decision (posted: a reject's note travels in the body, never in a URL). */
const confirmDecision = (action: Resolution['action']) =>
  formHandler(
    async (c, fields) => {
      const id = idFromPath(c.req.param('id'), 'Claim');
      const note = action === 'reject' ? parseForm(RejectBody, fields).note : undefined;
      const [claim] = await queryAsOperator(c.var.db, c.var.caller, [claimDetailQuery(id)]);
      if (!claim) throw notFound('Claim');
      return confirmationPage(c, {
        title: `${action === 'replace' ? 'Replace' : action === 'refund' ? 'Refund' : 'Reject'} this claim?`,
        section: CLAIMS,
        effect: (
          <>
            {CONFIRM_TEXT[action](claim)}
            {note !== undefined && ` Note: "${note}"`}
          </>
        ),
        action: `${CLAIMS}/${id}/${action}`,
        fields: note !== undefined ? { note } : {},
        back: `${CLAIMS}/${id}`,
        danger: action !== 'replace',
      });
    },
    (c, _fields, problem) => claimPage(c, idFromPath(c.req.param('id'), 'Claim'), problem),
  );

const DONE = { replace: 'claim_replaced', refund: 'claim_refunded', reject: 'claim_rejected' } as const;

const resolveForm = (action: Resolution['action']) =>
  formHandler(
    async (c, fields) => {
      const id = idFromPath(c.req.param('id'), 'Claim');
      // A claim is resolved once (409 CLAIM_RESOLVED after), and its refund, which moves money, carries its key too.
      if (action === 'refund') requireFormKey(fields);
      const resolution: Resolution = action === 'reject' ? { action, note: parseForm(RejectBody, fields).note } : { action };
      const { productId } = await resolveClaim(c.var.db, operatorActor(c.var.caller), id, resolution, mailFor(c), publishAfterResponse(c));
      if (action === 'replace') await purgeSoldProducts(c, [productId]);
      return c.redirect(withDone(`${CLAIMS}/${id}`, DONE[action]), 303);
    },
    (c, _fields, problem) => claimPage(c, idFromPath(c.req.param('id'), 'Claim'), problem),
  );

export const consoleClaims = new Hono<AppEnv>()
  .get('/console/claims', requireOperatorSession, (c) => claimsPage(c))
  .get('/console/claims/:id', requireOperatorSession, (c) => claimPage(c, idFromPath(c.req.param('id'), 'Claim')))
  .post('/console/claims/:id/replace/confirm', sameOriginForm, requireOperatorSession, confirmDecision('replace'))
  .post('/console/claims/:id/refund/confirm', sameOriginForm, requireOperatorSession, confirmDecision('refund'))
  .post('/console/claims/:id/reject/confirm', sameOriginForm, requireOperatorSession, confirmDecision('reject'))
  .post('/console/claims/:id/replace', sameOriginForm, requireOperatorSession, resolveForm('replace'))
  .post('/console/claims/:id/refund', sameOriginForm, requireOperatorSession, resolveForm('refund'))
  .post('/console/claims/:id/reject', sameOriginForm, requireOperatorSession, resolveForm('reject'));
