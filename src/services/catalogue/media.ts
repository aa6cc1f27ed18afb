import { sql } from 'drizzle-orm';
import { columnsOf, rowsOf, toStatement } from '../../db/batch';
import type { Db } from '../../db/client';
import { products, type ProductRow } from '../../db/schema';
import { checkedImageType, contentTypeOfName, imageExtension } from '../../lib/image';
import { notFound } from '../../lib/errors';
import { toHex } from '../../lib/crypto';
import { isoNow } from '../../lib/time';
import { auditEntry, writeAsActor, type Actor } from '../accounts/audit-log';

// Product images live in R2, named by the SHA-256 of their bytes: one object per distinct image however many
// products show it, and a name that never changes meaning (so it is served immutable). D1 says who uses an object
// (`products.image`); an object is deleted only after a batch that stopped using it committed, and only when no row
// names it then.

/**
 * Store the bytes (type checked against their signature, at most 2 MB), then point the product at them in one batch
 * with its audit entry. The object is written first, so a product never names an image that is not there; after the
 * commit it is checked again (a concurrent removal elsewhere may have deleted the same bytes) and rewritten if gone.
 */
export async function setProductImage(d1: Db, bucket: R2Bucket, actor: Actor, productId: number, bytes: Uint8Array, contentType: string | undefined): Promise<ProductRow> {
  const type = checkedImageType(bytes, contentType);
  const name = `${toHex(await crypto.subtle.digest('SHA-256', bytes))}.${imageExtension(type)}`;
  const put = () => bucket.put(name, bytes, { httpMetadata: { contentType: type, cacheControl: 'public, max-age=31536000, immutable' } });
  await put();
  let change: ImageChange;
  try {
    change = await changeImage(d1, actor, productId, name, 'product.image_set');
  } catch (err) {
    await deleteUnusedImages(d1, bucket, [name]); // refused (an unknown product): the bytes just stored may be nobody's
    throw err;
  }
  if ((await bucket.head(name)) === null) await put();
  await deleteUnusedImages(d1, bucket, [change.previous]);
  return change.product;
}

/** Stop showing the product's image (an idempotent no-op without one); the object goes once nothing uses it. */
export async function removeProductImage(d1: Db, bucket: R2Bucket, actor: Actor, productId: number): Promise<ProductRow> {
  const change = await changeImage(d1, actor, productId, null, 'product.image_removed');
  await deleteUnusedImages(d1, bucket, [change.previous]);
  return change.product;
}

interface ImageChange {
  product: ProductRow;
  /** The image the product had before, when it was another: a candidate for deletion once nothing uses it. */
  previous: string | null;
}

/**
 * One batch: the audit entry (written first, so it records the image being replaced), then the product's new image.
 * Both are keyed on `now`, generated here; a fault that hid the outcome is settled by the product row showing the
 * image asked for.
 */
async function changeImage(d1: Db, actor: Actor, productId: number, image: string | null, action: 'product.image_set' | 'product.image_removed'): Promise<ImageChange> {
  const now = isoNow();
  const changing = image === null ? sql`id = ${productId} AND image IS NOT NULL` : sql`id = ${productId}`;
  const { reads } = await writeAsActor(d1, actor, {
    writes: [
      auditEntry(
        actor,
        { action, target: sql`'product:' || id`, details: sql`json_object('image', ${image}, 'previous_image', image)`, from: sql`FROM products WHERE ${changing}` },
        now,
      ),
      sql`UPDATE products SET image = ${image}, updated_at = ${now} WHERE ${changing}`,
    ],
    reads: [
      sql`SELECT ${columnsOf(products)} FROM products WHERE id = ${productId}`,
      sql`SELECT json_extract(details, '$.previous_image') AS previous FROM audit_log
          WHERE created_at = ${now} AND action = ${action} AND target = ${`product:${productId}`}`,
    ],
    committed: ([product]) => rowsOf<ProductRow>(product)[0]?.image === image,
  });
  const [product] = rowsOf<ProductRow>(reads[0]);
  if (!product) throw notFound('Product');
  const previous = rowsOf<{ previous: string | null }>(reads[1])[0]?.previous ?? null;
  return { product, previous: previous === image ? null : previous };
}

/**
 * Delete those of these objects that no product names now (asked after the change that stopped using them
 * committed). Housekeeping after the answer is decided: a failure leaves an unused object behind (harmless, logged),
 * never turns a committed change into an error.
 */
async function deleteUnusedImages(d1: Db, bucket: R2Bucket, names: (string | null)[]): Promise<void> {
  const candidates = names.filter((name): name is string => name !== null);
  if (candidates.length === 0) return;
  try {
    const { results } = await toStatement(
      d1,
      sql`SELECT value AS name FROM json_each(${JSON.stringify(candidates)}) WHERE NOT EXISTS (SELECT 1 FROM products WHERE image = value)`,
    ).all<{ name: string }>();
    if (results.length > 0) await bucket.delete(results.map((r) => r.name));
  } catch (err) {
    console.warn(JSON.stringify({ level: 'warn', msg: 'unused product images not deleted', images: candidates, error: String(err) }));
  }
}

/** The stored image of this name (already checked against IMAGE_NAME), or null. */
export async function readImage(bucket: R2Bucket, name: string): Promise<{ body: ReadableStream; contentType: string; etag: string } | null> {
  const object = await bucket.get(name);
  if (object === null) return null;
  return { body: object.body, contentType: contentTypeOfName(name), etag: object.httpEtag };
}

/** The public URL of an image name, on the service's own origin. */
export const imageUrl = (origin: string, image: string | null) => (image === null ? null : `${origin}/media/${image}`);
