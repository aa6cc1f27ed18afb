import { Hono, type Context } from 'hono';
import type { AppEnv } from '../env';
import { requireSession } from '../middleware/session';
import { publishAfterResponse } from '../middleware/publish-events';
import { mailFor } from '../middleware/send-emails';
import { purgeStock } from '../middleware/stock-cache';
import type { OrderRow } from '../db/schema';
import { purchaseRequest, PurchaseBody } from '../schemas/orders';
import { purchase } from '../services/orders';
import { queryAs } from '../services/caller';
import { activeStockQuery, type StockEntry } from '../services/stock';
import { Alert, Field, IdempotencyKey, Money, Select } from './components';
import { formHandler, parseForm, redirectOnce, sameOriginForm, type FormFields, type FormProblem } from './forms';
import { page } from './layout';
import { orderPath } from './orders';

// The shop: the active products of GET /stock with their pack sizes, and "Buy", which is POST /orders: the same
// purchase batch, rules and error codes.

interface ShopView {
  values?: FormFields;
  problem?: FormProblem;
}

const packSizesOf = (entry: StockEntry) => (entry.allowedQuantities === null ? null : (JSON.parse(entry.allowedQuantities) as number[]));

function ProductCard({ entry, values, problem }: { entry: StockEntry } & ShopView) {
  const packs = packSizesOf(entry);
  const idPrefix = `product-${entry.productId}`;
  const quantity = values?.quantity;
  return (
    <li aria-labelledby={`${idPrefix}-name`}>
      <h2 id={`${idPrefix}-name`}>{entry.productName}</h2>
      <p>
        <Money cents={entry.priceCents} /> each · {entry.stockCount > 0 ? `${entry.stockCount.toLocaleString('en-US')} in stock` : 'Out of stock'}
      </p>
      {packs && <p>{`Sold in packs of ${packs.join(', ')}`}</p>}
      <Alert problem={problem} />
      <form method="post" action="/dashboard/shop">
        <input type="hidden" name="product_id" value={String(entry.productId)} />
        <IdempotencyKey />
        <div class="row">
          {packs ? (
            <Select name="quantity" label="Quantity" options={packs} value={quantity} problem={problem} idPrefix={idPrefix} />
          ) : (
            <Field name="quantity" label="Quantity" type="number" value={quantity ?? '1'} problem={problem} idPrefix={idPrefix} min="1" step="1" inputmode="numeric" required />
          )}
          <button type="submit" disabled={entry.stockCount === 0}>
            Buy
          </button>
        </div>
      </form>
    </li>
  );
}

async function shopPage(c: Context<AppEnv>, { values, problem }: ShopView, status: 200 | FormProblem['status'] = 200) {
  const [entries] = await queryAs(c.var.db, c.var.caller, [activeStockQuery()]);
  // A refusal is shown on the card of the product it concerns; one about the product field itself, above the list.
  const target = entries.find((e) => String(e.productId) === values?.product_id && !problem?.fields.product_id);
  return page(
    c,
    {
      title: 'Shop',
      section: '/dashboard/shop',
      children: (
        <>
          {!target && <Alert problem={problem} />}
          {entries.length === 0 ? (
            <p class="empty">Nothing for sale right now.</p>
          ) : (
            <ul class="products">
              {entries.map((entry) =>
                entry === target ? <ProductCard entry={entry} values={values} problem={problem} /> : <ProductCard entry={entry} />,
              )}
            </ul>
          )}
        </>
      ),
    },
    status,
  );
}

export const shopPages = new Hono<AppEnv>()
  .get('/shop', requireSession, (c) => shopPage(c, {}))
  .post(
    '/shop',
    sameOriginForm,
    requireSession,
    formHandler(
      async (c, fields) => {
        const body = parseForm(PurchaseBody, fields, ['product_id', 'quantity']);
        return redirectOnce(
          c,
          fields,
          body,
          async (claim) => {
            const { order } = await purchase(c.var.db, c.var.caller, purchaseRequest(body), claim, publishAfterResponse(c), mailFor(c));
            await purgeStock(c, [body.product_id]);
            return orderPath(order.id, 'charged');
          },
          (order: OrderRow) => orderPath(order.id, 'charged'),
        );
      },
      (c, fields, problem) => shopPage(c, { values: fields, problem }, problem.status),
    ),
  );
