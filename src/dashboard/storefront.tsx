import { z } from '@hono/zod-openapi';
import { Hono, type Context } from 'hono';
import type { Child } from 'hono/jsx';
import { etag } from 'hono/etag';
import { createMiddleware } from 'hono/factory';
import { secureHeaders } from 'hono/secure-headers';
import { resilient } from '../db/d1';
import { readConfig, type AppEnv } from '../env';
import { ApiError } from '../lib/errors';
import { IMAGE_CONTENT_TYPES, IMAGE_NAME } from '../lib/image';
import { errorResponses, IdParams, type createRouter } from '../routes/openapi';
import { limitByClientIp } from '../middleware/rate-limit';
import { publicCaching, stockCache } from '../middleware/stock-cache';
import { ShopQuery } from '../schemas/catalogue';
import { queryPlain } from '../services/caller';
import { productDetailQuery, shopQuery, SHOP_PAGE_SIZE } from '../services/catalogue/browse';
import { CatalogueFilter, ProductCard, ProductFacts, ProductImage, VariantChoice, VolumePrices, WarrantyLine } from './catalogue';
import { Money, Pager } from './components';
import { idFromPath, parseForm } from './forms';
import { dashboardSecureHeaders, PAGE_CSP } from './index';
import { page } from './layout';
import { STATIC_ASSETS } from '../generated/static-assets';

// The public face of the catalogue, for anyone and for other sites: the storefront /shop and the embeddable product
// card /embed/products/{id}. No session, no cookie: every visitor gets the same bytes, so both are kept in the edge
// cache like /stock (a sale purges a product's card at once but leaves /shop to its STOCK_CACHE_SECONDS), with an
// ETag. Reads may come from a nearby replica.

const publicReads = createMiddleware<AppEnv>(async (c, next) => {
  c.set('db', resilient(c.env.DB).withSession('first-unconstrained') as unknown as D1DatabaseSession);
  await next();
});

const cachedPublicPage = [limitByClientIp, stockCache, etag(), publicCaching, publicReads] as const;

/** Framable by any site (the card's whole point), and otherwise the pages' policy: no script, our styles and images. */
const embeddableHeaders = secureHeaders({
  contentSecurityPolicy: { ...PAGE_CSP, formAction: ["'none'"], frameAncestors: ['*'] },
  referrerPolicy: 'same-origin',
  xFrameOptions: false,
});

async function storefrontPage(c: Context<AppEnv>) {
  const filter = parseForm(ShopQuery, c.req.query());
  const [{ entries, total, categories }] = await queryPlain(c.var.db, [shopQuery(filter)]);
  const signupOpen = readConfig(c.env).dashboardSignup;
  return page(c, {
    title: 'Shop',
    children: (
      <>
        <p class="notice">
          <a href="/dashboard/sign-in?next=%2Fdashboard%2Fshop">Sign in to buy</a>
          {signupOpen && (
            <>
              {' or '}
              <a href="/dashboard/sign-up">Create account</a>
            </>
          )}
        </p>
        <CatalogueFilter action="/shop" categories={categories} category={filter.category} q={filter.q} />
        {entries.length === 0 ? (
          <p class="empty">{filter.category || filter.q ? 'No product matches.' : 'Nothing for sale right now.'}</p>
        ) : (
          <ul class="products">
            {entries.map((entry) => (
              <ProductCard entry={entry} href={`/shop/${entry.productId}`}>
                <a class="button" href={signInToBuy(entry.productId)}>
                  Sign in to buy
                </a>
              </ProductCard>
            ))}
          </ul>
        )}
        <Pager path="/shop" page={filter.page} totalPages={Math.ceil(total / SHOP_PAGE_SIZE)} query={{ category: filter.category, q: filter.q }} />
      </>
    ),
  });
}

/** Where a signed-out visitor signs in to buy a product: its page on the dashboard afterwards. */
const signInToBuy = (productId: number) => `/dashboard/sign-in?next=${encodeURIComponent(`/dashboard/shop/${productId}`)}`;

/**
 * A product's public page: image, description, price, volume prices, stock, pack sizes, final sale and "Sign in to
 * buy". Cached like /shop, no cookie; an inactive or unknown product is a 404 page.
 */
async function publicProductPage(c: Context<AppEnv>) {
  let product;
  try {
    [product] = await queryPlain(c.var.db, [productDetailQuery(idFromPath(c.req.param('id'), 'Product'))]);
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) {
      return page(c, { title: 'Not found', children: <p>This product is not available. <a href="/shop">See the shop</a>.</p> }, 404);
    }
    throw err;
  }
  const signupOpen = readConfig(c.env).dashboardSignup;
  return page(c, {
    title: product.productName,
    children: (
      <article class="card product-sheet">
        <ProductImage entry={product} size="large" />
        <div>
          <ProductFacts entry={product} />
          <VolumePrices entry={product} />
          <VariantChoice entry={product} />
          {product.cancellable === 0 && <p>Final sale: this order cannot be cancelled.</p>}
          <WarrantyLine entry={product} />
          {product.description !== null && <p class="description">{product.description}</p>}
          <p>
            <a class="button" href={signInToBuy(product.productId)}>
              Sign in to buy
            </a>
            {signupOpen && (
              <>
                {' or '}
                <a href="/dashboard/sign-up">Create account</a>
              </>
            )}
          </p>
          <p>
            <a href="/shop">Back to the shop</a>
          </p>
        </div>
      </article>
    ),
  });
}

/** The card: image, name, price, in or out of stock, a link to its product page. A document of its own, made to be framed. */
async function embedCard(c: Context<AppEnv>) {
  let product;
  try {
    [product] = await queryPlain(c.var.db, [productDetailQuery(idFromPath(c.req.param('id'), 'Product'))]);
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return c.html(await embedDocument('Not found', <p>This product is not available.</p>), 404);
    throw err;
  }
  const productUrl = `${new URL(c.req.url).origin}/shop/${product.productId}`;
  return c.html(
    await embedDocument(
      product.productName,
      <article class="embed-card">
        <ProductImage entry={product} />
        {/* At most two lines (then an ellipsis, the full name in `title`), so the link stays inside a 320×360 frame. */}
        <h1 title={product.productName}>{product.productName}</h1>
        <p>
          <Money cents={product.priceCents} /> · {product.stockCount > 0 ? 'In stock' : 'Out of stock'}
        </p>
        <a href={productUrl} target="_blank" rel="noopener">
          View the product
        </a>
      </article>,
    ),
  );
}

const embedDocument = async (title: string, body: Child) =>
  `<!doctype html>${await (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{title}</title>
        <link rel="stylesheet" href={STATIC_ASSETS['app.css']} />
      </head>
      <body class="embed">{body}</body>
    </html>
  ).toString()}`;

export const storefrontRouter = new Hono<AppEnv>()
  .get('/shop', dashboardSecureHeaders, ...cachedPublicPage, storefrontPage)
  .get('/shop/:id', dashboardSecureHeaders, ...cachedPublicPage, publicProductPage)
  .get('/embed/products/:id', embeddableHeaders, ...cachedPublicPage, embedCard);

/** The storefront, the embeddable card and the images in the OpenAPI document (every answer the service gives is). */
export function registerStorefrontDocs(app: ReturnType<typeof createRouter>) {
  const html = (description: string) => ({ description, content: { 'text/html': { schema: { type: 'string' as const } } } });
  const notModified = { 304: { description: 'Not modified (If-None-Match matched the ETag)' } };
  const pages = [
    {
      path: '/shop',
      operationId: 'storefront',
      summary: 'The public storefront: active products as cards (no sign-in, no cookie; cached like /stock)',
      request: { query: ShopQuery },
      responses: { 200: html('The storefront'), ...notModified, ...errorResponses(422, 429) },
    },
    {
      path: '/shop/{id}',
      operationId: 'storefrontProductPage',
      summary: "A product's public page: image, description, price, volume prices, stock, pack sizes, final sale, Sign in to buy (no cookie; cached like /shop)",
      request: { params: IdParams },
      responses: { 200: html('The product page'), ...notModified, ...errorResponses(429), 404: html('Unknown or inactive product') },
    },
    {
      path: '/embed/products/{id}',
      operationId: 'embedProductCard',
      summary: 'A product card any site may frame (no script, no cookie): image, name, price, in or out of stock, a link to its product page',
      request: { params: IdParams },
      responses: { 200: html('The card'), ...notModified, ...errorResponses(429), 404: html('Unknown or inactive product') },
    },
    {
      path: '/media/{name}',
      operationId: 'getMedia',
      summary: 'A product image, named by the SHA-256 of its bytes (immutable)',
      // The form of a name is described, not given as a pattern: any other name is simply a 404, not an invalid request.
      request: { params: z.object({ name: z.string().openapi({ param: { name: 'name', in: 'path' }, minLength: 68, maxLength: 69, description: `${IMAGE_NAME.source}: the image's SHA-256 and type` }) }) },
      responses: {
        200: { description: 'The image', content: Object.fromEntries(IMAGE_CONTENT_TYPES.map((type) => [type, { schema: { type: 'string' as const, format: 'binary' } }])) },
        ...notModified,
        ...errorResponses(404),
      },
    },
  ];
  for (const { path, operationId, summary, request, responses } of pages) {
    app.openAPIRegistry.registerPath({ method: 'get', path, operationId, tags: ['Storefront'], summary, request, responses });
  }
  app.openAPIRegistry.registerPath({
    method: 'get',
    path: '/r/{code}',
    operationId: 'referralLink',
    tags: ['Storefront'],
    summary: "A referrer's link: remembers the code in a first-party cookie for 30 days, then opens the shop (docs/referrals.md)",
    request: { params: z.object({ code: z.string().openapi({ param: { name: 'code', in: 'path' }, description: 'the referral code (16 hex digits); any other value sets no cookie' }) }) },
    responses: { 302: { description: 'To /shop, with the cookie `ref` when the code is well-formed' } },
  });
}
