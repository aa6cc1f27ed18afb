import { Hono, type Context } from 'hono';
import type { AppEnv } from '../../env';
import { centsToDecimal } from '../../lib/money';
import { PaginationQuery } from '../../lib/pagination';
import { requireOperatorSession } from '../../middleware/session';
import { couponInput, CreateCouponBody, UpdateCouponBody } from '../../schemas/coupons';
import { operatorActor } from '../../services/audit-log';
import { queryAsOperator } from '../../services/caller';
import { couponQuery, couponsQuery, createCoupon, updateCoupon, type Coupon } from '../../services/coupons';
import { OPERATOR } from '../../services/idempotency';
import { Alert, Checkbox, Field, IdempotencyKey, Money, Pager } from '../components';
import { formHandler, idFromPath, parseForm, redirectOnce, sameOriginForm, type FormFields, type FormProblem } from '../forms';
import { page } from '../layout';
import { DataTable } from '../tables';

// Coupons: the list, "Create coupon" and each coupon's edit form, through the admin API's service functions (audited;
// creation in the operator's Idempotency-Key namespace). An empty field is "none" (no limit, no window, every product).

const COUPONS = '/dashboard/console/coupons';
const couponPath = (id: number) => `${COUPONS}/${id}`;
const NUMBERS = ['percent_off', 'amount_off', 'min_total', 'max_redemptions', 'max_per_user'];
const NULLABLE = ['min_total', 'starts_at', 'expires_at', 'max_redemptions', 'max_per_user', 'product_ids'];

/** "3, 7" → [3, 7]; anything else is left for the schema to refuse. */
function productIdsFrom(text: string): unknown {
  const parts = text.split(/[\s,]+/).filter(Boolean);
  return parts.every((p) => /^\d{1,15}$/.test(p)) ? parts.map(Number) : text;
}

/** The coupon form as the API's body: an empty field is left out (creation: the default) or null (an edit: none). */
function couponBody(fields: FormFields, emptyAs: undefined | null) {
  const body: Record<string, unknown> = { active: fields.active === 'on' };
  for (const name of ['code', 'percent_off', 'amount_off', ...NULLABLE]) {
    const value = (fields[name] ?? '').trim();
    if (value !== '') body[name] = name === 'product_ids' ? productIdsFrom(value) : value;
    else if (NULLABLE.includes(name) && emptyAs === null) body[name] = null;
  }
  return body;
}

/** A coupon's fields as the form shows them. */
const formValues = (c: Coupon): FormFields => ({
  percent_off: c.percentOff === null ? '' : String(c.percentOff),
  amount_off: c.amountOffCents === null ? '' : centsToDecimal(c.amountOffCents),
  min_total: c.minTotalCents === null ? '' : centsToDecimal(c.minTotalCents),
  starts_at: c.startsAt ?? '',
  expires_at: c.expiresAt ?? '',
  max_redemptions: c.maxRedemptions === null ? '' : String(c.maxRedemptions),
  max_per_user: c.maxPerUser === null ? '' : String(c.maxPerUser),
  product_ids: c.productIds === null ? '' : (JSON.parse(c.productIds) as number[]).join(', '),
  ...(c.active === 1 ? { active: 'on' } : {}),
});

function CouponFields({ values, problem }: { values: FormFields; problem?: FormProblem }) {
  return (
    <>
      <Field name="percent_off" label="Percent off" value={values.percent_off} problem={problem} inputmode="numeric" />
      <Field name="amount_off" label="Amount off" value={values.amount_off} problem={problem} inputmode="decimal" />
      <p class="muted">Fill exactly one: a percent of the subtotal, or an amount in USD.</p>
      <Field name="min_total" label="Minimum subtotal" value={values.min_total} problem={problem} inputmode="decimal" />
      <Field name="starts_at" label="Starts at" value={values.starts_at} problem={problem} />
      <Field name="expires_at" label="Expires at" value={values.expires_at} problem={problem} />
      <Field name="max_redemptions" label="Max redemptions" value={values.max_redemptions} problem={problem} inputmode="numeric" />
      <Field name="max_per_user" label="Max per user" value={values.max_per_user} problem={problem} inputmode="numeric" />
      <Field name="product_ids" label="Product ids" value={values.product_ids} problem={problem} />
      <p class="muted">Empty: no minimum, no start or end, no limit, every product. Times are UTC, ISO 8601 (e.g. 2026-12-01T00:00:00Z).</p>
      <Checkbox name="active" label="Active" checked={values.active === 'on'} />
    </>
  );
}

const kindOf = (c: Coupon) => (c.percentOff !== null ? `${c.percentOff} %` : <Money cents={c.amountOffCents} />);

async function couponsPage(c: Context<AppEnv>, values: FormFields = { active: 'on', max_per_user: '1' }, problem?: FormProblem) {
  const pageQuery = parseForm(PaginationQuery, c.req.query());
  const [{ rows, total }] = await queryAsOperator(c.var.db, c.var.caller, [couponsQuery(pageQuery)]);
  return page(
    c,
    {
      title: 'Coupons',
      section: COUPONS,
      children: (
        <>
          <DataTable
            caption="Every coupon, newest first"
            rows={rows}
            empty="No coupons yet: create the first one below."
            columns={[
              { label: 'Code', cell: (coupon: Coupon) => <a href={couponPath(coupon.id)}>{coupon.code}</a> },
              { label: 'Off', cell: kindOf },
              { label: 'Used', class: 'num', cell: (coupon) => `${coupon.redemptions}${coupon.maxRedemptions === null ? '' : ` of ${coupon.maxRedemptions}`}` },
              { label: 'Expires', cell: (coupon) => coupon.expiresAt ?? 'never' },
              { label: 'State', cell: (coupon) => (coupon.active === 1 ? 'active' : 'inactive') },
            ]}
          />
          <Pager path={COUPONS} page={pageQuery.page} totalPages={Math.ceil(total / pageQuery.per_page)} query={{}} />
          <section class="card narrow" aria-labelledby="new-coupon">
            <h2 id="new-coupon">New coupon</h2>
            <Alert problem={problem} />
            <form method="post" action={COUPONS}>
              <IdempotencyKey />
              <Field name="code" label="Code" value={values.code} problem={problem} required maxlength={32} />
              <CouponFields values={values} problem={problem} />
              <button type="submit">Create coupon</button>
            </form>
          </section>
        </>
      ),
    },
    problem?.status ?? 200,
  );
}

async function couponPage(c: Context<AppEnv>, couponId: number, values?: FormFields, problem?: FormProblem) {
  const [coupon] = await queryAsOperator(c.var.db, c.var.caller, [couponQuery(couponId)]);
  return page(
    c,
    {
      title: coupon.code,
      section: COUPONS,
      children: (
        <>
          <p>{`Used for ${coupon.redemptions} order(s).`}</p>
          <section class="card narrow" aria-labelledby="edit-coupon">
            <h2 id="edit-coupon">Edit</h2>
            <Alert problem={problem} />
            <form method="post" action={couponPath(coupon.id)}>
              <CouponFields values={values ?? formValues(coupon)} problem={problem} />
              <button type="submit">Save coupon</button>
            </form>
          </section>
        </>
      ),
    },
    problem?.status ?? 200,
  );
}

const pathCouponId = (c: Context<AppEnv>) => idFromPath(c.req.param('id'), 'Coupon');

export const consoleCoupons = new Hono<AppEnv>()
  .get('/console/coupons', requireOperatorSession, (c) => couponsPage(c))
  .post(
    '/console/coupons',
    sameOriginForm,
    requireOperatorSession,
    formHandler(
      async (c, fields) => {
        const body = parseForm(CreateCouponBody, couponBody(fields, undefined), NUMBERS);
        return redirectOnce<Coupon>(
          c,
          fields,
          body,
          async (claim) => couponPath((await createCoupon(c.var.db, operatorActor(c.var.caller), { ...couponInput(body), code: body.code }, claim)).id),
          (coupon) => couponPath(coupon.id),
          OPERATOR,
        );
      },
      (c, fields, problem) => couponsPage(c, fields, problem),
    ),
  )
  .get('/console/coupons/:id', requireOperatorSession, (c) => couponPage(c, pathCouponId(c)))
  .post(
    '/console/coupons/:id',
    sameOriginForm,
    requireOperatorSession,
    formHandler(
      async (c, fields) => {
        const id = pathCouponId(c);
        const body = parseForm(UpdateCouponBody, couponBody(fields, null), NUMBERS);
        await updateCoupon(c.var.db, operatorActor(c.var.caller), id, couponInput(body));
        return c.redirect(couponPath(id), 303);
      },
      (c, fields, problem) => couponPage(c, pathCouponId(c), fields, problem),
    ),
  );
