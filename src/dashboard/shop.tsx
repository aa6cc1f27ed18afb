import { Hono, type Context } from 'hono';
import { publicBaseUrl } from '../lib/public-base-url';
import type { Child } from 'hono/jsx';
import type { AppEnv } from '../env';
import { requireSession } from '../middleware/session';
import { catalogueChange } from '../middleware/publish-events';
import { mailFor } from '../middleware/send-emails';
import { purgeSoldProducts } from '../middleware/stock-cache';
import type { DepositRow, OrderRow } from '../db/schema';
import { readConfig } from '../env';
import { vendorInvoiceThrottle } from '../middleware/rate-limit';
import { DepositBody, MAX_DEPOSIT_CENTS, MIN_DEPOSIT_CENTS } from '../schemas/wallet';
import { createDeposit } from '../services/payments/deposits';
import { availableGateways, type GatewayOffer } from '../services/payments/gateways';
import { ApiError } from '../lib/errors';
import { centsToDecimal, formatUsd } from '../lib/money';
import { ShopQuery } from '../schemas/catalogue';
import { DepositOrder, purchaseRequest, PurchaseBody } from '../schemas/orders';
import { purchase } from '../services/orders/orders';
import { queryAs } from '../services/caller';
import { productDetailQuery, shopQuery, SHOP_PAGE_SIZE, type ProductDetail } from '../services/catalogue/browse';
import { reviewQuery } from '../services/orders/review-quote';
import type { StockEntry } from '../services/catalogue/stock';
import { CatalogueFilter, packSizesOf, ProductCard, ProductFacts, ProductImage, VolumePrices, WarrantyLine } from './catalogue';
import { Alert, Field, IdempotencyKey, Money, Pager, Select } from './components';
import { formHandler, idFromPath, parseForm, redirectOnce, type FormFields, type FormProblem, sameOriginForm } from './forms';
import { page } from './layout';
import { orderPath } from './orders';

// The shop: the active products as cards (filter by category, search by name), a page per product, and buying in
// two steps: the quantity form posts to the review (the quote: quantity, list and unit price, discount, total), whose
// "Confirm purchase" is POST /orders: the same purchase batch, rules and error codes, with the reviewed total as
// `expected_total`.

const SHOP = '/dashboard/shop';
const productPath = (id: number) => `${SHOP}/${id}`;

/** The quantity form of a product (its card or its page), with an optional "Coupon": it asks for the review, never buys. */
function QuantityForm({ entry, values, problem }: { entry: StockEntry; values?: FormFields; problem?: FormProblem }) {
  const packs = packSizesOf(entry);
  const idPrefix = `product-${entry.productId}`;
  const quantity = values?.quantity;
  return (
    <form method="post" action={`${productPath(entry.productId)}/review`}>
      <input type="hidden" name="product_id" value={String(entry.productId)} />
      <IdempotencyKey />
      <div class="row">
        {packs ? (
          <Select name="quantity" label="Quantity" options={packs} value={quantity} problem={problem} idPrefix={idPrefix} />
        ) : (
          <Field name="quantity" label="Quantity" type="number" value={quantity ?? '1'} problem={problem} idPrefix={idPrefix} min="1" step="1" inputmode="numeric" required />
        )}
        <Field name="coupon" label="Coupon" value={values?.coupon} problem={problem} idPrefix={idPrefix} maxlength={32} autocomplete="off" />
        <button type="submit" disabled={entry.stockCount === 0}>
          Buy
        </button>
      </div>
    </form>
  );
}

interface ShopView {
  values?: FormFields;
  problem?: FormProblem;
}

async function shopPage(c: Context<AppEnv>, { values, problem }: ShopView, status: 200 | FormProblem['status'] = 200) {
  const filter = parseForm(ShopQuery, c.req.query());
  const [{ entries, total, categories }] = await queryAs(c.var.db, c.var.caller, [shopQuery(filter)]);
  // A refusal is shown on the card of the product it concerns; one about the product field itself, above the list.
  const target = entries.find((e) => String(e.productId) === values?.product_id && !problem?.fields.product_id);
  return page(
    c,
    {
      title: 'Shop',
      section: SHOP,
      children: (
        <>
          {!target && <Alert problem={problem} />}
          <CatalogueFilter action={SHOP} categories={categories} category={filter.category} q={filter.q} />
          {entries.length === 0 ? (
            <p class="empty">{filter.category || filter.q ? 'No product matches.' : 'Nothing for sale right now.'}</p>
          ) : (
            <ul class="products">
              {entries.map((entry) => (
                <ProductCard entry={entry} href={productPath(entry.productId)}>
                  {entry === target && <Alert problem={problem} />}
                  <QuantityForm entry={entry} values={entry === target ? values : undefined} problem={entry === target ? problem : undefined} />
                </ProductCard>
              ))}
            </ul>
          )}
          <Pager path={SHOP} page={filter.page} totalPages={Math.ceil(total / SHOP_PAGE_SIZE)} query={{ category: filter.category, q: filter.q }} />
        </>
      ),
    },
    status,
  );
}

async function productPage(c: Context<AppEnv>, productId: number, { values, problem }: ShopView = {}) {
  const [product] = await queryAs(c.var.db, c.var.caller, [productDetailQuery(productId)]);
  return page(
    c,
    {
      title: product.productName,
      section: SHOP,
      children: <ProductSheet product={product} values={values} problem={problem} />,
    },
    problem?.status ?? 200,
  );
}

function ProductSheet({ product, values, problem }: { product: ProductDetail } & ShopView) {
  return (
    <article class="card product-sheet">
      <ProductImage entry={product} size="large" />
      <div>
        <ProductFacts entry={product} />
        <VolumePrices entry={product} />
        {product.cancellable === 0 && <p>Final sale: this order cannot be cancelled.</p>}
        <WarrantyLine entry={product} />
        {product.description !== null && <p class="description">{product.description}</p>}
        <Alert problem={problem} />
        <QuantityForm entry={product} values={values} problem={problem} />
        <p>
          <a href={SHOP}>Back to the shop</a>
        </p>
      </div>
    </article>
  );
}

/** The form's coupon field: empty means none. */
const couponOf = (fields: FormFields) => (fields.coupon ?? '').trim() || undefined;

/** The review: what the purchase will be, and "Confirm purchase" carrying the form's key and the reviewed total. */
async function reviewPage(c: Context<AppEnv>, productId: number, fields: FormFields, notice?: string) {
  const body = parseForm(PurchaseBody, { product_id: productId, quantity: fields.quantity, coupon: couponOf(fields) }, ['quantity']);
  const [review] = await queryAs(c.var.db, c.var.caller, [reviewQuery(c.var.caller, productId, body.quantity, body.coupon ?? null)]);
  const { quote } = review;
  // The quote of "Prices": list price × quantity − discount = total; the unit price is after volume and discount.
  const rows: [string, Child][] = [
    ['Quantity', String(quote.quantity)],
    ['List price', <Money cents={quote.listUnitPriceCents} />],
    ['Unit price', <Money cents={quote.unitPriceCents} />],
    ['Discount', <Money cents={quote.discountAmountCents} />],
    ['Total', <Money cents={quote.totalAmountCents} />],
  ];
  return page(
    c,
    {
      title: `Review: ${review.product.productName}`,
      section: SHOP,
      children: (
        <section class="card narrow" aria-labelledby="review">
          <h2 id="review">Your purchase</h2>
          {notice && (
            <p class="alert" role="alert">
              {notice}
            </p>
          )}
          <dl class="review">
            {rows.map(([label, value]) => (
              <div>
                <dt>{label}</dt>
                <dd>{value}</dd>
              </div>
            ))}
          </dl>
          {quote.coupon !== null && <p>{`Coupon ${quote.coupon} applied.`}</p>}
          {review.product.cancellable === 0 && <p>Final sale: this order cannot be cancelled.</p>}
          <form method="post" action={SHOP}>
            <input type="hidden" name="product_id" value={String(productId)} />
            <input type="hidden" name="quantity" value={String(quote.quantity)} />
            {quote.coupon !== null && <input type="hidden" name="coupon" value={quote.coupon} />}
            <input type="hidden" name="expected_total" value={centsToDecimal(quote.totalAmountCents)} />
            {/* The quantity form's key: a re-sent confirmation (or a second review of the same form) buys once. */}
            {fields.idempotency_key !== undefined && <input type="hidden" name="idempotency_key" value={fields.idempotency_key} />}
            <button type="submit">Confirm purchase</button>
          </form>
          {review.balanceCents < quote.totalAmountCents && (
            <PayAndBuy
              gateways={availableGateways(readConfig(c.env))}
              productId={productId}
              quantity={quote.quantity}
              coupon={quote.coupon}
              totalCents={quote.totalAmountCents}
              balanceCents={review.balanceCents}
            />
          )}
          <p>
            <a href={productPath(productId)}>Back to the product</a>
          </p>
        </section>
      ),
    },
    notice ? 409 : 200,
  );
}

interface PayAndBuyProps {
  gateways: GatewayOffer[];
  productId: number;
  quantity: number;
  coupon: string | null;
  totalCents: number;
  balanceCents: number;
}

/**
 * The review's offer when the balance is short: one payment of what is missing (at least the smallest deposit) that
 * buys the order when it is credited (POST /wallet/deposit with `order`, at the reviewed total).
 */
function PayAndBuy({ gateways, productId, quantity, coupon, totalCents, balanceCents }: PayAndBuyProps) {
  const amountCents = Math.max(totalCents - balanceCents, MIN_DEPOSIT_CENTS);
  if (gateways.length === 0 || amountCents > MAX_DEPOSIT_CENTS) return null;
  return (
    <form method="post" action={`${productPath(productId)}/pay`} class="pay-and-buy">
      <p>
        {'Your balance is '}
        <Money cents={balanceCents} />
        {'. Pay the rest now and the order is made as soon as the payment arrives (the money stays in your wallet if it cannot be).'}
      </p>
      <input type="hidden" name="quantity" value={String(quantity)} />
      {coupon !== null && <input type="hidden" name="coupon" value={coupon} />}
      <input type="hidden" name="expected_total" value={centsToDecimal(totalCents)} />
      <input type="hidden" name="amount" value={centsToDecimal(amountCents)} />
      <IdempotencyKey />
      <div class="row">
        <Select name="gateway" label="Payment method" options={gateways.map((g) => ({ value: g.gateway, label: g.kind === 'crypto' ? `Crypto (${g.gateway})` : `Card (${g.gateway})` }))} idPrefix="pay" />
        <button type="submit">{`Pay ${formatUsd(amountCents)} and buy`}</button>
      </div>
    </form>
  );
}

const PRICE_CHANGED_NOTICE = 'The price changed since your review: here is the new total. Nothing was bought.';

/** A paid deposit's order, or the wallet with the reason; still pending: the wallet, which lists it. */
export const afterPayment = (deposit: DepositRow) =>
  deposit.orderId !== null ? orderPath(deposit.orderId, 'charged') : `/dashboard/wallet?deposit=${deposit.id}`;

export const shopPages = new Hono<AppEnv>()
  .get('/shop', requireSession, (c) => shopPage(c, {}))
  .get('/shop/:id', requireSession, (c) => productPage(c, idFromPath(c.req.param('id'), 'Product')))
  .post(
    '/shop/:id/review',
    sameOriginForm,
    requireSession,
    formHandler(
      (c, fields) => reviewPage(c, idFromPath(c.req.param('id'), 'Product'), fields),
      (c, fields, problem) => productPage(c, idFromPath(c.req.param('id'), 'Product'), { values: fields, problem }),
    ),
  )
  .post(
    '/shop/:id/pay',
    sameOriginForm,
    requireSession,
    formHandler(
      async (c, fields) => {
        const productId = idFromPath(c.req.param('id'), 'Product');
        const order = parseForm(DepositOrder, { ...fields, product_id: productId, coupon: couponOf(fields) }, ['quantity', 'expected_total']);
        const body = parseForm(DepositBody, { amount: fields.amount, gateway: fields.gateway, order }, ['amount']);
        const request = {
          amountCents: body.amount,
          gateway: body.gateway,
          origin: publicBaseUrl(c.env),
          beforeVendorCall: vendorInvoiceThrottle(c),
          order: { productId, quantity: order.quantity, coupon: order.coupon ?? null, expectedTotalCents: order.expected_total },
        };
        const toPay = (deposit: DepositRow) => deposit.paymentUrl ?? '/dashboard/wallet';
        try {
          return await redirectOnce(c, fields, body, async (claim) => toPay(await createDeposit(c.var.db, readConfig(c.env), c.var.caller, request, claim, mailFor(c))), toPay);
        } catch (err) {
          if (err instanceof ApiError && err.code === 'PRICE_CHANGED') return reviewPage(c, productId, fields, PRICE_CHANGED_NOTICE);
          throw err;
        }
      },
      (c, fields, problem) => productPage(c, idFromPath(c.req.param('id'), 'Product'), { values: fields, problem }),
    ),
  )
  .post(
    '/shop',
    sameOriginForm,
    requireSession,
    formHandler(
      async (c, fields) => {
        const body = parseForm(PurchaseBody, { ...fields, coupon: couponOf(fields) }, ['product_id', 'quantity', 'expected_total']);
        try {
          return await redirectOnce(
            c,
            fields,
            body,
            async (claim) => {
              const { order } = await purchase(c.var.db, c.var.caller, purchaseRequest(body), { ...catalogueChange(c, claim), mail: mailFor(c) });
              await purgeSoldProducts(c, [body.product_id]);
              return orderPath(order.id, 'charged');
            },
            (order: OrderRow) => orderPath(order.id, 'charged'),
          );
        } catch (err) {
          // A total that moved since the review: the review again, with the total of now; nothing was bought.
          if (err instanceof ApiError && err.code === 'PRICE_CHANGED') return reviewPage(c, body.product_id, fields, PRICE_CHANGED_NOTICE);
          throw err;
        }
      },
      (c, fields, problem) => shopPage(c, { values: fields, problem }, problem.status),
    ),
  );
