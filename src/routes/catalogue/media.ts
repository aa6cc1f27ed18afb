import { Hono } from 'hono';
import type { AppEnv } from '../../env';
import { notFound } from '../../lib/errors';
import { IMAGE_NAME } from '../../lib/image';
import { readImage } from '../../services/catalogue/media';

// Product images from the MEDIA bucket. A name is the SHA-256 of the bytes, so its content never changes: cached for
// a year, immutable. Served with their own type, never sniffed, and a CSP that lets nothing run or load if the file
// is opened as a document. Anything that is not a stored image's name is the API's 404 (`NOT_FOUND`).

const IMMUTABLE = 'public, max-age=31536000, immutable';

export const mediaRouter = new Hono<AppEnv>().get('/media/:name', async (c) => {
  const name = c.req.param('name');
  const image = IMAGE_NAME.test(name) ? await readImage(c.env.MEDIA, name) : null;
  c.header('Content-Security-Policy', "default-src 'none'");
  if (image === null) throw notFound('Image');
  const headers = { 'Cache-Control': IMMUTABLE, ETag: image.etag };
  if (c.req.header('If-None-Match') === image.etag) return c.body(null, 304, headers);
  return c.body(image.body, 200, { ...headers, 'Content-Type': image.contentType });
});
