/** Bindings and vars of the worker (wrangler.toml, .dev.vars, `wrangler secret put`). Vars arrive as strings. */
export interface Bindings {
  DB: D1Database;
  ADMIN_TOKEN?: string;
  GATEWAY_ONE_WEBHOOK_SECRET?: string;
  GATEWAY_TWO_WEBHOOK_SECRET?: string;
  GATEWAY_THREE_WEBHOOK_SECRET?: string;
  PAYMENT_BASE_URL?: string;
  ORDER_HOLD_HOURS?: string;
  DEPOSIT_TTL_MINUTES?: string;
  STOCK_CACHE_SECONDS?: string;
  DEV_CHECKOUT?: string;
  LOG_REQUESTS?: string;
  API_KEY_RATE_LIMITER?: RateLimit;
  PUBLIC_RATE_LIMITER?: RateLimit;
  DASHBOARD_SIGNUP?: string;
  SIGN_IN_EMAIL_RATE_LIMITER?: RateLimit;
  SIGN_IN_IP_RATE_LIMITER?: RateLimit;
  SIGN_UP_IP_RATE_LIMITER?: RateLimit;
}

export interface Principal {
  userId: number;
  apiKeyId: number;
}

/** The signed-in dashboard user (src/middleware/session.ts). */
export interface DashboardSession {
  id: number;
  userId: number;
}

export interface AppEnv {
  Bindings: Bindings;
  Variables: {
    requestId: string;
    principal: Principal;
    session: DashboardSession;
    cacheStatus: 'hit' | 'miss' | 'bypass';
    /** A D1 session for this request (src/middleware/d1-session.ts). */
    db: D1DatabaseSession;
  };
}

export interface Config {
  paymentBaseUrl: string;
  webhookSecrets: Record<'gateway_one' | 'gateway_two' | 'gateway_three', string | undefined>;
  devCheckout: boolean;
  orderHoldHours: number;
  depositTtlMinutes: number;
  stockCacheSeconds: number;
  dashboardSignup: boolean;
}

function nonNegativeInt(raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  return Number.isSafeInteger(value) && value >= 0 ? value : fallback;
}

export function readConfig(env: Bindings): Config {
  return {
    paymentBaseUrl: (env.PAYMENT_BASE_URL || 'http://localhost:8787').replace(/\/+$/, ''),
    webhookSecrets: {
      gateway_one: env.GATEWAY_ONE_WEBHOOK_SECRET || undefined,
      gateway_two: env.GATEWAY_TWO_WEBHOOK_SECRET || undefined,
      gateway_three: env.GATEWAY_THREE_WEBHOOK_SECRET || undefined,
    },
    devCheckout: env.DEV_CHECKOUT === 'true',
    orderHoldHours: nonNegativeInt(env.ORDER_HOLD_HOURS, 24),
    depositTtlMinutes: nonNegativeInt(env.DEPOSIT_TTL_MINUTES, 60) || 60,
    stockCacheSeconds: nonNegativeInt(env.STOCK_CACHE_SECONDS, 10),
    dashboardSignup: env.DASHBOARD_SIGNUP === 'open',
  };
}
