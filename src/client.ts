import { hc } from 'hono/client';
import type { AppType } from './app';

export type { AppType };

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
