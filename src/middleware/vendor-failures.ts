import { createMiddleware } from 'hono/factory';
import type { AppEnv } from '../env';
import { vendorFailureOf } from '../services/payments/gateways/vendor-http';
import { recordVendorFailure } from '../services/payments/vendor-failures';
import { runAfterResponse } from './after-response';

/**
 * A request that failed because a payment vendor did (a deposit's invoice, an "Ask the vendor", a notification whose
 * lookup could not be made) leaves that failure for the console's payments page, written after the response.
 */
export const rememberVendorFailures = createMiddleware<AppEnv>(async (c, next) => {
  await next();
  const failure = vendorFailureOf(c.error);
  if (failure) runAfterResponse(c, recordVendorFailure(c.var.db, failure));
});
