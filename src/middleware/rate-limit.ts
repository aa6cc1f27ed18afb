import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import type { AppEnv } from '../env';
import type { UserThrottle } from '../services/accounts/users';
import { ApiError } from '../lib/errors';

// Every limiter counts per 60-second window (wrangler.toml); a refused client may retry after that window.
const RETRY_AFTER_SECONDS = '60';

export async function enforceRateLimit(limiter: RateLimit | undefined, key: string): Promise<void> {
  if (!limiter) return; // not bound (e.g. a config without [[ratelimits]]): no limit rather than no service
  const { success } = await limiter.limit({ key });
  if (!success) {
    throw new ApiError('RATE_LIMITED', 'Too many requests; retry after the Retry-After delay.', undefined, {
      'Retry-After': RETRY_AFTER_SECONDS,
    });
  }
}

/** CF-Connecting-IP is set by Cloudflare's edge and cannot be forged through it. */
export const clientIp = (c: Context) => c.req.header('CF-Connecting-IP') ?? 'unknown';

/**
 * Deposits on a real provider's slot, per client IP (the API and the dashboard together). The vendor's invoice is made
 * before the deposit's one batch proves the credential, so a per-key limit alone would let made-up keys open
 * invoices without end; this bounds them without a D1 round trip before the vendor call.
 */
export const vendorInvoiceThrottle = (c: Context<AppEnv>) => () => enforceRateLimit(c.env.VENDOR_INVOICE_IP_RATE_LIMITER, `ip:${clientIp(c)}`);

/** Public routes: per client IP. */
export const limitByClientIp = createMiddleware<AppEnv>(async (c, next) => {
  if (c.req.method !== 'OPTIONS') await enforceRateLimit(c.env.PUBLIC_RATE_LIMITER, `ip:${clientIp(c)}`);
  await next();
});

/**
 * Per-user limits (5 a minute each, wrangler.toml), shared by the API and the dashboard and keyed on the user id, so
 * a second API key or another session buys no more tries. The request does not know its user until its first batch
 * has proved the credential, so the service calls these with the proved id, before it hashes or writes anything.
 */
export const passwordCheckThrottle = (c: Context<AppEnv>): UserThrottle => (userId) =>
  enforceRateLimit(c.env.PASSWORD_CHECK_RATE_LIMITER, `user:${userId}`);

export const emailChangeThrottle = (c: Context<AppEnv>): UserThrottle => (userId) =>
  enforceRateLimit(c.env.EMAIL_CHANGE_RATE_LIMITER, `user:${userId}`);
