import { Hono, type Context } from 'hono';
import type { AppEnv } from '../../env';
import { fieldError } from '../../lib/errors';
import { requireOperatorSession } from '../../middleware/session';
import { purgeStock } from '../../middleware/stock-cache';
import { operatorActor } from '../../services/accounts/audit-log';
import { queryAsOperator } from '../../services/caller';
import { catalogueProductQuery, type CatalogueProduct } from '../../services/operator/catalogue';
import { removeProductImage, setProductImage } from '../../services/catalogue/media';
import { Alert, FileField } from '../components';
import { formHandler, idFromPath, sameOriginForm, type FormProblem } from '../forms';
import { withDone } from '../done-notices';
import { AskFirst, confirmationPage, confirmPath } from './confirm';

// A product's image on its console page: "Upload image" (a PNG, JPEG or WebP file, as PUT /admin/products/{id}/image)
// and "Remove image", which first shows the console's confirmation page (./confirm.tsx) saying what will happen; only
// its "Confirm" acts.

const productPath = (id: number) => `/dashboard/console/products/${id}`;
const removalPath = (id: number) => `${productPath(id)}/image/remove`;

export function ProductImageForms({ product, problem }: { product: CatalogueProduct; problem?: FormProblem }) {
  return (
    <section class="card narrow" aria-labelledby="product-image">
      <h2 id="product-image">Image</h2>
      {product.image === null ? (
        <p class="muted">No image: buyers see a neutral placeholder.</p>
      ) : (
        <img class="product-image card" src={`/media/${product.image}`} alt={`The image of ${product.name}`} width="320" height="240" />
      )}
      <Alert problem={problem} />
      <form method="post" action={`${productPath(product.id)}/image`} enctype="multipart/form-data">
        <FileField name="image" label="Image" accept="image/png,image/jpeg,image/webp" problem={problem} />
        <p class="muted">PNG, JPEG or WebP, at most 2 MB.</p>
        <button type="submit">Upload image</button>
      </form>
      {product.image !== null && (
        <p>
          <AskFirst action={removalPath(product.id)} label="Remove image" />
        </p>
      )}
    </section>
  );
}

async function confirmRemovalPage(c: Context<AppEnv>, productId: number) {
  const [product] = await queryAsOperator(c.var.db, c.var.caller, [catalogueProductQuery(productId)]);
  return confirmationPage(c, {
    title: 'Remove image?',
    section: '/dashboard/console/products',
    effect: `The image of "${product.name}" will be removed: the shop, the product's page and its embeddable card will show a neutral placeholder instead. The stored file is deleted once no product uses it.`,
    action: removalPath(product.id),
    back: productPath(product.id),
    danger: true,
  });
}

/** The file of the upload form, as bytes and its declared type (the service checks both against the signature). */
async function uploadedImage(c: Context<AppEnv>): Promise<{ bytes: Uint8Array; type: string }> {
  const file = (await c.req.parseBody())['image'];
  if (!(file instanceof File) || file.size === 0) throw fieldError('image', 'Choose a PNG, JPEG or WebP file to upload.');
  return { bytes: new Uint8Array(await file.arrayBuffer()), type: file.type };
}

type ImageProblemPage = (c: Context<AppEnv>, productId: number, problem: FormProblem) => Promise<Response>;

export const consoleProductImages = (again: ImageProblemPage) =>
  new Hono<AppEnv>()
    .post(
      '/console/products/:id/image',
      sameOriginForm,
      requireOperatorSession,
      formHandler(
        async (c) => {
          const id = idFromPath(c.req.param('id'), 'Product');
          const { bytes, type } = await uploadedImage(c);
          await setProductImage(c.var.db, c.env.MEDIA, operatorActor(c.var.caller), id, bytes, type);
          await purgeStock(c, [id]);
          return c.redirect(withDone(productPath(id), 'image_uploaded'), 303);
        },
        (c, _fields, problem) => again(c, idFromPath(c.req.param('id'), 'Product'), problem),
      ),
    )
    .get(confirmPath('/console/products/:id/image/remove'), requireOperatorSession, (c) => confirmRemovalPage(c, idFromPath(c.req.param('id'), 'Product')))
    .post('/console/products/:id/image/remove', sameOriginForm, requireOperatorSession, async (c) => {
      const id = idFromPath(c.req.param('id'), 'Product');
      await removeProductImage(c.var.db, c.env.MEDIA, operatorActor(c.var.caller), id);
      await purgeStock(c, [id]);
      return c.redirect(withDone(productPath(id), 'image_removed'), 303);
    });
