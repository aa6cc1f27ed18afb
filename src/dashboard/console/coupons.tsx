import { Hono, type Context } from 'hono';
import type { AppEnv } from '../../env';
import { centsToDecimal } from '../../lib/money';
import { PaginationQuery } from '../../lib/pagination';
import { requireOperatorSession } from '../../middleware/session';
import { couponInput, CreateCouponBody, UpdateCouponBody } from '../../schemas/coupons';
import { operatorActor } from '../../services/accounts/audit-log';
import { queryAsOperator } from '../../services/caller';
import { couponQuery, couponsQuery, createCoupon, updateCoupon, type Coupon } from '../../services/orders/coupons';
import { OPERATOR } from '../../services/idempotency';
import { productNamesQuery, type ProductName } from '../../services/operator/catalogue';
import { Alert, Checkbox, Field, IdempotencyKey, Money, Pager } from '../components';
import { formHandler, idFromPath, parseForm, plainNumber, redirectOnce, sameOriginForm, type FormFields, type FormProblem } from '../forms';
import { withDone } from '../done-notices';
import { page } from '../layout';
import { DataTable } from '../tables';

// Coupons: the list, "Create coupon" and each coupon's edit form, through the admin API's service functions (audited;
// creation in the operator's Idempotency-Key namespace). An empty field is "none" (no limit, no window, every product).

const COUPONS = '/dashboard/console/coupons';
const couponPath = (id: number) => `${COUPONS}/${id}`;
const NUMBERS = ['percent_off', 'amount_off', 'min_total', 'max_redemptions', 'max_per_user'];
const NULLABLE = ['min_total', 'starts_at', 'expires_at', 'max_redemptions', 'max_per_user', 'product_ids'];
/** The form's labels: its error messages name these, never the field names (src/dashboard/forms.ts: inFormWords). */
const LABELS = {
  code: 'Code',
  percent_off: 'Percent off',
  amount_off: 'Amount off',
  min_total: 'Minimum subtotal',
  starts_at: 'Starts on',
  expires_at: 'Ends on',
  max_redemptions: 'Max redemptions',
  max_per_user: 'Max per user',
  product_ids: 'Products',
};
const DAY = /^\d{4}-\d{2}-\d{2}$/;
const DAY_MS = 24 * 60 * 60 * 1000;

/** "10%" → "10" (a percent typed with its sign); anything else as typed. */
const percentTyped = (text: string) => /^\d+(\.\d+)?\s*%$/.test(text) ? text.replace(/\s*%$/, '') : text;

/**
 * A date input's day as the coupon's window: "Starts on" from 00:00 UTC of its day, "Ends on" until 24:00 UTC of its
 * day (the next day's 00:00). A full ISO timestamp (the admin API's form) passes as typed.
 */
function windowEdge(name: 'starts_at' | 'expires_at', text: string): string {
  if (!DAY.test(text) || Number.isNaN(Date.parse(`${text}T00:00:00Z`))) return text;
  const start = Date.parse(`${text}T00:00:00Z`);
  return new Date(name === 'starts_at' ? start : start + DAY_MS).toISOString();
}

/** The day a window edge is shown as in the date input (the inverse of windowEdge for whole days). */
function dayOf(name: 'starts_at' | 'expires_at', iso: string | null): string {
  if (iso === null) return '';
  const at = Date.parse(iso) - (name === 'expires_at' ? 1 : 0);
  return new Date(at).toISOString().slice(0, 10);
}

/** "3, 7" → [3, 7]; anything else is left for the schema to refuse. */
function productIdsFrom(text: string): unknown {
  const parts = text.split(/[\s,]+/).filter(Boolean);
  return parts.every((p) => /^\d{1,15}$/.test(p)) ? parts.map(Number) : text;
}

/** The products picked in the list (`product_ids`, one value per selected option), joined as the form's text. */
async function pickedProducts(c: Context<AppEnv>, fields: FormFields): Promise<FormFields> {
  let picked: unknown;
  try {
    picked = (await c.req.parseBody({ all: true }))['product_ids'];
  } catch {
    picked = undefined;
  }
  const values = (Array.isArray(picked) ? picked : [picked]).filter((v): v is string => typeof v === 'string' && v !== '');
  return { ...fields, product_ids: values.join(', ') };
}

/** The coupon form as the API's body: an empty field is left out (creation: the default) or null (an edit: none). */
function couponBody(fields: FormFields, emptyAs: undefined | null) {
  const body: Record<string, unknown> = { active: fields.active === 'on' };
  for (const name of ['code', 'percent_off', 'amount_off', ...NULLABLE]) {
    const value = (fields[name] ?? '').trim();
    if (value !== '') body[name] = typedValue(name, value);
    else if (NULLABLE.includes(name) && emptyAs === null) body[name] = null;
  }
  return body;
}

/** A field as typed → what the schema reads: `10%`, `$5`, a date input's day, the picked products. */
function typedValue(name: string, value: string): unknown {
  if (name === 'product_ids') return productIdsFrom(value);
  if (name === 'percent_off') return percentTyped(value);
  if (name === 'amount_off' || name === 'min_total') return plainNumber(value);
  if (name === 'starts_at' || name === 'expires_at') return windowEdge(name, value);
  return value;
}

/** A coupon's fields as the form shows them. */
const formValues = (c: Coupon): FormFields => ({
  percent_off: c.percentOff === null ? '' : String(c.percentOff),
  amount_off: c.amountOffCents === null ? '' : centsToDecimal(c.amountOffCents),
  min_total: c.minTotalCents === null ? '' : centsToDecimal(c.minTotalCents),
  starts_at: dayOf('starts_at', c.startsAt),
  expires_at: dayOf('expires_at', c.expiresAt),
  max_redemptions: c.maxRedemptions === null ? '' : String(c.maxRedemptions),
  max_per_user: c.maxPerUser === null ? '' : String(c.maxPerUser),
  product_ids: c.productIds === null ? '' : (JSON.parse(c.productIds) as number[]).join(', '),
  ...(c.active === 1 ? { active: 'on' } : {}),
});

/** "Products": every product by name, several may be picked; none picked = every product. */
function ProductPicker({ products, picked, problem }: { products: ProductName[]; picked: string; problem?: FormProblem }) {
  const chosen = new Set(picked.split(/[\s,]+/).filter(Boolean));
  const messages = problem?.fields.product_ids;
  return (
    <div class="field">
      <label for="field-product_ids">Products</label>
      <select id="field-product_ids" name="product_ids" multiple size={Math.min(Math.max(products.length, 2), 8)} aria-describedby="product-ids-hint" {...(messages ? { 'aria-invalid': 'true' } : {})}>
        {products.map((p) => (
          <option value={String(p.id)} selected={chosen.has(String(p.id))}>
            {p.active === 1 ? p.name : `${p.name} (inactive)`}
          </option>
        ))}
      </select>
      <p class="muted" id="product-ids-hint">
        None picked: every product. Ctrl- or Cmd-click picks several.
      </p>
      {messages && <p class="field-error">{messages.join(' ')}</p>}
    </div>
  );
}

function CouponFields({ values, problem, products }: { values: FormFields; problem?: FormProblem; products: ProductName[] }) {
  return (
    <>
      <Field name="percent_off" label="Percent off" value={values.percent_off} problem={problem} />
      <Field name="amount_off" label="Amount off" value={values.amount_off} problem={problem} inputmode="decimal" />
      <p class="muted">Fill exactly one: a percent of the subtotal (10 or 10%), or an amount in USD (5 or $5).</p>
      <Field name="min_total" label="Minimum subtotal" value={values.min_total} problem={problem} inputmode="decimal" />
      <Field name="starts_at" label="Starts on" type="date" value={values.starts_at} problem={problem} />
      <Field name="expires_at" label="Ends on" type="date" value={values.expires_at} problem={problem} />
      <p class="muted">UTC days: from 00:00 of the first to 24:00 of the last. Empty: no start, no end.</p>
      <Field name="max_redemptions" label="Max redemptions" value={values.max_redemptions} problem={problem} inputmode="numeric" />
      <Field name="max_per_user" label="Max per user" value={values.max_per_user} problem={problem} inputmode="numeric" />
      <p class="muted">Max redemptions: orders in all. Max per user: orders per buyer (1 unless you change it). Empty: no limit. Minimum subtotal empty: none.</p>
      <ProductPicker products={products} picked={values.product_ids ?? ''} problem={problem} />
      <Checkbox name="active" label="Active" checked={values.active === 'on'} />
    </>
  );
}

const kindOf = (c: Coupon) => (c.percentOff !== null ? `${c.percentOff} %` : <Money cents={c.amountOffCents} />);

async function couponsPage(c: Context<AppEnv>, values: FormFields = { active: 'on', max_per_user: '1' }, problem?: FormProblem) {
  const pageQuery = parseForm(PaginationQuery, c.req.query());
  const [{ rows, total }, products] = await queryAsOperator(c.var.db, c.var.caller, [couponsQuery(pageQuery), productNamesQuery]);
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
              <CouponFields values={values} problem={problem} products={products} />
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
  const [coupon, products] = await queryAsOperator(c.var.db, c.var.caller, [couponQuery(couponId), productNamesQuery]);
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
              <CouponFields values={values ?? formValues(coupon)} problem={problem} products={products} />
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
        const body = parseForm(CreateCouponBody, couponBody(await pickedProducts(c, fields), undefined), NUMBERS, LABELS);
        return redirectOnce<Coupon>(
          c,
          fields,
          body,
          async (claim) => withDone(couponPath((await createCoupon(c.var.db, operatorActor(c.var.caller), { ...couponInput(body), code: body.code }, claim)).id), 'coupon_created'),
          (coupon) => withDone(couponPath(coupon.id), 'coupon_created'),
          OPERATOR,
        );
      },
      async (c, fields, problem) => couponsPage(c, await pickedProducts(c, fields), problem),
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
        const body = parseForm(UpdateCouponBody, couponBody(await pickedProducts(c, fields), null), NUMBERS, LABELS);
        await updateCoupon(c.var.db, operatorActor(c.var.caller), id, couponInput(body));
        return c.redirect(withDone(couponPath(id), 'coupon_saved'), 303);
      },
      async (c, fields, problem) => couponPage(c, pathCouponId(c), await pickedProducts(c, fields), problem),
    ),
  );
