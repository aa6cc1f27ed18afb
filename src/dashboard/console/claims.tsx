import { Hono, type Context } from 'hono';
import type { AppEnv } from '../../env';
import { publishAfterResponse } from '../../middleware/publish-events';
import { mailFor } from '../../middleware/send-emails';
import { requireOperatorSession } from '../../middleware/session';
import { purgeSoldProducts } from '../../middleware/stock-cache';
import { ClaimsQuery, RejectBody } from '../../schemas/after-sale';
import { operatorActor } from '../../services/accounts/audit-log';
import { queryAsOperator } from '../../services/caller';
import { claimsQuery, resolveClaim, type AdminClaim, type Resolution } from '../../services/orders/claims';
import { Alert, IdempotencyKey, Money, Pager, Status, When } from '../components';
import { withDone } from '../done-notices';
import { formHandler, idFromPath, parseForm, requireFormKey, sameOriginForm, type FormProblem } from '../forms';
import { page } from '../layout';
import { DataTable } from '../tables';

// Warranty claims: the buyers' reports, open ones first in view, each resolved once with Replace (a fresh item of the
// product takes the reported one's place), Refund (one unit's share) or Reject (with a note the buyer reads). The
// nav shows how many wait.

const CLAIMS = '/dashboard/console/claims';
const STATUS_FILTERS = ['open', 'replaced', 'refunded', 'rejected'] as const;

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
  const base = `${CLAIMS}/${claim.id}`;
  return (
    <div class="row">
      <form method="post" action={`${base}/replace`} class="inline">
        <button type="submit">Replace</button>
      </form>
      <form method="post" action={`${base}/refund`} class="inline">
        <IdempotencyKey />
        <button type="submit" class="secondary">
          Refund item
        </button>
      </form>
      <form method="post" action={`${base}/reject`} class="inline">
        <label for={`note-${claim.id}`} class="visually-hidden">
          Note for the buyer
        </label>
        <input id={`note-${claim.id}`} name="note" required maxlength={500} placeholder="Why (the buyer reads it)" />
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
              <a href={`${CLAIMS}?status=${s}`} aria-current={s === status ? 'page' : undefined} class="button secondary">
                {s}
              </a>
            ))}
          </nav>
          <DataTable
            caption={`Claims: ${status}`}
            rows={rows}
            empty={status === 'open' ? 'No claim waits for a decision.' : `No ${status} claims.`}
            columns={[
              { label: 'Reported', cell: (claim) => <When iso={claim.createdAt} /> },
              { label: 'Order', cell: (claim) => <a href={`/dashboard/console/orders/${claim.orderId}`}>{claim.orderNumber}</a> },
              { label: 'Product', cell: (claim) => claim.productName },
              { label: 'Item', class: 'num', cell: (claim) => claim.itemIndex + 1 },
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
      return c.redirect(withDone(CLAIMS, DONE[action]), 303);
    },
    (c, _fields, problem) => claimsPage(c, problem),
  );

export const consoleClaims = new Hono<AppEnv>()
  .get('/console/claims', requireOperatorSession, (c) => claimsPage(c))
  .post('/console/claims/:id/replace', sameOriginForm, requireOperatorSession, resolveForm('replace'))
  .post('/console/claims/:id/refund', sameOriginForm, requireOperatorSession, resolveForm('refund'))
  .post('/console/claims/:id/reject', sameOriginForm, requireOperatorSession, resolveForm('reject'));
