import { Hono, type Context } from 'hono';
import type { ProductRow } from '../../db/schema';
import { catalogueChange } from '../../middleware/publish-events';
import type { AppEnv } from '../../env';
import { fieldError } from '../../lib/errors';
import { centsToDecimal } from '../../lib/money';
import { requireOperatorSession } from '../../middleware/session';
import { purgeStock } from '../../middleware/stock-cache';
import { ProductBody, productInput } from '../../schemas/operator';
import { operatorActor } from '../../services/accounts/audit-log';
import { queryAsOperator } from '../../services/caller';
import { OPERATOR } from '../../services/idempotency';
import { catalogueProductQuery, catalogueQuery, type CatalogueProduct } from '../../services/operator/catalogue';
import { addStock, checkedUpload, createProduct, MAX_ITEMS_PER_UPLOAD, updateProduct, type StockUpload } from '../../services/catalogue/products';
import { Alert, Checkbox, Field, FileField, IdempotencyKey, Money, Notice, Select, TextArea } from '../components';
import { variantsQuery } from '../../services/catalogue/variants';
import { formHandler, idFromPath, parseForm, plainNumber, redirectOnce, sameOriginForm, type FormFields, type FormProblem } from '../forms';
import { withDone } from '../done-notices';
import { page } from '../layout';
import { consoleProductImages, ProductImageForms } from './product-image';
import { consoleStockItems, UnsoldItems, unsoldItemsOf } from './stock-items';
import { DataTable } from '../tables';
import { readNumber } from '../../lib/exact-json';
import { volumeTiersOf } from '../../services/catalogue/pricing';

// The catalogue: every product, active or not; create and edit through the admin API's service functions (audited,
// in the operator's Idempotency-Key namespace); stock from a textarea or a .txt file, 10,000 lines a post.

const PRODUCTS = '/dashboard/console/products';
const productPath = (id: number) => `${PRODUCTS}/${id}`;

/** "1, 5, 10" → [1, 5, 10]; empty → null (any quantity); anything else is left for the schema to refuse. */
function packSizesFrom(text: string | undefined): unknown {
  const parts = (text ?? '').split(/[\s,]+/).filter(Boolean);
  if (parts.length === 0) return null;
  return parts.every((p) => /^\d{1,9}$/.test(p)) ? parts.map(Number) : text;
}

/** "10=4.50" a line → [{ min_quantity: 10, price: 4.5 }]; empty → null (none); a line of another shape is a 422. */
function volumePricesFrom(text: string | undefined): unknown {
  const lines = (text ?? '').split('\n').map((line) => line.trim()).filter(Boolean);
  if (lines.length === 0) return null;
  return lines.map((line) => {
    const match = /^(\d{1,9})\s*=\s*(\d{1,15}(?:\.\d{1,15})?)$/.exec(line);
    if (!match) throw fieldError('volume_prices', `"${line.slice(0, 40)}" is not min_quantity=price (one a line, e.g. 10=4.50)`);
    return { min_quantity: Number(match[1]), price: readNumber(match[2]) };
  });
}

/** Tiers as the form shows them: "10=4.50" a line. */
const volumePricesText = (column: string | null) =>
  (volumeTiersOf(column) ?? []).map((tier) => `${tier.minQuantity}=${centsToDecimal(tier.priceCents)}`).join('\n');

/** The product form as the API's body: the checkboxes as booleans ("Final sale" is `cancellable: false`). */
function productFromForm(fields: FormFields) {
  const category = (fields.category ?? '').trim();
  const description = (fields.description ?? '').trim();
  const input = {
    name: fields.name,
    sku: fields.sku,
    category: category === '' ? null : category,
    price: plainNumber(fields.price),
    allowed_quantities: packSizesFrom(fields.allowed_quantities),
    volume_prices: volumePricesFrom(fields.volume_prices),
    active: fields.active === 'on',
    cancellable: fields.final_sale !== 'on',
    description: description === '' ? null : fields.description.replace(/\r\n?/g, '\n'),
    warranty_hours: (fields.warranty_hours ?? '').trim() === '' ? 0 : fields.warranty_hours.trim(),
    // Empty: the shop's percent.
    referral_percent: (fields.referral_percent ?? '').trim() === '' ? null : fields.referral_percent.trim(),
  };
  const body = parseForm(ProductBody, input, ['price', 'warranty_hours', 'referral_percent']);
  return { ...productInput(body), name: body.name, sku: body.sku, priceCents: body.price };
}

/** A product's fields as the form shows them. */
const formValues = (p: ProductRow): FormFields => ({
  name: p.name,
  sku: p.sku,
  category: p.category ?? '',
  price: centsToDecimal(p.priceCents),
  allowed_quantities: p.allowedQuantities === null ? '' : (JSON.parse(p.allowedQuantities) as number[]).join(', '),
  volume_prices: volumePricesText(p.volumePrices),
  ...(p.active === 1 ? { active: 'on' } : {}),
  ...(p.cancellable === 0 ? { final_sale: 'on' } : {}),
  description: p.description ?? '',
  warranty_hours: String(p.warrantyHours ?? 0),
  referral_percent: p.referralPercent === null || p.referralPercent === undefined ? '' : String(p.referralPercent),
});

function ProductFields({ values, problem }: { values: FormFields; problem?: FormProblem }) {
  return (
    <>
      <Field name="name" label="Name" value={values.name} problem={problem} required maxlength={200} />
      <Field name="sku" label="SKU" value={values.sku} problem={problem} required maxlength={100} />
      <Field name="category" label="Category" value={values.category} problem={problem} maxlength={100} />
      <Field name="price" label="Price" value={values.price} problem={problem} inputmode="decimal" required />
      <Field name="allowed_quantities" label="Pack sizes" value={values.allowed_quantities} problem={problem} />
      <p class="muted">Pack sizes: comma-separated quantities a buyer may order (empty: any quantity).</p>
      <TextArea name="volume_prices" label="Volume prices" value={values.volume_prices} problem={problem} rows={3} />
      <p class="muted">Volume prices: one min_quantity=price a line (e.g. 10=4.50): the unit price from that quantity up, each lower than the one before and than Price.</p>
      <Checkbox name="active" label="Active" checked={values.active === 'on'} />
      <Checkbox name="final_sale" label="Final sale" checked={values.final_sale === 'on'} />
      <p class="muted">
        Final sale: orders of it can never be cancelled. Keep it ticked for codes, keys and gift cards: once shown to the
        buyer they cannot be taken back, so a cancellation would refund goods the buyer keeps.
      </p>
      <Field name="warranty_hours" label="Replacement warranty (hours)" value={values.warranty_hours ?? '0'} problem={problem} inputmode="numeric" />
      <p class="muted">Replacement warranty: for this many hours after a purchase the buyer may report an item that does not work (0: none).</p>
      <Field name="referral_percent" label="Referral percent" value={values.referral_percent} problem={problem} inputmode="numeric" />
      <p class="muted">Referral percent: what a referrer earns of this product's orders (empty: the shop's, on the Referrals page; 0: nothing).</p>
      <TextArea name="description" label="Description" value={values.description} problem={problem} rows={5} maxlength={2000} />
    </>
  );
}

// A new product starts as final sale: most goods sold here are codes that cannot be revoked once shown.
async function productsPage(c: Context<AppEnv>, values: FormFields = { active: 'on', final_sale: 'on', warranty_hours: '0' }, problem?: FormProblem) {
  const [products] = await queryAsOperator(c.var.db, c.var.caller, [catalogueQuery()]);
  return page(
    c,
    {
      title: 'Products',
      section: PRODUCTS,
      children: (
        <>
          <DataTable
            caption="Every product"
            rows={products}
            empty="No products yet: create the first one below."
            columns={[
              { label: 'Product', cell: (p: CatalogueProduct) => <a href={productPath(p.id)}>{p.name}</a> },
              { label: 'SKU', cell: (p) => p.sku },
              { label: 'Price', class: 'num', cell: (p) => <Money cents={p.priceCents} /> },
              { label: 'Stock', class: 'num', cell: (p) => p.stockCount },
              { label: 'Sold', class: 'num', cell: (p) => p.unitsSold },
              { label: 'State', cell: (p) => (p.active === 1 ? 'active' : 'inactive') + (p.cancellable === 0 ? ', final sale' : '') },
            ]}
          />
          <section class="card narrow" aria-labelledby="new-product">
            <h2 id="new-product">New product</h2>
            <Alert problem={problem} />
            <form method="post" action={PRODUCTS}>
              <IdempotencyKey />
              <ProductFields values={values} problem={problem} />
              <button type="submit">Create product</button>
            </form>
          </section>
        </>
      ),
    },
    problem?.status ?? 200,
  );
}

interface ProductView {
  values?: FormFields;
  problem?: FormProblem;
  /** Which form the problem belongs to. */
  form?: 'edit' | 'stock' | 'image';
}

async function productPage(c: Context<AppEnv>, productId: number, { values, problem, form }: ProductView = {}) {
  const [product, unsold, variants] = await queryAsOperator(c.var.db, c.var.caller, [catalogueProductQuery(productId), unsoldItemsOf(productId, c), variantsQuery(productId)]);
  const { added, skipped } = c.req.query();
  const uploaded = /^\d+$/.test(added ?? '') && /^\d+$/.test(skipped ?? '');
  return page(
    c,
    {
      title: product.name,
      section: PRODUCTS,
      children: (
        <>
          {uploaded && <Notice>{`Added ${added}, skipped ${skipped}.`}</Notice>}
          <dl class="stats">
            <div>
              <dt>Stock</dt>
              <dd>{product.stockCount}</dd>
            </div>
            <div>
              <dt>Units sold</dt>
              <dd>{product.unitsSold}</dd>
            </div>
          </dl>
          <section class="card" aria-labelledby="edit-product">
            <h2 id="edit-product">Edit</h2>
            {form === 'edit' && <Alert problem={problem} />}
            <form method="post" action={productPath(product.id)}>
              <div class="columns">
                <ProductFields values={form === 'edit' && values ? values : formValues(product)} problem={form === 'edit' ? problem : undefined} />
              </div>
              <button type="submit">Save product</button>
            </form>
          </section>
          <section class="card" aria-labelledby="variants">
            <h2 id="variants">Variants</h2>
            <DataTable
              caption="The product's variants"
              rows={variants}
              empty="No variants."
              columns={[
                { label: 'Name', cell: (v) => v.name },
                { label: 'SKU', cell: (v) => v.sku },
                { label: 'Price', class: 'num', cell: (v) => <Money cents={v.priceCents} /> },
                { label: 'Stock', class: 'num', cell: (v) => v.stockCount },
                { label: 'Active', cell: (v) => (v.active === 1 ? 'Yes' : 'No') },
              ]}
            />
          </section>
          <ProductImageForms product={product} problem={form === 'image' ? problem : undefined} />
          <UnsoldItems productId={product.id} items={unsold.rows} total={unsold.total} c={c} />
          <section class="card" aria-labelledby="upload-stock">
            <h2 id="upload-stock">Upload stock</h2>
            <p class="muted">{`One item per line, at most ${MAX_ITEMS_PER_UPLOAD.toLocaleString('en-US')} lines a post. Items already in stock are skipped.`}</p>
            {form === 'stock' && <Alert problem={problem} />}
            <form method="post" action={`${productPath(product.id)}/stock`} enctype="multipart/form-data">
              <IdempotencyKey />
              {variants.length > 1 && (
                <Select name="variant_id" label="Variant" options={variants.map((v) => ({ value: String(v.id), label: v.name }))} value={values?.variant_id} problem={form === 'stock' ? problem : undefined} />
              )}
              <TextArea name="items" label="Items" problem={form === 'stock' ? problem : undefined} />
              <FileField name="items_file" label="Items file" accept=".txt,text/plain" problem={form === 'stock' ? problem : undefined} />
              <button type="submit">Upload stock</button>
            </form>
          </section>
        </>
      ),
    },
    problem?.status ?? 200,
  );
}

/** A control character that is not a line break or tab: the mark of a binary file. */
const BINARY = /[\x00-\x08\x0e-\x1f\x7f]/;

/** The upload's lines: the textarea's, then the file's, which must be UTF-8 text (a binary file is a 422). */
async function uploadedLines(c: Context<AppEnv>, fields: FormFields): Promise<string[]> {
  const file = (await c.req.parseBody())['items_file'];
  let fileText = '';
  if (file instanceof File && file.size > 0) {
    const notText = () => fieldError('items_file', 'The items file must be a text file (.txt, UTF-8), one item per line.');
    if (file.type !== '' && !file.type.startsWith('text/')) throw notText();
    try {
      fileText = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(await file.arrayBuffer());
    } catch {
      throw notText();
    }
    if (BINARY.test(fileText)) throw notText();
  }
  return [...(fields.items ?? '').split('\n'), ...fileText.split('\n')];
}

export const consoleProducts = new Hono<AppEnv>()
  .route('/', consoleProductImages((c, id, problem) => productPage(c, id, { problem, form: 'image' })))
  .route('/', consoleStockItems)
  .get('/console/products', requireOperatorSession, (c) => productsPage(c))
  .post(
    '/console/products',
    sameOriginForm,
    requireOperatorSession,
    formHandler(
      async (c, fields) => {
        const input = productFromForm(fields);
        return redirectOnce<ProductRow>(
          c,
          fields,
          input,
          async (claim) => {
            const product = await createProduct(c.var.db, operatorActor(c.var.caller), input, claim);
            await purgeStock(c, [product.id]);
            return withDone(productPath(product.id), 'product_created');
          },
          (product) => withDone(productPath(product.id), 'product_created'),
          OPERATOR,
        );
      },
      (c, fields, problem) => productsPage(c, fields, problem),
    ),
  )
  .get('/console/products/:id', requireOperatorSession, (c) => productPage(c, idFromPath(c.req.param('id'), 'Product')))
  .post(
    '/console/products/:id',
    sameOriginForm,
    requireOperatorSession,
    formHandler(
      async (c, fields) => {
        const id = idFromPath(c.req.param('id'), 'Product');
        await updateProduct(c.var.db, operatorActor(c.var.caller), id, productFromForm(fields), catalogueChange(c));
        await purgeStock(c, [id]);
        return c.redirect(withDone(productPath(id), 'product_saved'), 303);
      },
      (c, fields, problem) => productPage(c, idFromPath(c.req.param('id'), 'Product'), { values: fields, problem, form: 'edit' }),
    ),
  )
  .post(
    '/console/products/:id/stock',
    sameOriginForm,
    requireOperatorSession,
    formHandler(
      async (c, fields) => {
        const id = idFromPath(c.req.param('id'), 'Product');
        const items = checkedUpload(await uploadedLines(c, fields));
        const variantId = /^[1-9]\d{0,15}$/.test(fields.variant_id ?? '') ? Number(fields.variant_id) : null;
        const counted = ({ added, skipped }: StockUpload) => `${productPath(id)}?added=${added}&skipped=${skipped}`;
        return redirectOnce<StockUpload>(
          c,
          fields,
          variantId === null ? { items } : { items, variant_id: variantId },
          async (claim) => {
            const upload = await addStock(c.var.db, operatorActor(c.var.caller), id, items, catalogueChange(c, claim), variantId);
            await purgeStock(c, [id]);
            return counted(upload);
          },
          counted,
          OPERATOR,
        );
      },
      (c, _fields, problem) => productPage(c, idFromPath(c.req.param('id'), 'Product'), { problem, form: 'stock' }),
    ),
  );
