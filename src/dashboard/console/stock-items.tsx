import { Hono, type Context } from 'hono';
import type { AppEnv } from '../../env';
import { catalogueChange } from '../../middleware/publish-events';
import { requireOperatorSession } from '../../middleware/session';
import { purgeStock } from '../../middleware/stock-cache';
import { operatorActor } from '../../services/accounts/audit-log';
import { queryAsOperator } from '../../services/caller';
import { deleteUnsoldItem, unsoldItemQuery, UNSOLD_ITEMS_PER_PAGE, unsoldItemsQuery, type UnsoldItem } from '../../services/catalogue/stock-items';
import { catalogueProductQuery } from '../../services/operator/catalogue';
import { Pager, When } from '../components';
import { withDone } from '../done-notices';
import { idFromPath, sameOriginForm } from '../forms';
import { DataTable } from '../tables';
import { AskFirst, confirmationPage, confirmPath } from './confirm';

// A product's unsold items on its page (search, 50 a page) with "Delete", through the console's confirmation page;
// sold items are never listed (they belong to orders). The delete is audited and is a stock change like an upload:
// stock_count, the catalogue event and the public stock cache follow it (src/services/catalogue/stock-items.ts).

const productPath = (id: number) => `/dashboard/console/products/${id}`;
const deletePath = (productId: number, itemId: number) => `${productPath(productId)}/items/${itemId}/delete`;
const MAX_SEARCH = 200;

/** The list's search and page, from the product page's URL (`q`, `page`); anything malformed is no search, page 1. */
export function unsoldItemsFilter(c: Context<AppEnv>) {
  const q = (c.req.query('q') ?? '').trim().slice(0, MAX_SEARCH);
  const pageText = c.req.query('page') ?? '';
  const page = /^[1-9]\d{0,8}$/.test(pageText) ? Number(pageText) : 1;
  return { q: q === '' ? undefined : q, page: { page, per_page: UNSOLD_ITEMS_PER_PAGE } };
}

export const unsoldItemsOf = (productId: number, c: Context<AppEnv>) => {
  const { q, page } = unsoldItemsFilter(c);
  return unsoldItemsQuery(productId, q, page);
};

export function UnsoldItems({ productId, items, total, c }: { productId: number; items: UnsoldItem[]; total: number; c: Context<AppEnv> }) {
  const { q, page } = unsoldItemsFilter(c);
  return (
    <section class="card" aria-labelledby="unsold-items" id="items">
      <h2 id="unsold-items">Unsold items</h2>
      <p class="muted">{`${total.toLocaleString('en-US')} ${q ? 'matching' : 'in stock'}, in the order they sell. A mistyped item can be deleted here; sold items are on their orders.`}</p>
      <form method="get" action={`${productPath(productId)}#items`} class="search" role="search" aria-label="Unsold items">
        <div class="field">
          <label for="items-q">Find an item</label>
          <input id="items-q" name="q" type="search" value={q} maxlength={MAX_SEARCH} />
        </div>
        <button type="submit" class="secondary">
          Find
        </button>
      </form>
      <DataTable
        caption="Unsold items"
        rows={items}
        empty={q ? 'No unsold item matches.' : 'No unsold item: upload stock below.'}
        columns={[
          { label: 'Item', class: 'wrap', cell: (item) => <code>{item.content}</code> },
          { label: 'Added', cell: (item) => <When iso={item.createdAt} /> },
          { label: 'Delete', labelHidden: true, class: 'actions', cell: (item) => <AskFirst action={deletePath(productId, item.id)} label="Delete" class="danger" /> },
        ]}
      />
      <Pager path={productPath(productId)} page={page.page} totalPages={Math.ceil(total / page.per_page)} query={{ q }} />
    </section>
  );
}

const ids = (c: Context<AppEnv>) => ({ productId: idFromPath(c.req.param('id'), 'Product'), itemId: idFromPath(c.req.param('item_id'), 'Item') });

export const consoleStockItems = new Hono<AppEnv>()
  .get(confirmPath('/console/products/:id/items/:item_id/delete'), requireOperatorSession, async (c) => {
    const { productId, itemId } = ids(c);
    const [product, item] = await queryAsOperator(c.var.db, c.var.caller, [catalogueProductQuery(productId), unsoldItemQuery(productId, itemId)]);
    // Sold (or already deleted) meanwhile: nothing to confirm; the product's page says so.
    if (item === null) return c.redirect(withDone(productPath(productId), 'item_not_deleted'), 303);
    return confirmationPage(c, {
      title: 'Delete this item?',
      section: '/dashboard/console/products',
      effect: (
        <>
          {`This deletes the unsold item `}
          <code>{item.content}</code>
          {` of "${product.name}": its stock goes from ${product.stockCount} to ${product.stockCount - 1} and the item can never be sold. If a buyer gets it first, nothing is deleted.`}
        </>
      ),
      action: deletePath(productId, itemId),
      back: `${productPath(productId)}#items`,
      danger: true,
    });
  })
  .post('/console/products/:id/items/:item_id/delete', sameOriginForm, requireOperatorSession, async (c) => {
    const { productId, itemId } = ids(c);
    const deleted = await deleteUnsoldItem(c.var.db, operatorActor(c.var.caller), productId, itemId, catalogueChange(c));
    if (deleted) await purgeStock(c, [productId]);
    return c.redirect(withDone(`${productPath(productId)}#items`, deleted ? 'item_deleted' : 'item_not_deleted'), 303);
  });
