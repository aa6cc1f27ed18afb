import { createRoute, z } from '@hono/zod-openapi';
import { envelope, ok } from '../../lib/envelope';
import { IMAGE_CONTENT_TYPES, MAX_IMAGE_BYTES } from '../../lib/image';
import { purgeStock } from '../../middleware/stock-cache';
import { ADMIN_TOKEN_ACTOR } from '../../services/accounts/audit-log';
import { removeProductImage, setProductImage } from '../../services/catalogue/media';
import { createRouter, errorResponses, IdParams, jsonResponse } from '../openapi';
import { presentProduct, Product } from '../representations';

// A product's image: the bytes as the body (PUT), or none (DELETE). Both are idempotent by nature (the same bytes
// make the same image name), so they take no Idempotency-Key.

const security = [{ AdminBearer: [] }];
const tags = ['Admin'];
const imageBody = z.string().openapi({ type: 'string', format: 'binary', maxLength: MAX_IMAGE_BYTES });

export const productImagesRouter = createRouter()
  .openapi(
    createRoute({
      method: 'put',
      path: '/products/{id}/image',
      operationId: 'setProductImage',
      tags,
      summary: "Set a product's image (PNG, JPEG or WebP, at most 2 MB; its signature bytes must match the Content-Type)",
      security,
      request: {
        params: IdParams,
        body: { required: true, content: Object.fromEntries(IMAGE_CONTENT_TYPES.map((type) => [type, { schema: imageBody }])) },
      },
      responses: { 200: jsonResponse(envelope(Product), 'The product, with its image_url'), ...errorResponses(401, 404, 422) },
    }),
    async (c) => {
      const bytes = new Uint8Array(await c.req.arrayBuffer());
      const { id } = c.req.valid('param');
      const product = await setProductImage(c.var.db, c.env.MEDIA, ADMIN_TOKEN_ACTOR, id, bytes, c.req.header('Content-Type'));
      await purgeStock(c, [id]);
      return c.json(ok(presentProduct(product, new URL(c.req.url).origin), 'Image set.'), 200);
    },
  )
  .openapi(
    createRoute({
      method: 'delete',
      path: '/products/{id}/image',
      operationId: 'removeProductImage',
      tags,
      summary: "Remove a product's image (the stored file is deleted once no product uses it)",
      security,
      request: { params: IdParams },
      responses: { 200: jsonResponse(envelope(Product), 'The product, without an image'), ...errorResponses(401, 404, 422) },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const product = await removeProductImage(c.var.db, c.env.MEDIA, ADMIN_TOKEN_ACTOR, id);
      await purgeStock(c, [id]);
      return c.json(ok(presentProduct(product, new URL(c.req.url).origin), 'Image removed.'), 200);
    },
  );
