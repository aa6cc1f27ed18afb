import type { Child } from 'hono/jsx';
import { volumeTiersOf } from '../services/catalogue/pricing';
import { variantsIn, type StockEntry } from '../services/catalogue/stock';
import { Money, Select } from './components';

// The catalogue as a buyer sees it, shared by the dashboard's shop and the public storefront (/shop): cards with the
// image (or a neutral placeholder), name, price, stock, category, pack sizes and "Final sale"; the filter by category
// and name. Text is always text (JSX escapes it); an image is ours (/media/, served by this worker).

export const packSizesOf = (entry: StockEntry) => (entry.allowedQuantities === null ? null : (JSON.parse(entry.allowedQuantities) as number[]));

export const stockText = (count: number) => (count > 0 ? `${count.toLocaleString('en-US')} in stock` : 'Out of stock');

export function ProductImage({ entry, size = 'card' }: { entry: StockEntry; size?: 'card' | 'large' }) {
  return entry.image === null ? (
    <div class={`product-image ${size} placeholder`} aria-hidden="true" />
  ) : (
    <img class={`product-image ${size}`} src={`/media/${entry.image}`} alt="" width="320" height="240" loading="lazy" />
  );
}

/** Price, stock, category, pack sizes and "Final sale", as short lines. */
export function ProductFacts({ entry }: { entry: StockEntry }) {
  const packs = packSizesOf(entry);
  const prices = new Set(variantsIn(entry).map((v) => v.priceCents));
  return (
    <>
      <p>
        {prices.size > 1 ? 'from ' : ''}
        <Money cents={entry.priceCents} /> each · {stockText(entry.stockCount)}
      </p>
      {entry.category !== null && <p class="category">{entry.category}</p>}
      {packs && <p>{`Sold in packs of ${packs.join(', ')}`}</p>}
      {entry.cancellable === 0 && <p class="badge final-sale">Final sale</p>}
    </>
  );
}

/** "Replacement warranty: 72 hours", on a product's own page; nothing without a warranty. */
export function WarrantyLine({ entry }: { entry: StockEntry }) {
  return entry.warrantyHours > 0 ? <p class="warranty">{`Replacement warranty: ${entry.warrantyHours} hours`}</p> : null;
}

/** The product's volume prices ("5 or more: $8.00 each"), lowest quantity first; nothing when it has none. */
export function VolumePrices({ entry }: { entry: StockEntry }) {
  const tiers = volumeTiersOf(entry.volumePrices);
  if (!tiers?.length) return null;
  const headingId = `product-${entry.productId}-volume-prices`;
  return (
    <section class="volume-prices" aria-labelledby={headingId}>
      <h2 id={headingId}>Volume prices</h2>
      <ul>
        {tiers.map((tier) => (
          <li>
            {`${tier.minQuantity.toLocaleString('en-US')} or more: `}
            <Money cents={tier.priceCents} /> each
          </li>
        ))}
      </ul>
    </section>
  );
}

/**
 * The variants of a product with several, each with its price and stock: a list, or (with `name`) the radio buttons
 * of a buy form (no script needed), an out-of-stock one shown but not selectable.
 */
export function VariantChoice({ entry, picked, pick }: { entry: StockEntry; picked?: string; pick?: boolean }) {
  const variants = variantsIn(entry);
  if (entry.activeVariants < 2 || variants.length < 2) return null;
  const legendId = `product-${entry.productId}-variants`;
  const line = (v: (typeof variants)[number]) => (
    <>
      {`${v.name}: `}
      <Money cents={v.priceCents} /> · {stockText(v.stockCount)}
    </>
  );
  if (!pick) {
    return (
      <section class="variants" aria-labelledby={legendId}>
        <h2 id={legendId}>Options</h2>
        <ul>
          {variants.map((v) => (
            <li>{line(v)}</li>
          ))}
        </ul>
      </section>
    );
  }
  const chosen = picked ?? String(variants.find((v) => v.stockCount > 0)?.id ?? '');
  return (
    <fieldset class="variants">
      <legend>Option</legend>
      {variants.map((v) => (
        <label>
          <input type="radio" name="variant_id" value={String(v.id)} checked={String(v.id) === chosen} disabled={v.stockCount === 0} required />
          {line(v)}
        </label>
      ))}
    </fieldset>
  );
}

/** One card: the image, the name (a link to the product's page) and its facts, then whatever the page adds. */
export function ProductCard({ entry, href, children }: { entry: StockEntry; href: string; children?: Child }) {
  const nameId = `product-${entry.productId}-name`;
  return (
    <li aria-labelledby={nameId}>
      <ProductImage entry={entry} />
      <h2 id={nameId}>
        <a href={href}>{entry.productName}</a>
      </h2>
      <ProductFacts entry={entry} />
      {children}
    </li>
  );
}

/** The filter (GET): "Category" (all, or one) and "Search" (a part of the name). */
export function CatalogueFilter({ action, categories, category, q }: { action: string; categories: string[]; category?: string; q?: string }) {
  return (
    <form method="get" action={action} class="search catalogue-filter" role="search">
      <Select name="category" label="Category" options={[{ value: '', label: 'All categories' }, ...categories]} value={category ?? ''} idPrefix="filter" />
      <div class="field">
        <label for="filter-q">Search</label>
        <input id="filter-q" name="q" type="search" value={q} maxlength={100} />
      </div>
      <button type="submit">Search</button>
    </form>
  );
}
