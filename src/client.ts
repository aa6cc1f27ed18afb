import { hc } from 'hono/client';
import type { AppType } from './app';
import { isValidSignature, SIGNATURE_TOLERANCE_SECONDS } from './lib/signature';
import type { WebhookEvent } from './routes/events/events';

export type { AppType, WebhookEvent };

/**
 * A typed client for TypeScript users: every route, parameter and response shape checked by the compiler.
 *
 *   const api = createClient('https://api.example.com', process.env.STOCK_API_KEY!);
 *   const res = await api.api.v2.orders.$post({ json: { product_id: 2, quantity: 1 } });
 *   if (res.status === 201) console.log((await res.json()).data.stock_items);
 */
export function createClient(baseUrl: string, apiKey?: string, options: { fetch?: typeof fetch; headers?: Record<string, string> } = {}) {
  return hc<AppType>(baseUrl, {
    fetch: options.fetch,
    headers: { ...(apiKey ? { 'X-API-Key': apiKey } : {}), ...options.headers },
  });
}

export class WebhookSignatureError extends Error {
  constructor() {
    super('The webhook signature is invalid or too old.');
    this.name = 'WebhookSignatureError';
  }
}

/**
 * For receivers of the service's webhooks: checks `X-Signature` (HMAC-SHA256 with the endpoint's secret over
 * "<t>.<raw body>", compared in constant time, `t` within `toleranceSeconds` of now) and returns the parsed event.
 * Pass the body exactly as received, before any JSON parsing. Throws `WebhookSignatureError` otherwise.
 *
 *   const event = await verifyWebhook(rawBody, request.headers.get('X-Signature'), process.env.WEBHOOK_SECRET!);
 */
export async function verifyWebhook(
  rawBody: string,
  signatureHeader: string | null | undefined,
  secret: string,
  { toleranceSeconds = SIGNATURE_TOLERANCE_SECONDS, now = Date.now() }: { toleranceSeconds?: number; now?: number } = {},
): Promise<WebhookEvent> {
  if (!(await isValidSignature(secret, rawBody, signatureHeader, now, toleranceSeconds))) throw new WebhookSignatureError();
  return JSON.parse(rawBody) as WebhookEvent;
}
