import { bodyLimit } from 'hono/body-limit';
import type { MiddlewareHandler } from 'hono';
import { ApiError } from '../lib/errors';
import { imageTooLarge, MAX_IMAGE_BYTES } from '../lib/image';

const MAX_BODY_BYTES = 1024 * 1024;
const MAX_STOCK_UPLOAD_BYTES = 16 * 1024 * 1024;
// The admin API's upload and the console's upload form (whose 10,000 lines may be long).
const STOCK_UPLOAD_PATH = /^(\/api\/v2\/admin|\/dashboard\/console)\/products\/[^/]+\/stock$/;
// A product image: its bytes as the admin API's body, or the console's file field (a little multipart around them).
const IMAGE_UPLOAD_PATH = /^(\/api\/v2\/admin|\/dashboard\/console)\/products\/[^/]+\/image$/;
const MULTIPART_SLACK_BYTES = 64 * 1024;

const payloadTooLarge = (limit: number) => () => {
  throw new ApiError('PAYLOAD_TOO_LARGE', `The request body may not exceed ${limit / (1024 * 1024)} MB.`);
};

const defaultBodyLimit = bodyLimit({ maxSize: MAX_BODY_BYTES, onError: payloadTooLarge(MAX_BODY_BYTES) });
const stockUploadBodyLimit = bodyLimit({ maxSize: MAX_STOCK_UPLOAD_BYTES, onError: payloadTooLarge(MAX_STOCK_UPLOAD_BYTES) });
// An image over its limit is refused like any other bad image (422), before more of it is read.
const imageBodyLimit = bodyLimit({ maxSize: MAX_IMAGE_BYTES + MULTIPART_SLACK_BYTES, onError: () => { throw imageTooLarge(); } });

/** Every request body has a limit: 1 MB, 16 MB for a stock upload, an image's own limit for an image. */
export const bodyLimits: MiddlewareHandler = (c, next) =>
  // Without a body (a GET...) there is nothing to limit: Hono's bodyLimit would call next() as well.
  !c.req.raw.body ? next() : (STOCK_UPLOAD_PATH.test(c.req.path) ? stockUploadBodyLimit : IMAGE_UPLOAD_PATH.test(c.req.path) ? imageBodyLimit : defaultBodyLimit)(c, next);
