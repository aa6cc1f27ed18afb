// The ground floor: what the worker is given (bindings, vars) and the settings read from it. Nothing here imports
// from src/services: reading vars into richer things (a slot's provider and keys) belongs to the service using them.
import { publicBaseUrl } from './lib/public-base-url';

/** One outgoing webhook delivery: the message of WEBHOOK_QUEUE (consumed by src/services/events/delivery.ts). */
export interface DeliveryMessage {
  event_id: string;
  endpoint_id: number;
  /** The event lives in the sandbox (SANDBOX_DB): a test-mode event, delivered from there with `livemode: false`. */
  sandbox?: true;
}

/** One email to send: the message of EMAIL_QUEUE (consumed by src/services/mail/delivery.ts): the email's row, and the
 * link with its token for the two templates that carry one (a token is never stored, only sent). */
export interface EmailJob {
  email_id: string;
  link?: string;
}

/** Bindings and vars of the worker (wrangler.toml, .dev.vars, `wrangler secret put`). Vars arrive as strings. */
export interface Bindings {
  DB: D1Database;
  ADMIN_TOKEN?: string;
  GATEWAY_ONE_WEBHOOK_SECRET?: string;
  GATEWAY_TWO_WEBHOOK_SECRET?: string;
  GATEWAY_THREE_WEBHOOK_SECRET?: string;
  /** Each slot's payment provider and its settings (src/services/payments/gateways/slots.ts). */
  GATEWAY_ONE_PROVIDER?: string;
  GATEWAY_ONE_API_KEY?: string;
  GATEWAY_ONE_ACCOUNT?: string;
  GATEWAY_ONE_API_URL?: string;
  GATEWAY_TWO_PROVIDER?: string;
  GATEWAY_TWO_API_KEY?: string;
  GATEWAY_TWO_ACCOUNT?: string;
  GATEWAY_TWO_API_URL?: string;
  GATEWAY_THREE_PROVIDER?: string;
  GATEWAY_THREE_API_KEY?: string;
  GATEWAY_THREE_ACCOUNT?: string;
  GATEWAY_THREE_API_URL?: string;
  GATEWAY_POLL_MINUTES?: string;
  GATEWAY_POLL_LIMIT?: string;
  PAYMENT_BASE_URL?: string;
  /** The shop's public origin: every link in an email, and the test gateway's payment page, start with it (src/lib/public-base-url.ts). */
  PUBLIC_BASE_URL?: string;
  ORDER_HOLD_HOURS?: string;
  DEPOSIT_TTL_MINUTES?: string;
  STOCK_CACHE_SECONDS?: string;
  MAX_CANCELS_PER_DAY?: string;
  DEV_CHECKOUT?: string;
  LOG_REQUESTS?: string;
  ALLOW_LOCAL_WEBHOOK_URLS?: string;
  WEBHOOK_RETRY_BASE_SECONDS?: string;
  WEBHOOK_MAX_ATTEMPTS?: string;
  /** Outgoing webhook deliveries, one message per event and endpoint (consumed by this worker's `queue()`). */
  WEBHOOK_QUEUE?: Queue<DeliveryMessage>;
  /** Deliveries that exhausted their attempts, kept for the operator. */
  WEBHOOK_DLQ?: Queue<DeliveryMessage>;
  API_KEY_RATE_LIMITER?: RateLimit;
  PUBLIC_RATE_LIMITER?: RateLimit;
  DASHBOARD_SIGNUP?: string;
  LOW_STOCK_THRESHOLD?: string;
  SIGN_IN_EMAIL_RATE_LIMITER?: RateLimit;
  SIGN_IN_IP_RATE_LIMITER?: RateLimit;
  SIGN_UP_IP_RATE_LIMITER?: RateLimit;
  /** Current-password checks (API and dashboard together), per user. */
  PASSWORD_CHECK_RATE_LIMITER?: RateLimit;
  /** Changes of the account's email (API and dashboard together), per user. */
  EMAIL_CHANGE_RATE_LIMITER?: RateLimit;
  /** Invoices opened at a real payment provider (API and dashboard deposits together), per client IP. */
  VENDOR_INVOICE_IP_RATE_LIMITER?: RateLimit;
  /** Cloudflare Email Service (`[[send_email]]`); with EMAIL_FROM, mail is on (src/services/mail/settings.ts). */
  EMAIL?: SendEmail;
  EMAIL_FROM?: string;
  SHOP_NAME?: string;
  /** Where a buyer reaches the shop: shown to held or blocked buyers and in emails' footers (empty: not shown). */
  SUPPORT_EMAIL?: string;
  /** "required": accounts made by sign-up must open their verification link before they deposit or buy. */
  EMAIL_VERIFICATION?: string;
  /** "true" only locally (`npm run dev`): sent emails' bodies are kept for the console's Emails page. */
  EMAIL_PREVIEW?: string;
  /** Emails to send, one message each (consumed by this worker's `queue()`). */
  EMAIL_QUEUE?: Queue<EmailJob>;
  /** Forgot-password posts (API and dashboard together), per client IP. */
  FORGOT_PASSWORD_IP_RATE_LIMITER?: RateLimit;
  /** Product images, named by the SHA-256 of their bytes (src/services/catalogue/media.ts). */
  MEDIA: R2Bucket;
  /** The test-mode database (docs/test-mode.md): a `sk_test_` key is answered from it alone; unbound = no test mode. */
  SANDBOX_DB?: D1Database;
}

export interface AppEnv {
  Bindings: Bindings;
  Variables: {
    requestId: string;
    cacheStatus: 'hit' | 'miss' | 'bypass';
    /** This request's D1 session, wrapped by src/db/d1.ts (src/middleware/d1-session.ts). */
    db: D1DatabaseSession;
  };
}

export interface Config {
  paymentBaseUrl: string;
  /** Test mode (a sk_test_ key's request): every gateway slot is the test gateway, its pages on this origin. */
  testGateway?: { publicBaseUrl: string };
  /** The vars as set, for the settings services read themselves (each gateway slot's: src/services/payments/gateways/slots.ts). */
  vars: Readonly<Bindings>;
  /** How old a real-provider deposit must be, and how long since its vendor was last asked, before the job asks. */
  gatewayPollMinutes: number;
  /** The most deposits the scheduled job asks vendors about in one run. */
  gatewayPollLimit: number;
  devCheckout: boolean;
  orderHoldHours: number;
  depositTtlMinutes: number;
  stockCacheSeconds: number;
  /** Successful cancellations a buyer may make in any 24 hours; 0 = none. */
  maxCancelsPerDay: number;
  allowLocalWebhookUrls: boolean;
  webhookRetryBaseSeconds: number;
  webhookMaxAttempts: number;
  dashboardSignup: boolean;
  /** A product at or below this stock count is "low" on the console. */
  lowStockThreshold: number;
  /** SUPPORT_EMAIL, or null when unset. */
  supportEmail: string | null;
}

function nonNegativeInt(raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  return Number.isSafeInteger(value) && value >= 0 ? value : fallback;
}

export function readConfig(env: Bindings): Config {
  return {
    // Unset: the shop's own origin (its local checkout page with DEV_CHECKOUT), then plain `wrangler dev`'s default.
    paymentBaseUrl: (env.PAYMENT_BASE_URL || publicBaseUrl(env) || 'http://localhost:8787').replace(/\/+$/, ''),
    vars: env,
    gatewayPollMinutes: nonNegativeInt(env.GATEWAY_POLL_MINUTES, 5),
    gatewayPollLimit: nonNegativeInt(env.GATEWAY_POLL_LIMIT, 20),
    devCheckout: env.DEV_CHECKOUT === 'true',
    orderHoldHours: nonNegativeInt(env.ORDER_HOLD_HOURS, 24),
    depositTtlMinutes: nonNegativeInt(env.DEPOSIT_TTL_MINUTES, 60) || 60,
    stockCacheSeconds: nonNegativeInt(env.STOCK_CACHE_SECONDS, 10),
    maxCancelsPerDay: nonNegativeInt(env.MAX_CANCELS_PER_DAY, 5),
    allowLocalWebhookUrls: env.ALLOW_LOCAL_WEBHOOK_URLS === 'true',
    webhookRetryBaseSeconds: nonNegativeInt(env.WEBHOOK_RETRY_BASE_SECONDS, 60) || 60,
    // The queue consumer's max_retries (wrangler.toml) is 100: this is the limit that applies.
    webhookMaxAttempts: Math.min(nonNegativeInt(env.WEBHOOK_MAX_ATTEMPTS, 10) || 10, 100),
    dashboardSignup: env.DASHBOARD_SIGNUP === 'open',
    lowStockThreshold: nonNegativeInt(env.LOW_STOCK_THRESHOLD, 10),
    supportEmail: env.SUPPORT_EMAIL?.trim() || null,
  };
}
